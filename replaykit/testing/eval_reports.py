"""Synthetic eval reports of any size, for the eval page's scale test and bench (no store, no play):
``synthetic_report(10_000)`` is a report document with every verdict, scores, judge reasons (holding
markup, to be shown as text) and fidelity counts, as ``replaykit eval`` writes them. Stdlib and replaykit only."""

from __future__ import annotations

import json
from typing import Any

VERDICTS = ("same", "changed", "regressed", "improved", "failed", "not replayable")


def synthetic_run(i: int) -> dict[str, Any]:
    verdict = VERDICTS[(i * 7) % len(VERDICTS)]
    run: dict[str, Any] = {"run_id": f"run-{i:05d}", "model": "gpt-4o", "framework": "hermes", "verdict": verdict}
    if verdict == "not replayable":
        run["reason"] = "the recording ended failed: no recorded answer to judge a candidate against"
        return run
    score = round(((i * 37) % 101) / 100, 2)
    run.update(score=score, scores={"judge": score, "normalized": float(verdict == "same")}, cut=1,
               fidelity={"reused": 0, "exact": 5, "divergent": i % 3, "unmatched": i % 2, "missing": 0},
               first_divergence=None if verdict == "same" else {"step": 3, "field": "response.text", "cause": "model"},
               tool_agreement={"same": True, "recorded": 2, "candidate": 2, "agreeing_prefix": 2},
               answer={"exact": False, "normalised": False, "original": "a", "candidate": "b"},
               reasons={"judge": f"The candidate <b>answer</b> {i} misses one fact the reference gives."},
               deltas={k: {"original": 1.0, "candidate": 1.0, "delta": 0.0} for k in ("tokens", "cost_usd", "health")},
               tools={})
    return run


def synthetic_report(n: int) -> tuple[dict[str, Any], dict[str, str]]:
    """(report document, links: run id -> its diff page for every judged run) of ``n`` runs."""
    from replaykit.eval.report import EvalReport

    runs = [synthetic_run(i) for i in range(n)]
    report = EvalReport(candidate={"engine": "openai", "model": "cand", "base_url": "http://127.0.0.1:1/v1",
                                   "at": "first", "scorers": ["judge", "normalized"], "gate_scorer": "judge",
                                   "repeat": 1, "judge": {"model": "grader", "api": "openai-chat",
                                                          "base_url": "http://127.0.0.1:2/v1", "rubric": "built-in"}},
                        runs=runs, selected=n, execution={"runs": []})
    report.check(None, None)
    links = {r["run_id"]: f"eval-diffs/{r['run_id']}.html" for r in runs if r["verdict"] != "not replayable"}
    return json.loads(json.dumps(report.to_json())), links
