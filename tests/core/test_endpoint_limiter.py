"""The endpoint limiter shared by processes: slots bound requests in flight, a killed holder frees its
slot, a pause set by one holder delays every other, the counters add up across openers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from replaykit.core.replay.resilience import EndpointLimiter

ROOT = Path(__file__).resolve().parents[2]


def test_slots_bound_requests_across_openers(tmp_path: Path) -> None:
    EndpointLimiter.create(str(tmp_path), 1)
    first, second = EndpointLimiter(str(tmp_path)), EndpointLimiter(str(tmp_path))
    assert second.max_in_flight == 1  # read from the directory
    entered = threading.Event()
    with first.request():
        thread = threading.Thread(target=lambda: (second.request().__enter__(), entered.set()))
        thread.start()
        assert not entered.wait(0.3)  # the only slot is taken
    assert entered.wait(5)
    thread.join()
    assert first.calls() == second.calls() == 2


def test_a_killed_holder_frees_its_slot(tmp_path: Path) -> None:
    EndpointLimiter.create(str(tmp_path), 1)
    code = ("import sys, time; from replaykit.core.replay.resilience import EndpointLimiter; "
            f"s = EndpointLimiter({str(tmp_path)!r}).request(); s.__enter__(); print('held', flush=True); time.sleep(60)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    done = threading.Event()
    thread = threading.Thread(target=lambda: (EndpointLimiter(str(tmp_path)).request().__enter__(), done.set()))
    thread.start()
    assert not done.wait(0.3)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert done.wait(5)
    thread.join()


def test_a_pause_delays_every_opener_and_costs_add_up(tmp_path: Path) -> None:
    EndpointLimiter.create(str(tmp_path), None)
    one, other = EndpointLimiter(str(tmp_path)), EndpointLimiter(str(tmp_path))
    one.pause(0.4)
    one.pause(0.1)  # a shorter pause never shortens the one in force
    started = time.monotonic()
    with other.request():
        waited = time.monotonic() - started
    assert waited >= 0.35
    one.note_cost(0.25)
    other.note_cost(0.5)
    assert one.spent() == other.spent() == 0.75
