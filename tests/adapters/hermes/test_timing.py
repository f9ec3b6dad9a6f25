"""Self-timing of the plugin (REPLAYKIT_HERMES_TIMING): CPU on the calling thread, the GC share of it and
wall time per callback; a middleware's ``next_call`` (Hermes and the provider) is not counted."""

from __future__ import annotations

import gc
import json
import time

from replaykit.adapters.hermes.timing import Timing


def _burn(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_a_hook_counts_cpu_and_the_collections_inside_it(tmp_path):
    timing = Timing(str(tmp_path / "t.json"))
    junk = [[i] for i in range(200_000)]  # something for a collection to walk

    def hook(**kw):
        _burn(0.02)
        gc.collect()

    try:
        timed = timing.hook("pre_llm_call", hook)
        timed(session_id="s")
        wall, calls, slowest, cpu, gcs = timing.by_callback["pre_llm_call"]
        assert calls == 1 and slowest == wall
        assert cpu >= 0.02 and 0 < gcs < cpu
        assert timing.cpu_seconds == cpu and timing.gc_seconds == gcs and timing.seconds == wall
    finally:
        timing.gc.close()
    del junk


def test_a_middleware_does_not_count_next_call(tmp_path):
    timing = Timing(str(tmp_path / "t.json"))
    try:
        def middleware(**kw):
            return kw["next_call"]()

        timed = timing.middleware("llm_execution", middleware)
        assert timed(next_call=lambda: _burn(0.2) or "done") == "done"
        # The 200 ms were Hermes's. CPU tells exactly; the wall bound leaves room for a loaded machine
        # (CI saw 22 ms of waiting for a core around a 0.1 ms middleware) and still fails if next_call counted.
        assert timing.cpu_seconds < 0.02 and timing.seconds < 0.1
        timing.dump()
        doc = json.loads((tmp_path / "t.json").read_text())
        assert set(doc) == {"seconds", "cpu_seconds", "gc_seconds", "calls", "register_seconds", "by_callback"}
        assert doc["calls"] == 1
        timing.reset()
        assert timing.calls == 0 and not timing.by_callback
    finally:
        timing.gc.close()
