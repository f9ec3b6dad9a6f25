"""Conformance, live: every engine x recordings x {branch at a tool result, at tool arguments, at a model
response} and x provider faults {429 + Retry-After, 500 twice, stalled stream, 401, length-truncated}.

One scripted server for the module (its policy switched per test). Each cell checks: requests only from
the cut on (the server's count equals the play's provider calls; the served prefix sent nothing), the
first live request carries the conversation ``replaykit replay`` shows for the branch, the right diff
verdict, and the same answers from every engine (tool steps, guard verdicts, final answer).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from replaykit.core.analysis.diff import diff_runs
from replaykit.core.errors import ReplaykitError
from replaykit.core.replay.branch import branch
from replaykit.core.replay.replay import replay_run
from replaykit.core.replay.tool_ladder import UNAVAILABLE_MARKER
from replaykit.core.trace.ir import Provenance
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.engines import play
from replaykit.testing.script import ReplyList, fault, sequence_policy
from replaykit.testing.scripted_server import ScriptedServer
from tests.conformance._matrix import (
    ENGINE_NAMES,
    ENGINES,
    Switch,
    conversation,
    options,
    recordings,
    stored,
    wire_conversation,
)

pytest.importorskip("openai")

FINAL = "Live final answer."


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[ScriptedServer, Switch]]:
    switch = Switch()
    with ScriptedServer(switch) as srv:
        yield srv, switch


def _play(srv: ScriptedServer, switch: Switch, policy: Any, run: Run, engine: str, store: RunStore,
          **kw: Any) -> tuple[Any, list[Any]]:
    switch.policy = policy
    srv.clear()
    result = play(run, engine, options(store, srv.base_url, **kw))
    return result, list(srv.llm_requests)


def _first_tool_step(run: Run) -> int:
    return next(s.index for s in run.steps if s.kind == "tool")


def _check_prefix_served(result: Any, played: Run, cut: int, requests: list[Any]) -> None:
    assert len(requests) == result.counters.provider_calls  # nothing reached the server but the live part
    assert result.counters.tool_executions == 0
    before = [s for s in played.steps if s.index < cut]
    assert all(s.event.provenance in (Provenance.SERVED, Provenance.EDITED) for s in before)


@pytest.mark.parametrize("recording", recordings())
@pytest.mark.parametrize("engine", ENGINES)
def test_branch_at_a_tool_result(engine: str, recording: str, tmp_path: Path,
                                 server: tuple[ScriptedServer, Switch]) -> None:
    srv, switch = server
    store = RunStore(tmp_path / "store")
    run = stored(store, recording)
    step = _first_tool_step(run)
    child = branch(store, run, step, result="EDITED RESULT")
    result, requests = _play(srv, switch, sequence_policy([], FINAL), child, engine, store)
    assert result.status == "completed", result.error
    played = store.load(result.run_id)
    cut = result.cut
    _check_prefix_served(result, played, cut, requests)
    assert 1 <= len(requests)
    # The first live request starts with the branch's conversation as `replaykit replay` shows it (then
    # the results of the edited call's parallel siblings, answered by the ladder).
    expected = conversation(replay_run(child)["messages"])
    assert wire_conversation(requests[0].body)[: len(expected)] == expected
    assert ("tool", "", ("result:EDITED RESULT",)) in wire_conversation(requests[0].body)
    assert result.final_answer == FINAL
    assert not diff_runs(run, played).equal  # `replaykit diff RUN PLAYED` exits 1


@pytest.mark.parametrize("recording", recordings())
@pytest.mark.parametrize("engine", ENGINES)
def test_branch_at_tool_arguments(engine: str, recording: str, tmp_path: Path,
                                  server: tuple[ScriptedServer, Switch]) -> None:
    srv, switch = server
    store = RunStore(tmp_path / "store")
    run = stored(store, recording)
    step = _first_tool_step(run)
    child = branch(store, run, step, args='{"edited": true}')
    result, requests = _play(srv, switch, sequence_policy([], FINAL), child, engine, store)
    assert result.status == "completed", result.error
    played = store.load(result.run_id)
    _check_prefix_served(result, played, result.cut, requests)
    # The edited call is not in the record and no implementation was given: the ladder's last rung.
    tool = next(s.event for s in played.steps if s.kind == "tool" and s.event.arguments == {"edited": True})
    assert tool.status == "unavailable" and tool.provenance == Provenance.SYNTHETIC
    assert (tool.result or "").startswith(UNAVAILABLE_MARKER)
    assert any((tool.result or "") in str(m) for m in requests[0].body["messages"])
    assert result.final_answer == FINAL
    assert not diff_runs(run, played).equal


@pytest.mark.parametrize("recording", recordings())
@pytest.mark.parametrize("engine", ENGINES)
def test_branch_at_a_model_response(engine: str, recording: str, tmp_path: Path,
                                    server: tuple[ScriptedServer, Switch]) -> None:
    srv, switch = server
    store = RunStore(tmp_path / "store")
    run = stored(store, recording)
    first_llm = run.llm_calls()[0]
    step = next(s.index for s in run.steps if s.event is first_llm)
    child = branch(store, run, step, response="An edited answer without tools.")
    result, requests = _play(srv, switch, sequence_policy([], FINAL), child, engine, store)
    assert result.status == "completed", result.error
    played = store.load(result.run_id)
    _check_prefix_served(result, played, result.cut, requests)
    later_turns = len(run.user_turns()) - 1
    assert len(requests) == later_turns  # only the recording's later user turns go live
    expected = FINAL if later_turns else "An edited answer without tools."
    assert result.final_answer == expected
    assert not diff_runs(run, played).equal


@pytest.mark.parametrize("engine", ENGINES)
def test_guard_verdicts_agree(engine: str, tmp_path: Path, server: tuple[ScriptedServer, Switch]) -> None:
    """Live calls with implementations: the destructive one is dry-run by the guard, the safe one runs,
    in every engine, with the same texts recorded (and shown to the model)."""
    from replaykit.testing.engine_runs import record_sample_run
    from replaykit.testing.script import ToolCall

    srv, switch = server
    store = RunStore(tmp_path / "store")
    run = store.load(record_sample_run(store, "src"))
    ran: list[str] = []
    impls = {"write_file": lambda **kw: ran.append("write") or "written",
             "read_file": lambda **kw: ran.append("read") or f"contents of {kw.get('path')}"}
    policy = sequence_policy([[ToolCall("write_file", {"path": "new.txt", "content": "y"}, id="w1"),
                               ToolCall("read_file", {"path": "other.txt"}, id="r1")]], FINAL)
    result, _requests = _play(srv, switch, policy, run, engine, store, cut=0, max_iterations=3,
                             extra={"tool_impls": impls})
    assert result.status == "completed", result.error
    played = store.load(result.run_id)
    live = [s.event for s in played.steps if s.kind == "tool" and s.event.provenance != Provenance.SERVED]
    tools = {e.name: e for e in live}
    assert tools["write_file"].status == "dry_run" and "NOT executed" in (tools["write_file"].result or "")
    assert tools["read_file"].status == "ok" and tools["read_file"].result == "contents of other.txt"
    assert "write" not in ran and "read" in ran
    _VERDICTS[engine] = sorted((e.name, e.status, e.result) for e in live)
    assert len({repr(v) for v in _VERDICTS.values()}) == 1, _VERDICTS


_VERDICTS: dict[str, Any] = {}


# ------------------------------------------------------------------------------------------ faults

FAULTS = {
    "429": ([fault("429", retry_after=0.2)], 2),
    "500x2": ([fault("500"), fault("500")], 3),
    "stall": ([fault("stall", stall_seconds=5, stall_after_chunks=1)], 2),
    "length": ([fault("length", text="The first half, ")], 2),
}


@pytest.mark.parametrize("kind", sorted(FAULTS))
@pytest.mark.parametrize("engine", ENGINES)
def test_provider_faults_recover(engine: str, kind: str, tmp_path: Path,
                                 server: tuple[ScriptedServer, Switch]) -> None:
    srv, switch = server
    store = RunStore(tmp_path / "store")
    run = stored(store, "import/openai-chat")
    replies, calls = FAULTS[kind]
    answer = "and the second half." if kind == "length" else FINAL
    result, requests = _play(srv, switch, ReplyList(replies, then=sequence_policy([], answer)), run, engine, store,
                             cut=0, stale_timeout=1.0)
    assert result.status == "completed", result.error
    assert len(requests) == result.counters.provider_calls == calls
    if kind == "length":  # the cut answer, continued and joined
        assert result.final_answer is not None and result.final_answer.startswith("The fir")
        assert result.final_answer.endswith("and the second half.")
    else:
        assert result.final_answer == FINAL
    played = store.load(result.run_id)
    errors = [e for e in played.events if e.kind == "error"]
    assert len(errors) == (0 if kind == "length" else calls - 1)
    if kind == "429":
        assert errors[0].status_code == 429


@pytest.mark.parametrize("engine", ENGINES)
def test_401_fails_at_once_and_keeps_the_partial_run(engine: str, tmp_path: Path,
                                                     server: tuple[ScriptedServer, Switch]) -> None:
    srv, switch = server
    store = RunStore(tmp_path / "store")
    run = stored(store, "hermes/tools_sequence")
    cut = run.steps[-1].index  # the last LLM step goes live; the prefix is served
    switch.policy = ReplyList([fault("401")] * 5)
    srv.clear()
    with pytest.raises(ReplaykitError) as info:
        play(run, engine, options(store, srv.base_url, cut=cut))
    assert len(srv.llm_requests) == 1  # not retried
    message = str(info.value)
    assert "\n" not in message and "authentication" in message.lower()
    runs = [store.load(r.run_id) for r in store.iter_summaries() if r.run_id != run.run_id]
    failed = [r for r in runs if r.header.lineage is not None and r.header.lineage.relation == "play"]
    assert len(failed) == 1 and failed[0].status == "failed"
    assert len(failed[0].steps) == cut  # the served prefix is kept


def test_every_engine_is_in_the_matrix() -> None:
    from replaykit.engines import ENGINES as REGISTERED

    assert set(REGISTERED) == {p.values[0] for p in ENGINES}
    assert set(ENGINE_NAMES) < set(REGISTERED)
