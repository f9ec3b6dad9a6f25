"""replaykit replay from the command line: JSON contract, exit codes, file untouched."""

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


def test_replay_json_and_errors(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    run_id = record_sample_run(store, "cli-1")
    path = store.path_for(run_id)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    done = cli("replay", run_id, "--store", str(tmp_path), "--json", "--from", "1", "--to", "4")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["run_id"] == run_id and doc["range"] == {"from": 1, "to": 4}
    assert doc["counters"]["provider_calls"] == 0 and doc["counters"]["tool_executions"] == 0
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    human = cli("replay", str(path))
    assert human.returncode == 0 and "provider calls 0" in human.stdout
    bad = cli("replay", run_id, "--store", str(tmp_path), "--to", "99")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "out of range" in bad.stderr
    missing = cli("replay", "nope", "--store", str(tmp_path))
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
