"""``replaykit eval``: a corpus of recorded runs played against a candidate model, judged run by run.

Sits above the engines (like ``replaykit.viewer``); the core never imports it. See docs/eval.md.

    report = replaykit.evaluate(["run-1", "run-2"], engine="openai", base_url=URL, model="candidate", out="ev")
    report.verdicts["regressed"], report.to_json()["totals"]
"""

from __future__ import annotations

from .report import EvalReport
from .runner import evaluate

__all__ = ["EvalReport", "evaluate"]
