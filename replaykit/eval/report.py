"""The corpus report of an eval: totals and rates, score distribution, the worst runs, breakdowns per
tool and per recorded model, the thresholds. Built by the driver from the runs' records (input order),
so it is the same whatever executor ran them; what may differ (new run ids, seconds) is only in
``execution``."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .compare import SEVERITY

KIND = "replaykit.eval-report"
VERDICTS = (*SEVERITY, "not replayable")
SCORE_BUCKETS = ("0.0-0.1", "0.1-0.2", "0.2-0.3", "0.3-0.4", "0.4-0.5", "0.5-0.6", "0.6-0.7", "0.7-0.8",
                 "0.8-0.9", "0.9-1.0")
WORST = 10
FIDELITY = ("reused", "exact", "divergent", "unmatched", "missing")


def run_pass_rate(run: dict[str, Any]) -> float:
    """The share of a run's samples that passed (one sample: 1 or 0 by its verdict; see ``repeats``)."""
    if "pass_rate" in run:
        return float(run["pass_rate"])
    return 0.0 if run["verdict"] in ("regressed", "failed") else 1.0


@dataclass
class EvalReport:
    """What ``replaykit eval`` writes (``report.json``) and ``replaykit.evaluate`` returns."""

    candidate: dict[str, Any]
    runs: list[dict[str, Any]]  # each run's ``result``, in input order
    selected: int
    damaged: list[dict[str, str]] = field(default_factory=list)
    left: dict[str, int] = field(default_factory=dict)  # runs not started because a budget ran out
    thresholds: dict[str, Any] = field(default_factory=dict)
    execution: dict[str, Any] = field(default_factory=dict)

    @property
    def verdicts(self) -> Counter[str]:
        return Counter(r["verdict"] for r in self.runs)

    @property
    def judged(self) -> list[dict[str, Any]]:
        return [r for r in self.runs if r["verdict"] != "not replayable"]

    @property
    def mean_score(self) -> float | None:
        judged = self.judged
        return round(sum(r["score"] for r in judged) / len(judged), 6) if judged else None

    @property
    def failed_thresholds(self) -> list[str]:
        return list(self.thresholds.get("failed", []))

    @property
    def passed(self) -> bool:
        return not self.failed_thresholds

    def check(self, fail_below: float | None, max_regressed: int | None) -> None:
        failed = []
        mean = self.mean_score
        if fail_below is not None and (mean if mean is not None else 0.0) < fail_below:
            failed.append(f"mean score {mean if mean is not None else 'n/a'} is below --fail-below {fail_below:g}")
        regressed = self.verdicts.get("regressed", 0)
        if max_regressed is not None and regressed > max_regressed:
            failed.append(f"{regressed} regressed runs exceed --max-regressed {max_regressed}")
        self.thresholds = {"fail_below": fail_below, "max_regressed": max_regressed, "failed": failed,
                           "passed": not failed}

    def totals(self) -> dict[str, Any]:
        judged = self.judged
        played = [r for r in judged if "fidelity" in r]
        verdicts = self.verdicts
        fidelity = {k: sum(r["fidelity"][k] for r in played) for k in FIDELITY}
        buckets: Counter[str] = Counter(SCORE_BUCKETS[min(int(r["score"] * 10), 9)] for r in judged)

        def rate(n: float, of: int) -> float | None:
            return round(n / of, 4) if of else None

        sums: dict[str, dict[str, float | None]] = {}
        for key in ("tokens", "cost_usd"):
            row: dict[str, float | None] = {}
            for part in ("original", "candidate", "delta"):
                values = [r["deltas"][key][part] for r in played]
                known = [v for v in values if v is not None]
                row[part] = round(sum(known), 6) if known else None
            row["runs_unknown"] = sum(1 for r in played if r["deltas"][key]["delta"] is None)
            sums[key] = row
        health = [r["deltas"]["health"]["delta"] for r in played if r["deltas"]["health"]["delta"] is not None]
        return {
            "selected": self.selected,
            "judged": len(judged),
            "left": sum(self.left.values()),
            "left_by": dict(sorted(self.left.items())),
            "damaged": len(self.damaged),
            "verdicts": {v: verdicts.get(v, 0) for v in VERDICTS},
            "rates": {v: rate(verdicts.get(v, 0), len(judged)) for v in SEVERITY},
            "scorer_failed": sum(1 for r in self.runs if r.get("scorer_failed")),
            "fidelity": fidelity,
            "tool_agreement_rate": rate(sum(1 for r in played if r["tool_agreement"]["same"]), len(played)),
            "answer_exact_rate": rate(sum(1 for r in played if r["answer"]["exact"]), len(played)),
            "answer_normalised_rate": rate(sum(1 for r in played if r["answer"]["normalised"]), len(played)),
            "score": {"mean": self.mean_score, "histogram": {b: buckets.get(b, 0) for b in SCORE_BUCKETS}},
            "scores": self.scorer_means(),
            "pass_rate": rate(sum(run_pass_rate(r) for r in judged), len(judged)) if judged else None,
            "unstable": sum(1 for r in judged if r.get("unstable")),
            "deltas": sums,
            "health_delta_mean": round(sum(health) / len(health), 3) if health else None,
        }

    def scorer_means(self) -> dict[str, float | None]:
        """Each scorer's mean over the judged runs it scored (a failed run scores 0 on the gate only)."""
        names = list(dict.fromkeys(n for r in self.judged for n in r.get("scores", {})))
        out: dict[str, float | None] = {}
        for name in names:
            values = [r["scores"][name] for r in self.judged if name in r.get("scores", {})]
            out[name] = round(sum(values) / len(values), 6) if values else None
        return out

    def latency(self) -> dict[str, Any]:
        """The live calls' seconds next to the record's, summed (a timing: under ``execution``)."""
        rows = [r["latency_s"] for r in self.execution.get("runs", []) if r.get("latency_s")]
        return {part: round(sum(r[part] for r in rows if r[part] is not None), 3)
                for part in ("original", "candidate", "delta")} if rows else {}

    def worst(self) -> list[dict[str, Any]]:
        rank = {v: i for i, v in enumerate(SEVERITY)}
        ordered = sorted(self.judged, key=lambda r: (rank[r["verdict"]], r["score"], r["run_id"]))
        return [{"run_id": r["run_id"], "verdict": r["verdict"], "score": r["score"], "reason": r.get("reason"),
                 "first_divergence": r.get("first_divergence"),
                 **({"judge_reason": r["reasons"]["judge"]} if "judge" in r.get("reasons", {}) else {})}
                for r in ordered[:WORST] if r["verdict"] != "same"]

    def per_tool(self) -> list[dict[str, Any]]:
        tools: dict[str, Counter[str]] = {}
        for r in self.runs:
            for name, counts in r.get("tools", {}).items():
                tools.setdefault(name, Counter()).update(counts)
        return [{"tool": name, "calls": c["calls"], "divergent": c["divergent"], "unmatched": c["unmatched"]}
                for name, c in sorted(tools.items(), key=lambda kv: (-kv[1]["calls"], kv[0]))]

    def per_model(self) -> list[dict[str, Any]]:
        models: dict[str, Counter[str]] = {}
        for r in self.runs:
            models.setdefault(r["model"], Counter())[r["verdict"]] += 1
        return [{"model": name, "runs": sum(c.values()), **{v: c.get(v, 0) for v in VERDICTS}}
                for name, c in sorted(models.items())]

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": KIND,
            "version": 1,
            "candidate": self.candidate,
            "passed": self.passed,
            "thresholds": self.thresholds,
            "totals": self.totals(),
            "worst_runs": self.worst(),
            "per_tool": self.per_tool(),
            "per_model": self.per_model(),
            "damaged": self.damaged,
            "runs": self.runs,
            "execution": {**self.execution, "latency_s": self.latency()},
        }
