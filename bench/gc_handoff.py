"""Diagnostic (not a benchmark row): the cyclic collections the Hermes recorder adds, and their CPU.

Counts collections (``gc.callbacks``) and their CPU on the long session (``bench/long_session.py``,
1000 tool-using steps unless a size is given) through the real plugin, as shipped and with variants:

    PYTHONPATH=$PWD python bench/gc_handoff.py baseline [N]      # Hermes's loop alone, no plugin
    PYTHONPATH=$PWD python bench/gc_handoff.py noop [N]          # a plugin whose callbacks do nothing
    PYTHONPATH=$PWD python bench/gc_handoff.py full [N]          # as shipped (own copy of the last request)
    PYTHONPATH=$PWD python bench/gc_handoff.py hermes_lists [N]  # compare against Hermes's previous list
    PYTHONPATH=$PWD python bench/gc_handoff.py none [N]          # no comparison of earlier messages

Issue 13 (old shape, a verifier thread): baseline 596 collections, verifier thread 912-924, inline or
none 697-701: handing each check to another thread kept Hermes's request lists alive across its next
allocation bursts. Issue 27 dropped the thread and keeps no Hermes container past its call; figures in
docs/performance.md.
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
    if mode == "hermes_lists":
        wire_deltas.own_copy = lambda value: value  # type: ignore[assignment]
    elif mode == "none":
        wire_deltas.same_prefix = lambda raw, seen, n: True  # type: ignore[assignment]
    elif mode != "full":
        raise SystemExit(f"unknown mode {mode!r}: baseline, noop, full, hermes_lists or none")


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "full"
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    gc.callbacks.append(_on_gc)
    if mode in ("baseline", "noop"):  # Hermes's loop alone; with a plugin whose callbacks do nothing
        for _ in range(2):
            _collections[:] = [0, 0]
            _gc_seconds[0] = 0.0
            bus = ls.HermesBus()
            if mode == "noop":  # Hermes's own dispatch of the same middleware and hooks
                for kind in ("llm_execution", "tool_execution"):
                    bus.register_middleware(kind, lambda **kw: kw["next_call"]())
                for name in ("on_session_start", "pre_llm_call", "post_tool_call", "post_llm_call", "on_session_end",
                             "on_session_finalize"):
                    bus.register_hook(name, lambda **kw: None)
            stats = ls.drive(steps, bus, clock=time.thread_time)
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
            capture.syncer.wait()
            capture.close_all()
            plugin._capture = None
        print(f"{mode}: Hermes's thread {stats.seconds:.3f} s, {seen[0]} collections ({seen[1]} full), "
              f"GC {seconds * 1e3:.0f} ms")


if __name__ == "__main__":
    main()
