"""The corpus pipeline: sources -> partitions -> executor -> sink + manifest, for every corpus command.

``export --all`` / ``redact --all -o DIR`` / ``stats`` all come here with their own task function; the
executor (local processes, Ray, Dask) is the only thing that changes with the flags. The driver writes
every output file (workers only read runs and return lines), so only the store has to be visible to
the workers, and the output directory only to the driver.

Sinks:
- ``shards``: one ``part-NNNNN.jsonl`` per partition (records of its runs in input order), and with
  ``parquet=write_parquet`` the same records in ``part-NNNNN.parquet``.
- ``runs``: one trace file per run, ``DIR/<run_id>.jsonl`` (a store of redacted copies).
- ``None``: nothing written; the per-run ``info`` goes back to the caller (``stats``).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from replaykit.core.errors import BadInput, ReplaykitError
from replaykit.core.files import write_private
from replaykit.core.progress import ProgressBar

from ._executors import Executor, make_executor
from ._manifest import Manifest
from ._sources import DEFAULT_PARTITION_RUNS, Partition, make_partitions, partitions_digest
from ._task import PartitionResult, RunResult, Task

Sink = Literal["shards", "runs"] | None
#: Writes one shard's records (JSON lines) in another format beside it (``exporters.corpus_parquet``).
ShardWriter = Callable[[list[str], Path], None]


@dataclass
class CorpusSummary:
    out: str | None
    executor: str = "local"
    workers: int = 1
    runs: int = 0
    records: int = 0
    partitions: int = 0
    resumed_partitions: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    damaged: list[dict[str, str]] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    run_ids: list[str] = field(default_factory=list)
    seconds: float = 0.0
    driver_seconds: float = 0.0  # the driver's own serial work: writing shards and the manifest
    worker_peak_rss_kb: dict[str, int] = field(default_factory=dict)
    infos: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "out": self.out,
            "executor": self.executor,
            "workers": self.workers,
            "runs": self.runs,
            "records": self.records,
            "partitions": self.partitions,
            "resumed_partitions": self.resumed_partitions,
            "skipped": dict(sorted(self.skipped.items())),
            "damaged": self.damaged,
            "files": self.files,
            "run_id": self.run_ids,
            "seconds": round(self.seconds, 3),
            "worker_peak_rss_mb": {k: round(v / 1024, 1) for k, v in sorted(self.worker_peak_rss_kb.items())},
        }


def shard_name(index: int, suffix: str = "jsonl") -> str:
    return f"part-{index:05d}.{suffix}"


def _write_partition(out: Path, sink: Sink, result: PartitionResult, parquet: ShardWriter | None) -> dict[str, int]:
    """Write one partition's files atomically; returns {file name: size}."""
    files: dict[str, int] = {}
    if sink == "shards":
        lines = [line for run in result.runs for line in run.lines]
        name = shard_name(result.index)
        write_private(out / name, "".join(line + "\n" for line in lines))
        files[name] = (out / name).stat().st_size
        if parquet is not None:
            pq = shard_name(result.index, "parquet")
            parquet(lines, out / pq)
            files[pq] = (out / pq).stat().st_size
    elif sink == "runs":
        for run in result.runs:
            if run.run_id is None or not run.lines:
                continue
            name = f"{run.run_id}.jsonl"
            write_private(out / name, "".join(line + "\n" for line in run.lines))
            files[name] = (out / name).stat().st_size
    return files


def _account(runs: list[RunResult]) -> tuple[int, list[str], Counter[str], list[dict[str, str]]]:
    records = 0
    run_ids: list[str] = []
    skipped: Counter[str] = Counter()
    damaged: list[dict[str, str]] = []
    for run in runs:
        if run.damaged is not None:
            damaged.append({"source": run.source, "error": run.damaged})
        elif run.skipped is not None:
            skipped[run.skipped] += 1
        else:
            records += len(run.lines)
            if run.run_id is not None:
                run_ids.append(run.run_id)
    return records, run_ids, skipped, damaged


def run_corpus(
    sources: list[Path],
    task: Task,
    options: Mapping[str, Any],
    *,
    command: str,
    out: Path | None = None,
    sink: Sink = None,
    parquet: ShardWriter | None = None,
    workers: int | None = None,
    cluster: str | None = None,
    partition_runs: int = DEFAULT_PARTITION_RUNS,
    force: bool = False,
    progress: bool | None = None,
    collect_info: bool = False,
    label: str = "processing",
    on_partition: Callable[[PartitionResult], None] | None = None,
    executor: Executor | None = None,
) -> CorpusSummary:
    """Run ``task`` over every source; see the module docstring. Resumable when ``out`` is given.

    ``executor``: one already started (``make_executor``), to run several jobs on one cluster; it is
    left open. Otherwise one is made from ``workers`` / ``cluster`` and closed at the end.
    """
    if parquet is not None and sink != "shards":
        raise BadInput("--parquet applies to shard output (export -o DIR)")
    started = time.perf_counter()
    parts = make_partitions(sources, max_runs=partition_runs)
    summary = CorpusSummary(out=str(out) if out is not None else None, partitions=len(parts))
    manifest: Manifest | None = None
    if out is not None:
        job = {"command": command, "options": dict(options), "parquet": parquet is not None,
               "partitions": len(parts), "input": partitions_digest(parts)}
        manifest = Manifest.open(out, job, force=force)
    todo: list[Partition] = []
    for part in parts:
        entry = manifest.done.get(part.index) if manifest is not None else None
        if entry is None:
            todo.append(part)
            continue
        summary.resumed_partitions += 1
        summary.runs += len(part.paths)
        summary.records += int(entry["records"])
        summary.skipped.update(entry.get("skipped", {}))
        summary.damaged.extend(entry.get("damaged", []))
    infos: dict[int, list[dict[str, Any]]] = {}
    ids: dict[int, list[str]] = {i: list(e.get("run_ids", [])) for i, e in (manifest.done.items() if manifest else [])}
    if todo:
        owned = executor is None
        if executor is None:
            executor = make_executor(workers, cluster)
        summary.executor, summary.workers = executor.name, executor.workers
        try:
            executor.start(len(todo))
            with ProgressBar(sum(len(p.paths) for p in todo), label, show=progress) as advance:
                for result in executor.map(task, options, todo):
                    if result.fatal:
                        raise ReplaykitError(result.fatal)
                    records, run_ids, skipped, damaged = _account(result.runs)
                    if manifest is not None and out is not None:
                        writing = time.perf_counter()
                        files = _write_partition(out, sink, result, parquet)
                        manifest.record({"partition": result.index, "records": records, "runs": len(result.runs),
                                         "run_ids": run_ids, "skipped": dict(skipped), "damaged": damaged,
                                         "files": files})
                        summary.driver_seconds += time.perf_counter() - writing
                    summary.runs += len(result.runs)
                    summary.records += records
                    summary.skipped.update(skipped)
                    summary.damaged.extend(damaged)
                    ids[result.index] = run_ids
                    worker = result.worker
                    summary.worker_peak_rss_kb[worker] = max(summary.worker_peak_rss_kb.get(worker, 0),
                                                             result.peak_rss_kb)
                    if collect_info:
                        infos[result.index] = [r.info for r in result.runs if r.info]
                    if on_partition is not None:
                        on_partition(result)
                    for _ in result.runs:
                        advance()
        finally:
            if owned:
                executor.close()
    summary.damaged.sort(key=lambda d: d["source"])
    summary.run_ids = [rid for i in sorted(ids) for rid in ids[i]]
    if manifest is not None:
        summary.files = sorted(name for e in manifest.done.values() for name in e.get("files", {}))
    summary.infos = [info for i in sorted(infos) for info in infos[i]]
    summary.seconds = time.perf_counter() - started
    return summary
