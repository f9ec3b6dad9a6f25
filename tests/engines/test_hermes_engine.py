"""--engine hermes: a fresh real Hermes agent replays a recorded Hermes run through replaykit middleware.

Recorded first with the real agent (file + todo toolsets) against the scripted server; then played
with the cursor: fully served (0 requests, the real write_file handler never runs), and branched then
continued live (requests only from the cut; destructive calls dry-run unless allowed)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from replaykit.core.analysis.diff import diff_runs
from replaykit.core.replay.branch import branch
from replaykit.core.replay.play import PlayOptions
from replaykit.core.trace.bridge import event_underlying
from replaykit.core.trace.bridge_view import recorded_underlying
from replaykit.core.trace.ir import Provenance
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.testing.hermes_harness import HermesSandbox
from replaykit.testing.scripted_server import ScriptedServer, ToolCall, sequence_policy
from tests.adapters.hermes.helpers import only_run

pytestmark = pytest.mark.hermes


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[HermesSandbox, Run, Path]:
    root = tmp_path_factory.mktemp("hermes-play")
    sandbox = HermesSandbox(root, plugin="entrypoint")
    canary = sandbox.cwd / "canary.txt"
    policy = sequence_policy([
        ToolCall("write_file", {"path": str(canary), "content": "written by the recording"}),
        ToolCall("todo", {"todos": [{"id": "1", "content": "check the canary", "status": "completed"}]}),
    ], "Wrote the canary and updated the todo list.")
    with ScriptedServer(policy) as srv:
        sandbox.run_agent({"base_url": srv.base_url, "toolsets": ["file", "todo"], "echo_tool": False,
                           "turns": ["Write the canary file, then update the todo list."]})
    run = only_run(sandbox.store)
    assert canary.read_text() == "written by the recording"  # the real handler ran while recording
    return sandbox, run, canary


def _options(sandbox: HermesSandbox, base_url: str, **kw: object) -> PlayOptions:
    return PlayOptions(base_url=base_url, model="candidate", store=RunStore(sandbox.store),
                       extra={"env": sandbox.env, "cwd": str(sandbox.cwd), "timeout": 300}, **kw)  # type: ignore[arg-type]


def test_served_hermes_play_calls_nothing(recorded: tuple[HermesSandbox, Run, Path]) -> None:
    from replaykit.engines.hermes.engine import play

    sandbox, run, canary = recorded
    canary.unlink()
    trace = sandbox.store / f"{run.run_id}.jsonl"
    before = hashlib.sha256(trace.read_bytes()).hexdigest()
    with ScriptedServer(sequence_policy([], "must not be asked")) as srv:
        result = play(run, _options(sandbox, srv.base_url, serve_only=True))
        # No request at all: no LLM call, and none of Hermes's endpoint probes (model lists, /api/show).
        assert srv.requests == [], [(r.method, r.path) for r in srv.requests]
    assert not canary.exists()  # the real write_file handler never ran
    assert hashlib.sha256(trace.read_bytes()).hexdigest() == before
    counters = result.counters
    assert (counters.provider_calls, counters.tool_executions, counters.desyncs) == (0, 0, 0)
    assert counters.served_llm_steps == 3 and counters.served_tool_steps == 2
    new = RunStore(sandbox.store).load(result.run_id)
    assert new.header.lineage.relation == "play" and new.header.lineage.engine == "hermes"
    assert [s.event.provenance for s in new.steps] == [Provenance.SERVED] * 5
    assert new.final_answer == run.final_answer
    assert diff_runs(run, new).equal


def test_branch_then_live_hermes(recorded: tuple[HermesSandbox, Run, Path]) -> None:
    from replaykit.engines.hermes.engine import play

    sandbox, run, canary = recorded
    canary.unlink(missing_ok=True)
    store = RunStore(sandbox.store)
    child = branch(store, run, 1, result='{"bytes_written": 0, "error": "disk full"}')
    # The policy counts tool results since the user spoke: the served prefix already holds one.
    with ScriptedServer(sequence_policy([
        ToolCall("write_file", {"path": str(canary), "content": "first"}),
        ToolCall("write_file", {"path": str(canary), "content": "retry"}),
    ], "Retried the write.")) as srv:
        result = play(child, _options(sandbox, srv.base_url))
        bodies = [r.body for r in srv.llm_requests]
    # Steps 0 (llm) and 1 (the edited tool result) served; the first request is step 2's.
    assert result.counters.served_llm_steps == 1 and result.counters.served_tool_steps == 1
    assert len(bodies) == result.counters.live_llm_steps >= 1
    assert "disk full" in bodies[0]["messages"][-1]["content"]
    # The live write_file is destructive: dry-run by default, so the canary stays absent.
    assert not canary.exists()
    new = store.load(result.run_id)
    dry = [e for e in new.tool_calls() if e.name == "write_file" and e.provenance == Provenance.LIVE]
    assert dry and dry[0].status == "dry_run" and result.counters.tool_executions == 0
    first = diff_runs(run, new).first
    assert first is not None and (first.step, first.cause) == (1, "edit")


def test_cli_play_engine_hermes(recorded: tuple[HermesSandbox, Run, Path]) -> None:
    import json
    import subprocess
    import sys

    sandbox, run, _canary = recorded
    with ScriptedServer(sequence_policy([], "must not be asked")) as srv:
        done = subprocess.run(
            [sys.executable, "-m", "replaykit", "play", run.run_id, "--engine", "hermes", "--base-url", srv.base_url,
             "--model", "candidate", "--at", str(len(run.steps)), "--store", str(sandbox.store), "--json"],
            cwd=sandbox.cwd, env=sandbox.env, capture_output=True, text=True, timeout=300)
        assert srv.llm_requests == []
    assert done.returncode == 0, done.stderr[-2000:]
    doc = json.loads(done.stdout)
    assert doc["engine"] == "hermes" and doc["status"] == "completed" and doc["cut"] == len(run.steps)
    assert doc["counters"]["provider_calls"] == 0 and doc["counters"]["served_llm_steps"] == 3


def test_parallel_reads_served_on_hermes_concurrent_path(tmp_path: Path) -> None:
    """Two read_file calls in one message take Hermes's concurrent path (nested tool_execution on worker
    threads, any completion order): both are served by tool_call_id, no handler runs."""
    from replaykit.engines.hermes.engine import play

    sandbox = HermesSandbox(tmp_path, plugin="entrypoint")
    a, b = sandbox.cwd / "a.txt", sandbox.cwd / "b.txt"
    a.write_text("alpha file")
    b.write_text("beta file")
    policy = sequence_policy([[ToolCall("read_file", {"path": str(a)}), ToolCall("read_file", {"path": str(b)})]],
                             "Read both.")
    with ScriptedServer(policy) as srv:
        sandbox.run_agent({"base_url": srv.base_url, "toolsets": ["file"], "echo_tool": False,
                           "turns": ["Read a.txt and b.txt."]})
    run = only_run(sandbox.store)
    assert [s.kind for s in run.steps] == ["llm", "tool", "tool", "llm"]
    a.unlink()
    b.unlink()  # a served replay must not need (or touch) the files
    with ScriptedServer(sequence_policy([], "must not be asked")) as srv:
        result = play(run, _options(sandbox, srv.base_url, serve_only=True))
        assert srv.llm_requests == []
    assert result.counters.served_tool_steps == 2 and result.counters.desyncs == 0
    new = RunStore(sandbox.store).load(result.run_id)
    assert sorted(e.result for e in new.tool_calls()) == sorted(e.result for e in run.tool_calls())
    assert "alpha file" in "".join(e.result or "" for e in new.tool_calls())
    assert diff_runs(run, new).equal


def test_branch_live_with_allow_destructive_runs_real_tool(recorded: tuple[HermesSandbox, Run, Path]) -> None:
    from replaykit.engines.hermes.engine import play

    sandbox, run, canary = recorded
    canary.unlink(missing_ok=True)
    store = RunStore(sandbox.store)
    child = branch(store, run, 1, result='{"bytes_written": 0, "error": "disk full"}')
    with ScriptedServer(sequence_policy([
        ToolCall("write_file", {"path": str(canary), "content": "first"}),
        ToolCall("write_file", {"path": str(canary), "content": "written live"}),
    ], "Retried the write.")) as srv:
        result = play(child, _options(sandbox, srv.base_url, allow_destructive=True))
    assert canary.read_text() == "written live"  # Hermes's real write_file ran, from the cut only
    new = store.load(result.run_id)
    live = [e for e in new.tool_calls() if e.provenance == Provenance.LIVE]
    assert live and {e.name for e in live} == {"write_file"} and all(e.status == "ok" for e in live)
    assert result.counters.tool_executions == len(live) == result.counters.live_tool_steps
    assert all(s.event.provenance == Provenance.LIVE for s in new.steps[2:])


def test_hermes_live_retry_is_counted_and_recorded(recorded: tuple[HermesSandbox, Run, Path]) -> None:
    """Live from step 0: Hermes's own retry loop meets a 500; each attempt is a counted provider call and
    the failed one an error event of the new run."""
    from replaykit.engines.hermes.engine import play
    from replaykit.testing.scripted_server import fail_first

    sandbox, run, canary = recorded
    policy = sequence_policy([
        ToolCall("write_file", {"path": str(canary), "content": "x"}),
        ToolCall("todo", {"todos": [{"id": "1", "content": "again", "status": "completed"}]}),
    ], "Done again.")
    with ScriptedServer(fail_first(1, policy, "500")) as srv:
        result = play(run, _options(sandbox, srv.base_url, cut=0))
        llm_requests = len(srv.llm_requests)
    counters = result.counters
    assert counters.served_llm_steps == 0 and counters.live_llm_steps == 3
    assert counters.provider_calls == llm_requests == 4
    new = RunStore(sandbox.store).load(result.run_id)
    from tests.adapters.hermes.helpers import hermes_release

    # Hermes 0.22 re-sends the streamed attempt without streaming, raising nothing: the failed attempt
    # is still counted and recorded, marked never observed (its status unknown).
    status = None if hermes_release() >= (0, 22) else 500
    assert [(e.status_code, e.error_type) for e in new.errors] == [(status, "server")]
    assert new.final_answer == "Done again."


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hermes"


def _stored(sandbox: HermesSandbox, fixture: Path) -> Run:
    store = RunStore(sandbox.store)
    source = Run.load(fixture)
    store.write_run(source.header, list(source.events))
    return store.load(source.run_id)


def _unbridged_here(run: Run) -> bool:
    """Whether a play of ``run`` on the installed Hermes serves its bridged calls unbridged: a Hermes 0.22
    Tool Search recording on Hermes 0.19.0, whose own bridge cannot take the calls as made."""
    from tests.adapters.hermes.helpers import hermes_release

    return any(e.name == "tool_call" for e in run.tool_calls()) and hermes_release() < (0, 22)


def _offered(body: dict) -> set[str]:
    """The tool names a request offered, in any of Hermes's api modes."""
    return {str(t.get("name") or (t.get("function") or {}).get("name")) for t in body.get("tools") or []}


def _check_offline_play(sandbox: HermesSandbox, run: Run, played: Run) -> None:
    """An offline play of ``run`` served every step and equals it: in its api mode, its tool calls as made
    (or, unbridged, as their underlying calls, which the diff's note puts down to the engine's Hermes
    version), diff equal and ``replaykit diff`` exit 0."""
    assert played.final_answer == run.final_answer
    # The recording's api mode is the play's: Hermes ran in it, and every step went on that API.
    assert played.meta["api_mode"] == run.meta["api_mode"]
    assert {c.request.api for c in played.llm_calls()} == {c.request.api for c in run.llm_calls()}
    unbridged = _unbridged_here(run)
    assert bool((played.header.lineage.details or {}).get("unbridged")) == unbridged
    # the tool steps that ran through the bridge: bridged calls, and the later entries of a batch
    expanded = {i for ids in recorded_underlying(run).batches.values() for i in ids}
    bridged = [e for e in run.tool_calls() if e.name == "tool_call" or e.call_id in expanded]
    if unbridged:  # what Hermes 0.19.0 was served and ran: the underlying tools, called directly
        assert [e.name for e in played.tool_calls()] == [e.underlying.name if e.underlying else e.name
                                                         for e in run.tool_calls()]
        assert not any(c.name == "tool_call" for e in played.llm_calls() for c in e.response.message.tool_calls)
    else:  # served as made (a batch as Hermes expanded it: the same tools, each through the bridge)
        assert [event_underlying(e) for e in played.tool_calls()] == [event_underlying(e) for e in run.tool_calls()]
        assert [e.name for e in played.tool_calls() if e.name != "tool_call"] == \
            [e.name for e in run.tool_calls() if e not in bridged]
    diff = diff_runs(run, played)
    assert diff.equal, diff.first
    notes = [n["reason"] for n in diff.notes if n["kind"] == "bridged_calls"]
    assert notes == ([f"{len(bridged)} tool call(s) made through Tool Search's tool_call, compared as the "
                      "underlying tool calls (run B is a play on hermes 0.19.0, which cannot take a bridged call "
                      "as made: it was served each one as its underlying call)"] if unbridged else [])
    done = subprocess.run(
        [sys.executable, "-m", "replaykit", "diff", run.run_id, played.run_id, "--store", str(sandbox.store)],
        capture_output=True, text=True, timeout=120, env=sandbox.env)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("version", ["0.19.0", "0.22"])
@pytest.mark.parametrize("mode", ["chat_completions", "codex_responses", "anthropic_messages"])
def test_every_api_mode_plays_offline_and_branched(tmp_path: Path, mode: str, version: str) -> None:
    """A recording of each Hermes version, played by the installed Hermes in the recording's own api mode:
    offline (every step served, no endpoint at all) and a branch at the first tool result continued live
    against the scripted server in that API. A 0.22 recording (Tool Search on) on Hermes 0.19.0 is played
    unbridged: its history goes to the provider with direct calls, and the bridges are not offered."""
    from replaykit.engines.hermes.engine import play
    from replaykit.testing.scripted_server import hermes_default_policy

    if mode == "anthropic_messages":
        pytest.importorskip("anthropic")
    folder = FIXTURES if version == "0.19.0" else FIXTURES / version
    fixture = folder / ("tools_sequence.jsonl" if mode == "chat_completions" else f"{mode}.jsonl")
    sandbox = HermesSandbox(tmp_path, plugin="entrypoint")
    store = RunStore(sandbox.store)
    run = _stored(sandbox, fixture)
    assert run.meta["api_mode"] == mode
    before = hashlib.sha256(fixture.read_bytes()).hexdigest()

    offline = play(run, PlayOptions(base_url="", model="", store=store, serve_only=True,
                                    extra={"env": sandbox.env, "cwd": str(sandbox.cwd), "timeout": 300}))
    counters = offline.counters
    assert (counters.provider_calls, counters.tool_executions, counters.desyncs) == (0, 0, 0)
    assert counters.served_llm_steps == len(run.llm_calls()) and counters.served_tool_steps == len(run.tool_calls())
    _check_offline_play(sandbox, run, store.load(offline.run_id))
    assert hashlib.sha256(fixture.read_bytes()).hexdigest() == before

    child = branch(store, run, 1, result="ECHO: EDITED")
    with ScriptedServer(hermes_default_policy()) as srv:
        result = play(child, _options(sandbox, srv.base_url))
        paths = {r.path for r in srv.llm_requests}
        bodies = [r.body for r in srv.llm_requests]
    expected = {"chat_completions": "/v1/chat/completions", "codex_responses": "/v1/responses",
                "anthropic_messages": "/v1/messages"}[mode]
    assert paths == {expected}
    assert result.counters.served_llm_steps == 1 and result.counters.served_tool_steps == 1
    assert len(bodies) == result.counters.live_llm_steps >= 1
    assert "ECHO: EDITED" in json.dumps(bodies[0])  # the edit reached the provider in that API's shape
    if _unbridged_here(run):
        # Hermes 0.19.0 continues with Tool Search off: the served call went out as the direct call it
        # stood for, and the model is offered the tools themselves, not the bridges.
        assert "harness_echo" in json.dumps(bodies[0]) and "\"calls\"" not in json.dumps(bodies[0])
        assert "harness_echo" in _offered(bodies[0]) and not _offered(bodies[0]) & {"tool_call", "tool_search"}
    new = store.load(result.run_id)
    first = diff_runs(run, new).first
    assert first is not None and (first.step, first.cause) == (1, "edit")


#: the other recordings of each Hermes version (0.22's with its defaults: Tool Search on, every tool call
#: bridged); tools_sequence and the other api modes are played by test_every_api_mode_plays_offline_and_branched
RECORDINGS = ["0.22/two_turns", "0.22/retry_500", "0.22/subagent", "0.22/subagent.child", "0.22/tool_search",
              "0.22/tool_batch",
              "two_turns", "retry_500", "parallel_tools", "subagent", "subagent.child"]


@pytest.mark.slow
@pytest.mark.parametrize("fixture", RECORDINGS)
def test_recordings_of_each_hermes_version_play_offline(tmp_path: Path, fixture: str) -> None:
    """A recording of Hermes 0.19.0 (no Tool Search, ``todo``) and of 0.22 (Tool Search bridge, ``todo_list``,
    a re-issued streamed attempt, an auxiliary title call, a subagent) plays offline on the installed Hermes,
    whichever it is: every step served, no request at all, and the played run equal to the record (diff
    exit 0).

    On Hermes 0.19.0 (whose own bridge takes another shape and answers ``tool_call`` before any middleware)
    a 0.22 Tool Search recording is played unbridged: Tool Search off, each bridged call served as its
    underlying call. The diff is still equal (bridged calls compare by their underlying call) and its
    note names the engine's version as the reason the calls went direct."""
    from replaykit.engines.hermes.engine import play

    sandbox = HermesSandbox(tmp_path, plugin="entrypoint")
    run = _stored(sandbox, FIXTURES / f"{fixture}.jsonl")
    with ScriptedServer(sequence_policy([], "must not be asked")) as srv:
        result = play(run, _options(sandbox, srv.base_url, serve_only=True))
        assert srv.requests == [], [(r.method, r.path) for r in srv.requests]
    counters = result.counters
    assert (counters.provider_calls, counters.tool_executions, counters.desyncs) == (0, 0, 0)
    assert counters.served_llm_steps == len(run.llm_calls()) and counters.served_tool_steps == len(run.tool_calls())
    _check_offline_play(sandbox, run, RunStore(sandbox.store).load(result.run_id))
