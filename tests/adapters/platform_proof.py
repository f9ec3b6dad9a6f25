"""The proof every platform importer passes, through the command line: import, validate, replay with 0 calls,
``play --engine openai --offline`` with ``diff`` exit 0, re-export to ATIF (and that ATIF imports again)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replaykit.cli.main import main
from replaykit.core.trace.ir import Provenance
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore


def import_runs(path: Path, fmt: str, store: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    assert main(["import", str(path), "--format", fmt, "--store", str(store), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    runs: list[dict[str, Any]] = document["runs"]
    return runs


def prove(path: Path, fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[Run]:
    """Every run imported from ``path`` goes the whole way; returns the imported runs."""
    store_dir = tmp_path / "store"
    store = RunStore(store_dir)
    runs = import_runs(path, fmt, store_dir, capsys)
    assert runs
    loaded = []
    for entry in runs:
        run_id = entry["run_id"]
        file = store.path_for(run_id)
        assert main(["validate", str(file)]) == 0, capsys.readouterr()
        capsys.readouterr()
        run = store.load(run_id)
        loaded.append(run)
        assert run.steps, f"{run_id}: no steps"
        assert {s.event.provenance for s in run.steps} == {Provenance.RECONSTRUCTED}
        before = file.read_bytes()

        assert main(["replay", run_id, "--store", str(store_dir), "--json"]) == 0
        counters = json.loads(capsys.readouterr().out)["counters"]
        assert (counters["provider_calls"], counters["tool_executions"], counters["trace_bytes_changed"]) == (0, 0, 0)
        assert counters["served_llm_steps"] == len(run.llm_calls())

        assert main(["play", run_id, "--engine", "openai", "--offline", "--store", str(store_dir), "--json"]) == 0
        played = json.loads(capsys.readouterr().out)
        assert (played["counters"]["provider_calls"], played["counters"]["tool_executions"],
                played["counters"]["desyncs"]) == (0, 0, 0)
        assert main(["diff", run_id, played["run_id"], "--store", str(store_dir)]) == 0, capsys.readouterr().out
        capsys.readouterr()
        assert file.read_bytes() == before

        atif = tmp_path / f"{run_id}.atif.json"
        assert main(["export", run_id, "--format", "atif", "-o", str(atif), "--store", str(store_dir)]) == 0
        capsys.readouterr()
        again = import_runs(atif, "atif", tmp_path / "again", capsys)
        back = RunStore(tmp_path / "again").load(again[0]["run_id"])
        assert [(s.kind, getattr(s.event, "name", None)) for s in back.steps] == \
            [(s.kind, getattr(s.event, "name", None)) for s in run.steps]
    return loaded


def bad_input_is_one_line(path: Path, fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                          message: str) -> None:
    store = tmp_path / "bad-store"
    assert main(["import", str(path), "--format", fmt, "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err, err
    assert not store.exists() or not any(store.glob("*.jsonl"))
