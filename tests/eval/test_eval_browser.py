"""The eval report page in real headless Chromium (Debian's, through Playwright's driver): it renders, its
charts are drawn, a hostile string runs no script, nothing is requested from the network, and a run's link
opens its diff page."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from replaykit.cli.main import main
from replaykit.testing.eval_candidate import mirror_policy
from replaykit.testing.scripted_server import ScriptedServer

from .corpus import build

pytest.importorskip("openai")
sync_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium not installed (scripts/test.sh installs it)"),
              pytest.mark.single_env]  # Chromium
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run"]


@pytest.mark.slow
def test_eval_page_in_chromium(tmp_path: Path) -> None:
    corpus = build(tmp_path / "store", 10, hermes=False)
    page_path = tmp_path / "eval.html"
    with ScriptedServer(mirror_policy(corpus.runs, corpus.plants)) as srv:
        code = main(["eval", "--all", "--engine", "openai", "--base-url", srv.base_url, "--model", "<b>cand</b>",
                     "--store", str(corpus.store.root), "-o", str(tmp_path / "out"), "--workers", "1",
                     "--stale-timeout", "0.5", "--html", str(page_path)])
    assert code == 0
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page()
        requests: list[str] = []
        dialogs: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(page_path.as_uri())
        assert page.title() == "replaykit eval report"
        assert "<b>cand</b>" in page.inner_text("body")  # shown as text, never as markup
        assert page.locator("svg rect").count() >= 6
        assert all(url.startswith("file://") for url in requests) and not dialogs
        changed = next(r["run_id"] for r in report["runs"] if r["verdict"] in ("changed", "regressed", "improved"))
        page.click(f'a:text-is("{changed}")')
        page.wait_for_load_state()
        assert page.url.endswith(f"eval-diffs/{changed}.html")
        assert "First divergence" in page.inner_text("body")
        browser.close()
