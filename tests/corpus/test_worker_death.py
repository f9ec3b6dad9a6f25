"""A local worker that dies (SIGKILL, as the OOM killer or a native crash would) does not stop the job:
the pool is restarted, the partitions in flight are redone, a run that kills a worker twice is reported
as damaged and skipped, and every other run's output is the bytes of a clean run, written once."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from replaykit.core.corpus import corpus_sources, make_executor, run_corpus
from replaykit.core.corpus._local import WORKER_DIED
from replaykit.exporters.training import corpus_task
from tests.conftest import subprocess_env
from tests.corpus.support import RAW, killer_task, make_corpus, shard_bytes

KILLER = "corpus-00005.jsonl"
FLAKY = "corpus-00010.jsonl"


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, bytes]]:
    root = tmp_path_factory.mktemp("deathcorpus") / "store"
    store = make_corpus(root, 16, hermes=False)
    out = root.parent / "ref"
    run_corpus(corpus_sources(store, [], all_runs=True), corpus_task, RAW, command="export", out=out,
               sink="shards", workers=1, partition_runs=3, progress=False)
    return root, shard_bytes(out)


def _export(store: Path, out: Path, flags: Path, *, always: list[str], once: list[str]) -> tuple[object, int]:
    from replaykit.core.trace.store import RunStore

    flags.mkdir(exist_ok=True)
    options = {**RAW, "driver_pid": os.getpid(), "flags": str(flags), "kill_always": always, "kill_once": once}
    executor = make_executor(workers=2)
    try:
        summary = run_corpus(corpus_sources(RunStore(store), [], all_runs=True), killer_task, options,
                             command="export", out=out, sink="shards", partition_runs=3, progress=False,
                             executor=executor)
    finally:
        executor.close()
    return summary, executor.pool_restarts  # type: ignore[attr-defined]


def _manifest(out: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (out / "manifest.jsonl").read_text().splitlines()[1:]]


def test_a_run_that_kills_its_worker_twice_is_reported_and_skipped(
        clean: tuple[Path, dict[str, bytes]], tmp_path: Path) -> None:
    store, reference = clean
    out = tmp_path / "out"
    summary, restarts = _export(store, out, tmp_path / "flags", always=[KILLER], once=[])
    assert restarts == 2  # the death among others, then the death alone
    damaged = summary.damaged  # type: ignore[attr-defined]
    assert [Path(d["source"]).name for d in damaged] == [KILLER] and "worker died" in damaged[0]["error"]
    # Every other run: the clean run's bytes; the killer's records only are missing.
    expected = _expected_without(store, reference, [KILLER])
    assert expected != reference and shard_bytes(out) == expected
    entries = _manifest(out)
    assert sorted(e["partition"] for e in entries) == list(range(len(reference)))  # each once
    ids = [rid for e in entries for rid in e["run_ids"]]  # type: ignore[attr-defined]
    assert len(ids) == len(set(ids)) == 15 and KILLER.removesuffix(".jsonl") not in ids
    assert [d for e in entries for d in e["damaged"]] == damaged  # type: ignore[attr-defined]
    # The manifest is consistent: a rerun resumes everything and reports the same damaged run.
    from replaykit.core.trace.store import RunStore

    again = run_corpus(corpus_sources(RunStore(store), [], all_runs=True), killer_task, {**RAW, "driver_pid": os.getpid(), "flags": str(tmp_path / "flags"),
                                     "kill_always": [KILLER], "kill_once": []},
                       command="export", out=out, sink="shards", partition_runs=3, workers=1, progress=False)
    assert again.resumed_partitions == again.partitions and again.damaged == damaged


@pytest.mark.parametrize("thread_running", [False, True], ids=["fork", "spawn"])
def test_a_worker_that_dies_once_is_retried_and_nothing_is_lost(
        clean: tuple[Path, dict[str, bytes]], tmp_path: Path, thread_running: bool) -> None:
    """With another thread running (the progress bar's), the new pool is spawned, not forked."""
    store, reference = clean
    out = tmp_path / "out"
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    if thread_running:
        other.start()
    try:
        summary, restarts = _export(store, out, tmp_path / "flags", always=[], once=[FLAKY])
    finally:
        stop.set()
    assert (tmp_path / "flags" / FLAKY).exists()  # it did die
    assert restarts == 1 and not summary.damaged  # type: ignore[attr-defined]
    assert shard_bytes(out) == reference
    assert sorted(e["partition"] for e in _manifest(out)) == list(range(len(reference)))


def test_killers_and_transient_deaths_together(clean: tuple[Path, dict[str, bytes]], tmp_path: Path) -> None:
    store, reference = clean
    out = tmp_path / "out"
    summary, _ = _export(store, out, tmp_path / "flags", always=[KILLER, "corpus-00012.jsonl"],
                         once=[FLAKY, "corpus-00001.jsonl"])
    damaged = sorted(Path(d["source"]).name for d in summary.damaged)  # type: ignore[attr-defined]
    assert damaged == [KILLER, "corpus-00012.jsonl"]
    assert summary.runs == 16 and len(summary.run_ids) == 14  # type: ignore[attr-defined]
    assert shard_bytes(out) == _expected_without(store, reference, [KILLER, "corpus-00012.jsonl"])


def _expected_without(store: Path, reference: dict[str, bytes], names: list[str]) -> dict[str, bytes]:
    gone = {line.encode() for name in names for line in corpus_task(str(store / name), RAW).lines}
    return {shard: b"".join(line for line in data.splitlines(keepends=True) if line.rstrip(b"\n") not in gone)
            for shard, data in reference.items()}


@pytest.mark.slow  # about 20 s: Ray starts a new worker process after each of the six deaths
@pytest.mark.single_env
def test_ray_reports_a_run_that_kills_its_workers(clean: tuple[Path, dict[str, bytes]], tmp_path: Path) -> None:
    """Ray retries a partition whose worker died (3 times); then its runs go one by one."""
    from replaykit.core.trace.store import RunStore

    ray = pytest.importorskip("ray", reason="the 'ray' extra is not installed in this environment")
    store, reference = clean
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": subprocess_env()["PYTHONPATH"]}})
    try:
        options = {**RAW, "driver_pid": os.getpid(), "flags": str(tmp_path), "kill_always": [KILLER],
                   "kill_once": [FLAKY]}
        summary = run_corpus(corpus_sources(RunStore(store), [], all_runs=True), killer_task, options,
                             command="export", out=tmp_path / "out", sink="shards", partition_runs=3,
                             progress=False, cluster="ray")
    finally:
        ray.shutdown()
    assert [(Path(d["source"]).name, d["error"]) for d in summary.damaged] == [(KILLER, WORKER_DIED)]
    assert (tmp_path / FLAKY).exists()
    assert shard_bytes(tmp_path / "out") == _expected_without(store, reference, [KILLER])


@pytest.mark.single_env
def test_dask_reports_a_run_that_kills_its_workers(clean: tuple[Path, dict[str, bytes]], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Dask reruns a task whose worker died (allowed-failures, 1 here), then its runs go one by one."""
    from replaykit.core.trace.store import RunStore

    pytest.importorskip("distributed", reason="the 'dask' extra is not installed in this environment")
    import dask

    store, reference = clean
    monkeypatch.setenv("PYTHONPATH", subprocess_env()["PYTHONPATH"])  # the workers import tests.corpus
    options = {**RAW, "driver_pid": os.getpid(), "flags": str(tmp_path), "kill_always": [KILLER],
               "kill_once": [FLAKY]}
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        summary = run_corpus(corpus_sources(RunStore(store), [], all_runs=True), killer_task, options,
                             command="export", out=tmp_path / "out", sink="shards", partition_runs=3,
                             progress=False, workers=2, cluster="dask")
    assert [(Path(d["source"]).name, d["error"]) for d in summary.damaged] == [(KILLER, WORKER_DIED)]
    assert (tmp_path / FLAKY).exists()
    assert shard_bytes(tmp_path / "out") == _expected_without(store, reference, [KILLER])
