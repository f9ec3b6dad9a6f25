"""Diagnostic (not a benchmark row): where the Hermes recorder's GC share comes from.

Counts the cyclic collections and their CPU on the 1000-step long session (``bench/long_session.py``)
through the real plugin, with the request verifier as shipped (a daemon thread) and with variants:

    PYTHONPATH=$PWD python bench/gc_handoff.py full       # as shipped
    PYTHONPATH=$PWD python bench/gc_handoff.py inline     # the same verification on Hermes's thread
    PYTHONPATH=$PWD python bench/gc_handoff.py nocompare  # a verifier thread that compares nothing
    PYTHONPATH=$PWD python bench/gc_handoff.py none       # no verification at all

Measured on 2026-12-02 (idle VM): baseline loop 596 collections; none 697-701; inline 697-701;
full 912-924; nocompare 916-924. The extra collections come from handing each check to another thread
(it gets the GIL only at the switch interval, so request lists stay alive across Hermes's next
allocation bursts), not from the comparison itself. See docs/performance.md ("Recorder, 5 µs").
"""

from __future__ import annotations

import gc
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import long_session as ls

from replaykit.adapters.hermes import plugin
from replaykit.adapters.hermes.capture import wire_deltas

_collections = [0, 0]
_gc_seconds = [0.0]
_started = [0.0]


def _on_gc(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        _started[0] = time.thread_time()
    else:
        _collections[0] += 1
        _collections[1] += info["generation"] == 2
        _gc_seconds[0] += time.thread_time() - _started[0]


def _patch(mode: str) -> None:
    verifier: Any = wire_deltas.Verifier
    if mode == "inline":
        verifier.submit = lambda self, check: self._verify(check)
    elif mode == "nocompare":
        verifier._verify = lambda self, check: None
    elif mode == "none":
        verifier.submit = lambda self, check: None
    elif mode != "full":
        raise SystemExit(f"unknown mode {mode!r}: full, inline, nocompare or none")


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "full"
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    gc.callbacks.append(_on_gc)
    if mode == "baseline":  # Hermes's loop alone
        for _ in range(2):
            _collections[:] = [0, 0]
            _gc_seconds[0] = 0.0
            stats = ls.drive(steps, clock=time.thread_time)
            print(f"{mode}: Hermes's thread {stats.seconds:.3f} s, {_collections[0]} collections "
                  f"({_collections[1]} full), GC {_gc_seconds[0] * 1e3:.0f} ms")
        return
    _patch(mode)
    for _ in range(2):
        with tempfile.TemporaryDirectory() as tmp:
            plugin._capture = capture = plugin.build_capture(Path(tmp))
            bus = ls.HermesBus()
            plugin.register(bus)
            _collections[:] = [0, 0]
            _gc_seconds[0] = 0.0
            stats = ls.drive(steps, bus, clock=time.thread_time)
            seen, seconds = list(_collections), _gc_seconds[0]
            capture.verifier.wait()
            capture.syncer.wait()
            capture.close_all()
            plugin._capture = None
        print(f"{mode}: Hermes's thread {stats.seconds:.3f} s, {seen[0]} collections ({seen[1]} full), "
              f"GC {seconds * 1e3:.0f} ms")


if __name__ == "__main__":
    main()
