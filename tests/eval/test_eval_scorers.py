"""The built-in scorers on planted runs, their figures computed from the record independently of the
scorers' code: ``tools`` (order-aware precision and recall of name + arguments, F1), ``exact`` and
``normalized``, several at once with one gating."""

from __future__ import annotations

from pathlib import Path

import pytest

from replaykit.core.trace.ir import ToolCallEvent
from replaykit.eval import evaluate
from replaykit.testing.eval_candidate import mirror_policy
from replaykit.testing.scripted_server import ScriptedServer

from .corpus import FAST, Corpus, build

pytest.importorskip("openai")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    return build(tmp_path_factory.mktemp("evalscorers") / "store", 12, hermes=False)


def _f1(precision: float, recall: float) -> float:
    return round(2 * precision * recall / (precision + recall), 6) if precision + recall else 0.0


def test_tools_exact_and_normalized_scores(corpus: Corpus, tmp_path: Path) -> None:
    with ScriptedServer(mirror_policy(corpus.runs, corpus.plants)) as srv:
        report = evaluate(all_runs=True, engine="openai", base_url=srv.base_url, model="candidate",
                          out=tmp_path / "s", store=corpus.store, workers=1, stale_timeout=0.5, play_extra=FAST,
                          scorer=["tools", "exact", "normalised"], gate_scorer="normalized").to_json()
    runs = {r["run_id"]: r for r in report["runs"]}
    kinds = {p.kind: rid for rid, p in corpus.plants.items()}
    assert report["candidate"]["scorers"] == ["tools", "exact", "normalized"]

    def recorded_tools(rid: str) -> int:
        return sum(isinstance(s.event, ToolCallEvent) for s in corpus.store.load(rid).steps)

    n = recorded_tools(kinds["tool_argument"])  # one of n calls has other arguments: n-1 agree, in order
    assert runs[kinds["tool_argument"]]["scores"]["tools"] == _f1((n - 1) / n, (n - 1) / n)
    n = recorded_tools(kinds["extra_tool"])  # one call more than the record: every recorded one made
    assert runs[kinds["extra_tool"]]["scores"]["tools"] == _f1(n / (n + 1), 1.0)
    final = runs[kinds["final_answer"]]
    assert final["scores"] == {"tools": 1.0, "exact": 0.0, "normalized": 0.0}
    assert final["score"] == 0.0 and final["verdict"] == "regressed"  # normalized gates
    same = [r for r in report["runs"] if r["verdict"] == "same"]
    assert same and all(r["scores"] == {"tools": 1.0, "exact": 1.0, "normalized": 1.0} for r in same)
    assert set(report["totals"]["scores"]) == {"tools", "exact", "normalized"}


def test_the_gate_follows_the_gating_scorer(corpus: Corpus, tmp_path: Path) -> None:
    with ScriptedServer(mirror_policy(corpus.runs, corpus.plants)) as srv:
        report = evaluate(all_runs=True, engine="openai", base_url=srv.base_url, model="candidate",
                          out=tmp_path / "t", store=corpus.store, workers=1, stale_timeout=0.5, play_extra=FAST,
                          scorer=["normalized", "tools"], gate_scorer="tools").to_json()
    kinds = {p.kind: rid for rid, p in corpus.plants.items()}
    final = next(r for r in report["runs"] if r["run_id"] == kinds["final_answer"])
    assert final["score"] == 1.0 and final["verdict"] != "regressed"  # same tools: the tools scorer passes it
