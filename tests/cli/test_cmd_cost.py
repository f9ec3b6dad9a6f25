"""replaykit cost end to end: a real recorded Hermes run, and a branch played live by the openai engine
against the scripted HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from replaykit.cli.main import main
from replaykit.core.replay.branch import branch
from replaykit.core.replay.play import PlayOptions
from replaykit.core.trace.store import RunStore
from replaykit.testing.engine_runs import record_sample_run
from replaykit.testing.script import ReplyList, sequence_policy, text
from replaykit.testing.scripted_server import ScriptedServer
from tests.conftest import FIXTURES, subprocess_env

pytest.importorskip("genai_prices")


def _cost(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["cost", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_real_hermes_run_with_an_unknown_model(capsys: pytest.CaptureFixture[str]) -> None:
    """Recorded from real Hermes against the scripted server: the model is unknown, so is the cost."""
    doc = _cost(capsys, str(FIXTURES / "hermes" / "parallel_tools.jsonl"))
    assert doc["steps"] and all(s["cost"] is None for s in doc["steps"])
    assert all("scripted-model" in s["unknown_reason"] for s in doc["steps"])
    assert all(s["input_tokens"] for s in doc["steps"])  # usage was recorded; only the price is unknown
    assert doc["paid"]["cost"] is None and doc["paid"]["unknown_steps"] == len(doc["steps"])
    assert doc["pricing_source"].startswith("genai-prices ")
    assert main(["cost", str(FIXTURES / "hermes" / "parallel_tools.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "unknown" in out and "$0" not in out


@pytest.fixture
def played(store_dir: Path) -> tuple[str, str]:
    """src (recorded) -> branch at step 4 (edited tool result) -> played live from step 5."""
    pytest.importorskip("openai")
    from replaykit.engines.openai import play

    store = RunStore(store_dir)
    record_sample_run(store, "src")
    child = branch(store, store.load("src"), 4, result="written fine")
    with ScriptedServer(ReplyList([text("Saved it.")], then=sequence_policy([], "ok")), model="gpt-4o-mini") as srv:
        result = play(child, PlayOptions(base_url=srv.base_url, model="gpt-4o-mini", store=store,
                                         stale_timeout=5.0))
    return child.run_id, result.run_id


def test_played_branch_ledger(played: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    child_id, play_id = played
    doc = _cost(capsys, play_id)
    by_prov: dict[str, list[dict]] = {}
    for step in doc["steps"]:
        by_prov.setdefault(step["provenance"], []).append(step)
    assert by_prov["live"] and by_prov["served"]
    # live calls went to 127.0.0.1: whatever answered, it was not a priced provider
    assert all(s["cost"] is None and "local endpoint" in s["unknown_reason"] for s in by_prov["live"])
    assert all(s["cost"] == 0 for s in by_prov["served"])  # free in this run
    assert doc["live"]["cost"] is None and doc["live"]["steps"] == len(by_prov["live"])
    assert doc["branch"]["parent_run_id"] == child_id and doc["branch"]["relation"] == "play"

    priced = _cost(capsys, play_id, "--provider", "openai")
    live = [s for s in priced["steps"] if s["provenance"] == "live"]
    with_usage = [s for s in live if s["input_tokens"] is not None]
    assert all(s["cost"] > 0 and s["priced_as"] == "openai:gpt-4o-mini" for s in with_usage)
    assert all(s["cost"] is None and s["unknown_reason"] == "no token usage recorded"
               for s in live if s["input_tokens"] is None)
    assert priced["live"]["known_cost"] == pytest.approx(sum(s["cost"] for s in with_usage))
    assert priced["paid"] == priced["live"]  # a played run pays only for its live part
    # the served prefix was recorded with a model no price list knows: unknown, never 0
    assert priced["served_free"]["cost"] is None and priced["served_free"]["known_cost"] == 0
    assert "sample-model" in priced["served_free"]["unknown_reasons"][0]

    assert main(["cost", play_id, "--provider", "openai"]) == 0
    out = capsys.readouterr().out
    assert "live part:" in out and "served from the record for free: unknown" in out


def test_openai_engine_records_usage_on_live_steps(played: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    doc = _cost(capsys, played[1], "--provider", "openai")
    live = [s for s in doc["steps"] if s["provenance"] == "live"]
    assert live and all(s["input_tokens"] for s in live)
    assert doc["live"]["cost"] is not None and doc["live"]["cost"] > 0


def test_missing_original_is_a_note(played: tuple[str, str], store_dir: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    child_id, play_id = played
    RunStore(store_dir).path_for(child_id).unlink()
    doc = _cost(capsys, play_id)
    assert doc["branch"] is None and "not in the store" in doc["parent_note"]


@pytest.mark.parametrize("argv", [["cost", "no-such-run"], ["cost", "../escape"], ["cost"],
                                  ["cost", "x", "--bogus"]])
def test_bad_input_is_one_line_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        code = main(argv)
        raise SystemExit(code)
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("replaykit: error:") and "\n" not in err and "Traceback" not in err


def test_cli_subprocess_prints_one_json_document(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "replaykit", "cost", str(FIXTURES / "hermes" / "two_turns.jsonl"), "--json",
         "--store", str(tmp_path / "s")],
        capture_output=True, text=True, env=subprocess_env(), timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["run_id"] and doc["currency"] == "USD"
