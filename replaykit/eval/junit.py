"""``replaykit eval --junit PATH``: one JUnit test case per run, so CI systems show the eval natively.

A regressed or failed run is a ``<failure>`` whose message is its first divergence (or why it failed);
a run that is not replayable is ``<skipped>`` (it says nothing about the candidate). The file follows the
common JUnit XML shape (``testsuites > testsuite > testcase``) that Jenkins, GitLab and GitHub read.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from replaykit.core.files import write_private

FAILING = ("regressed", "failed")
#: What XML 1.0 cannot carry (C0 controls but tab/newline/CR, lone surrogates): shown as ``\\uXXXX``.
_NOT_IN_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml(text: Any) -> str:
    return _NOT_IN_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", str(text))


def _divergence(run: dict[str, Any]) -> str:
    first = run.get("first_divergence")
    if first:
        return (f"{run['verdict']}: first divergence at step {first.get('step')} ({first.get('field')}, "
                f"cause {first.get('cause')})")
    return f"{run['verdict']}: {run.get('reason') or 'no divergence recorded'}"


def _summary(run: dict[str, Any], judge_reason: str | None) -> str:
    parts = [f"verdict {run['verdict']}, score {run.get('score')}"]
    if run.get("scores"):
        parts.append("scores " + ", ".join(f"{k} {v}" for k, v in run["scores"].items()))
    if "pass_rate" in run:
        parts.append(f"pass rate {run['pass_rate']}" + (" (unstable: the samples' verdicts differ)"
                                                        if run.get("unstable") else ""))
    if judge_reason:
        parts.append(f"judge: {judge_reason}")
    return "\n".join(parts)


def render_junit(report: dict[str, Any]) -> str:
    runs = report["runs"]
    execution = {r["run_id"]: r for r in report["execution"].get("runs", [])}
    failures = sum(1 for r in runs if r["verdict"] in FAILING)
    skipped = sum(1 for r in runs if r["verdict"] == "not replayable")
    model = report["candidate"]["model"]
    suites = ET.Element("testsuites", name="replaykit eval", tests=str(len(runs)), failures=str(failures),
                        errors="0", skipped=str(skipped))
    suite = ET.SubElement(suites, "testsuite", name=_xml(f"replaykit eval against {model}"), tests=str(len(runs)),
                          failures=str(failures), errors="0", skipped=str(skipped),
                          time=str(report["execution"].get("seconds", 0)))
    for run in runs:
        case = ET.SubElement(suite, "testcase", classname=_xml(f"replaykit.eval.{run.get('model', 'unknown')}"),
                             name=_xml(run["run_id"]), time=str(execution.get(run["run_id"], {}).get("seconds", 0)))
        judge_reason = (run.get("reasons") or {}).get("judge")
        if run["verdict"] in FAILING:
            failure = ET.SubElement(case, "failure", message=_xml(_divergence(run)), type=run["verdict"])
            failure.text = _xml("\n".join(t for t in (run.get("reason") or _divergence(run),
                                                      judge_reason and f"judge: {judge_reason}") if t))
        elif run["verdict"] == "not replayable":
            ET.SubElement(case, "skipped", message=_xml(f"not replayable: {run.get('reason', '')}"))
        ET.SubElement(case, "system-out").text = _xml(_summary(run, judge_reason))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def write_junit(report: dict[str, Any], path: Path) -> None:
    write_private(path, render_junit(report))
