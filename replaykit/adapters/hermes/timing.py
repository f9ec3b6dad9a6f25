"""Opt-in self-timing of the Hermes plugin, to measure replaykit's share of a real Hermes run.

With ``REPLAYKIT_HERMES_TIMING=<file>`` in the environment, ``register`` wraps every callback it
registers so the time Hermes spends inside replaykit is summed (middleware: minus the time spent in
``next_call``, i.e. in Hermes and the provider), and writes ``{"seconds", "calls", "register_seconds",
"by_callback"}`` as JSON to the file at exit. Without the variable nothing is wrapped (zero cost). Used by
``bench/bench_hermes_recorder.py``: whole-run wall times on a shared machine are too noisy to resolve 1%.
"""

from __future__ import annotations

import atexit
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


class Timing:
    def __init__(self, path: str) -> None:
        self.path = Path(path)
        self.seconds = 0.0
        self.calls = 0
        self.register_seconds = 0.0
        self.by_callback: dict[str, list[float]] = {}  # name -> [seconds, calls, slowest]
        self._lock = threading.Lock()
        atexit.register(self.dump)

    def _add(self, name: str, seconds: float) -> None:
        with self._lock:
            self.seconds += seconds
            self.calls += 1
            entry = self.by_callback.setdefault(name, [0.0, 0, 0.0])
            entry[0] += seconds
            entry[1] += 1
            entry[2] = max(entry[2], seconds)

    def hook(self, name: str, cb: Callable[..., Any]) -> Callable[..., Any]:
        def timed(**kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return cb(**kwargs)
            finally:
                self._add(name, time.perf_counter() - t0)

        return timed

    def middleware(self, name: str, cb: Callable[..., Any]) -> Callable[..., Any]:
        def timed(**kwargs: Any) -> Any:
            downstream = kwargs["next_call"]
            inside = [0.0]

            def next_call(*args: Any, **kw: Any) -> Any:
                t1 = time.perf_counter()
                try:
                    return downstream(*args, **kw)
                finally:
                    inside[0] += time.perf_counter() - t1

            kwargs["next_call"] = next_call
            t0 = time.perf_counter()
            try:
                return cb(**kwargs)
            finally:
                self._add(name, time.perf_counter() - t0 - inside[0])

        return timed

    def dump(self) -> None:
        try:
            self.path.write_text(json.dumps({"seconds": self.seconds, "calls": self.calls,
                                             "register_seconds": self.register_seconds,
                                             "by_callback": self.by_callback}))
        except OSError:
            pass
