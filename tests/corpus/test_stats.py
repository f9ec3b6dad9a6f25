"""``replaykit stats``: the corpus report's figures against the runs themselves, and its HTML page."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from replaykit.core.trace.ir import Message, TextPart
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.testing.sample_runs import sample_header
from tests.conftest import subprocess_env
from tests.corpus.support import FIXTURES, make_corpus

HOSTILE = '<script>alert("x")</script><img src=https://evil.example/x.png>'


def _hostile_run(store: RunStore) -> None:
    header = sample_header("hostile-run", title=HOSTILE)
    with store.create(header) as writer:
        rec = Recorder(header, writer)
        rec.turn_start(Message(role="user", parts=[TextPart(text="hi")]))
        for _ in range(3):
            rec.tool_call("c1", HOSTILE, {"q": 1}, result="no", status="error", error="boom")
        rec.run_end("done", status="failed", reason=HOSTILE)


def test_stats_json_and_html(tmp_path: Path) -> None:
    store = make_corpus(tmp_path / "store", 20)
    _hostile_run(store)
    html = tmp_path / "report.html"
    proc = subprocess.run([sys.executable, "-m", "replaykit", "stats", "--store", str(store.root), "--workers", "2",
                           "--partition-size", "5", "--json", "--html", str(html)],
                          capture_output=True, text=True, env=subprocess_env(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    runs = [Run.load(p) for p in sorted(store.root.glob("*.jsonl"))]
    assert doc["runs"] == len(runs) == 21 + len(list(FIXTURES.glob("*.jsonl"))) and doc["damaged"] == []
    assert doc["steps"] == sum(len(r.steps) for r in runs)
    assert doc["tool_calls"] == sum(len(r.tool_calls()) for r in runs)
    assert sum(doc["health"]["histogram"].values()) == len(runs)
    tools = {t["tool"]: t for t in doc["tools"]}
    assert tools[HOSTILE]["calls"] == 3 and tools[HOSTILE]["failure_rate"] == 1.0
    failures = sum(1 for r in runs for e in r.tool_calls() if e.status == "error")
    assert sum(t["failures"] for t in doc["tools"]) == failures
    worst = doc["worst_runs"][0]
    assert worst["run_id"] == "hostile-run" and worst["health"] < 50
    assert any("loop" in reason for reason in worst["reasons"])
    assert doc["worst_runs"] == sorted(doc["worst_runs"], key=lambda w: (w["health"], w["run_id"]))
    assert {m["model"] for m in doc["models"]} >= {"gpt-4o-mini", "scripted-model"}
    assert doc["cost_usd"]["known"] > 0  # the generated runs name real priced models

    page = html.read_text()
    assert html.stat().st_mode & 0o777 == 0o600
    assert "<script" not in page and "evil.example/x.png>" not in page and "&lt;script&gt;" in page
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert page.count("<svg") >= 4
    assert not re.search(r"<[^>]*\s(src|href)=", page)  # no element loads anything
    assert "url(" not in page


def test_stats_reports_damaged_runs_and_bad_cluster(tmp_path: Path) -> None:
    store = make_corpus(tmp_path / "store", 3, hermes=False)
    (store.root / "torn.jsonl").write_bytes(b'{"kind": "run"\n')
    proc = subprocess.run([sys.executable, "-m", "replaykit", "stats", "--store", str(store.root), "--workers", "1",
                           "--json"], capture_output=True, text=True, env=subprocess_env(), timeout=60)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["runs"] == 3 and [Path(d["source"]).name for d in doc["damaged"]] == ["torn.jsonl"]
    bad = subprocess.run([sys.executable, "-m", "replaykit", "stats", "--store", str(store.root), "--cluster",
                          "spark"], capture_output=True, text=True, env=subprocess_env(), timeout=60)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--cluster" in bad.stderr
