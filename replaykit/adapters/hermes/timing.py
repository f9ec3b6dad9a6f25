"""Opt-in self-timing of the Hermes plugin, to measure replaykit's share of a real Hermes run.

With ``REPLAYKIT_HERMES_TIMING=<file>`` in the environment, ``register`` wraps every callback it
registers and sums, per callback, the time Hermes's calling thread spends inside replaykit (middleware:
minus the time spent in ``next_call``, i.e. in Hermes and the provider). Three clocks, because they
answer different questions on a loaded machine:

- ``cpu``: the calling thread's CPU time (``time.thread_time``): the direct cost, not inflated by waits
  for the GIL (behind replaykit's verifier thread, or anything else) or for a core;
- ``gc``: the part of ``cpu`` spent in cyclic-GC collections that happened to start inside a callback
  (whoever allocates when a threshold is crossed pays for the whole collection: a share of it is
  Hermes's own garbage); ``cpu - gc`` is replaykit's own code;
- ``wall``: ``time.perf_counter``, what Hermes waited.

At exit it writes ``{"seconds", "cpu_seconds", "gc_seconds", "calls", "register_seconds",
"by_callback"}`` as JSON to the file (``seconds`` is the wall total, kept for older readers;
``by_callback[name] = [wall, calls, slowest wall, cpu, gc]``). Without the variable nothing is wrapped
(zero cost). Used by ``bench/bench_hermes_recorder.py``: whole-run times on a shared machine are too noisy
to resolve 1%.
"""

from __future__ import annotations

import atexit
import gc
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


class GcClock:
    """CPU seconds spent in cyclic-GC collections, per thread (a ``gc.callbacks`` entry: it only
    observes; collection thresholds and timing stay Hermes's)."""

    def __init__(self) -> None:
        self._local = threading.local()
        self.total = 0.0  # every thread
        self.collections = 0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        now = time.thread_time()
        if phase == "start":
            self._local.started = now
            return
        spent = now - getattr(self._local, "started", now)
        self._local.spent = getattr(self._local, "spent", 0.0) + spent
        self.total += spent
        self.collections += 1

    def thread_seconds(self) -> float:
        """GC CPU seconds of the calling thread so far."""
        return float(getattr(self._local, "spent", 0.0))

    def close(self) -> None:
        try:
            gc.callbacks.remove(self._callback)
        except ValueError:
            pass


class Timing:
    def __init__(self, path: str) -> None:
        self.path = Path(path)
        self.seconds = 0.0  # wall
        self.cpu_seconds = 0.0
        self.gc_seconds = 0.0
        self.calls = 0
        self.register_seconds = 0.0
        # name -> [wall seconds, calls, slowest wall, cpu seconds, gc seconds]
        self.by_callback: dict[str, list[float]] = {}
        self.gc = GcClock()
        self._lock = threading.Lock()
        atexit.register(self.dump)

    def _now(self) -> tuple[float, float, float]:
        return time.perf_counter(), time.thread_time(), self.gc.thread_seconds()

    def _add(self, name: str, start: tuple[float, float, float], inside: tuple[float, float, float]) -> None:
        end = self._now()
        wall, cpu, gcs = (end[i] - start[i] - inside[i] for i in range(3))
        with self._lock:
            self.seconds += wall
            self.cpu_seconds += cpu
            self.gc_seconds += gcs
            self.calls += 1
            entry = self.by_callback.setdefault(name, [0.0, 0, 0.0, 0.0, 0.0])
            entry[0] += wall
            entry[1] += 1
            entry[2] = max(entry[2], wall)
            entry[3] += cpu
            entry[4] += gcs

    def hook(self, name: str, cb: Callable[..., Any]) -> Callable[..., Any]:
        def timed(**kwargs: Any) -> Any:
            start = self._now()
            try:
                return cb(**kwargs)
            finally:
                self._add(name, start, (0.0, 0.0, 0.0))

        return timed

    def middleware(self, name: str, cb: Callable[..., Any]) -> Callable[..., Any]:
        def timed(**kwargs: Any) -> Any:
            downstream = kwargs["next_call"]
            inside = [0.0, 0.0, 0.0]

            def next_call(*args: Any, **kw: Any) -> Any:
                t1 = self._now()
                try:
                    return downstream(*args, **kw)
                finally:
                    t2 = self._now()
                    for i in range(3):
                        inside[i] += t2[i] - t1[i]

            kwargs["next_call"] = next_call
            start = self._now()
            try:
                return cb(**kwargs)
            finally:
                self._add(name, start, (inside[0], inside[1], inside[2]))

        return timed

    def reset(self) -> None:
        with self._lock:
            self.seconds = self.cpu_seconds = self.gc_seconds = 0.0
            self.calls = 0
            self.by_callback.clear()

    def dump(self) -> None:
        try:
            self.path.write_text(json.dumps({"seconds": self.seconds, "cpu_seconds": self.cpu_seconds,
                                             "gc_seconds": self.gc_seconds, "calls": self.calls,
                                             "register_seconds": self.register_seconds,
                                             "by_callback": self.by_callback}))
        except OSError:
            pass
