"""diff as sequence alignment: an inserted or removed step is one insertion or removal, and a request
that differs says which messages changed and how (never only two fingerprints)."""

from __future__ import annotations

import json
from pathlib import Path

from replaykit.core.analysis.diff import diff_runs
from replaykit.core.analysis.message_diff import describe_change, inline_diff, message_changes, render_inline
from replaykit.core.trace.ir import LLMResponse, Message, TextPart, ToolCallPart, ToolResultPart
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.testing.engine_runs import record_sample_run
from replaykit.testing.sample_runs import WEATHER_TOOLS, sample_header


def _agent(run_id: str, cities: list[str], extra_first: str | None = None) -> Run:
    """An agent that looks up each city in turn (optionally one extra city first), then answers."""
    rec = Recorder(sample_header(run_id))
    messages = [Message(role="system", parts=[TextPart(text="You are a weather bot.")]),
                Message(role="user", parts=[TextPart(text="Weather?")])]
    for n, city in enumerate(([extra_first] if extra_first else []) + cities):
        call = ToolCallPart(id=f"c{n}", name="get_weather", arguments={"city": city},
                            raw_arguments=json.dumps({"city": city}))
        asked = rec.llm_call(messages, LLMResponse(message=Message(role="assistant", parts=[call]),
                                                   finish_reason="tool_calls"), tools=WEATHER_TOOLS)
        result = f"{city}: 12C"
        rec.tool_call(call.id, call.name, call.arguments, raw_arguments=call.raw_arguments, result=result)
        messages = [*messages, asked.response.message,
                    Message(role="tool", parts=[ToolResultPart(tool_call_id=call.id, content=result)])]
    rec.llm_call(messages, LLMResponse(message=Message(role="assistant", parts=[TextPart(text="Done.")]),
                                       finish_reason="stop"), tools=WEATHER_TOOLS)
    rec.turn_end("Done.")
    return Run(rec.header, rec.events)


def test_inserted_steps_are_one_insertion_not_every_later_step() -> None:
    a = _agent("a", ["Paris", "London"])
    b = _agent("b", ["Paris", "London"], extra_first="Oslo")  # two steps more, at the start
    result = diff_runs(a, b)
    assert not result.equal
    # The tool steps are the same calls with the same results; the LLM steps saw more history.
    assert result.alignment() == {"equal": 2, "changed": 3, "removed": 0, "inserted": 2}
    inserted = [row for row in result.rows if row["op"] == "inserted"]
    assert [(row["step_a"], row["step_b"]) for row in inserted] == [(None, 0), (None, 1)]
    # Every later step is paired with its counterpart (A step n <-> B step n + 2), not reported as other.
    paired = [(row["step_a"], row["step_b"]) for row in result.rows if row["op"] in ("changed", "equal")]
    assert paired == [(0, 2), (1, 3), (2, 4), (3, 5), (4, 6)]
    # ...and differs only in what the model saw: two extra messages, at B's indexes 2 and 3.
    later = [d for d in result.differences if d.step_a is not None]
    assert {d.field for d in later} == {"request.messages"}
    first_request = next(d for d in later if d.step_a == 0)
    assert [(c["op"], c["index_b"], c["role"]) for c in first_request.messages] == [
        ("added", 2, "assistant"), ("added", 3, "tool")]
    assert "Oslo" in first_request.messages[1]["diff"][0]["text"]


def test_removed_tail_and_insertion_in_json() -> None:
    a = _agent("a", ["Paris", "London", "Rome"])
    b = _agent("b", ["Paris", "London"])
    doc = diff_runs(a, b).to_json()
    assert doc["alignment"]["removed"] == 2  # Rome's LLM call and tool call
    removed = [row for row in doc["steps"] if row["op"] == "removed"]
    assert [row["a"]["summary"].startswith(("model -> get_weather", "get_weather")) for row in removed] == [True, True]
    first = doc["first_divergence"]
    assert (first["step_a"], first["step_b"], first["field"]) == (4, None, "step")
    # The final answers are paired (A step 6 <-> B step 4): B's model saw two messages fewer.
    final = next(row for row in doc["steps"] if row["step_a"] == 6)
    assert final["step_b"] == 4 and final["field"] == "request.messages"
    request = next(d for d in doc["differences"] if d["step_a"] == 6)
    assert [(c["op"], c["index_a"], c["role"]) for c in request["messages"]] == [
        ("removed", 6, "assistant"), ("removed", 7, "tool")]


def test_changed_tool_result_names_the_message_and_the_words(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    record_sample_run(store, "a")
    record_sample_run(store, "b", weather="Rainy, 9C")
    result = diff_runs(store.load("a"), store.load("b"))
    request = next(d for d in result.differences if d.field == "request.messages")
    assert request.a == request.b == "5 messages" and request.messages  # which ones, and how
    [change] = request.messages
    assert change["op"] == "changed" and change["role"] == "tool" and change["index_a"] == change["index_b"]
    ops = {(seg["op"], seg["text"].strip()) for seg in change["diff"]}
    assert ("delete", "Sunny, 21C") in ops and ("insert", "Rainy, 9C") in ops
    assert "[-Sunny, 21C-]{+Rainy, 9C+}" in describe_change(change)


def test_inline_diff_round_trips_both_sides() -> None:
    a, b = "the quick brown fox jumps", "the slow brown fox leaps high"
    segments = inline_diff(a, b)
    assert "".join(s["text"] for s in segments if s["op"] != "insert") == a
    assert "".join(s["text"] for s in segments if s["op"] != "delete") == b
    assert render_inline(segments) == "the [-quick-]{+slow+} brown fox [-jumps-]{+leaps high+}"


def test_message_changes_role_and_removal() -> None:
    def msg(role: str, text: str) -> Message:
        return Message(role=role, parts=[TextPart(text=text)])  # type: ignore[arg-type]

    a = [msg("system", "be brief"), msg("user", "hi"), msg("assistant", "hello")]
    b = [msg("system", "be very brief"), msg("user", "hi")]
    changes = message_changes(a, b)
    assert [(c["op"], c["index_a"], c["index_b"], c["role"]) for c in changes] == [
        ("changed", 0, 0, "system"), ("removed", 2, None, "assistant")]


def test_tool_call_ids_are_not_a_change_in_what_the_model_saw() -> None:
    def history(call_id: str, result: str) -> list[Message]:
        call = ToolCallPart(id=call_id, name="get_weather", arguments={"city": "Oslo"})
        return [Message(role="user", parts=[TextPart(text="Weather?")]),
                Message(role="assistant", parts=[call]),
                Message(role="tool", parts=[ToolResultPart(tool_call_id=call_id, content=result)])]

    assert message_changes(history("call_1", "cold"), history("toolu_9", "cold")) == []
    [change] = message_changes(history("call_1", "cold"), history("toolu_9", "warm"))
    assert (change["op"], change["index_a"], change["role"]) == ("changed", 2, "tool")


def test_a_huge_changed_middle_is_one_deletion_and_one_insertion() -> None:
    a = "head " + " ".join(f"a{i}" for i in range(3000)) + " tail"
    b = "head " + " ".join(f"b{i}" for i in range(3000)) + " tail"
    segments = inline_diff(a, b)  # 3000 x 3000 tokens: past MATCH_LIMIT, not matched word by word
    assert [s["op"] for s in segments] == ["equal", "delete", "insert", "equal"]
    assert "".join(s["text"] for s in segments if s["op"] != "insert") == a
    assert "".join(s["text"] for s in segments if s["op"] != "delete") == b
