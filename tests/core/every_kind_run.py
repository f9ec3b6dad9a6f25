"""A recorded run holding every event kind and every health signal (inspect and replay tests)."""

from __future__ import annotations

from pathlib import Path

from replaykit.core.trace import ir
from replaykit.core.trace.ir import LLMResponse, Message, TextPart, ToolCallPart, ToolSpec, Usage
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.store import RunStore


def every_kind_run(root: Path) -> Path:
    """Every event kind and every health signal in one run: a retry, a truncation, a loop, tool failures,
    errors, a desync, a synthetic step, a failed subagent, meta, opaque, a budget-exhausted end."""
    header = ir.RunHeader(run_id="mixed", created_at="2026-11-30T10:00:00Z", source=ir.Source(framework="sample"),
                          provider="openai")  # no model: it comes from the first LLM call
    store = RunStore(root)
    with store.create(header) as writer:
        rec = Recorder(header, writer)
        tools = [ToolSpec(name="read_file", parameters={"type": "object"}), ToolSpec(name="terminal")]
        user = Message(role="user", parts=[TextPart(text="fix   the\nbuild " + "x" * 300)])
        rec.meta({"model": "meta-model", "note": 1})
        rec.turn_start(user)
        rec.llm_error([user], message="rate limited", status_code=429, attempt=1, model="m1", tools=tools)
        ask = Message(role="assistant", parts=[TextPart(text="let me look"),
                                               ToolCallPart(id="c1", name="read_file", arguments={"path": "a"}),
                                               ToolCallPart(id="c2", name="terminal", raw_arguments='{"cmd": "make"}')])
        rec.llm_call([user], LLMResponse(message=ask, finish_reason="tool_calls", model="gpt-4o-mini",
                                         usage=Usage(input_tokens=900_000, output_tokens=5, details={"x": None, "cost_usd": 0.5})),
                     model="m1", tools=tools, attempt=2)
        for n in range(4):
            rec.tool_call(f"c{n + 1}", "read_file", {"path": "a"}, result="line\n" * 100)
        rec.tool_call("c9", "terminal", '{"cmd": "make"}', status="error", error="exit 2: no rule")
        rec.tool_call("c10", "terminal", "not json {", status="error", error="boom")
        rec.error("tool crashed", where="tool", error_type="OSError")
        rec.desync(3, reason="request changed", expected="a", actual="b")
        rec.synthetic(4, reason="record ended")
        rec.subagent("start", child_run_id="child-1", goal="look around " * 20)
        rec.subagent("stop", child_run_id="child-1", status="failed", summary="gave up")
        rec.opaque("hermes", "hook", {"k": [1, 2]})
        rec.llm_call([user, ask], LLMResponse(message=Message(role="assistant", parts=[TextPart(text="cut")]),
                                              finish_reason="length", usage=Usage(input_tokens=10, output_tokens=2),
                                              model="gpt-4o-mini"),
                     model="m1", tools=tools)
        rec.turn_end("partial answer", status="interrupted", reason="max_iterations_reached")
    return store.path_for("mixed")
