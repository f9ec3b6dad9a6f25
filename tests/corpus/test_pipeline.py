"""The corpus pipeline: same bytes with any worker count or engine, resumable after a SIGKILL,
damaged runs reported and skipped. Ray and Dask run locally (one Ray instance for the module)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from replaykit.core.corpus import corpus_sources, make_partitions, run_corpus
from replaykit.core.errors import BadInput
from replaykit.core.trace.run import Run
from replaykit.exporters.corpus_parquet import write_parquet
from replaykit.exporters.training import corpus_task
from tests.conftest import subprocess_env
from tests.corpus.support import DRIVER, FIXTURES, PATTERNS, RAW, make_corpus, shard_bytes

N_RUNS = 40
N_HERMES = len(list(FIXTURES.glob("*.jsonl")))  # the real Hermes recordings, in every corpus
TOTAL = N_RUNS + N_HERMES


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("corpus") / "store"
    make_corpus(root, N_RUNS)
    return root


@pytest.fixture(scope="module")
def reference(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The corpus exported in one process (no redaction: the engines are what is compared here)."""
    from replaykit.core.trace.store import RunStore

    out = tmp_path_factory.mktemp("ref") / "out"
    sources = corpus_sources(RunStore(corpus), [], all_runs=True)
    summary = run_corpus(sources, corpus_task, RAW, command="export", out=out, sink="shards", parquet=write_parquet,
                         workers=1, partition_runs=8, progress=False)
    assert summary.runs == TOTAL and summary.records > N_RUNS and not summary.damaged
    return out


def _export(corpus: Path, out: Path, **kw: object) -> object:
    from replaykit.core.trace.store import RunStore

    sources = corpus_sources(RunStore(corpus), [], all_runs=True)
    return run_corpus(sources, corpus_task, RAW, command="export", out=out, sink="shards", parquet=write_parquet,
                      partition_runs=8, progress=False, **kw)  # type: ignore[arg-type]


def test_partitions_depend_on_the_input_only(corpus: Path) -> None:
    from replaykit.core.trace.store import RunStore

    sources = corpus_sources(RunStore(corpus), [], all_runs=True)
    parts = make_partitions(sources, max_runs=8)
    assert [len(p.paths) for p in parts] == [8] * (TOTAL // 8) + ([TOTAL % 8] if TOTAL % 8 else [])
    assert [p for part in parts for p in part.paths] == [str(s) for s in sources]
    assert make_partitions(sources, max_runs=8, max_bytes=1)[0].paths == (str(sources[0]),)


def test_real_hermes_runs_are_in_the_export(reference: Path) -> None:
    manifest = [json.loads(line) for line in (reference / "manifest.jsonl").read_text().splitlines()[1:]]
    ids = [rid for entry in manifest for rid in entry["run_ids"]]
    assert len(ids) == len(set(ids))
    assert sum(rid.startswith("hermes-") for rid in ids) >= 5
    records = [json.loads(line) for name, data in shard_bytes(reference).items() if name.endswith(".jsonl")
               for line in data.decode().splitlines()]
    assert len(records) == len(ids)
    assert all(r["messages"][-1]["role"] == "assistant" for r in records)


def test_two_workers_write_the_same_bytes(corpus: Path, reference: Path, tmp_path: Path) -> None:
    summary = _export(corpus, tmp_path / "w2", workers=2)
    assert summary.workers == 2 and len(summary.worker_peak_rss_kb) == 2  # type: ignore[attr-defined]
    assert shard_bytes(tmp_path / "w2") == shard_bytes(reference)


@pytest.mark.single_env
def test_dask_local_cluster_writes_the_same_bytes(corpus: Path, reference: Path, tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    summary = _export(corpus, tmp_path / "dask", workers=2, cluster="dask")
    assert summary.executor == "dask"  # type: ignore[attr-defined]
    assert shard_bytes(tmp_path / "dask") == shard_bytes(reference)


@pytest.fixture(scope="module")
def ray_local() -> object:
    ray = pytest.importorskip("ray", reason="the 'ray' extra is not installed in this environment")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": subprocess_env()["PYTHONPATH"]}})
    yield ray
    ray.shutdown()


@pytest.mark.single_env
def test_ray_local_writes_the_same_bytes(corpus: Path, reference: Path, tmp_path: Path, ray_local: object) -> None:
    summary = _export(corpus, tmp_path / "ray", cluster="ray")
    assert summary.executor == "ray"  # type: ignore[attr-defined]
    assert shard_bytes(tmp_path / "ray") == shard_bytes(reference)


def test_redacted_export_is_the_same_with_one_or_two_workers(tmp_path: Path) -> None:
    pytest.importorskip("presidio_analyzer")
    store = make_corpus(tmp_path / "small", 8, hermes=False)
    sources = corpus_sources(store, [], all_runs=True)
    outs = []
    for workers in (1, 2):
        out = tmp_path / f"red{workers}"
        run_corpus(sources, corpus_task, PATTERNS, command="export", out=out, sink="shards", workers=workers,
                   partition_runs=2, progress=False)
        outs.append(shard_bytes(out))
    assert outs[0] == outs[1]
    text = b"".join(outs[0].values()).decode()
    assert "sk-proj-" not in text and "@example.com" not in text and "<OPENAI_API_KEY_1>" in text


def _manifest_entries(out: Path) -> int:
    try:
        return max(0, len((out / "manifest.jsonl").read_text().splitlines()) - 1)
    except FileNotFoundError:
        return 0


def _children(pid: int) -> list[int]:
    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                kids.append(int(entry))
    return kids


def _start_driver(corpus: Path, out: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", DRIVER, str(corpus), str(out)], env=subprocess_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def _wait_for_some_partitions(proc: subprocess.Popen[str], out: Path, total: int) -> None:
    deadline = time.monotonic() + 60
    while _manifest_entries(out) < 2:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert _manifest_entries(out) < total  # killed mid-export, not after it


def _check_resumed(corpus: Path, out: Path, reference_bytes: dict[str, bytes]) -> None:
    rerun = subprocess.run([sys.executable, "-c", DRIVER, str(corpus), str(out)], env=subprocess_env(),
                           capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    resumed, records = map(int, rerun.stdout.split())
    assert resumed >= 2
    assert shard_bytes(out) == reference_bytes  # nothing lost, nothing duplicated
    lines = [line for name, data in shard_bytes(out).items() for line in data.splitlines()]
    assert records == len(lines) == len(set(lines))


@pytest.fixture(scope="module")
def small_reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, bytes]]:
    root = tmp_path_factory.mktemp("killcorpus") / "store"
    store = make_corpus(root, 24, hermes=False)
    out = root.parent / "ref"
    run_corpus(corpus_sources(store, [], all_runs=True), corpus_task, RAW, command="export", out=out,
               sink="shards", workers=1, partition_runs=2, progress=False)
    return root, shard_bytes(out)


def test_worker_killed_mid_export_is_survived(small_reference: tuple[Path, dict[str, bytes]], tmp_path: Path) -> None:
    """A worker SIGKILLed from outside (the OOM killer): the pool is restarted and the export finishes
    with the clean run's bytes (tests/corpus/test_worker_death.py covers a run that kills every worker)."""
    corpus, reference_bytes = small_reference
    out = tmp_path / "out"
    proc = _start_driver(corpus, out)
    _wait_for_some_partitions(proc, out, len(reference_bytes))
    workers = [kid for kid in _children(proc.pid)]
    assert workers
    os.kill(workers[0], signal.SIGKILL)
    stdout, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    resumed, records = map(int, stdout.split())
    assert resumed == 0
    assert shard_bytes(out) == reference_bytes  # nothing lost, nothing duplicated
    lines = [line for name, data in shard_bytes(out).items() for line in data.splitlines()]
    assert records == len(lines) == len(set(lines))
    entries = [json.loads(line)["partition"] for line in (out / "manifest.jsonl").read_text().splitlines()[1:]]
    assert sorted(entries) == list(range(len(reference_bytes)))


def test_driver_killed_mid_export_then_rerun(small_reference: tuple[Path, dict[str, bytes]], tmp_path: Path) -> None:
    corpus, reference_bytes = small_reference
    out = tmp_path / "out"
    proc = _start_driver(corpus, out)
    _wait_for_some_partitions(proc, out, len(reference_bytes))
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    _check_resumed(corpus, out, reference_bytes)


def test_damaged_runs_are_reported_and_skipped(tmp_path: Path) -> None:
    store = make_corpus(tmp_path / "store", 6, hermes=False)
    good = store.root / "corpus-00002.jsonl"
    lines = good.read_bytes().splitlines(keepends=True)
    (store.root / "broken-middle.jsonl").write_bytes(lines[0] + b"{not json\n" + b"".join(lines[1:]))
    (store.root / "broken-header.jsonl").write_bytes(b"this is not a trace\n")
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "replaykit", "export", "--all", "--store", str(store.root),
                           "--format", "openai-jsonl", "--no-redact", "-o", str(out), "--workers", "2",
                           "--partition-size", "2", "--json"],
                          capture_output=True, text=True, env=subprocess_env(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    damaged = {Path(d["source"]).name: d["error"] for d in doc["damaged"]}
    assert set(damaged) == {"broken-middle.jsonl", "broken-header.jsonl"}
    assert "line 2" in damaged["broken-middle.jsonl"] and "not a replaykit trace" in damaged["broken-header.jsonl"]
    assert "skipped damaged run" in proc.stderr and "broken-header.jsonl" in proc.stderr
    assert doc["runs"] == 8 and len(doc["run_id"]) + sum(doc["skipped"].values()) == 6
    assert sorted(doc["run_id"]) == doc["run_id"] and all(r.startswith("corpus-") for r in doc["run_id"])


def test_a_rerun_with_other_options_is_refused(corpus: Path, reference: Path) -> None:
    from replaykit.core.trace.store import RunStore

    sources = corpus_sources(RunStore(corpus), [], all_runs=True)
    with pytest.raises(BadInput, match="other inputs or options"):
        run_corpus(sources, corpus_task, {**RAW, "min_health": 90}, command="export", out=reference,
                   sink="shards", parquet=write_parquet, workers=1, partition_runs=8, progress=False)
    again = run_corpus(sources, corpus_task, RAW, command="export", out=reference, sink="shards", parquet=write_parquet,
                       workers=1, partition_runs=8, progress=False)
    assert again.resumed_partitions == again.partitions == -(-TOTAL // 8) and again.runs == TOTAL


def test_parquet_shards_hold_the_jsonl_records(reference: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    table = pq.read_table(reference / "part-00000.parquet")
    records = [json.loads(line) for line in (reference / "part-00000.jsonl").read_text().splitlines()]
    assert table.num_rows == len(records)
    assert [json.loads(m) for m in table.column("messages").to_pylist()] == [r["messages"] for r in records]


def test_cli_export_min_health(corpus: Path, tmp_path: Path) -> None:
    from replaykit.core.analysis.health import run_health

    healthy = 0
    for path in sorted(corpus.glob("corpus-*.jsonl"))[:20]:
        run = Run.load(path)
        healthy += run_health(run).score >= 90 and run.final_answer is not None
    sub = tmp_path / "sub"
    sub.mkdir()
    for path in sorted(corpus.glob("corpus-*.jsonl"))[:20]:
        (sub / path.name).write_bytes(path.read_bytes())
    out = tmp_path / "healthy"
    proc = subprocess.run([sys.executable, "-m", "replaykit", "export", str(sub), "--format", "trl", "--no-redact",
                           "--min-health", "90", "-o", str(out), "--workers", "1", "--json"],
                          capture_output=True, text=True, env=subprocess_env(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["records"] == healthy < 20 and doc["skipped"].get("health below 90", 0) > 0
    bad = subprocess.run([sys.executable, "-m", "replaykit", "export", str(sub), "--format", "trl",
                          "--min-health", "120", "-o", str(tmp_path / "x")],
                         capture_output=True, text=True, env=subprocess_env(), timeout=60)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--min-health" in bad.stderr


def test_cli_redact_all_into_a_directory_resumes(tmp_path: Path) -> None:
    pytest.importorskip("presidio_analyzer")
    store = make_corpus(tmp_path / "store", 4, hermes=False)
    out = tmp_path / "redacted"
    cmd = [sys.executable, "-m", "replaykit", "redact", "--all", "--store", str(store.root), "--mode", "patterns",
           "-o", str(out), "--workers", "1", "--partition-size", "2", "--json"]
    first = subprocess.run(cmd, capture_output=True, text=True, env=subprocess_env(), timeout=120)
    assert first.returncode == 0, first.stderr
    doc = json.loads(first.stdout)
    assert doc["run_id"] == [f"redacted-corpus-{i:05d}" for i in range(4)]
    assert doc["copies"] == 4 and doc["damaged"] == []
    copies = {p.name: p.read_bytes() for p in out.glob("redacted-*.jsonl")}
    assert len(copies) == 4
    for name in copies:
        run = Run.load(out / name)
        assert run.header.lineage is not None and run.header.lineage.relation == "redaction"
        original = Run.load(store.root / name.removeprefix("redacted-"))
        assert len(run.events) == len(original.events)
    text = b"".join(copies.values()).decode()
    assert "sk-proj-" not in text and "@example.com" not in text
    again = subprocess.run(cmd, capture_output=True, text=True, env=subprocess_env(), timeout=120)
    assert json.loads(again.stdout)["resumed_partitions"] == 2
    # the output directory is a store of redacted copies: its manifest is not taken for a run
    stats = subprocess.run([sys.executable, "-m", "replaykit", "stats", "--store", str(out), "--workers", "1",
                            "--json"], capture_output=True, text=True, env=subprocess_env(), timeout=120)
    assert json.loads(stats.stdout)["runs"] == 4 and json.loads(stats.stdout)["damaged"] == []
    assert {p.name: p.read_bytes() for p in out.glob("redacted-*.jsonl")} == copies


@pytest.mark.slow
def test_a_larger_corpus_is_the_same_with_one_or_two_workers(tmp_path: Path) -> None:
    store = make_corpus(tmp_path / "big", 2000, steps=12)
    sources = corpus_sources(store, [], all_runs=True)
    outs = []
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        summary = run_corpus(sources, corpus_task, RAW, command="export", out=out, sink="shards", workers=workers,
                             progress=False)
        assert summary.runs == 2000 + N_HERMES and not summary.damaged
        outs.append(shard_bytes(out))
    assert outs[0] == outs[1] and len(outs[0]) == 32
