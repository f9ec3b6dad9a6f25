"""Generated runs of one small agent for the port tests: nested object and enum parameters, optional
arguments with defaults, a tool no run calls, and runs whose system prompts differ only in the date.

The tools' recorded results are what ``ticket_result`` / ``lookup_result`` compute, so a test can write a
correct body (the same function) and a wrong one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from replaykit.core.trace.ir import (
    LLMResponse,
    Message,
    RunHeader,
    Source,
    TextPart,
    ToolCallPart,
    ToolSpec,
    Usage,
)
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.store import RunWriter

TOOLS = [
    ToolSpec(name="create_ticket", description="Create a ticket in the tracker.\nReturns the new ticket as JSON.",
             parameters={"type": "object", "properties": {
                 "title": {"type": "string", "description": "One-line summary"},
                 "priority": {"type": "string", "enum": ["low", "medium", "high"], "description": "How urgent"},
                 "assignee": {"type": "object", "description": "Who owns it", "properties": {
                     "name": {"type": "string"}, "email": {"type": "string"}}, "required": ["name"]},
                 "labels": {"type": "array", "items": {"type": "string"}},
                 "due": {"type": "string", "default": "never"}},
                 "required": ["title", "priority", "assignee"]}),
    ToolSpec(name="lookup", description="Look a ticket up by id.",
             parameters={"type": "object", "properties": {
                 "id": {"type": "integer"}, "verbose": {"type": "boolean", "default": False}},
                 "required": ["id"]}),
    ToolSpec(name="archive", description="Archive a ticket (no recording calls it).",
             parameters={"type": "object", "properties": {"reason": {"type": "string"}}, "required": ["reason"]}),
]
PROMPT = "You are an ops bot. Today is {date}. Work in /srv/ops and keep tickets tidy."
SETTINGS = {"max_tokens": 2048, "temperature": 0.2, "parallel_tool_calls": False, "tool_choice": "auto"}


def ticket_result(title: str, priority: str, assignee: dict[str, Any], labels: list[str] | None = None,
                  due: str = "never") -> str:
    return json.dumps({"id": len(title), "title": title, "priority": priority, "owner": assignee["name"],
                       "labels": labels or [], "due": due})


def lookup_result(id: int, verbose: bool = False) -> str:
    return json.dumps({"id": id, "status": "open", **({"history": ["created"]} if verbose else {})})


def _call(recorder: Recorder, messages: list[Message], parts: list[Any], n: int) -> Any:
    finish = "tool_calls" if any(isinstance(p, ToolCallPart) for p in parts) else "stop"
    return recorder.llm_call(messages, LLMResponse(message=Message(role="assistant", parts=parts), finish_reason=finish,
                                                   model="desk-model", usage=Usage(input_tokens=100 + n, output_tokens=10)),
                             tools=TOOLS, model="desk-model", params={**SETTINGS, "stream": False})


def write_ops_run(path: Path, run_id: str, date: str, turns: list[tuple[str, list[tuple[str, dict[str, Any]]], str]]) -> Path:
    """A run of the ops agent: per turn, the user text, the tool calls (one model call asking for them
    all) and the final answer."""
    header = RunHeader(run_id=run_id, created_at=f"{date}T09:00:00Z", model="desk-model",
                       source=Source(framework="hermes", adapter="tests"))
    writer = RunWriter(path, header)
    recorder = Recorder(header, writer)
    messages = [Message(role="system", parts=[TextPart(text=PROMPT.format(date=date))])]
    n = 0
    for index, (user, calls, answer) in enumerate(turns):
        message = Message(role="user", parts=[TextPart(text=user)])
        recorder.turn_start(message, turn=index)
        messages.append(message)
        if calls:
            parts = [ToolCallPart(id=f"call_{run_id}_{n}_{i}", name=name, arguments=args,
                                  raw_arguments=json.dumps(args)) for i, (name, args) in enumerate(calls)]
            event = _call(recorder, messages, list(parts), n)
            messages.append(event.response.message)
            for part in parts:
                args = dict(part.arguments)
                result = ticket_result(**args) if part.name == "create_ticket" else lookup_result(**args)
                tool = recorder.tool_call(part.id, part.name, part.arguments, raw_arguments=part.raw_arguments,
                                          result=result, llm_call_id=event.id)
                messages.append(Message(role="tool", parts=[{"type": "tool_result", "tool_call_id": part.id,  # type: ignore[list-item]
                                                              "name": part.name, "content": tool.result}]))
            n += 1
        final = _call(recorder, messages, [TextPart(text=answer)], n)
        messages.append(final.response.message)
        recorder.turn_end(answer)
        n += 1
    recorder.run_end(turns[-1][2])
    writer.close()
    return path


def write_ops_runs(folder: Path) -> list[Path]:
    """Two runs of the ops agent, on different days (the prompt's date differs)."""
    folder.mkdir(parents=True, exist_ok=True)
    first = write_ops_run(folder / "ops-1.jsonl", "ops-1", "2026-12-01", [
        ("File a ticket for the broken login page, high priority, for Ana.",
         [("create_ticket", {"title": "Login page broken", "priority": "high",
                             "assignee": {"name": "Ana", "email": "ana@example.com"}, "labels": ["web", "auth"]})],
         "Filed ticket 18 for Ana."),
        ("And look up ticket 18.", [("lookup", {"id": 18})], "Ticket 18 is open."),
    ])
    second = write_ops_run(folder / "ops-2.jsonl", "ops-2", "2026-12-05", [
        ("Two things: a low-priority ticket for Bo about docs, and check ticket 3 in detail.",
         [("create_ticket", {"title": "Docs typo", "priority": "low", "assignee": {"name": "Bo"}}),
          ("lookup", {"id": 3, "verbose": True})],
         "Filed ticket 9 for Bo; ticket 3 is open."),
    ])
    return [first, second]


CORRECT_BODIES = {
    "create_ticket": '    import json\n    return json.dumps({"id": len(title), "title": title, "priority": priority, '
                     '"owner": assignee["name"], "labels": labels or [], "due": due})\n',
    "lookup": '    import json\n    return json.dumps({"id": id, "status": "open", '
              '**({"history": ["created"]} if verbose else {})})\n',
}
WRONG_BODIES = {
    "lookup": '    import json\n    return json.dumps({"id": id, "status": "closed"})\n',
}
