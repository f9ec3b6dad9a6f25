"""Corpus pipeline throughput: one process vs ``--workers 2`` vs Ray local vs Dask local, with pattern and
NER redaction, on runs of the long-session shape (``bench/long_session.py``, 50 steps each); peak memory
per worker; the scaling figures and what M machines would give.

    PYTHONPATH=. python bench/bench_corpus.py [--runs 1000] [--ner-runs 100] [--engines local1,local2,ray,dask]
                                               [--modes patterns,ner] [--corpus DIR] [--json]

Every run is a real Hermes recording of the long session (made by replaykit's Hermes plugin driven in
Hermes 0.19.0's order) with its own seed, so its content is its own (a corpus of copies would let the
redaction cache answer everything). The job is ``export --format openai-jsonl`` with redaction, the
work a data team runs; records are SFT records (one per run).

Figures per (mode, engine): wall time, records/s, ratio to the one-process baseline measured in the same
session, peak RSS of each worker (VmHWM), and the coordination overhead: wall time minus the workers'
own compute time divided by the number of workers. The M-machine estimate is the measured per-worker
rate x cores x M, less the measured per-partition overhead; the outputs of every engine are checked to
be the same bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

STEPS = 50


def _make_run(job: tuple[str, int]) -> int:
    """One long-session run at ``path`` with seed ``i`` and run id ``long-<i>``."""
    from long_session import write_long_session_run

    path, i = job
    tmp = Path(path).with_suffix(".tmp")
    write_long_session_run(tmp, STEPS, seed=i)
    with open(tmp, "rb") as src, open(path, "wb") as dst:
        header = json.loads(src.readline())
        header["run_id"] = f"long-{i:05d}"
        dst.write(json.dumps(header, separators=(",", ":")).encode() + b"\n")
        shutil.copyfileobj(src, dst)
    tmp.unlink()
    return os.path.getsize(path)


def make_corpus(root: Path, n: int) -> int:
    """``n`` long-session runs in ``root`` (reused when already there); returns total bytes."""
    root.mkdir(parents=True, exist_ok=True)
    todo = [(str(root / f"long-{i:05d}.jsonl"), i) for i in range(n) if not (root / f"long-{i:05d}.jsonl").exists()]
    if todo:
        with ProcessPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            list(pool.map(_make_run, todo, chunksize=8))
    return sum((root / f"long-{i:05d}.jsonl").stat().st_size for i in range(n))


def _digest(out: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(out.glob("part-*.jsonl")):
        h.update(p.read_bytes())
    return h.hexdigest()


def measure(sources: list[Path], mode: str, engine: str, work: Path, executor: Any, partition: int) -> dict[str, Any]:
    from replaykit.core.corpus import run_corpus
    from replaykit.exporters.training import corpus_task

    options = {"format": "openai-jsonl", "redact": True, "mode": mode, "preference_chosen": None, "store": None,
               "min_health": None}
    out = work / f"out-{mode}-{engine}"
    compute = [0.0]
    started = time.perf_counter()
    summary = run_corpus(sources, corpus_task, options, command="export", out=out, sink="shards", progress=False,
                         executor=executor, partition_runs=partition, on_partition=lambda r: compute.__setitem__(0, compute[0] + r.seconds))
    wall = time.perf_counter() - started
    workers = max(1, summary.workers)
    rss = sorted(summary.worker_peak_rss_kb.values())
    return {
        "mode": mode, "engine": engine, "workers": workers, "runs": summary.runs, "records": summary.records,
        "partitions": summary.partitions, "partition_runs": partition, "wall_s": wall, "compute_s": compute[0],
        "records_per_s": summary.records / wall, "per_worker_records_per_s": summary.records / compute[0],
        "overhead_s": max(0.0, wall - compute[0] / workers), "driver_s": summary.driver_seconds,
        "peak_rss_mb_per_worker": [round(k / 1024, 1) for k in rss], "digest": _digest(out),
    }


def _executor(engine: str) -> tuple[Any, float]:
    from replaykit.core.corpus import make_executor

    started = time.perf_counter()
    if engine == "local1":
        ex = make_executor(1)
    elif engine == "local2":
        ex = make_executor(2)
        ex.start(2)
    elif engine == "ray":
        import ray

        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}})
        ex = make_executor(2, "ray")
    else:
        ex = make_executor(2, "dask")
    return ex, time.perf_counter() - started


def one(args: argparse.Namespace) -> int:
    """Measure one (engine, mode) in this fresh process (no engine, cache or pool left by another)."""
    work = Path(tempfile.mkdtemp(prefix="rk-bench-corpus-"))
    try:
        executor, startup = _executor(args.one)
        try:
            n = args.runs if args.mode == "patterns" else args.ner_runs
            sources = [Path(args.corpus) / f"long-{i:05d}.jsonl" for i in range(n)]
            row = measure(sources, args.mode, args.one, work, executor, args.partition_size)
        finally:
            executor.close()
            if args.one == "ray":
                import ray

                ray.shutdown()
        row["startup_s"] = startup
        print(json.dumps(row))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser()
    # The full size is --runs 10000 (hours on 2 cores: every run is redacted 4 times); the default
    # keeps run_all.py to minutes while every run is still a 50-step long session with its own content.
    parser.add_argument("--runs", type=int, default=1000, help="runs for pattern redaction (full size: 10000)")
    parser.add_argument("--ner-runs", type=int, default=100, help="runs for NER")
    parser.add_argument("--engines", default="local1,local2,ray,dask")
    parser.add_argument("--modes", default="patterns,ner")
    parser.add_argument("--partition-size", type=int, default=64)
    parser.add_argument("--corpus", default=None, help="directory to keep (and reuse) the generated runs in")
    parser.add_argument("--machines", default="1,4,16,64", help="M values for the cluster estimate")
    parser.add_argument("--cores", type=int, default=16, help="cores per machine for the estimate")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--mode", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.one:
        return one(args)
    work = Path(tempfile.mkdtemp(prefix="rk-bench-corpus-"))
    corpus = Path(args.corpus) if args.corpus else work / "corpus"
    n_max = max(args.runs, args.ner_runs)
    t = time.perf_counter()
    total_bytes = make_corpus(corpus, n_max)
    print(f"corpus: {n_max} runs x {STEPS} steps, {total_bytes / 1e6:.1f} MB, made in {time.perf_counter() - t:.0f}s",
          file=sys.stderr)
    results: list[dict[str, Any]] = []
    try:
        for mode in args.modes.split(","):
            for engine in args.engines.split(","):
                cmd = [sys.executable, __file__, "--one", engine, "--mode", mode, "--runs", str(args.runs),
                       "--ner-runs", str(args.ner_runs), "--partition-size", str(args.partition_size),
                       "--corpus", str(corpus)]
                proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
                lines = proc.stdout.strip().splitlines()
                if proc.returncode or not lines:  # an engine that is not installed is reported, not fatal
                    print(f"{mode} {engine}: failed ({proc.stderr.strip().splitlines()[-1:]})", file=sys.stderr)
                    continue
                row = json.loads(lines[-1])
                results.append(row)
                print(json.dumps({k: v for k, v in row.items() if k != "digest"}), file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = report(results, [int(m) for m in args.machines.split(",")], args.cores)
    if args.json:
        print(json.dumps(rows))
    return 0


def estimate(r: dict[str, Any], machines: list[int], cores: int, n: int = 10_000) -> str:
    """Records/s for ``n`` runs on M machines of ``cores`` workers each, from this engine's figures.

    Compute: the measured per-worker rate on every core. Coordination: the measured overhead of the job
    (wall time not explained by the workers' compute: executor scheduling, result transfer, the last
    partitions' tail, startup inside the job) as a fixed cost, plus the driver's own serial work per
    partition (writing the shard and the manifest) for every partition of the ``n``-run job.
    """
    driver = r.get("driver_s", 0.0)
    fixed = max(0.0, r["overhead_s"] - driver)
    per_part = driver / max(1, r["partitions"])
    parts = -(-n // r["partition_runs"])
    out = []
    for m in machines:
        seconds = n / (r["per_worker_records_per_s"] * m * cores) + fixed + per_part * parts
        out.append(f"M={m}: {n / seconds:,.1f} records/s")
    return (f"estimate for {n:,} runs on {r['engine']}, {cores} cores per machine (per-worker "
            f"{r['per_worker_records_per_s']:.3f} records/s, fixed overhead {fixed:.1f} s, driver "
            f"{per_part * 1000:.1f} ms per {r['partition_runs']}-run partition): " + "; ".join(out))


def report(results: list[dict[str, Any]], machines: list[int], cores: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for mode in sorted({r["mode"] for r in results}):
        mine = [r for r in results if r["mode"] == mode]
        base = next((r for r in mine if r["engine"] == "local1"), None)
        digests = {r["digest"] for r in mine}
        print(f"\n{mode} redaction: {mine[0]['runs']} runs; outputs identical across engines: {len(digests) == 1}")
        print(f"{'engine':<8} {'workers':>7} {'wall s':>8} {'records/s':>10} {'vs 1 proc':>9} {'per worker/s':>12} "
              f"{'overhead s':>10} {'startup s':>9}  peak RSS per worker (MB)")
        for r in mine:
            ratio = r["records_per_s"] / base["records_per_s"] if base else None
            print(f"{r['engine']:<8} {r['workers']:>7} {r['wall_s']:>8.1f} {r['records_per_s']:>10.2f} "
                  f"{(f'{ratio:.2f}x' if ratio else '-'):>9} {r['per_worker_records_per_s']:>12.2f} "
                  f"{r['overhead_s']:>10.1f} {r['startup_s']:>9.1f}  {r['peak_rss_mb_per_worker']}")
            rows.append({"bench": f"corpus {mode} {r['engine']} (records/s)", "replaykit": r["records_per_s"],
                         "baseline": base["records_per_s"] if base else None, "ratio": ratio,
                         "note": f"{r['workers']} workers, peak {max(r['peak_rss_mb_per_worker'] or [0])} MB/worker"})
        for r in mine:
            if r["engine"] == "local1":
                continue
            print(estimate(r, machines, cores))
    return rows


if __name__ == "__main__":
    sys.exit(main())
