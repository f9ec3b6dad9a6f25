"""``--repeat K``: one run's candidate played K times, folded into one verdict by a written rule.

A sample **passes** when its verdict is same, changed or improved (not regressed, not failed). Per run:
``pass_rate`` (passing samples / K), the mean score and its spread (min, max, population standard
deviation), and the verdict:

1. every sample failed -> **failed**;
2. pass rate below ``--pass-rate`` (default 0.5) -> **regressed** (**failed** when none of the samples
   that did not pass regressed: they all failed to play or to score);
3. otherwise the most frequent verdict among the passing samples (a tie goes to the worse one).

A run whose samples do not all have the same verdict is **unstable** (``unstable: true``), whatever its
verdict. With K = 1 the run's record is the single play's, unchanged.
"""

from __future__ import annotations

import statistics
from collections import Counter
from typing import Any

from .compare import SEVERITY

PASS_RATE = 0.5
FAILING = ("regressed", "failed")


def passes(verdict: str) -> bool:
    return verdict not in FAILING


def fold_samples(samples: list[dict[str, Any]], pass_rate: float = PASS_RATE) -> dict[str, Any]:
    if len(samples) == 1:
        return samples[0]
    verdicts = [s["verdict"] for s in samples]
    passing = [v for v in verdicts if passes(v)]
    rate = len(passing) / len(samples)
    if not passing and all(v == "failed" for v in verdicts):
        verdict = "failed"
    elif rate < pass_rate:
        verdict = "regressed" if "regressed" in verdicts else "failed"
    else:
        counts = Counter(passing)
        verdict = min(counts, key=lambda v: (-counts[v], SEVERITY.index(v)))
    base = dict(next(s for s in samples if s["verdict"] == verdict))  # the rule only names verdicts a sample had
    scores = [float(s["score"]) for s in samples]
    base.update(
        verdict=verdict,
        score=round(statistics.fmean(scores), 6),
        pass_rate=round(rate, 6),
        unstable=len(set(verdicts)) > 1,
        spread={"min": round(min(scores), 6), "max": round(max(scores), 6),
                "stdev": round(statistics.pstdev(scores), 6)},
        samples=[{"sample": i, "verdict": s["verdict"], "score": s["score"],
                  **({"reason": s["reason"]} if s.get("reason") else {}),
                  **({"reasons": s["reasons"]} if s.get("reasons") else {})} for i, s in enumerate(samples)],
    )
    if "scores" in base:  # each scorer's mean over the samples that it scored
        names = list(dict.fromkeys(n for s in samples for n in s.get("scores", {})))
        base["scores"] = {n: round(statistics.fmean([s["scores"][n] for s in samples if n in s.get("scores", {})]), 6)
                          for n in names}
    if verdict == "regressed":
        base["reason"] = (f"{len(samples) - len(passing)} of {len(samples)} samples did not pass "
                          f"(pass rate {rate:.2f} < {pass_rate:g})")
    return base
