"""replaykit play --engine pydantic-ai from the command line, with --tools-module (a real subprocess
against the scripted server on 127.0.0.1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai")
pytest.importorskip("openai")

from replaykit.core.trace.store import RunStore, write_run_file
from replaykit.testing.script import call, text
from replaykit.testing.scripted_server import ScriptedServer
from tests.exporters.pai_fixtures import weather_run

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "replaykit", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def test_play_with_a_tools_module(tmp_path: Path) -> None:
    run = weather_run()
    trace = write_run_file(tmp_path / "weather.jsonl", run.header, run.events)
    module = tmp_path / "my_tools.py"
    module.write_text("def get_weather(city):\n    return 'LIVE weather for ' + city\n")
    with ScriptedServer([call("get_weather", {"city": "Lima"}), text("Lima is live.")]) as server:
        done = cli("play", str(trace), "--engine", "pydantic-ai", "--base-url", server.base_url, "--model", "m",
                   "--at", "0", "--tools-module", str(module), "--store", str(tmp_path / "s"), "--json")
        bodies = [r.body for r in server.llm_requests]
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["engine"] == "pydantic-ai" and doc["final_answer"] == "Lima is live."
    assert doc["counters"]["tool_executions"] == 1 and doc["counters"]["provider_calls"] == 2
    tool_results = [m["content"] for m in bodies[-1]["messages"] if m["role"] == "tool"]
    assert tool_results == ["LIVE weather for Lima"]
    new = RunStore(tmp_path / "s").load(doc["run_id"])
    assert [(e.name, e.result, e.provenance.value) for e in new.tool_calls()] == \
        [("get_weather", "LIVE weather for Lima", "live")]


def test_tools_module_errors_are_one_line(tmp_path: Path) -> None:
    run = weather_run()
    trace = write_run_file(tmp_path / "weather.jsonl", run.header, run.events)
    base = ["play", str(trace), "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--store", str(tmp_path)]
    missing = cli(*base, "--engine", "pydantic-ai", "--tools-module", str(tmp_path / "nope.py"))
    assert missing.returncode == 2 and "--tools-module" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
    (tmp_path / "t.py").write_text("def get_weather(city):\n    return 'x'\n")
    # Hermes runs its own tools: --tools-module is for the engines that take implementations.
    other = cli(*base, "--engine", "hermes", "--tools-module", str(tmp_path / "t.py"))
    assert other.returncode == 2 and "langgraph, openai, pydantic-ai" in other.stderr
