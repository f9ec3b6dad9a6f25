"""replaykit branch from the command line: prints the new run id, --json, errors."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from replaykit.core.trace.store import RunStore
from replaykit.testing.engine_runs import record_sample_run

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "replaykit", *args], capture_output=True, text=True, env=env,
                          timeout=60)


def test_branch_cli(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    record_sample_run(store, "p")
    before = hashlib.sha256(store.path_for("p").read_bytes()).hexdigest()
    plain = cli("branch", "p", "--at", "4", "--result", "ok now", "--store", str(tmp_path))
    assert plain.returncode == 0, plain.stderr
    child_id = plain.stdout.strip()
    assert store.load(child_id).header.lineage.parent_run_id == "p"
    as_json = cli("branch", child_id, "--at", "2", "--result", "rain", "--store", str(tmp_path), "--json")
    doc = json.loads(as_json.stdout)
    assert doc["parent_run_id"] == child_id and doc["edit"]["target"] == "result" and doc["live_from"] == 3
    assert hashlib.sha256(store.path_for("p").read_bytes()).hexdigest() == before
    inspect = cli("inspect", doc["run_id"], "--store", str(tmp_path), "--json")
    assert [r["provenance"] for r in json.loads(inspect.stdout)["timeline"] if r["step"] is not None] == \
        ["served", "served", "edited"]
    for bad in (["--at", "0", "--result", "x"], ["--at", "4", "--args", "{oops"], ["--at", "4"],
                ["--at", "4", "--result", "x", "--args", "{}"]):
        done = cli("branch", "p", *bad, "--store", str(tmp_path))
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
