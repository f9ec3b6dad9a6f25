"""Issue 28, items 2, 9 and 12: a corpus export defaults to original recordings; ``export`` without ``-o``
and with ``-o -``; ``rm`` and ``gc`` clear branches and plays and keep originals unless asked."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from replaykit.core.replay.branch import branch
from replaykit.core.trace.store import RunStore
from replaykit.testing.engine_runs import record_sample_run
from tests.conftest import PYTHON, subprocess_env


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PYTHON, "-m", "replaykit.cli.main", *args], env=subprocess_env(), capture_output=True,
                          text=True, timeout=120, cwd=cwd)


def _corpus() -> tuple[str, str]:
    store = RunStore()
    original = record_sample_run(store, "orig-1")
    edited = branch(store, store.load(original), 8, response="Rainy.", run_id="orig-1-branch")
    return original, edited.run_id


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_corpus_export_holds_only_originals_unless_asked(tmp_path: Path) -> None:
    _corpus()
    for fmt in ("openai-jsonl", "sharegpt", "trl"):
        out = tmp_path / f"{fmt}.jsonl"
        done = cli("export", "--all", "--format", fmt, "-o", str(out), "--no-redact")
        assert done.returncode == 0, done.stderr
        assert "Rainy." not in out.read_text(), fmt
        assert len(_records(out)) == 1
    both = tmp_path / "both.jsonl"
    assert cli("export", "--all", "--include", "branches", "--format", "trl", "-o", str(both),
               "--no-redact").returncode == 0
    assert "Rainy." in both.read_text() and len(_records(both)) == 2
    bad = cli("export", "--all", "--include", "forks", "--format", "trl", "-o", str(tmp_path / "x.jsonl"))
    assert bad.returncode == 2 and "unknown kind forks" in bad.stderr and "Traceback" not in bad.stderr


def test_export_default_name_and_stdout(tmp_path: Path) -> None:
    original, _ = _corpus()
    done = cli("export", original, "--format", "python", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / f"{original}.py").is_file()
    assert cli("export", original, "--format", "langgraph", cwd=tmp_path).returncode == 0
    assert (tmp_path / f"{original}_langgraph.py").is_file()
    piped = cli("export", original, "--format", "html", "-o", "-", cwd=tmp_path)
    assert piped.returncode == 0 and piped.stdout.startswith("<!DOCTYPE html>")
    assert not (tmp_path / "-").exists()
    script = cli("export", original, "--format", "python", "-o", "-", cwd=tmp_path).stdout
    ran = subprocess.run([PYTHON, "-"], input=script, capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0 and json.loads(ran.stdout)["counters"]["provider_calls"] == 0
    refused = cli("export", original, "--format", "trl", "-o", "-")
    assert refused.returncode == 2 and "give -o PATH" in refused.stderr


def test_gc_is_a_dry_run_and_keeps_originals(store_dir: Path) -> None:
    original, edited = _corpus()
    listed = cli("gc", "--json")
    plan = json.loads(listed.stdout)
    assert [r["run_id"] for r in plan["remove"]] == [edited] and plan["dry_run"] and plan["removed"] == 0
    assert (store_dir / f"{edited}.jsonl").is_file()
    assert cli("gc", "--older-than", "1d", "--yes").returncode == 0  # nothing that old
    assert (store_dir / f"{edited}.jsonl").is_file()
    assert cli("gc", "--lineage", original, "--yes").returncode == 0
    assert not (store_dir / f"{edited}.jsonl").exists() and (store_dir / f"{original}.jsonl").is_file()
    # an original goes only when asked (and created_at, not the file's mtime, is its age)
    assert json.loads(cli("gc", "--originals", "--older-than", "1d", "--json").stdout)["runs"] == 0
    assert json.loads(cli("gc", "--originals", "--json").stdout)["runs"] == 1
    assert cli("gc", "--older-than", "2x").returncode == 2


def test_rm_refuses_to_orphan_derived_runs(store_dir: Path) -> None:
    original, edited = _corpus()
    refused = cli("rm", original)
    assert refused.returncode == 2 and edited in refused.stderr and "--with-derived" in refused.stderr
    assert (store_dir / f"{original}.jsonl").is_file()
    assert cli("rm", edited).returncode == 0
    assert not (store_dir / f"{edited}.jsonl").exists()
    assert cli("rm", "no-such-run").returncode == 2
    assert cli("rm", original).returncode == 0 and not (store_dir / f"{original}.jsonl").exists()


def test_runs_at_80_columns_never_cuts_an_id() -> None:
    original, edited = _corpus()
    long_id = "branch-20261203-141225-60796d2a-with-a-long-tail"
    store = RunStore()
    branch(store, store.load(original), 8, response="Cloudy.", run_id=long_id)
    env = subprocess_env()
    for columns in ("80", "200"):
        env["COLUMNS"] = columns
        out = subprocess.run([PYTHON, "-m", "replaykit.cli.main", "runs"], env=env, capture_output=True, text=True,
                             timeout=60).stdout
        assert max(len(line) for line in out.splitlines()) <= int(columns)
        for run_id in (original, edited, long_id):
            assert run_id in out, (columns, out)
