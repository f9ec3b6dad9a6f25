"""Long recorded runs written fast, straight through the recorder (no agent, no provider): a tool loop of
``n_tool_steps`` tool-using steps, ``per_turn`` per user turn, the whole history kept in every request.

For tests and benchmarks of readers at size (the viewer's pages, ``inspect``): the file is a real
replaykit trace (delta-encoded requests, tool results referenced once), made in about the time it takes
to encode its events. ``bench/long_session.py`` supplies Hermes-shaped content for the benchmarks.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

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
from replaykit.core.trace.store import RunStore

DEFAULT_TOOLS = [ToolSpec(name="read_file", description="Read a file", parameters={"type": "object"}),
                 ToolSpec(name="terminal", description="Run a command", parameters={"type": "object"})]


def default_result(i: int) -> str:
    return f"[{i}] " + " ".join(f"line {i}.{k}: value {i * 31 + k}" for k in range(12))


def write_tool_loop_run(store: RunStore, run_id: str, n_tool_steps: int, *, per_turn: int = 10,
                        result_of: Callable[[int], str] = default_result, system_prompt: str = "You are a coding agent.",
                        tools: Sequence[ToolSpec] = DEFAULT_TOOLS, failing_step: int | None = None,
                        created_at: str = "2026-12-01T09:00:00Z", model: str = "loop-model",
                        framework: str = "sample") -> Path:
    """Record the run into ``store`` and return its file. Per turn: the user message, ``per_turn`` LLM
    calls asking for one tool each and their tool calls, then the final answer; the run ends completed.
    ``failing_step``: the tool call with this 0-based tool index fails (an error status)."""
    header = RunHeader(run_id=run_id, created_at=created_at, model=model,
                       source=Source(framework=framework, adapter="replaykit.testing"))
    recorder = Recorder(header, store.create(header), keep_events=False)
    messages: list[Message] = [Message(role="system", parts=[TextPart(text=system_prompt)])]
    names = [t.name for t in tools]
    k = 0
    t = 0.0
    turns = max(1, -(-n_tool_steps // per_turn))
    for turn in range(turns):
        user = Message(role="user", parts=[TextPart(text=f"Turn {turn}: carry on with the task.")])
        recorder.turn_start(user, turn=turn, t=t)
        messages.append(user)
        for _ in range(min(per_turn, n_tool_steps - k)):
            call = ToolCallPart(id=f"call_{k:06d}", name=names[k % len(names)],
                                arguments={"path": f"src/module_{k % 97}.py", "n": k})
            event = recorder.llm_call(messages, LLMResponse(message=Message(role="assistant", parts=[call]),
                                                            finish_reason="tool_calls", model=model,
                                                            usage=Usage(input_tokens=1000 + k, output_tokens=20)),
                                      tools=tools, t=t, duration=0.01)
            failed = k == failing_step
            result = result_of(k)
            tool = recorder.tool_call(call.id, call.name, call.arguments, result=result,
                                      status="error" if failed else "ok",
                                      error="PermissionError: read-only" if failed else None,
                                      llm_call_id=event.id, t=t + 0.01, duration=0.002)
            messages.append(event.response.message)
            messages.append(recorder.tool_message(tool) if hasattr(recorder, "tool_message") else Message(
                role="tool", parts=[{"type": "tool_result", "tool_call_id": call.id, "name": call.name,  # type: ignore[list-item]
                                     "content": result, "is_error": failed}]))
            k += 1
            t += 0.02
        answer = Message(role="assistant", parts=[TextPart(text=f"Done with turn {turn}: " + json.dumps(k))])
        recorder.llm_call(messages, LLMResponse(message=answer, finish_reason="stop", model=model,
                                                usage=Usage(input_tokens=900 + k, output_tokens=30)),
                          tools=tools, t=t, duration=0.01)
        messages.append(answer)
        recorder.turn_end(answer.text, t=t + 0.01)
        t += 0.02
    recorder.run_end(f"Done after {k} tool calls", t=t)
    recorder.close()
    return store.path_for(run_id)


def stamp_copies(root: Path, template: Path, count: int, *, prefix: str = "run", branch_every: int = 0,
                 start: int = 0) -> list[str]:
    """Write ``count`` copies of the run file ``template`` into the store directory ``root``, each with its
    own id (``{prefix}-{n:05d}``), date, title and tag; with ``branch_every`` N, every N-th copy is a
    branch of the copy before it (listed under it). A store of thousands of runs in a second; returns the ids."""
    lines = template.read_bytes().splitlines(keepends=True)
    header, body = json.loads(lines[0]), b"".join(lines[1:])
    ids: list[str] = []
    parent: str | None = None
    for n in range(start, start + count):
        run_id = f"{prefix}-{n:05d}"
        stamped = dict(header, run_id=run_id, title=f"task {n}", tags=[f"batch-{n % 50}"],
                       created_at=f"2026-{1 + n % 12:02d}-{1 + n % 28:02d}T{n % 24:02d}:{n % 60:02d}:00Z")
        if branch_every and n % branch_every == branch_every - 1 and parent is not None:
            stamped["lineage"] = {"relation": "branch", "parent_run_id": parent, "parent_step": 1}
        else:
            stamped.pop("lineage", None)
            parent = run_id
        (root / f"{run_id}.jsonl").write_bytes(json.dumps(stamped).encode() + b"\n" + body)
        ids.append(run_id)
    return ids
