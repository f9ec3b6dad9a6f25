"""Where partitions run: local processes, a Ray cluster or a Dask cluster. Only this differs.

Each executor maps ``run_partition(task, options, partition)`` over the partitions and yields results
as they finish (in any order: the driver writes each partition to its own shard, so order of arrival
never reaches the output). At most ``2 x workers`` partitions are in flight, so the driver holds a
bounded number of finished partitions however large the corpus.

- ``--workers N``: a process pool on this machine, started before the progress bar's thread; a dead
  worker is survived (see ``_local``); ``N = 1`` runs in the driver process.
- ``--cluster ray``: a local Ray instance (``ray://ADDRESS`` or ``ray://auto``: an existing cluster).
- ``--cluster dask``: a Dask LocalCluster (``dask://HOST:PORT``: an existing scheduler).

An executor started here is shut down here; one that was already running (a Ray instance initialised
by the caller, an existing cluster) is left running.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from replaykit.core.errors import BadInput, MissingExtra

from ._local import RESUME as _RESUME
from ._local import WORKER_DIED, LocalExecutor, WorkerLost
from ._sources import Partition
from ._task import PartitionResult, Task, join_runs, run_partition


class Executor(Protocol):
    name: str
    workers: int

    def start(self, partitions: int) -> None: ...

    def map(self, task: Task, options: Mapping[str, Any], parts: Sequence[Partition]) -> Iterator[PartitionResult]: ...

    def close(self) -> None: ...


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


class RayExecutor:
    def __init__(self, address: str | None, workers: int) -> None:
        try:
            import ray
        except ImportError as exc:
            raise MissingExtra("ray", "ray") from exc
        self.name = "ray"
        self._ray = ray
        self._owned = not ray.is_initialized()
        if self._owned:
            if address:
                ray.init(address=address, log_to_driver=False)
            else:
                ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        self.workers = max(1, int(ray.cluster_resources().get("CPU", workers)))
        # Ray re-runs a task whose worker died (max_retries); the partition is written once either way.
        self._remote = ray.remote(num_cpus=1, max_retries=3)(run_partition)
        self._deaths = (ray.exceptions.WorkerCrashedError, ray.exceptions.OutOfMemoryError)

    def start(self, partitions: int) -> None:
        pass

    def map(self, task: Task, options: Mapping[str, Any], parts: Sequence[Partition]) -> Iterator[PartitionResult]:
        ray = self._ray
        todo = list(parts)
        pending: dict[Any, Partition] = {}
        while todo or pending:
            while todo and len(pending) < 2 * self.workers:
                part = todo.pop(0)
                pending[self._remote.remote(task, dict(options), part)] = part
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                part = pending.pop(ref)
                try:
                    yield ray.get(ref)
                except self._deaths as exc:  # killed a worker at every retry: find the run, one by one
                    yield self._run_by_run(task, options, part, exc)
                except ray.exceptions.RayError as exc:
                    raise WorkerLost(f"a Ray task failed ({_first_line(exc)}); {_RESUME}") from exc

    def _run_by_run(self, task: Task, options: Mapping[str, Any], part: Partition, exc: Exception) -> PartitionResult:
        """Each run of a partition that kept killing workers as its own task (one retry): the runs that
        still kill theirs are damaged ('worker died'); the others' output is as in a clean run."""
        alone = self._remote.options(max_retries=1)
        refs = [alone.remote(task, dict(options), dataclasses.replace(part, paths=(p,))) for p in part.paths]
        pieces, dead = [], set()
        for path, ref in zip(part.paths, refs, strict=True):
            try:
                pieces.append(self._ray.get(ref))
            except self._deaths:
                dead.add(path)
        if len(dead) == len(part.paths) > 1:  # every run: the workers, not a run, are the problem
            raise WorkerLost(f"Ray workers keep dying ({_first_line(exc)}); {_RESUME}") from exc
        return join_runs(part, pieces, dead, WORKER_DIED)

    def close(self) -> None:
        if self._owned:
            self._ray.shutdown()


class DaskExecutor:
    def __init__(self, address: str | None, workers: int) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError as exc:
            raise MissingExtra("dask", "distributed") from exc
        self.name = "dask"
        self._cluster: Any = None
        if address:
            self._client = Client(address if "://" in address else f"tcp://{address}")
        else:
            self._cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                         dashboard_address=None)
            self._client = Client(self._cluster)
        n = len(self._client.scheduler_info().get("workers", {})) or workers
        self.workers = max(1, n)

    def start(self, partitions: int) -> None:
        pass

    def map(self, task: Task, options: Mapping[str, Any], parts: Sequence[Partition]) -> Iterator[PartitionResult]:
        from distributed import KilledWorker, as_completed

        todo = list(parts)
        sent: dict[Any, Partition] = {}
        for _ in range(min(len(todo), 2 * self.workers)):
            part = todo.pop(0)
            sent[self._submit(task, options, part)] = part
        queue = as_completed(list(sent))
        for future in queue:
            part = sent.pop(future)
            try:
                result = future.result()
            except KilledWorker as exc:  # killed allowed-failures + 1 workers: find the run, one by one
                result = self._run_by_run(task, options, part, exc)
            except Exception as exc:
                raise WorkerLost(f"a Dask task failed ({_first_line(exc)}); {_RESUME}") from exc
            if todo:
                part = todo.pop(0)
                future = self._submit(task, options, part)
                sent[future] = part
                queue.add(future)
            yield result

    def _run_by_run(self, task: Task, options: Mapping[str, Any], part: Partition, exc: Exception) -> PartitionResult:
        """As RayExecutor._run_by_run: the runs that still kill their workers are damaged ('worker died')."""
        from distributed import KilledWorker

        # One run in flight at a time: Dask counts a worker's death against every task assigned to that
        # worker (queued ones too), so runs sent together could be blamed for their neighbour's death.
        pieces, dead = [], set()
        for path in part.paths:
            try:
                pieces.append(self._submit(task, options, dataclasses.replace(part, paths=(path,))).result())
            except KilledWorker:
                dead.add(path)
        if len(dead) == len(part.paths) > 1:  # every run: the workers, not a run, are the problem
            raise WorkerLost(f"Dask workers keep dying ({_first_line(exc)}); {_RESUME}") from exc
        return join_runs(part, pieces, dead, WORKER_DIED)

    def _submit(self, task: Task, options: Mapping[str, Any], part: Partition) -> Any:
        # pure=False: two partitions are never "the same call". A task whose worker dies is run again by
        # the scheduler up to distributed.scheduler.allowed-failures times (default 3), then KilledWorker.
        return self._client.submit(run_partition, task, dict(options), part, pure=False)

    def close(self) -> None:
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()


def _first_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]


def parse_cluster(spec: str) -> tuple[str, str | None]:
    """``ray`` / ``ray://ADDR`` / ``dask`` / ``dask://ADDR`` -> (engine, address or None)."""
    engine, sep, address = spec.partition("://")
    if engine not in ("ray", "dask") or (sep and not address):
        raise BadInput(f"--cluster must be ray, ray://ADDRESS, dask or dask://ADDRESS, not {spec!r}")
    if engine == "ray" and address and address != "auto":
        address = f"ray://{address}"  # Ray client address
    return engine, address or None


def make_executor(workers: int | None = None, cluster: str | None = None) -> Executor:
    if workers is not None and workers < 1:
        raise BadInput("--workers must be at least 1")
    n = workers or default_workers()
    if cluster is None:
        return LocalExecutor(n)
    engine, address = parse_cluster(cluster)
    factory: Callable[[str | None, int], Executor] = RayExecutor if engine == "ray" else DaskExecutor
    return factory(address, n)
