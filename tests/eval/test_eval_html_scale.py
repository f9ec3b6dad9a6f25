"""The eval page at 10,000 runs in real headless Chromium (Debian's, through Playwright's driver): it
opens in under a second, every run is a row with its link, and the table sorts and filters."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from replaykit.eval.html import render_eval
from replaykit.testing.eval_reports import synthetic_report

sync_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium not installed (scripts/test.sh installs it)"),
              pytest.mark.single_env]  # Chromium
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run"]
N = 10_000


@pytest.mark.slow
def test_ten_thousand_runs_open_in_under_a_second_and_sort_and_filter(tmp_path: Path) -> None:
    document, links = synthetic_report(N)
    runs = document["runs"]
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
