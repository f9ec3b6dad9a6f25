"""replaykit eval over a generated corpus of 200+ runs and the real Hermes fixtures, against the scripted
candidate with planted behaviour: every verdict and count equals the planted one, whatever the executor."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from replaykit.eval import evaluate
from replaykit.testing.eval_candidate import mirror_policy
from replaykit.testing.scripted_server import ScriptedServer

from .corpus import FAST, Corpus, build, observed, settle_health

pytest.importorskip("openai")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    return build(tmp_path_factory.mktemp("eval") / "store", 200)


def _eval(corpus: Corpus, out: Path, **kw: Any) -> tuple[dict[str, Any], ScriptedServer]:
    with ScriptedServer(mirror_policy(corpus.runs, corpus.plants)) as srv:
        report = evaluate(all_runs=True, engine="openai", base_url=srv.base_url, model="candidate", out=out,
                          store=corpus.store, stale_timeout=0.5, play_extra=FAST, **kw)
    return report.to_json(), srv


def _stable(report: dict[str, Any]) -> dict[str, Any]:
    """Everything but the execution section (new run ids, seconds)."""
    return {k: v for k, v in report.items() if k != "execution"}


def test_planted_behaviour_is_reported_exactly_with_one_and_two_workers(corpus: Corpus, tmp_path: Path) -> None:
    two, _ = _eval(corpus, tmp_path / "two", workers=2)
    assert two["totals"]["selected"] == len(corpus.runs) >= 200
    assert observed(two) == settle_health(corpus, two)
    verdicts = two["totals"]["verdicts"]
    assert sum(verdicts.values()) == len(corpus.runs)
    assert verdicts["failed"] == 1 and verdicts["regressed"] >= 1 and verdicts["same"] > 150
    assert two["totals"]["fidelity"]["unmatched"] == 2  # the planted extra tool: its LLM call and tool call
    # every candidate play is an ordinary run of the store, with lineage to its original
    for row in two["execution"]["runs"]:
        for run_id in row["candidate_runs"]:
            played = corpus.store.load(run_id)
            assert played.header.lineage.relation == "play" and played.header.lineage.parent_run_id == row["run_id"]
    # One worker, on every planted run plus a slice of the rest: the same results, run for run.
    subset = [*corpus.plants, *[r.run_id for r in corpus.runs[:25]]]
    with ScriptedServer(mirror_policy(corpus.runs, corpus.plants)) as srv:
        one = evaluate(subset, engine="openai", base_url=srv.base_url, model="candidate", out=tmp_path / "one",
                       store=corpus.store, stale_timeout=0.5, play_extra=FAST, workers=1).to_json()
    by_id = {r["run_id"]: r for r in two["runs"]}
    # each eval had its own server: the endpoint named in a failure's reason differs by its port only
    assert _ports_masked({r["run_id"]: r for r in one["runs"]}) == _ports_masked(
        {run_id: by_id[run_id] for run_id in dict.fromkeys(subset)})


def _ports_masked(value: Any) -> Any:
    return json.loads(re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", json.dumps(value, sort_keys=True)))
