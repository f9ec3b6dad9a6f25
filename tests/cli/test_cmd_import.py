"""replaykit import for provider logs: in-process and as a subprocess, then inspect and validate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from replaykit.cli.main import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "providers"
ROOT = Path(__file__).resolve().parents[2]

CASES = [
    ("openai-chat", "openai_chat_weather.json", 4),
    ("openai-chat", "openai_chat_multi.jsonl", None),
    ("openai-responses", "openai_responses_reasoning.json", 4),
    ("anthropic", "anthropic_thinking_tools.json", 5),
]


@pytest.mark.parametrize(("fmt", "fixture", "steps"), CASES)
def test_import_then_inspect_and_validate(tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str,
                                          fixture: str, steps: int | None) -> None:
    store = str(tmp_path / "store")
    assert main(["import", str(FIXTURES / fixture), "--format", fmt, "--store", store, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["runs"]
    for entry in doc["runs"]:
        assert main(["inspect", entry["run_id"], "--store", store, "--json"]) == 0
        inspected = json.loads(capsys.readouterr().out)
        assert inspected["run_id"] == entry["run_id"]
        if steps is not None:
            assert inspected["steps"] == steps
        assert main(["validate", entry["path"], "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["valid"] is True
    if len(doc["runs"]) == 1:
        assert doc["run_id"] == doc["runs"][0]["run_id"]


def test_import_bad_file_exits_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"messages": []}\n\xff\xfe\x00garbage\n')
    assert main(["import", str(bad), "--format", "openai-chat", "--store", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error" in err and "Traceback" not in err


def test_import_as_subprocess(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "REPLAYKIT_HOME": str(tmp_path / "home")}
    store = str(tmp_path / "store")
    result = subprocess.run(
        [sys.executable, "-m", "replaykit", "import", str(FIXTURES / "anthropic_thinking_tools.json"),
         "--format", "anthropic", "--store", store, "--json"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )
    assert result.returncode == 0, result.stderr
    run_id = json.loads(result.stdout)["run_id"]
    inspected = subprocess.run(
        [sys.executable, "-m", "replaykit", "inspect", run_id, "--store", store, "--json"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )
    assert inspected.returncode == 0, inspected.stderr
    doc = json.loads(inspected.stdout)
    assert doc["steps"] == 5 and doc["final_answer"] == "We shipped 1,284 orders in the last 7 days."
