"""What runs on a worker: one partition, run by run, through a task function.

A task is a module-level function ``task(path, options) -> RunResult`` (so every engine can send it
by reference: the worker imports it from its own replaykit). ``run_partition`` is the one function the
executors call, whatever the engine. A run that cannot be read or converted is reported as damaged
and the rest of the partition goes on; a missing optional library is fatal for the whole job (every
run would fail the same way) and is sent back as such, never as thousands of damaged runs.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from replaykit.core.errors import MissingExtra, ReplaykitError

from ._sources import Partition


@dataclass
class RunResult:
    """What a task made of one run."""

    source: str
    run_id: str | None = None
    lines: list[str] = field(default_factory=list)  # output lines (JSONL records or trace lines)
    info: dict[str, Any] = field(default_factory=dict)  # per-run facts for reports (stats)
    skipped: str | None = None  # left out on purpose (no answer, below --min-health, ...)
    damaged: str | None = None  # could not be read or converted (one line)


@dataclass
class PartitionResult:
    index: int
    runs: list[RunResult]
    worker: str  # host:pid, for the per-worker memory figure
    peak_rss_kb: int
    seconds: float
    fatal: str | None = None


Task = Callable[[str, Mapping[str, Any]], RunResult]


def peak_rss_kb() -> int:
    """This process's own peak resident memory (VmHWM; ru_maxrss would include a forking parent's)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    import resource

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:300]
    return text if isinstance(exc, ReplaykitError) else f"{type(exc).__name__}: {text}"


def run_partition(task: Task, options: Mapping[str, Any], partition: Partition,
                  on_run: Callable[[int], None] | None = None) -> PartitionResult:
    """``on_run(position)`` is called before each run (the local pool marks where a worker died)."""
    started = time.perf_counter()
    results: list[RunResult] = []
    fatal: str | None = None
    for position, path in enumerate(partition.paths):
        if on_run is not None:
            on_run(position)
        try:
            results.append(task(path, options))
        except MissingExtra as exc:
            fatal = str(exc)
            break
        except Exception as exc:  # a damaged run must not stop the corpus: report it and go on
            results.append(RunResult(source=path, damaged=_one_line(exc)))
    return PartitionResult(
        index=partition.index,
        runs=results,
        worker=f"{socket.gethostname()}:{os.getpid()}",
        peak_rss_kb=peak_rss_kb(),
        seconds=time.perf_counter() - started,
        fatal=fatal,
    )


def join_runs(partition: Partition, pieces: list[PartitionResult], dead: set[str], reason: str) -> PartitionResult:
    """One partition's result from its runs run one by one (``pieces``, in order, missing the ``dead``
    runs, which killed their worker): the dead ones come back as damaged runs, in their place."""
    done = iter(run for piece in pieces for run in piece.runs)
    runs = [RunResult(source=path, damaged=reason) if path in dead else next(done) for path in partition.paths]
    return PartitionResult(
        index=partition.index,
        runs=runs,
        worker=pieces[0].worker if pieces else "",
        peak_rss_kb=max((piece.peak_rss_kb for piece in pieces), default=0),
        seconds=sum(piece.seconds for piece in pieces),
        fatal=next((piece.fatal for piece in pieces if piece.fatal), None),
    )
