"""``replaykit view`` shows an eval: the evals list, the report page, links into each candidate play and
its diff against the original; trace content on the page is escaped."""

from __future__ import annotations

import html
import re
import urllib.request
from pathlib import Path

import pytest

from replaykit.eval import evaluate
from replaykit.testing.eval_candidate import mirror_policy
from replaykit.testing.scripted_server import ScriptedServer

from .corpus import build

pytest.importorskip("openai")
pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("jinja2")


def _get(server: object, path: str, **params: str) -> str:
    url = server.origin + server.viewer.url(path, **params)  # type: ignore[attr-defined]
    with urllib.request.urlopen(url, timeout=20) as response:
        return str(response.read().decode())


def test_viewer_lists_the_eval_and_links_every_played_run(tmp_path: Path) -> None:
    from replaykit.viewer.server import ViewerServer

    corpus = build(tmp_path / "store", 8, hermes=False)
    with ScriptedServer(mirror_policy(corpus.runs, corpus.plants)) as srv:
        report = evaluate(all_runs=True, engine="openai", base_url=srv.base_url, model="<i>cand</i>",
                          out=tmp_path / "out", store=corpus.store, stale_timeout=0.5, workers=1)
    eval_id = report.execution["eval_id"]
    with ViewerServer(corpus.store) as server:
        listing = _get(server, "/evals")
        assert f"/eval/{eval_id}?" in listing and "&lt;i&gt;cand&lt;/i&gt;" in listing and "<i>cand" not in listing
        page = _get(server, f"/eval/{eval_id}")
        for row in report.execution["runs"]:
            for played in row["candidate_runs"]:
                assert f"/run/{played}?" in page
                assert html.escape(f"/diff?a={row['run_id']}&b={played}") in page
                diff = _get(server, "/diff", a=row["run_id"], b=played)
                assert "Diff" in diff
        assert len(re.findall(r'class="verdict-', page)) == len(corpus.runs)
        with pytest.raises(urllib.error.HTTPError):
            _get(server, "/eval/0123456789")
