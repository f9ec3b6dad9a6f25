"""Which heavy libraries a command imports (sys.modules in a fresh interpreter), not how long it takes:
no command imports LangGraph, PydanticAI, Presidio, spaCy or openai unless it uses them, and listing the
store does not even load pydantic."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "hermes" / "tools_sequence.jsonl"
HEAVY = ("langgraph", "langchain_core", "pydantic_ai", "presidio_analyzer", "presidio_anonymizer", "spacy",
         "openai", "rich", "pydantic")
PROBE = """
import contextlib, io, json, sys
from replaykit.cli.main import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main(sys.argv[1:])
json.loads(out.getvalue())  # the command really ran and printed its JSON document
print(json.dumps({"code": code, "heavy": sorted({m.split(".")[0] for m in sys.modules} & set(HEAVY))}))
""".replace("HEAVY", repr(HEAVY))


def _heavy_imports(*argv: str) -> list[str]:
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, env=env,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["code"] == 0
    return list(report["heavy"])


def test_runs_lists_the_store_without_pydantic_or_any_framework(tmp_path):
    (tmp_path / "one.jsonl").write_bytes(FIXTURE.read_bytes())
    assert _heavy_imports("runs", "--store", str(tmp_path), "--json") == []


@pytest.mark.parametrize("store_empty", [True, False])
def test_runs_on_an_empty_or_missing_store(tmp_path, store_empty):
    store = tmp_path if store_empty else tmp_path / "missing"
    assert _heavy_imports("runs", "--store", str(store), "--json") == []


@pytest.mark.parametrize("command", [["inspect"], ["replay"], ["validate"], ["diff", str(FIXTURE)]])
def test_reading_commands_import_no_framework_redactor_or_provider_sdk(command):
    # pydantic loads the trace (the IR) for replay, validate and diff; inspect streams the raw lines but
    # prices this run (genai-prices is built on pydantic); nothing else heavy (no LangGraph graph unasked).
    assert _heavy_imports(command[0], str(FIXTURE), *command[1:], "--json") == ["pydantic"]


def test_inspect_streams_the_trace_without_pydantic(tmp_path):
    # The streaming inspect reads raw lines; only pricing a run (genai-prices, itself built on pydantic)
    # would load pydantic, and a run sent to a local endpoint has no price to look up.
    lines = FIXTURE.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    header["base_url"] = "http://127.0.0.1:8080/v1"
    local = tmp_path / "local.jsonl"
    local.write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    assert _heavy_imports("inspect", str(local), "--json") == []
    assert _heavy_imports("inspect", str(local), "--all", "--json") == []


@pytest.mark.parametrize("fixture", [FIXTURE, FIXTURE.parents[1] / "schema" / "v2.jsonl"], ids=["hermes", "v2"])
def test_python_export_streams_the_trace_without_pydantic(tmp_path, fixture):
    # ``replaykit export --format python`` reads the trace file as a stream of plain dicts and writes the
    # script from the trace's own lines: no pydantic, no rich, no framework (``same`` marks included).
    out = tmp_path / "run.py"
    assert _heavy_imports("export", str(fixture), "--format", "python", "-o", str(out), "--json") == []
    assert out.stat().st_size > 0
