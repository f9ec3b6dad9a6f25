"""The local process pool, and what happens when one of its workers dies.

A worker can die on one run (OOM killer, SIGKILL, a segfault in a native library on a hostile trace):
``concurrent.futures`` then breaks the whole pool and fails every partition in flight. The pipeline
does not stop: it starts a new pool and runs those partitions again. To tell a transient death from a
run that kills every worker that touches it, each worker marks which run of its partition it is on in
a slot of shared memory (one slot per in-flight partition); after a death, the run each lost
partition was on is a suspect. A suspect is then run alone (nothing else in flight, so a death is its
own): one that dies again is reported as damaged (``worker died``) and its partition is redone
without it; one that passes is innocent (or the death was transient) and its partition is redone
whole. A run in flight at ``MAX_STRIKES`` deaths that never dies alone (it only dies beside others,
e.g. out of memory under load) is given up on the same way, so the job always ends. So every other run's output is the same bytes as in a clean run, written once.

A pool that breaks while no partition had started a run (the pool itself cannot run: out of memory at
start, ...) is not retried forever: after ``MAX_UNEXPLAINED_DEATHS`` the job stops with ``WorkerLost``
(finished partitions are kept; a rerun resumes).
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import threading
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from replaykit.core.errors import ReplaykitError

from ._sources import Partition
from ._task import PartitionResult, Task, join_runs, run_partition

RESUME = "finished partitions are kept in the manifest: rerun the same command to resume"
WORKER_DIED = "worker died while processing this run (killed, out of memory or crashed), twice"
MAX_UNEXPLAINED_DEATHS = 3
MAX_STRIKES = 3


class WorkerLost(ReplaykitError):
    """Workers keep dying for no run in particular; finished partitions are kept."""


# Set in every worker process by the pool initializer: the shared slots of in-flight partitions.
_SLOTS: Any = None


def _init_worker(slots: Any) -> None:
    global _SLOTS
    _SLOTS = slots


def _run_in_slot(slot: int, task: Task, options: Mapping[str, Any], part: Partition) -> PartitionResult:
    def mark(position: int) -> None:
        _SLOTS[slot] = position + 1  # 0 = no run started yet

    return run_partition(task, options, part, on_run=mark)


class LocalExecutor:
    def __init__(self, workers: int) -> None:
        self.name = "local"
        self.workers = workers
        self.pool_restarts = 0
        self._pool: Any = None
        self._slots: Any = None
        self._size = 0

    def start(self, partitions: int) -> None:
        """Start the worker processes now, before the driver starts its progress-bar thread: on Linux
        they are forked (fast, no re-import of ``__main__``), and a fork must not copy a running thread."""
        if self.workers <= 1 or partitions <= 1 or self._pool is not None:
            return
        self._size = min(self.workers, partitions)
        self._slots = multiprocessing.RawArray("i", 2 * self.workers)
        self._new_pool()

    def _new_pool(self, restart: bool = False) -> None:
        from concurrent.futures import ProcessPoolExecutor

        # fork is fast, but only safe while this process has no other thread: a restart happens while
        # the progress bar's thread may run, so it spawns then (each worker re-imports replaykit).
        lone = not restart or threading.active_count() == 1
        method = "fork" if lone and "fork" in multiprocessing.get_all_start_methods() else "spawn"
        self._pool = ProcessPoolExecutor(max_workers=self._size, mp_context=multiprocessing.get_context(method),
                                         initializer=_init_worker, initargs=(self._slots,))
        for future in [self._pool.submit(os.getpid) for _ in range(self._size)]:
            future.result()

    def _restart(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        self.pool_restarts += 1
        self._new_pool(restart=True)

    def map(self, task: Task, options: Mapping[str, Any], parts: Sequence[Partition]) -> Iterator[PartitionResult]:
        if self._pool is None:
            for part in parts:
                yield run_partition(task, options, part)
            return
        from concurrent.futures import FIRST_COMPLETED, Future, wait
        from concurrent.futures.process import BrokenProcessPool

        todo = deque(parts)
        by_index = {part.index: part for part in parts}
        strikes: dict[str, int] = {}  # run -> deaths it was in flight at
        suspects: deque[tuple[Partition, str]] = deque()
        dead: dict[int, set[str]] = {}  # partition index -> runs that killed a worker twice
        pending: dict[Future[PartitionResult], tuple[int, Partition]] = {}
        free = list(range(len(self._slots)))
        unexplained = 0

        def submit(part: Partition) -> bool:
            skip = dead.get(part.index, set())
            sent = dataclasses.replace(part, paths=tuple(p for p in part.paths if p not in skip))
            slot = free[-1]
            self._slots[slot] = 0
            try:
                future = self._pool.submit(_run_in_slot, slot, task, options, sent)
            except BrokenProcessPool:  # broke since the last wait; the partitions in flight tell why
                todo.appendleft(part)
                return False
            pending[future] = (free.pop(), sent)
            return True

        while todo or pending or suspects:
            if suspects and not pending:
                part, path = suspects.popleft()
                if not self._survives_alone(task, options, part, path):
                    dead.setdefault(part.index, set()).add(path)
                todo.appendleft(part)
                continue
            while todo and not suspects and len(pending) < 2 * self.workers:
                if not submit(todo.popleft()):
                    break
            if not pending:  # broken, and none of ours was in flight (an idle worker was killed)
                unexplained = self._count_unexplained(unexplained)
                self._restart()
                continue
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            lost: list[tuple[int, Partition]] = []

            def collect(futures: Iterable[Future[PartitionResult]], lost: list[tuple[int, Partition]]) -> Iterator[Any]:
                """The finished partitions' results; those lost with a broken pool go to ``lost``."""
                for future in futures:
                    slot, sent = pending.pop(future)
                    free.append(slot)
                    try:
                        result = future.result()
                    except BrokenProcessPool:
                        lost.append((slot, sent))
                        continue
                    yield _with_dead_runs(result, by_index[sent.index], dead.get(sent.index, set()))

            yield from collect(done, lost)
            if not lost:
                continue
            # The pool is broken: every other partition in flight fails too (at once); collect them.
            yield from collect(list(pending), lost)
            found = False
            for slot, sent in sorted(lost, key=lambda item: item[1].index, reverse=True):
                original = by_index[sent.index]
                position = self._slots[slot]
                if not position:
                    todo.appendleft(original)
                    continue
                found = True
                path = sent.paths[position - 1]
                strikes[path] = strikes.get(path, 0) + 1
                if strikes[path] >= MAX_STRIKES:  # kills workers only alongside others (memory?): give up on it
                    dead.setdefault(original.index, set()).add(path)
                    todo.appendleft(original)
                else:
                    suspects.appendleft((original, path))
            if not found:
                unexplained = self._count_unexplained(unexplained)
            self._restart()

    @staticmethod
    def _count_unexplained(deaths: int) -> int:
        if deaths + 1 >= MAX_UNEXPLAINED_DEATHS:
            raise WorkerLost(f"worker processes keep dying while running no run; {RESUME}")
        return deaths + 1

    def _survives_alone(self, task: Task, options: Mapping[str, Any], part: Partition, path: str) -> bool:
        """Run one suspect run with nothing else in flight: did its worker live?"""
        from concurrent.futures.process import BrokenProcessPool

        probe = dataclasses.replace(part, paths=(path,))
        try:
            self._pool.submit(_run_in_slot, 0, task, options, probe).result()
        except BrokenProcessPool:
            self._restart()
            return False
        return True

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def _with_dead_runs(result: PartitionResult, part: Partition, dead: set[str]) -> PartitionResult:
    """Put the runs that killed a worker back in their place in the partition, as damaged runs."""
    if not dead or result.fatal:
        return result
    joined = join_runs(part, [result], dead, WORKER_DIED)
    return dataclasses.replace(joined, peak_rss_kb=result.peak_rss_kb, seconds=result.seconds)
