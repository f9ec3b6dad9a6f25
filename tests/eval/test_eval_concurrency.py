"""``--max-concurrency`` holds at the server while streams stall and are retried: the scripted server
counts each request from its arrival until its handler returned (a stalled stream for its whole stall),
so a retry that took a new slot while the stalled connection was still open would show as one too many."""

from __future__ import annotations

from pathlib import Path

import pytest

from replaykit.eval import evaluate
from replaykit.testing.eval_candidate import Plant, mirror_policy
from replaykit.testing.scripted_server import ScriptedServer

from .corpus import FAST, build

pytest.importorskip("openai")


@pytest.mark.parametrize("workers, bound, stalls", [(4, 2, 3), (3, 1, 2)])
def test_bound_holds_at_the_server_with_stalled_streams(tmp_path: Path, workers: int, bound: int,
                                                       stalls: int) -> None:
    corpus = build(tmp_path / "store", 10, hermes=False, plant=False)
    completed = [r for r in corpus.runs if r.status == "completed"]
    plants = {r.run_id: Plant("stall", stall_seconds=1.5) for r in completed[:stalls]}
    with ScriptedServer(mirror_policy(corpus.runs, plants)) as srv:
        report = evaluate(all_runs=True, engine="openai", base_url=srv.base_url, model="candidate",
                          out=tmp_path / "out", store=corpus.store, workers=workers, max_concurrency=bound,
                          stale_timeout=0.3, play_extra=FAST)
        peak = srv.peak_in_flight
        stalled = [r for r in srv.llm_requests if r.reply is not None and r.reply.fault == "stall"]
    assert len(stalled) == stalls  # each planted stall happened, was given up on and retried
    assert report.verdicts["failed"] == 0
    assert peak == bound  # reached, never exceeded
