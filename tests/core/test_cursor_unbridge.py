"""``ReplayCursor(unbridge=True)``: an engine that cannot take a bridged call as made (Hermes 0.19.0 playing a
Hermes 0.22 Tool Search recording) is served each bridged call as its underlying call, matched in that view,
and the new run says so; ``diff`` finds it equal to the record and puts the difference down to the engine.

Driven like an engine without Tool Search would drive it: each request is the record's, with the calls
the engine was served (the underlying ones) in its history."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replaykit.core.analysis.diff import diff_runs
from replaykit.core.replay.branch import branch
from replaykit.core.replay.cursor import ReplayCursor
from replaykit.core.replay.play import PlayOptions, start_play
from replaykit.core.trace.bridge_view import (
    recorded_underlying,
    unbridged_calls,
    unbridged_response,
    underlying_messages,
)
from replaykit.core.trace.ir import LLMCallEvent, Provenance, RunHeader, ToolCallEvent
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore

NEXT = Path(__file__).resolve().parents[1] / "fixtures" / "hermes" / "0.22"


def _play_unbridged(cursor: ReplayCursor, run: Run) -> list[str]:
    """Drive ``cursor`` through ``run`` as a Hermes without Tool Search would; the tool names it ran."""
    recorded = recorded_underlying(run)
    ran: list[str] = []
    for step in run.steps:
        event = step.event
        if isinstance(event, LLMCallEvent):
            decision = cursor.llm(underlying_messages(run.request_messages(event), recorded))
            assert decision.action == "serve", decision.reason
            assert all(c.name != "tool_call" for c in decision.response.message.tool_calls)
            calls = {c.id: c for c in decision.response.message.tool_calls}
        else:
            call = calls[event.call_id]  # the served call keeps the recorded id
            served = cursor.tool(call.id, call.name, call.arguments)
            assert served.action == "serve" and served.result == event.result
            ran.append(call.name)
    return ran


def _ran(event: ToolCallEvent) -> tuple[str, object]:
    """The tool a recorded step ran: its underlying call, else the call itself (a catalog read, or an
    entry of a batch Hermes 0.22 ran under an id of its own)."""
    return (event.underlying.name, event.underlying.arguments) if event.underlying else (event.name, event.arguments)


@pytest.mark.parametrize("name", ["tools_sequence", "two_turns", "codex_responses", "anthropic_messages",
                                  "tool_search", "tool_batch"])
def test_bridged_calls_are_served_as_their_underlying_calls(name: str) -> None:
    run = Run.load(NEXT / f"{name}.jsonl")
    recorder = Recorder(RunHeader(run_id="new", created_at="2026-12-07T00:00:00Z"))
    cursor = ReplayCursor(run, recorder=recorder, unbridge=True)
    ran = _play_unbridged(cursor, run)
    assert ran == [_ran(e)[0] for e in run.tool_calls()] and "todo_list" in ran
    assert cursor.counters.desyncs == 0
    new = Run(recorder.header, list(recorder.events))
    # the new run holds what the engine did: direct calls, with their underlying arguments
    assert [(e.name, e.arguments) for e in new.tool_calls()] == [_ran(e) for e in run.tool_calls()]
    assert {s.event.provenance for s in new.steps} == {Provenance.SERVED}
    assert diff_runs(run, new).equal


def test_a_batch_is_served_as_one_direct_call_per_tool_under_the_ids_it_ran_with() -> None:
    """Hermes 0.22 expands ``tool_call({"calls": [a, b]})`` into one bridged call per entry (the first keeps
    the call's id, the second gets a new one) and runs them: the record's tool steps say which id each ran
    under, and an engine that cannot bridge is served those calls directly."""
    run = Run.load(NEXT / "tool_batch.jsonl")
    recorded = recorded_underlying(run)
    (batch,) = run.llm_calls()[0].response.message.tool_calls
    second = run.tool_calls()[1]
    assert batch.name == "tool_call" and len(batch.arguments["calls"]) == 2
    assert recorded.batches == {batch.id: [second.call_id]} and second.call_id != batch.id
    served = unbridged_response(run.llm_calls()[0].response, recorded).message.tool_calls
    assert [(c.id, c.name) for c in served] == [(batch.id, "harness_echo"), (second.call_id, "todo_list")]
    assert served[1].arguments == batch.arguments["calls"][1]["arguments"]
    assert unbridged_calls(run) == 1


def test_a_batch_the_record_ran_as_one_call_stays_as_made() -> None:
    """A batch whose entries the record does not show under ids of their own (one tool step answers it)
    has no one direct call per tool to serve: it stays as made."""
    run = Run.load(NEXT / "tool_batch.jsonl")
    events = [e for e in run.events if not (isinstance(e, ToolCallEvent) and e.name == "todo_list")]
    cut = Run(run.header, events)
    assert recorded_underlying(cut).batches == {run.tool_calls()[0].call_id: []}
    response = cut.llm_calls()[0].response
    assert unbridged_response(response, recorded_underlying(cut)) is response


def test_without_unbridge_the_bridged_calls_are_served_as_made() -> None:
    run = Run.load(NEXT / "tools_sequence.jsonl")
    cursor = ReplayCursor(run)
    first = cursor.llm(run.request_messages(run.llm_calls()[0]))
    assert [c.name for c in first.response.message.tool_calls] == ["tool_call"]
    # ... and an engine holding the direct calls desyncs there (its history is not the record's)
    cursor = ReplayCursor(run)
    _first = cursor.llm(run.request_messages(run.llm_calls()[0]))
    recorded = recorded_underlying(run)
    second = run.llm_calls()[1]
    assert cursor.tool("call_001", "harness_echo", {"text": "hello replaykit"}).action == "serve"
    assert cursor.llm(underlying_messages(run.request_messages(second), recorded)).action == "live"
    assert cursor.counters.desyncs == 1


def test_unbridged_engine_holding_bridged_history_desyncs() -> None:
    """The unbridged view is compared exactly: a request still holding the bridged call is not the one an
    unbridged engine would send, and desyncs rather than being served."""
    run = Run.load(NEXT / "tools_sequence.jsonl")
    cursor = ReplayCursor(run, unbridge=True)
    first = cursor.llm(run.request_messages(run.llm_calls()[0]))  # no tool call in it yet: served
    call = first.response.message.tool_calls[0]
    assert (call.name, call.arguments) == ("harness_echo", {"text": "hello replaykit"})
    cursor.tool(call.id, call.name, call.arguments)
    assert cursor.llm(run.request_messages(run.llm_calls()[1])).action == "live"
    assert cursor.counters.desyncs == 1


def test_branch_edit_of_bridged_arguments_is_served_unbridged(tmp_path: Path) -> None:
    """An argument edit of a bridged call replaces what the recorded underlying call said: the engine is
    served the edited underlying call."""
    store = RunStore(tmp_path)
    source = Run.load(NEXT / "tools_sequence.jsonl")
    run = store.load(store.write_run(source.header, list(source.events)).stem)
    edited = {"calls": [{"name": "harness_echo", "arguments": {"text": "edited"}}]}
    child = branch(store, run, 1, args=json.dumps(edited))
    cursor = ReplayCursor(child, cut=1, unbridge=True)
    served = cursor.llm(child.request_messages(child.llm_calls()[0]))
    assert served.action == "serve"
    assert [(c.name, c.arguments) for c in served.response.message.tool_calls] == [("harness_echo", {"text": "edited"})]


def test_recorded_tool_finds_a_bridged_call_by_its_underlying_call() -> None:
    run = Run.load(NEXT / "tools_sequence.jsonl")
    cursor = ReplayCursor(run, cut=0)
    found = cursor.recorded_tool("harness_echo", {"text": "hello replaykit"})
    assert isinstance(found, ToolCallEvent) and found.name == "tool_call"
    assert cursor.recorded_tool("harness_echo", {"text": "another"}) is None


def test_play_lineage_and_diff_note_name_the_unbridged_engine(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    source = Run.load(NEXT / "tools_sequence.jsonl")
    run = store.load(store.write_run(source.header, list(source.events)).stem)
    assert unbridged_calls(run) == 2
    session = start_play(run, PlayOptions(store=store, serve_only=True), engine="hermes",
                         framework_version="0.19.0", unbridge=True)
    assert session.recorder.header.lineage.details["unbridged"] is True
    _play_unbridged(session.cursor, run)
    played = store.load(session.finish(run.final_answer).run_id)
    result = diff_runs(run, played)
    assert result.equal
    assert [n["reason"] for n in result.notes if n["kind"] == "bridged_calls"] == [
        "2 tool call(s) made through Tool Search's tool_call, compared as the underlying tool calls (run B is a "
        "play on hermes 0.19.0, which cannot take a bridged call as made: it was served each one as its "
        "underlying call)"]
    # A record without a bridged call is played as made: nothing to say in the lineage.
    plain = Run.load(NEXT.parent / "tools_sequence.jsonl")
    plain = store.load(store.write_run(plain.header, list(plain.events)).stem)
    session = start_play(plain, PlayOptions(store=store, serve_only=True), engine="hermes", unbridge=True)
    assert unbridged_calls(plain) == 0 and "unbridged" not in session.recorder.header.lineage.details
    session.finish(None)


@pytest.mark.parametrize("unbridge", [False, True])
def test_a_batch_is_served_as_hermes_expanded_it(unbridge: bool) -> None:
    """Every engine is served a batch Hermes 0.22 ran entry by entry as that expansion (bridged, or with
    ``unbridge`` direct), so it asks for both recorded tool steps and its next request is the record's."""
    run = Run.load(NEXT / "tool_batch.jsonl")
    recorder = Recorder(RunHeader(run_id="new", created_at="2026-12-07T00:00:00Z"))
    cursor = ReplayCursor(run, recorder=recorder, unbridge=unbridge)
    first, second = run.llm_calls()
    served = cursor.llm(run.request_messages(first)).response.message.tool_calls
    ids = [e.call_id for e in run.tool_calls()]
    assert [c.id for c in served] == ids
    if unbridge:
        assert [c.name for c in served] == ["harness_echo", "todo_list"]
    else:  # one bridged call per entry, as Hermes's history holds them
        assert [(c.name, [e["name"] for e in c.arguments["calls"]]) for c in served] == \
            [("tool_call", ["harness_echo"]), ("tool_call", ["todo_list"])]
    for call in served:
        assert cursor.tool(call.id, call.name, call.arguments).action == "serve"
    view = underlying_messages(run.request_messages(second), recorded_underlying(run)) if unbridge \
        else run.request_messages(second)
    assert cursor.llm(view).action == "serve" and cursor.counters.desyncs == 0
    new = Run(recorder.header, list(recorder.events))
    result = diff_runs(run, new)
    assert result.equal and (result.notes == []) != unbridge
