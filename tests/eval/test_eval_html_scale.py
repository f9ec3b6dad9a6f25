"""The eval page at 10,000 runs in real headless Chromium (Debian's, through Playwright's driver): it
opens in under a second, every run is a row with its link, and the table sorts and filters."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from replaykit.eval.html import render_eval
from replaykit.eval.report import EvalReport

sync_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium not installed (scripts/test.sh installs it)")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run"]
N = 10_000
VERDICTS = ("same", "changed", "regressed", "improved", "failed", "not replayable")


def _run(i: int) -> dict[str, Any]:
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


@pytest.mark.slow
def test_ten_thousand_runs_open_in_under_a_second_and_sort_and_filter(tmp_path: Path) -> None:
    runs = [_run(i) for i in range(N)]
    report = EvalReport(candidate={"engine": "openai", "model": "cand", "base_url": "http://127.0.0.1:1/v1",
                                   "at": "first", "scorers": ["judge", "normalized"], "gate_scorer": "judge",
                                   "repeat": 1, "judge": {"model": "grader", "api": "openai-chat",
                                                          "base_url": "http://127.0.0.1:2/v1", "rubric": "built-in"}},
                        runs=runs, selected=N, execution={"runs": []})
    report.check(None, None)
    document = json.loads(json.dumps(report.to_json()))
    links = {r["run_id"]: f"eval-diffs/{r['run_id']}.html" for r in runs if r["verdict"] != "not replayable"}
    path = tmp_path / "eval.html"
    path.write_text(render_eval(document, links), encoding="utf-8")
    (tmp_path / "eval-diffs").mkdir()
    (tmp_path / "eval-diffs" / "run-04242.html").write_text("<!DOCTYPE html><title>diff</title>")
    judged = [r for r in runs if r["verdict"] != "not replayable"]
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        opened = []
        for _ in range(3):  # the best of three: the machine is shared (bench/bench_eval_scoring.py measures it)
            page.goto(path.as_uri(), wait_until="load")
            opened.append(page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd"))
        assert min(opened) < 1000, f"the page took {min(opened):.0f} ms to open at best ({opened})"
        assert not errors  # the script ran under the page's CSP (a blocked script would log an error)
        rows = "div.runs .chunk tbody tr"
        assert page.locator(rows).count() == N
        assert page.locator(f"{rows} a").count() == len(judged) == len(links)
        assert page.inner_text(".shown") == f"{N} of {N} runs shown"
        # sort by score: ascending, then descending on a second click
        head = page.locator("div.runs table.head th", has_text="score").first
        first_score = f"document.querySelector('{rows}').cells[2].textContent"
        head.click()
        assert float(page.evaluate(first_score)) == min(r["score"] for r in judged)
        head.click()
        assert float(page.evaluate(first_score)) == max(r["score"] for r in judged)
        assert page.evaluate(f"document.querySelectorAll('{rows}').length") == N  # none lost by sorting
        # filter: a verdict, then a run id
        visible = f"Array.from(document.querySelectorAll('{rows}')).filter(r => !r.hidden).length"
        page.select_option("#runs-filters select", "regressed")
        regressed = sum(1 for r in runs if r["verdict"] == "regressed")
        assert page.inner_text(".shown") == f"{regressed} of {N} runs shown"
        assert page.evaluate(visible) == regressed
        page.select_option("#runs-filters select", "")
        page.fill("#runs-filters input", "run-04242")
        assert page.inner_text(".shown") == f"1 of {N} runs shown" and page.evaluate(visible) == 1
        row = page.locator(rows, has_text="run-04242")
        assert "<b>answer</b> 4242" in row.inner_text()  # text, not markup
        row.locator("a").click()  # its link leads to its diff page
        page.wait_for_load_state()
        assert page.url.endswith("eval-diffs/run-04242.html")
        browser.close()
