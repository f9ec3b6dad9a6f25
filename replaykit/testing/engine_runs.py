"""Small, realistic runs built with the real ``Recorder``: fixtures for tests, benches and demos.

``record_sample_run`` writes a two-turn tool-using agent run (parallel tool calls, a tool error, a
final answer per turn) into a store; ``record_long_run`` writes an N-step run for benchmarks.
"""

from __future__ import annotations

import json
from typing import Any

from replaykit.core.trace.canonical import fingerprint
from replaykit.core.trace.ir import (
    LLMResponse,
    Message,
    RunHeader,
    Source,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    Usage,
)
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.store import RunStore, new_run_id, utc_now_iso

SAMPLE_TOOLS = [
    ToolSpec(name="read_file", description="Read a text file.",
             parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    ToolSpec(name="web_search", description="Search the web.",
             parameters={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}),
    ToolSpec(name="write_file", description="Write a text file.",
             parameters={"type": "object",
                         "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                         "required": ["path", "content"]}),
]
SYSTEM_PROMPT = "You are a careful assistant. Conversation started: 2026-11-30 19:40 in /home/alice/project."


class _Clock:
    """A deterministic clock: each reading advances by ``step`` seconds."""

    def __init__(self, step: float = 0.25) -> None:
        self.now = 1000.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def _assistant_calls(calls: list[tuple[str, str, dict[str, Any]]], text: str = "") -> Message:
    parts: list[Any] = [TextPart(text=text)] if text else []
    parts += [ToolCallPart(id=cid, name=name, arguments=args, raw_arguments=json.dumps(args))
              for cid, name, args in calls]
    return Message(role="assistant", parts=parts)


def _tool_message(call_id: str, name: str, content: str, is_error: bool = False) -> Message:
    return Message(role="tool", parts=[ToolResultPart(tool_call_id=call_id, name=name, content=content,
                                                      is_error=is_error)])


def _header(run_id: str, title: str) -> RunHeader:
    return RunHeader(run_id=run_id, created_at=utc_now_iso(), source=Source(framework="openai-chat",
                     adapter="sample"), model="sample-model", provider="scripted", session_id="sess-sample",
                     title=title)


def record_sample_run(store: RunStore, run_id: str | None = None, *, weather: str = "Sunny, 21C",
                      last_answer: str = "out.txt is empty.") -> str:
    """Record a two-turn run; returns its id. Steps:

    0 llm -> read_file(notes.txt) + web_search(weather)   (parallel calls)
    1 tool read_file ok      2 tool web_search ok
    3 llm -> write_file(out.txt)
    4 tool write_file error
    5 llm: final answer of turn 1
    6 llm -> read_file(out.txt)    (turn 2)
    7 tool read_file ok
    8 llm: final answer of turn 2
    """
    run_id = run_id or new_run_id("sample")
    header = _header(run_id, "sample two-turn run")
    recorder = Recorder(header, store.create(header), clock=_Clock())
    params = {"temperature": 0}

    def llm(messages: list[Message], answer: Message, finish: str, tokens: int) -> None:
        recorder.llm_call(
            messages, LLMResponse(message=answer, finish_reason=finish, model="sample-model",
                                  usage=Usage(input_tokens=tokens, output_tokens=20, total_tokens=tokens + 20)),
            model="sample-model", tools=SAMPLE_TOOLS, params=params, duration=0.5,
            fingerprint=fingerprint(messages, SAMPLE_TOOLS),
        )

    def tool(call_id: str, name: str, args: dict[str, Any], result: str, status: str = "ok") -> Message:
        recorder.tool_call(call_id, name, args, raw_arguments=json.dumps(args), result=result, status=status,
                           error=result if status == "error" else None, duration=0.1)
        return _tool_message(call_id, name, result, status == "error")

    user1 = Message(role="user", parts=[TextPart(text="Summarize notes.txt and the weather into out.txt.")])
    messages = [Message(role="system", parts=[TextPart(text=SYSTEM_PROMPT)]), user1]
    recorder.turn_start(user1, turn=0)
    a0 = _assistant_calls([("call_a", "read_file", {"path": "notes.txt"}),
                           ("call_b", "web_search", {"query": "weather Paris"})])
    llm(messages, a0, "tool_calls", 100)
    r1 = tool("call_a", "read_file", {"path": "notes.txt"}, "buy milk; call Bob")
    r2 = tool("call_b", "web_search", {"query": "weather Paris"}, weather)
    messages = [*messages, a0, r1, r2]
    a1 = _assistant_calls([("call_c", "write_file", {"path": "out.txt", "content": "milk, Bob, sunny"})])
    llm(messages, a1, "tool_calls", 160)
    r3 = tool("call_c", "write_file", {"path": "out.txt", "content": "milk, Bob, sunny"},
              "PermissionError: out.txt is read-only", status="error")
    messages = [*messages, a1, r3]
    answer1 = Message(role="assistant", parts=[TextPart(text="I could not write out.txt: it is read-only.")])
    llm(messages, answer1, "stop", 200)
    recorder.turn_end(answer1.text)
    user2 = Message(role="user", parts=[TextPart(text="What does out.txt contain now?")])
    recorder.turn_start(user2, turn=1)
    messages = [*messages, answer1, user2]
    a2 = _assistant_calls([("call_d", "read_file", {"path": "out.txt"})])
    llm(messages, a2, "tool_calls", 240)
    r4 = tool("call_d", "read_file", {"path": "out.txt"}, "(empty)")
    messages = [*messages, a2, r4]
    answer2 = Message(role="assistant", parts=[TextPart(text=last_answer)])
    llm(messages, answer2, "stop", 260)
    recorder.turn_end(answer2.text)
    recorder.run_end(answer2.text)
    recorder.close()
    return run_id


def record_long_run(store: RunStore, steps: int, run_id: str | None = None) -> str:
    """Record a run of about ``steps`` steps (alternating LLM and tool calls) for benchmarks."""
    run_id = run_id or new_run_id("long")
    header = _header(run_id, f"long run ({steps} steps)")
    recorder = Recorder(header, store.create(header), keep_events=False, clock=_Clock(0.01))
    user = Message(role="user", parts=[TextPart(text="Work through the task list.")])
    messages = [Message(role="system", parts=[TextPart(text=SYSTEM_PROMPT)]), user]
    recorder.turn_start(user)
    for i in range(max(1, steps // 2)):
        call_id = f"call_{i}"
        args = {"path": f"file_{i}.txt"}
        answer = _assistant_calls([(call_id, "read_file", args)], text=f"Reading file {i}.")
        recorder.llm_call(messages, LLMResponse(message=answer, finish_reason="tool_calls",
                                                usage=Usage(input_tokens=100 + i, output_tokens=12)),
                          model="sample-model", tools=SAMPLE_TOOLS, duration=0.3)
        result = f"contents of file {i}: " + "lorem ipsum " * 8
        recorder.tool_call(call_id, "read_file", args, raw_arguments=json.dumps(args), result=result,
                           duration=0.01)
        messages = [*messages, answer, _tool_message(call_id, "read_file", result)]
    final = Message(role="assistant", parts=[TextPart(text="All files read.")])
    recorder.llm_call(messages, LLMResponse(message=final, finish_reason="stop"), model="sample-model",
                      tools=SAMPLE_TOOLS, duration=0.2)
    recorder.run_end(final.text)
    recorder.close()
    return run_id
