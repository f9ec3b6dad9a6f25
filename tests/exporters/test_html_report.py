"""HTML reports: everything escaped, nothing executes or loads, checked in real headless Chromium."""

from __future__ import annotations

import http.server
import shutil
import stat
import subprocess
import threading
from pathlib import Path
from typing import ClassVar

import pytest

from replaykit.core.trace.ir import LLMResponse, Message, TextPart, ToolCallPart
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.run import Run
from replaykit.exporters import export
from replaykit.exporters.html_report import render_diff, render_run
from replaykit.testing.sample_runs import WEATHER_TOOLS, record_weather_run, sample_header

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class _Beacon(http.server.BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        _Beacon.hits.append(self.path)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def beacon() -> tuple[str, list[str]]:
    _Beacon.hits = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Beacon)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", _Beacon.hits
    server.shutdown()


def hostile_run(url: str) -> Run:
    rec = Recorder(sample_header("hostile"))
    payloads = [
        f"<script>document.title='PWNED';fetch('{url}/script')</script>",
        f'<img src="{url}/img" onerror="document.title=\'PWNED\'">',
        f"</pre></details><iframe src='{url}/frame'></iframe>",
        "\" onmouseover=\"alert(1)",
        f"<link rel=stylesheet href='{url}/css'><style>@import '{url}/imp';</style>",
        "\ud800 lone surrogate and \x00 NUL and \u2028",
    ]
    messages = [Message(role="user", parts=[TextPart(text=" ".join(payloads))])]
    call = ToolCallPart(id="<b>id</b>", name="<script>x</script>", arguments={"<k>": payloads[0]})
    first = rec.llm_call(messages, LLMResponse(message=Message(role="assistant", parts=[call])), tools=WEATHER_TOOLS)
    rec.tool_call(call.id, call.name, call.arguments, result=payloads[1], status="error", error=payloads[2],
                  llm_call_id=first.id)
    rec.llm_call([*messages, first.response.message],
                 LLMResponse(message=Message(role="assistant", parts=[TextPart(text=payloads[3] + payloads[4])])))
    rec.turn_end(payloads[0])
    return Run(rec.header, rec.events)


def test_everything_is_escaped(beacon: tuple[str, list[str]]) -> None:
    url, _ = beacon
    page = render_run(hostile_run(url))
    assert "<script" not in page.lower().replace("&lt;script", "")
    assert "<iframe" not in page and "onerror=\"" not in page and "<img" not in page
    assert "&lt;script&gt;document.title=&#x27;PWNED&#x27;" in page
    assert "script-src 'none'" in page
    import re

    assert not re.search(r"(src|href|url)\s*[=(]\s*[\"']?https?:", page, re.I)  # nothing to load


def test_report_shows_timeline_failing_step_and_steps(tmp_path: Path) -> None:
    rec = Recorder(sample_header("weather"))
    record_weather_run(rec)
    rec.tool_call("c9", "terminal", {"command": "make"}, status="error", error="make: *** no rule")
    run = Run(rec.header, rec.events)
    out = tmp_path / "r.html"
    info = export(run, "html", out)
    assert stat.S_IMODE(out.stat().st_mode) == 0o600 and info["steps"] == 5
    page = out.read_text()
    assert "London is warmer." in page and "get_weather" in page
    assert 'class="failing"' in page and "failing step" in page
    assert page.count('id="step-') == 5


def test_diff_report_marks_first_divergence() -> None:
    page = render_diff({
        "run_a": "a<1>", "run_b": "b", "equal": False,
        "first_divergence": {"step": 1, "field": "result", "cause": "edit"},
        "steps": [{"step": 0, "differs": False, "a": {"summary": "x"}, "b": {"summary": "x"}},
                  {"step": 1, "differs": True, "field": "result", "cause": "edit",
                   "a": {"summary": "<b>old</b>"}, "b": {"summary": "new"}}],
    })
    assert 'class="first"' in page and "a&lt;1&gt;" in page and "&lt;b&gt;old&lt;/b&gt;" in page


def _chromium(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=2000", *args],
        capture_output=True, text=True, timeout=120,
    )


@pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium not installed (scripts/test.sh installs it)")
def test_in_headless_chromium_nothing_executes_or_loads(tmp_path: Path, beacon: tuple[str, list[str]]) -> None:
    url, hits = beacon
    out = tmp_path / "hostile.html"
    export(hostile_run(url), "html", out)
    dom = _chromium(["--dump-dom", out.as_uri()], tmp_path).stdout
    assert "<title>replaykit hostile</title>" in dom  # the data did not retitle the page
    assert "PWNED" in dom  # ...but is shown, as text
    assert "<script" not in dom and "<iframe" not in dom and "<img" not in dom
    shot = tmp_path / "shot.png"
    _chromium([f"--screenshot={shot}", "--window-size=1200,900", out.as_uri()], tmp_path)
    assert shot.exists() and shot.stat().st_size > 5000
    assert hits == [], f"the page loaded {hits}"


def test_report_shows_cost_and_never_zero_for_unknown(tmp_path: Path) -> None:
    header = sample_header("priced").model_copy(update={"base_url": "https://api.openai.com/v1"})
    rec = Recorder(header)
    record_weather_run(rec)  # gpt-4o-mini on api.openai.com: priced from genai-prices when installed
    page = render_run(Run(rec.header, rec.events))
    pytest.importorskip("genai_prices")
    assert "<b>cost</b>: $" in page
    unknown = Recorder(sample_header("unpriced").model_copy(update={"model": "no-such-model-xyz"}))
    record_weather_run(unknown)
    page = render_run(Run(unknown.header, unknown.events))
    assert "<b>cost</b>: unknown" in page and "$0.000000" not in page
