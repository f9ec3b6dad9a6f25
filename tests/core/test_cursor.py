"""The serve-then-live cursor: served prefix, parallel tools in any order, desync, synthetic end."""

from __future__ import annotations

from pathlib import Path

import pytest

from replaykit.core.replay.cursor import ReplayCursor
from replaykit.core.trace.ir import Message, Provenance, RunHeader, TextPart, ToolResultPart
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.testing.engine_runs import record_sample_run


@pytest.fixture()
def run(tmp_path: Path) -> Run:
    store = RunStore(tmp_path)
    return store.load(record_sample_run(store, "cur"))


def _recorder() -> Recorder:
    return Recorder(RunHeader(run_id="new", created_at="2026-11-30T00:00:00Z"))


def _result(call_id: str, content: str) -> Message:
    return Message(role="tool", parts=[ToolResultPart(tool_call_id=call_id, content=content)])


def test_serves_whole_record_with_parallel_tools_out_of_order(run: Run) -> None:
    recorder = _recorder()
    cursor = ReplayCursor(run, recorder=recorder)
    messages = run.request_messages(run.steps[0].event)
    first = cursor.llm(messages)
    assert first.action == "serve" and first.step == 0
    assert [c.id for c in first.response.message.tool_calls] == ["call_a", "call_b"]
    # Arrival order reversed: call_b first. Both still served by id.
    b = cursor.tool("call_b", "web_search", {"query": "weather Paris"})
    a = cursor.tool("call_a", "read_file", {"path": "notes.txt"})
    assert (a.action, a.step, a.result) == ("serve", 1, "buy milk; call Bob")
    assert (b.action, b.step, b.result) == ("serve", 2, "Sunny, 21C")
    assert cursor.counters.served_llm_steps == 1 and cursor.counters.served_tool_steps == 2
    assert cursor.counters.provider_calls == 0 and cursor.counters.tool_executions == 0
    kinds = [(e.kind, e.provenance) for e in recorder.events if e.kind in ("llm_call", "tool_call")]
    assert kinds == [("llm_call", Provenance.SERVED)] + [("tool_call", Provenance.SERVED)] * 2


def test_full_serve_then_synthetic_end(run: Run) -> None:
    recorder = _recorder()
    cursor = ReplayCursor(run, recorder=recorder)
    for step in run.steps:
        event = step.event
        if step.kind == "llm":
            decision = cursor.llm(run.request_messages(event))
            assert decision.action == "serve", step.index
        else:
            assert cursor.tool(event.call_id, event.name, event.arguments).action == "serve"
    assert cursor.exhausted
    extra = cursor.llm([*run.conversation(), Message(role="user", parts=[TextPart(text="more?")])])
    assert extra.action == "synthetic" and extra.response is not None
    assert extra.response.finish_reason == "stop" and not extra.response.message.tool_calls
    assert cursor.counters.synthetic_steps == 1 and cursor.counters.provider_calls == 0
    assert [e.kind for e in recorder.events if e.kind == "synthetic"] == ["synthetic"]


def test_desync_fails_open_to_live_and_is_recorded(run: Run) -> None:
    recorder = _recorder()
    cursor = ReplayCursor(run, recorder=recorder)
    messages = run.request_messages(run.steps[0].event)
    changed = [*messages[:-1], Message(role="user", parts=[TextPart(text="something else entirely")])]
    decision = cursor.llm(changed)
    assert decision.action == "live" and decision.reason == "desync" and decision.step == 0
    assert cursor.live and cursor.counters.desyncs == 1
    desync = [e for e in recorder.events if e.kind == "desync"]
    assert len(desync) == 1 and desync[0].step == 0 and desync[0].expected != desync[0].actual
    # Once live, it stays live: no hidden serving after a desync.
    assert cursor.llm(messages).action == "live"


def test_volatile_fields_do_not_desync(run: Run) -> None:
    cursor = ReplayCursor(run)
    messages = run.request_messages(run.steps[0].event)
    system = Message(role="system", parts=[TextPart(
        text="You are a careful assistant. Conversation started: 2027-01-02 08:15 in /home/bob/other.")])
    assert cursor.llm([system, *messages[1:]]).action == "serve"


def test_unknown_tool_call_desyncs(run: Run) -> None:
    cursor = ReplayCursor(run, recorder=_recorder())
    cursor.llm(run.request_messages(run.steps[0].event))
    decision = cursor.tool("call_zzz", "delete_everything", {})
    assert decision.action == "live" and cursor.counters.desyncs == 1


def test_cut_goes_live_at_the_cut(run: Run) -> None:
    cursor = ReplayCursor(run, cut=3)
    assert cursor.llm(run.request_messages(run.steps[0].event)).action == "serve"
    assert cursor.tool("call_a", "read_file", {"path": "notes.txt"}).action == "serve"
    assert cursor.tool("call_b", "web_search", {"query": "weather Paris"}).action == "serve"
    step3 = run.steps[3].event
    decision = cursor.llm(run.request_messages(step3))
    assert decision.action == "live" and decision.reason == "cut" and decision.step == 3
    assert cursor.counters.desyncs == 0
    ended = ReplayCursor(run, cut=len(run.steps))
    for step in run.steps:
        if step.kind == "llm":
            assert ended.llm(run.request_messages(step.event)).action == "serve"
        else:
            ended.tool(step.event.call_id, step.event.name, step.event.arguments)
    assert ended.llm(run.conversation()).action == "live"  # an explicit cut at the end: live, not synthetic
    recorded = cursor.recorded_tool("read_file", '{"path": "out.txt"}')
    assert recorded is not None and recorded.result == "(empty)"
    assert cursor.recorded_tool("read_file", {"path": "nope"}) is None


def test_cut_on_a_tool_step_serves_siblings_and_leaves_it_live(run: Run) -> None:
    cursor = ReplayCursor(run, cut=2)
    cursor.llm(run.request_messages(run.steps[0].event))
    assert cursor.tool("call_b", "web_search", {"query": "weather Paris"}).action == "live"
    assert cursor.tool("call_a", "read_file", {"path": "notes.txt"}).action == "serve"


def test_user_turns(run: Run) -> None:
    assert [m.text for m in ReplayCursor(run).user_turns()] == [
        "Summarize notes.txt and the weather into out.txt.", "What does out.txt contain now?"]


def _text(role: str, text: str) -> Message:
    return Message(role=role, parts=[TextPart(text=text)])


def _two_turn_record(tmp_path: Path) -> Run:
    """A record whose application added input inside its turns: a second user message before the first
    call, an assistant note it injected before the next user turn."""
    from replaykit.core.trace.ir import LLMResponse

    store = RunStore(tmp_path / "inputs")
    header = RunHeader(run_id="inputs", created_at="2026-01-01T00:00:00Z")
    recorder = Recorder(header, store.create(header))
    hi, ask, note, thanks = _text("user", "Hi"), _text("user", "Weather?"), _text("assistant", "(note)"), \
        _text("user", "Thanks")
    answer = LLMResponse(message=_text("assistant", "Sunny."), finish_reason="stop")
    recorder.turn_start(hi)
    recorder.turn_start(ask)
    recorder.llm_call([hi, ask], answer)
    recorder.turn_start(thanks)
    recorder.llm_call([hi, ask, answer.message, note, thanks],
                      LLMResponse(message=_text("assistant", "Welcome."), finish_reason="stop"))
    recorder.close()
    return store.load("inputs")


def test_input_added_at_several_places_is_handed_over_once(tmp_path: Path) -> None:
    from replaykit.core.replay.cursor import with_input

    record = _two_turn_record(tmp_path)
    recorder = _recorder()
    cursor = ReplayCursor(record, recorder=recorder)
    hi, ask, thanks = (e.message for e in record.user_turns())
    pending = [ask, thanks]
    first = cursor.take_recorded_input([hi])
    assert [(i, m.text) for i, m in first] == [(1, "Weather?")]
    served = cursor.llm(with_input([hi], first))
    assert served.action == "serve"
    assert cursor.next_turn(pending) == thanks and pending == []  # "Weather?" was handed over already
    # An engine whose history kept neither input (Hermes) misses both in the next request.
    own = [hi, served.response.message, thanks]
    found = cursor.take_recorded_input(own)
    assert [(i, m.text) for i, m in found] == [(1, "Weather?"), (3, "(note)")]
    assert cursor.llm(with_input(own, found)).action == "serve"
    assert cursor.counters.desyncs == 0
    assert [e.message.text for e in recorder.events if e.kind == "turn_start"] == ["Weather?"]  # once


def test_recorded_input_is_nothing_when_the_record_differs_otherwise(tmp_path: Path) -> None:
    record = _two_turn_record(tmp_path)
    cursor = ReplayCursor(record)
    assert cursor.recorded_input([_text("user", "Hello")]) == []  # not a subsequence: a desync, not input
    assert cursor.recorded_input([_text("user", "Hi"), _text("user", "Weather?")]) == []  # nothing added
