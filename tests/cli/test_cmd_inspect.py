"""inspect: structured timeline entries in --json, one step whole with --step N, 80 columns, --graph."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from replaykit.core.analysis.step_detail import step_detail
from replaykit.core.trace.codecs import encode_llm_request
from replaykit.core.trace.store import RunStore
from replaykit.testing.engine_runs import record_sample_run

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def store(tmp_path: Path) -> RunStore:
    store = RunStore(tmp_path / "store")
    record_sample_run(store, "a")
    return store


def cli(store: RunStore, *args: str, columns: int = 80) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": str(columns)}
    return subprocess.run([sys.executable, "-m", "replaykit", "inspect", *args, "--store", str(store.root)],
                          capture_output=True, text=True, env=env, timeout=60)


def test_json_entries_carry_structured_fields(store: RunStore) -> None:
    out = cli(store, "a", "--json")
    assert out.returncode == 0
    doc = json.loads(out.stdout)
    steps = {row["step"]: row for row in doc["timeline"] if row["step"] is not None}
    first = steps[0]
    assert first["finish_reason"] == "tool_calls" and first["provenance"] == "recorded"
    assert [c["name"] for c in first["tool_calls"]] == ["read_file", "web_search"]
    assert all(c["id"] for c in first["tool_calls"]) and first["usage"]["input_tokens"] > 0
    failing = steps[4]
    assert (failing["tool"], failing["call_id"], failing["status"]) == ("write_file", "call_c", "error")
    assert failing["arguments"] == {"path": "out.txt", "content": "milk, Bob, sunny"} and failing["failing"]
    assert "graph_mermaid" not in doc  # only with --graph


def test_step_json_is_the_request_the_provider_received(store: RunStore) -> None:
    run = store.load("a")
    out = cli(store, "a", "--step", "3", "--json")
    assert out.returncode == 0
    doc = json.loads(out.stdout)
    assert doc["run_id"] == "a" and doc["kind"] == "llm" and doc["step"] == 3
    event = run.step(3).event
    body = encode_llm_request(event.request, run.request_messages(event), run.request_tools(event.request)).body
    assert doc["request"]["body"] == body  # exactly the body rebuilt from the deltas
    assert doc["request"]["provider_messages"] == body["messages"]
    assert [m["role"] for m in doc["request"]["provider_messages"]] == ["system", "user", "assistant", "tool", "tool"]
    assert doc["response"]["tool_calls"][0]["name"] == "write_file"
    assert doc["response"]["usage"]["output_tokens"] == 20


def test_step_text_reads_in_80_columns(store: RunStore) -> None:
    out = cli(store, "a", "--step", "4")
    assert out.returncode == 0
    assert "FAILING STEP" in out.stdout and "PermissionError: out.txt is read-only" in out.stdout
    assert max(len(line) for line in out.stdout.splitlines()) <= 80
    llm = cli(store, "a", "--step", "3")
    assert "as the provider received them" in llm.stdout and "Sunny, 21C" in llm.stdout
    assert max(len(line) for line in llm.stdout.splitlines()) <= 80


def test_timeline_fits_80_columns_and_marks_failing(store: RunStore) -> None:
    out = cli(store, "a")
    assert out.returncode == 0
    lines = out.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert any(line.strip().startswith("4 ") and "✗" in line for line in lines)
    assert "graph (mermaid)" not in out.stdout


def test_bad_step_is_one_line_exit_2(store: RunStore) -> None:
    out = cli(store, "a", "--step", "99")
    assert out.returncode == 2 and "out of range" in out.stderr and "Traceback" not in out.stderr


def test_step_detail_of_a_tool_step(store: RunStore) -> None:
    detail = step_detail(store.load("a"), 4)
    assert detail["failing"] and detail["error"].startswith("PermissionError")
    assert detail["arguments"]["path"] == "out.txt" and detail["raw_arguments"].startswith("{")
