"""Issue 28, items 4, 6, 7 and 8, on a real PydanticAI agent recorded with ``replaykit.record`` against the
scripted server: the header names model, framework and endpoint; re-recording an id is a clear choice;
cost prices a recording and a play to the same local endpoint alike and compares a play of a branch
with the original; a branch is not "incomplete"; a stand-in tool answer is a health warning; the play's
served-tools counter matches its timeline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import replaykit
from replaykit.cli.main import main
from replaykit.core.analysis.health import run_health
from replaykit.core.errors import RunExists
from replaykit.core.trace.store import RunStore

pytest.importorskip("pydantic_ai")
from tests.firsthour.test_argument_identity import SPACED, _record


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_header_names_model_framework_and_endpoint(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    run = RunStore().load(_record("facts", SPACED))
    assert run.header.model == "scripted-model"
    assert run.header.source.framework == "pydantic-ai" and run.header.source.framework_version
    assert run.header.base_url is not None and run.header.base_url.startswith("http://127.0.0.1:")
    assert run.header.base_url.endswith("/v1") and run.header.provider == "local"
    listed = _json(capsys, "runs")["runs"][0]
    assert listed["model"] == "scripted-model" and listed["framework"] == "pydantic-ai"
    assert main(["export", "facts", "--format", "html", "-o", str(tmp_path / "r.html")]) == 0
    assert run.header.base_url in (tmp_path / "r.html").read_text()


def test_re_recording_an_id_is_a_clear_choice() -> None:
    _record("again", SPACED)
    with pytest.raises(RunExists, match="if_exists='replace'"):
        with replaykit.record("again"):
            pass
    with replaykit.record("again", if_exists="new") as session:
        assert session.recorder is not None and session.recorder.run_id == "again-2"
    before = RunStore().path_for("again").read_bytes()
    with pytest.raises(ValueError):
        with replaykit.record("again", if_exists="replace"):
            raise ValueError("the block failed")
    assert RunStore().path_for("again").read_bytes() == before  # kept when the block raised
    with replaykit.record("again", if_exists="replace"):
        pass
    assert RunStore().path_for("again").read_bytes() != before
    with replaykit.record() as session:  # no id: a fresh one
        assert session.recorder is not None and session.recorder.run_id


def test_cost_health_and_counters_of_branches_and_plays(capsys: pytest.CaptureFixture[str]) -> None:
    from replaykit.testing.scripted_server import ScriptedServer, text

    original = _record("costed", SPACED)
    recording = _json(capsys, "cost", original)
    assert recording["steps"] and all(s["cost"] is None and "local endpoint" in s["unknown_reason"]
                                      for s in recording["steps"])
    branched = RunStore().load(original)
    edited = _json(capsys, "branch", original, "--at", "1", "--result", "Paris: rainy, 12 C")["run_id"]
    assert run_health(RunStore().load(edited)).score == 100  # a branch ends at its edit by design
    with ScriptedServer([text("Rainy, 12 C.")]) as srv:
        played = _json(capsys, "play", edited, "--engine", "openai", "--base-url", srv.base_url, "--model", "m")
    cost = _json(capsys, "cost", played["run_id"])
    live = [s for s in cost["steps"] if s["billed"]]
    assert live and all("local endpoint" in s["unknown_reason"] for s in live)  # priced as the recording was
    assert cost["branch"]["parent_run_id"] == branched.run_id  # the original, not the branch
    assert cost["branch"]["original"]["steps"] == len([s for s in branched.steps if s.kind == "llm"])

    # a tool call the record does not hold, in an offline play: the stand-in answers, health says so
    stand_in = _json(capsys, "branch", original, "--at", "0", "--response",
                     '{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Rome"}}]}')["run_id"]
    offline = _json(capsys, "play", stand_in, "--engine", "openai", "--offline")
    health = run_health(RunStore().load(offline["run_id"]))
    assert health.score < 100 and any(r.code == "unavailable_tools" for r in health.reasons)
    timeline = RunStore().load(offline["run_id"])
    served_tools = [s for s in timeline.steps if s.kind == "tool" and s.event.provenance.value == "served"]
    assert offline["counters"]["served_tool_steps"] == len(served_tools)
