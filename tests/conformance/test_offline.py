"""Conformance, offline: every engine and both code exports x every recording. The engine's real loop
runs with every step served from the record: 0 provider calls, 0 tool executions, the source trace
unchanged, the played run's messages and final answer equal to ``replaykit replay``'s, diff exit 0."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from replaykit.core.analysis.diff import diff_runs
from replaykit.core.replay.replay import replay_run
from replaykit.core.trace.store import RunStore
from replaykit.engines import play
from tests.conformance._matrix import (
    EXPORTS,
    OFFLINE_ENGINES,
    conversation,
    engine_extra,
    load_recording,
    options,
    recordings,
    stored,
)

#: cells known not to conform yet, with why (strict: the cell fails loudly once it starts passing)
KNOWN_GAPS: dict[tuple[str, str], str] = {}


@pytest.mark.parametrize("recording", recordings())
@pytest.mark.parametrize("engine", OFFLINE_ENGINES)
def test_offline_play_is_the_record(engine: str, recording: str, tmp_path: Path,
                                    request: pytest.FixtureRequest) -> None:
    if (engine, recording) in KNOWN_GAPS:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[engine, recording]))
    store = RunStore(tmp_path / "store")
    run = stored(store, recording)
    source = store.path_for(run.run_id)
    before = hashlib.sha256(source.read_bytes()).hexdigest()
    result = play(run, engine, options(store, serve_only=True, extra=engine_extra(engine, tmp_path)))
    assert result.status == "completed", result.error
    counters = result.counters
    assert (counters.provider_calls, counters.tool_executions, counters.desyncs) == (0, 0, 0)
    assert counters.served_llm_steps == len(run.llm_calls())
    assert hashlib.sha256(source.read_bytes()).hexdigest() == before
    played = store.load(result.run_id)
    expected = replay_run(run)
    # The same conversation (wire details such as raw argument spacing aside: the requests' fingerprints
    # matched the record's at every step, or the cursor would have counted a desync).
    assert conversation(replay_run(played)["messages"]) == conversation(expected["messages"])
    assert result.final_answer == expected["final_answer"] == played.final_answer
    assert diff_runs(run, played).equal  # `replaykit diff RUN PLAYED` exits 0


@pytest.mark.parametrize("recording", recordings())
@pytest.mark.parametrize("fmt", EXPORTS)
def test_export_replays_the_record(fmt: str, recording: str) -> None:
    if fmt == "langgraph":
        pytest.importorskip("langgraph")
    from tests.conformance._matrix import run_export

    run = load_recording(recording)
    document = run_export(run, fmt)
    expected = replay_run(run)
    assert conversation(document["messages"]) == conversation(expected["messages"])
    assert document["final_answer"] == expected["final_answer"]
    assert (document["counters"]["provider_calls"], document["counters"]["tool_executions"]) == (0, 0)


@pytest.mark.parametrize("engine", OFFLINE_ENGINES)
def test_a_request_past_the_end_gets_the_synthetic_end(engine: str, tmp_path: Path) -> None:
    """A branch of a two-turn run holds only its prefix: offline, the later user turn's request is past
    the record's end and gets the synthetic end-of-turn answer, never a call."""
    from replaykit.core.replay.branch import branch

    store = RunStore(tmp_path / "store")
    run = stored(store, "hermes/two_turns")
    child = branch(store, run, 4, response="Short first answer.")
    result = play(child, engine, options(store, serve_only=True, extra=engine_extra(engine, tmp_path)))
    assert result.counters.provider_calls == 0 and result.counters.synthetic_steps >= 1
    played = store.load(result.run_id)
    assert any(e.kind == "synthetic" for e in played.events)
    assert played.user_turns()[-1].message.text == run.user_turns()[-1].message.text


def test_cli_offline_usage(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.conftest import subprocess_env

    store = RunStore(tmp_path / "store")
    run = stored(store, "hermes/tools_sequence")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "replaykit", *args, "--store", str(store.root)],
                              capture_output=True, text=True, env=subprocess_env(), timeout=120)

    bad = cli("play", run.run_id, "--engine", "openai", "--offline", "--base-url", "http://127.0.0.1:9/v1")
    assert bad.returncode == 2 and "--offline" in bad.stderr and "Traceback" not in bad.stderr
    missing = cli("play", run.run_id, "--engine", "openai")
    assert missing.returncode == 2 and "--base-url" in missing.stderr
    ok = cli("play", run.run_id, "--engine", "openai", "--offline", "--json")
    assert ok.returncode == 0, ok.stderr
    import json

    played = json.loads(ok.stdout)["run_id"]
    assert cli("diff", run.run_id, played).returncode == 0


def test_the_exported_langgraph_module_climbs_the_same_ladder() -> None:
    """The generated module embeds core/replay/tool_ladder.py verbatim: same rungs, same texts, same guard hook."""
    pytest.importorskip("langgraph")
    import importlib
    import sys
    import types

    from replaykit.core.replay import tool_ladder
    from replaykit.exporters import FORMATS
    from replaykit.exporters._embed import module_body

    run = load_recording("import/openai-chat")
    source = importlib.import_module(FORMATS["langgraph"].module).render(run)
    assert module_body(tool_ladder, provided=["replaykit.core.trace.bridge"]) in source and "from replaykit" not in source
    module = types.ModuleType("exported_graph")
    sys.modules[module.__name__] = module
    try:
        exec(compile(source, "<graph>", "exec"), module.__dict__)
        ns = module.__dict__
        record = ns["Record"](ns["HEADER"], ns["EVENTS"])
        ran: list[str] = []
        router = ns["ToolRouter"](record, ns["ReplayLog"](), {"write_file": lambda **kw: ran.append("w") or "ok"},
                                  lambda name, args: ("[dry-run] blocked", "dry_run") if name == "write_file" else None)
        for call_id, name, args in (("a", "get_weather", {"city": "Nowhere"}), ("b", "write_file", {"path": "x"})):
            token = ns["_CURRENT_CALL"].set({"id": call_id, "llm_index": None, "asker_provenance": "live",
                                             "outcome": None})
            try:
                text = router.answer(name, args)
            finally:
                ns["_CURRENT_CALL"].reset(token)
            expected = tool_ladder.unavailable_text(name) if name == "get_weather" else "[dry-run] blocked"
            assert text == expected
        assert ran == []
    finally:
        sys.modules.pop(module.__name__, None)
