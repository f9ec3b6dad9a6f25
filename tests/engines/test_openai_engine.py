"""The openai engine against the real scripted HTTP server: served prefix (0 requests), live from the
cut, branches continued live, and every resilience fault."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from replaykit.core.errors import ReplaykitError
from replaykit.core.replay.branch import branch
from replaykit.core.replay.play import PlayOptions
from replaykit.core.replay.tool_ladder import unavailable_text
from replaykit.core.trace.ir import Provenance
from replaykit.core.trace.store import RunStore
from replaykit.engines.openai import play
from replaykit.testing.engine_runs import record_sample_run
from replaykit.testing.script import ReplyList, ToolCall, fault, sequence_policy, text
from replaykit.testing.scripted_server import ScriptedServer

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("openai")


@pytest.fixture()
def store(tmp_path: Path) -> RunStore:
    store = RunStore(tmp_path / "store")
    record_sample_run(store, "src")
    return store


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _options(store: RunStore, srv: ScriptedServer, **kw: object) -> PlayOptions:
    kw.setdefault("stale_timeout", 5.0)
    return PlayOptions(base_url=srv.base_url, model="candidate", store=store,
                       extra={"retry_base_delay": 0.01, "retry_max_delay": 0.05}, **kw)  # type: ignore[arg-type]


def test_fully_served_play_sends_nothing_and_changes_nothing(store: RunStore) -> None:
    run = store.load("src")
    before = _sha(store.path_for("src"))
    with ScriptedServer(sequence_policy([], "must not be asked")) as srv:
        result = play(run, _options(store, srv, serve_only=True))
        assert srv.requests == []
    assert _sha(store.path_for("src")) == before
    counters = result.counters
    assert (counters.provider_calls, counters.tool_executions) == (0, 0)
    assert (counters.served_llm_steps, counters.served_tool_steps) == (5, 4)
    new = store.load(result.run_id)
    assert new.header.lineage.relation == "play" and new.header.lineage.engine == "openai"
    assert [s.event.provenance for s in new.steps] == [Provenance.SERVED] * 9
    assert new.final_answer == run.final_answer
    # Same steps, same content: the served play reproduces the record step for step.
    assert [s.event.model_dump(include={"kind", "name", "result", "response"}) for s in new.steps] == \
        [s.event.model_dump(include={"kind", "name", "result", "response"}) for s in run.steps]


def test_result_branch_goes_live_only_after_the_cut(store: RunStore) -> None:
    child = branch(store, store.load("src"), 4, result="written fine")
    with ScriptedServer(ReplyList([text("Saved it.")], then=sequence_policy([], "ok"))) as srv:
        result = play(child, _options(store, srv))
        requests = srv.llm_requests
    # Steps 0..4 served; the first request is step 5's, carrying the edited result.
    assert result.counters.served_llm_steps == 2 and result.counters.served_tool_steps == 3
    assert len(requests) == result.counters.provider_calls == result.counters.live_llm_steps >= 1
    first = requests[0].body
    assert first["model"] == "candidate" and first["stream"] is True
    assert [t["function"]["name"] for t in first["tools"]] == ["read_file", "web_search", "write_file"]
    assert first["temperature"] == 0  # recorded parameters reach the endpoint
    tool_messages = [m for m in first["messages"] if m["role"] == "tool"]
    assert tool_messages[-1]["content"] == "written fine"
    assert first["messages"][-1]["role"] == "tool"
    new = store.load(result.run_id)
    assert new.steps[4].event.provenance == Provenance.EDITED
    assert new.steps[5].event.provenance == Provenance.LIVE
    assert new.steps[5].event.response.message.text == "Saved it."
    # The recording's second user turn was played too.
    assert any("What does out.txt contain now?" in json.dumps(r.body) for r in requests)


def test_response_branch_with_new_tool_call(store: RunStore) -> None:
    child = branch(store, store.load("src"), 0, response='[{"name": "web_search", "arguments": {"query": "rome"}}]')
    with ScriptedServer(sequence_policy([], "final")) as srv:
        result = play(child, _options(store, srv))
        first = srv.llm_requests[0].body
    new = store.load(result.run_id)
    tool = new.steps[1].event
    assert tool.kind == "tool_call" and tool.status == "unavailable" and tool.provenance == Provenance.SYNTHETIC
    assert tool.result == unavailable_text("web_search")
    assert first["messages"][-1]["role"] == "tool" and first["messages"][-1]["content"] == tool.result
    assert result.counters.tool_executions == 0


def test_args_branch_runs_the_edited_call_live(store: RunStore) -> None:
    child = branch(store, store.load("src"), 1, args='{"path": "out.txt"}')
    with ScriptedServer(sequence_policy([], "final")) as srv:
        result = play(child, _options(store, srv))
        first = srv.llm_requests[0].body
    new = store.load(result.run_id)
    # The served LLM step asks with the edited arguments; the call is answered from the record,
    # where read_file(out.txt) exists (step 7 of the source).
    assert json.loads(new.steps[0].event.response.message.tool_calls[0].raw_arguments) == {"path": "out.txt"}
    assert new.steps[1].event.result == "(empty)"
    assert any(m.get("content") == "(empty)" for m in first["messages"] if m["role"] == "tool")


def test_rate_limit_honours_retry_after(store: RunStore) -> None:
    run = store.load("src")
    with ScriptedServer(ReplyList([fault("429", retry_after=0.6)], then=sequence_policy([], "ok"))) as srv:
        started = time.monotonic()
        result = play(run, _options(store, srv, cut=5))
        elapsed = time.monotonic() - started
        statuses = len(srv.llm_requests)
    assert elapsed >= 0.6
    assert result.counters.provider_calls == statuses == result.counters.live_llm_steps + 1
    errors = [e for e in store.load(result.run_id).errors]
    assert len(errors) == 1 and errors[0].status_code == 429 and errors[0].error_type == "rate_limit"


def test_server_errors_retried_with_backoff(store: RunStore) -> None:
    run = store.load("src")
    with ScriptedServer(ReplyList([fault("500"), fault("500")], then=sequence_policy([], "ok"))) as srv:
        result = play(run, _options(store, srv, cut=5))
    assert result.status == "completed"
    errors = store.load(result.run_id).errors
    assert [e.status_code for e in errors] == [500, 500] and all(e.retryable for e in errors)
    assert result.counters.provider_calls == result.counters.live_llm_steps + 2


def test_server_errors_give_up_after_bounded_attempts(store: RunStore) -> None:
    run = store.load("src")
    with ScriptedServer(ReplyList([fault("500")] * 10)) as srv:
        with pytest.raises(ReplaykitError, match=r"HTTP 500.*after 3 attempts"):
            play(run, _options(store, srv, cut=5, max_attempts=3))
        assert len(srv.llm_requests) == 3


def test_stalled_stream_is_retried(store: RunStore) -> None:
    run = store.load("src")
    stall = fault("stall", stall_seconds=20, stall_after_chunks=1)
    with ScriptedServer(ReplyList([stall], then=sequence_policy([], "after stall"))) as srv:
        started = time.monotonic()
        result = play(run, _options(store, srv, cut=5, stale_timeout=0.5))
        assert time.monotonic() - started < 10
    errors = store.load(result.run_id).errors
    assert errors and errors[0].error_type == "stale"
    assert result.final_answer == "after stall"


def test_auth_error_fails_at_once(store: RunStore) -> None:
    run = store.load("src")
    with ScriptedServer(ReplyList([fault("401")] * 5)) as srv:
        with pytest.raises(ReplaykitError, match="authentication failed") as info:
            play(run, _options(store, srv, cut=5))
        assert len(srv.llm_requests) == 1
    assert "\n" not in str(info.value)
    failed = [s for s in store.iter_summaries() if s.relation == "play"]
    assert store.load(failed[0].run_id).status == "failed"


def test_length_truncated_answer_is_continued_and_joined(store: RunStore) -> None:
    run = store.load("src")
    with ScriptedServer(ReplyList([fault("length", text="The first half, "), text("and the second half.")],
                                  then=sequence_policy([], "x"))) as srv:
        result = play(run, _options(store, srv, cut=5))
        second = srv.llm_requests[1].body
    new = store.load(result.run_id)
    answer = new.steps[5].event.response
    assert answer.message.text.endswith("and the second half.") and answer.message.text.startswith("The f")
    assert len(answer.message.text) > len("and the second half.")
    assert answer.provider_details["replaykit"]["continuations"] == 1
    assert second["messages"][-1]["role"] == "user" and "Continue" in second["messages"][-1]["content"]


def test_iteration_budget_grace_call(store: RunStore) -> None:
    run = store.load("src")
    loop = sequence_policy([ToolCall("read_file", {"path": f"f{i}"}) for i in range(50)], "never")
    with ScriptedServer(loop) as srv:
        result = play(run, _options(store, srv, cut=0, max_iterations=2))
        bodies = [r.body for r in srv.llm_requests]
    assert bodies[0].get("tools") and not bodies[2].get("tools")  # the grace call of turn 1 offers no tools
    assert result.status == "completed"


def test_cli_play_json_and_key_never_written(store: RunStore, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MY_KEY": "sk-secret-canary-123"}
    with ScriptedServer(sequence_policy([], "cli answer")) as srv:
        done = subprocess.run(
            [sys.executable, "-m", "replaykit", "play", "src", "--engine", "openai", "--base-url", srv.base_url,
             "--model", "candidate", "--api-key-env", "MY_KEY", "--store", str(store.root), "--json", "--at", "5"],
            capture_output=True, text=True, env=env, timeout=120)
        auth = [r.headers.get("authorization") for r in srv.requests]
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["run_id"] and doc["counters"]["served_llm_steps"] == 2
    assert auth == [None] * len(auth)  # the server log strips it; the key went only over the wire
    for path in store.root.iterdir():
        assert b"sk-secret-canary-123" not in path.read_bytes()
    missing = subprocess.run(
        [sys.executable, "-m", "replaykit", "play", "src", "--engine", "openai", "--base-url", "http://127.0.0.1:9/v1",
         "--model", "m", "--api-key-env", "NOT_SET_ANYWHERE", "--store", str(store.root)],
        capture_output=True, text=True, env=env, timeout=60)
    assert missing.returncode == 2 and "NOT_SET_ANYWHERE" in missing.stderr and "Traceback" not in missing.stderr


def test_diff_of_played_branch_names_the_edit(store: RunStore) -> None:
    from replaykit.core.analysis.diff import diff_runs, lineage_edits

    source = store.load("src")
    child = branch(store, source, 4, args='{"path": "elsewhere.txt", "content": "x"}')
    with ScriptedServer(sequence_policy([], "final")) as srv:
        played = store.load(play(child, _options(store, srv)).run_id)
    result = diff_runs(source, played, edits=lineage_edits(store, [source, played]))
    first = result.first
    # The served LLM step 3 already carries the edited call: the divergence starts there, from the edit.
    assert (first.step, first.field, first.cause) == (3, "response.tool_calls", "edit")
    assert played.steps[3].event.provenance == Provenance.EDITED
    assert any(d.step == 4 and d.field == "arguments" and d.cause == "edit" for d in result.differences)


HERMES_TWO_TURNS = ROOT / "tests" / "fixtures" / "hermes" / "two_turns.jsonl"


@pytest.mark.skipif(not HERMES_TWO_TURNS.is_file(), reason="no recorded Hermes fixture")
def test_real_hermes_recording_served_then_live(tmp_path: Path) -> None:
    from replaykit.core.analysis.diff import diff_runs
    from replaykit.core.trace.run import Run
    from replaykit.testing.script import hermes_default_policy

    store = RunStore(tmp_path)
    run = Run.load(HERMES_TWO_TURNS)
    with ScriptedServer(hermes_default_policy()) as srv:
        served = play(run, _options(store, srv, serve_only=True))
        assert srv.requests == []
        live = play(run, _options(store, srv))
        bodies = [r.body for r in srv.llm_requests]
    assert served.counters.served_llm_steps == 6 and served.counters.served_tool_steps == 4
    assert diff_runs(run, store.load(served.run_id)).equal
    # Live against the same scripted model: the same steps, both user turns, recorded tool results reused.
    assert len(bodies) == live.counters.provider_calls == 6
    assert diff_runs(run, store.load(live.run_id)).equal


def _write_variant(store: RunStore, run_id: str, events: list) -> object:
    from replaykit.core.trace.run import Run
    from replaykit.core.trace.store import write_run_file

    source = store.load("src")
    header = source.header.model_copy(update={"run_id": run_id})
    return Run.load(write_run_file(store.path_for(run_id), header, events))


def test_engine_desync_fails_open_to_live(store: RunStore) -> None:
    source = store.load("src")
    # The record's tool result of step 1 no longer matches what step 3's request says it was: the
    # engine's request at step 3 is not the recorded one. (A request refers to the tool call whose
    # result it repeats, schema 2: give each request its own copy of its messages first.)
    own = [e.model_copy(update={"request": e.request.model_copy(update={"context": e.request.context.model_copy(
        update={"append": source.appended_messages(e)})})}) if e.kind == "llm_call" else e for e in source.events]
    events = [e.model_copy(update={"result": "buy bread"}) if e.kind == "tool_call" and e.call_id == "call_a" else e
              for e in own]
    tampered = _write_variant(store, "tampered", events)
    with ScriptedServer(sequence_policy([], "live after desync")) as srv:
        result = play(tampered, _options(store, srv, serve_only=True))
        bodies = [r.body for r in srv.llm_requests]
    assert result.counters.desyncs == 1 and result.counters.served_llm_steps == 1
    assert len(bodies) == result.counters.provider_calls >= 1
    new = store.load(result.run_id)
    desync = [e for e in new.events if e.kind == "desync"]
    assert len(desync) == 1 and desync[0].step == 3
    from replaykit.core.analysis.diff import diff_runs

    assert diff_runs(tampered, new).first.cause == "desync"


def test_engine_synthetic_end_without_provider_call(store: RunStore) -> None:
    source = store.load("src")
    cut_at = next(i for i, e in enumerate(source.events) if e.kind == "tool_call" and e.call_id == "call_b")
    crashed = _write_variant(store, "crashed", source.events[: cut_at + 1])  # the run died after step 2
    with ScriptedServer(sequence_policy([], "must not be asked")) as srv:
        result = play(crashed, _options(store, srv, serve_only=True))
        assert srv.requests == []
    assert result.counters.synthetic_steps == 1 and result.counters.provider_calls == 0
    new = store.load(result.run_id)
    assert [e.kind for e in new.events if e.kind == "synthetic"] == ["synthetic"]
    assert new.steps[3].event.provenance == Provenance.SYNTHETIC
    assert not new.steps[3].event.response.message.tool_calls
