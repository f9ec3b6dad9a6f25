"""``replaykit eval --compare DIR_A DIR_B``: two finished evals (two candidates, the same corpus) compared
run by run. Nothing is played: both ``report.json`` files are read.

- The runs both reports judged are paired (by original run id, in A's order); runs only one of them holds,
  or that one of them could not judge (not replayable), are left out and counted.
- Per run: A's and B's verdict, score and pass rate, and the change (``better`` / ``worse`` / ``same
  verdict``: by the verdicts' severity, failed worst, same best).
- For the mean score and the pass rate: the mean paired difference B - A and its 95% bootstrap
  confidence interval (percentile method, ``RESAMPLES`` resamples of the paired runs, a fixed seed: the
  same two reports always give the same interval).
- The gate (``--fail-worse-by X``): B is significantly worse when, for the mean score or the pass rate,
  the whole interval lies below -X (X = 0: below zero). Then exit 1.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replaykit.core.errors import BadInput
from replaykit.core.files import write_private

from .compare import SEVERITY
from .report import KIND, run_pass_rate

COMPARE_KIND = "replaykit.eval-compare"
RESAMPLES = 2000
SEED = 38
CONFIDENCE = 0.95
METRICS = ("score", "pass_rate")


def load_report(folder: Path) -> dict[str, Any]:
    path = folder / "report.json" if folder.is_dir() else folder
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInput(f"--compare: {folder} holds no report.json (not a finished eval directory)") from None
    except (OSError, ValueError) as exc:
        raise BadInput(f"--compare: cannot read {path}: {type(exc).__name__}") from None
    if not isinstance(document, dict) or document.get("kind") != KIND or not isinstance(document.get("runs"), list):
        raise BadInput(f"--compare: {path} is not an eval report")
    return document


def bootstrap(differences: list[float], *, resamples: int = RESAMPLES, seed: int = SEED,
              confidence: float = CONFIDENCE) -> dict[str, float | None]:
    """The mean of ``differences`` and its percentile bootstrap interval (seeded: reproducible)."""
    n = len(differences)
    if n == 0:
        return {"mean": None, "low": None, "high": None}
    mean = sum(differences) / n
    rng = random.Random(seed)  # noqa: S311 - a reproducible resample, not a secret
    means = sorted(sum(rng.choices(differences, k=n)) / n for _ in range(resamples))
    tail = (1 - confidence) / 2
    low = means[int(tail * (resamples - 1))]
    high = means[round((1 - tail) * (resamples - 1))]
    return {"mean": round(mean, 6), "low": round(low, 6), "high": round(high, 6)}


def _change(a: str, b: str) -> str:
    if a == b:
        return "same verdict"
    return "better" if SEVERITY.index(b) > SEVERITY.index(a) else "worse"


@dataclass
class Comparison:
    a: dict[str, Any]
    b: dict[str, Any]
    dir_a: str
    dir_b: str
    fail_worse_by: float | None
    runs: list[dict[str, Any]] = field(default_factory=list)
    left_out: dict[str, int] = field(default_factory=dict)
    intervals: dict[str, dict[str, float | None]] = field(default_factory=dict)
    gate: dict[str, Any] = field(default_factory=dict)

    def summary_line(self) -> str:
        changes = {c: sum(1 for r in self.runs if r["change"] == c) for c in ("better", "worse")}
        score, rate = self.intervals["score"], self.intervals["pass_rate"]
        return (f"{len(self.runs)} runs compared ({sum(self.left_out.values())} left out): {changes['better']} better, "
                f"{changes['worse']} worse; mean score B-A {score['mean']} [{score['low']}, {score['high']}], "
                f"pass rate B-A {rate['mean']} [{rate['low']}, {rate['high']}]")

    def to_json(self) -> dict[str, Any]:
        def side(report: dict[str, Any], folder: str) -> dict[str, Any]:
            cand = report.get("candidate") or {}
            return {"dir": folder, "model": cand.get("model"), "base_url": cand.get("base_url"),
                    "scorers": cand.get("scorers"), "gate_scorer": cand.get("gate_scorer"),
                    "repeat": cand.get("repeat", 1)}

        changes = {c: sum(1 for r in self.runs if r["change"] == c) for c in ("better", "worse", "same verdict")}
        return {"kind": COMPARE_KIND, "version": 1, "a": side(self.a, self.dir_a), "b": side(self.b, self.dir_b),
                "compared": len(self.runs), "left_out": self.left_out, "changes": changes,
                "differences": self.intervals,
                "bootstrap": {"resamples": RESAMPLES, "seed": SEED, "confidence": CONFIDENCE},
                "gate": self.gate, "runs": self.runs}


def compare_reports(a: dict[str, Any], b: dict[str, Any], *, dir_a: str = "A", dir_b: str = "B",
                    fail_worse_by: float | None = None) -> Comparison:
    if fail_worse_by is not None and fail_worse_by < 0:
        raise BadInput("--fail-worse-by is a margin of 0 or more")
    runs_a = {r["run_id"]: r for r in a["runs"]}
    runs_b = {r["run_id"]: r for r in b["runs"]}
    both = [rid for rid in runs_a if rid in runs_b]
    judged = [rid for rid in both
              if runs_a[rid]["verdict"] != "not replayable" and runs_b[rid]["verdict"] != "not replayable"]
    result = Comparison(a, b, dir_a, dir_b, fail_worse_by, left_out={
        "only_in_a": len(runs_a) - len(both), "only_in_b": len(runs_b) - len(both),
        "not_replayable": len(both) - len(judged)})
    if not judged:
        raise BadInput(f"--compare: {dir_a} and {dir_b} judged no run in common (different corpora?)")
    for rid in judged:
        ra, rb = runs_a[rid], runs_b[rid]
        row = {"run_id": rid, "verdict_a": ra["verdict"], "verdict_b": rb["verdict"],
               "change": _change(ra["verdict"], rb["verdict"]),
               "score_a": ra["score"], "score_b": rb["score"], "score_delta": round(rb["score"] - ra["score"], 6),
               "pass_rate_a": run_pass_rate(ra), "pass_rate_b": run_pass_rate(rb),
               "unstable_a": bool(ra.get("unstable")), "unstable_b": bool(rb.get("unstable"))}
        for name, r in (("reason_a", ra), ("reason_b", rb)):
            why = (r.get("reasons") or {}).get("judge") or r.get("reason")
            if why:
                row[name] = why
        result.runs.append(row)
    result.intervals = {
        "score": bootstrap([r["score_delta"] for r in result.runs]),
        "pass_rate": bootstrap([r["pass_rate_b"] - r["pass_rate_a"] for r in result.runs]),
    }
    margin = fail_worse_by
    failed = []
    if margin is not None:
        for metric in METRICS:
            high = result.intervals[metric]["high"]
            if high is not None and high < -margin:
                label = "mean score" if metric == "score" else "pass rate"
                failed.append(f"B is worse than A on the {label} by more than {margin:g}: B-A "
                              f"{result.intervals[metric]['mean']}, 95% interval [{result.intervals[metric]['low']}, "
                              f"{high}]")
    result.gate = {"fail_worse_by": margin, "failed": failed, "passed": not failed}
    return result


def compare_dirs(dir_a: Path, dir_b: Path, *, fail_worse_by: float | None = None) -> Comparison:
    return compare_reports(load_report(dir_a), load_report(dir_b), dir_a=str(dir_a), dir_b=str(dir_b),
                           fail_worse_by=fail_worse_by)


# ------------------------------------------------------------------------------------------ outputs

def render_compare_junit(document: dict[str, Any]) -> str:
    """One test case per paired run (failure: B's verdict is worse than A's), plus one per difference
    (failure: the gate failed on it)."""
    import xml.etree.ElementTree as ET

    from .junit import _xml

    cases: list[tuple[str, str, str | None]] = []
    for run in document["runs"]:
        message = None
        if run["change"] == "worse":
            message = f"worse: {run['verdict_a']} in A, {run['verdict_b']} in B" + (
                f" ({run['reason_b']})" if run.get("reason_b") else "")
        cases.append(("replaykit.eval.compare.runs", run["run_id"], message))
    for metric in METRICS:
        interval = document["differences"][metric]
        failing = next((f for f in document["gate"]["failed"] if ("score" in f) == (metric == "score")), None)
        cases.append(("replaykit.eval.compare.differences", f"{metric} B-A {interval['mean']} "
                      f"[{interval['low']}, {interval['high']}]", failing))
    failures = sum(1 for _, _, m in cases if m)
    suites = ET.Element("testsuites", name="replaykit eval compare", tests=str(len(cases)), failures=str(failures),
                        errors="0", skipped="0")
    suite = ET.SubElement(suites, "testsuite", name=_xml(f"{document['b']['model']} against {document['a']['model']}"),
                          tests=str(len(cases)), failures=str(failures), errors="0", skipped="0", time="0")
    for classname, name, message in cases:
        case = ET.SubElement(suite, "testcase", classname=classname, name=_xml(name), time="0")
        if message:
            ET.SubElement(case, "failure", message=_xml(message), type="worse").text = _xml(message)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def write_compare_junit(document: dict[str, Any], path: Path) -> None:
    write_private(path, render_compare_junit(document))


def render_compare_html(document: dict[str, Any]) -> str:
    from replaykit.exporters.html_report import esc

    from .html_table import data_table, script_page

    gate = document["gate"]
    status = ('<span class="badge bad">B is significantly worse</span> ' + esc("; ".join(gate["failed"]))
              if gate["failed"] else '<span class="badge ok">B is not significantly worse than A</span>')
    diffs = document["differences"]
    left = document["left_out"]
    body = [
        "<h1>replaykit eval: two candidates compared</h1>",
        f'<p class="meta">A: <b>{esc(document["a"]["model"])}</b> ({esc(document["a"]["dir"])}); '
        f'B: <b>{esc(document["b"]["model"])}</b> ({esc(document["b"]["dir"])})</p>',
        f"<p>{status}</p>",
        f'<p class="meta"><b>{esc(document["compared"])}</b> runs compared; left out: {esc(left["only_in_a"])} only '
        f'in A, {esc(left["only_in_b"])} only in B, {esc(left["not_replayable"])} not replayable in one of them. '
        f'{esc(document["changes"]["better"])} better, {esc(document["changes"]["worse"])} worse.</p>',
        "<h2>Paired differences (B - A, 95% bootstrap interval)</h2>",
        "<table><tr><th>measure</th><th>mean difference</th><th>low</th><th>high</th></tr>"
        + "".join(f"<tr><td>{esc(m)}</td><td>{esc(diffs[m]['mean'])}</td><td>{esc(diffs[m]['low'])}</td>"
                  f"<td>{esc(diffs[m]['high'])}</td></tr>" for m in METRICS) + "</table>",
        "<h2>Runs</h2>",
        data_table(
            ["run", "change", "verdict A", "verdict B", "score A", "score B", "score B-A", "pass rate A",
             "pass rate B", "reason B"],
            [[(r["run_id"], None), (r["change"], None), (r["verdict_a"], None), (r["verdict_b"], None),
              (r["score_a"], None), (r["score_b"], None), (r["score_delta"], None), (r["pass_rate_a"], None),
              (r["pass_rate_b"], None), (r.get("reason_b") or "", None)] for r in document["runs"]],
            filter_column=1, filter_label="every change", widths=[18, 8, 9, 9, 6, 6, 7, 7, 7, 23]),
    ]
    return script_page("replaykit eval compare", "\n".join(body))


def write_compare_html(document: dict[str, Any], path: Path) -> None:
    write_private(path, render_compare_html(document))
