"""The viewer driven in real headless Chromium (Debian's, through Playwright's driver): the debugging loop
from the runs list to a played branch's diff, the access token, cross-site POSTs, hostile trace content,
and screenshots checked for the colours that carry meaning."""

from __future__ import annotations

import re
import shutil
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from replaykit.core.trace.ir import LLMResponse, Message, TextPart, ToolCallPart
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore, write_run_file
from replaykit.testing.engine_runs import record_sample_run
from replaykit.testing.sample_runs import WEATHER_TOOLS, sample_header
from replaykit.testing.script import sequence_policy
from replaykit.testing.scripted_server import ScriptedServer
from tests.exporters.test_html_report import _Beacon
from tests.viewer.png import colours, has_colour

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("jinja2")
sync_api = pytest.importorskip("playwright.sync_api")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium not installed (scripts/test.sh installs it)"),
              pytest.mark.single_env]  # Chromium, and starlette/jinja2 pinned alike in both environments
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run"]
SHOTS = Path(__file__).resolve().parents[2] / "docs" / "img"

FAILING_ROW = (0xFF, 0xE0, 0xE0)
SERVED = (0xDB, 0xE8, 0xFF)
EDITED = (0xFF, 0xE9, 0xA8)
LIVE = (0xD4, 0xF3, 0xDA)
FIRST_DIVERGENCE = (0xFF, 0xD2, 0xD2)
HEADER = (0x1D, 0x23, 0x30)


def hostile_run(url: str) -> Run:
    """The hostile strings the HTML reports resist (tests/exporters/test_html_report.py), in every field
    the viewer shows: title, tags, messages, tool names, ids, arguments, results, errors, answers.
    (Without the lone surrogate: a trace file cannot hold one, so the viewer never meets it.)"""
    payloads = [
        f"<script>document.title='PWNED';fetch('{url}/script')</script>",
        f'<img src="{url}/img" onerror="document.title=\'PWNED\'">',
        f"</pre></details><iframe src='{url}/frame'></iframe>",
        "\" onmouseover=\"alert(1)",
        f"<link rel=stylesheet href='{url}/css'><style>@import '{url}/imp';</style>",
        "{{ 7*7 }} {% raw %} NUL \x00 and \u2028",
    ]
    header = sample_header("hostile", title=payloads[0], tags=[payloads[1], payloads[3]])
    rec = Recorder(header)
    messages = [Message(role="user", parts=[TextPart(text=" ".join(payloads))])]
    call = ToolCallPart(id="<b>id</b>", name="<script>x</script>", arguments={"<k>": payloads[0]})
    first = rec.llm_call(messages, LLMResponse(message=Message(role="assistant", parts=[call])), tools=WEATHER_TOOLS)
    rec.tool_call(call.id, call.name, call.arguments, result=payloads[1], status="error", error=payloads[2],
                  llm_call_id=first.id)
    rec.llm_call([*messages, first.response.message],
                 LLMResponse(message=Message(role="assistant", parts=[TextPart(text=payloads[3] + payloads[4])])))
    rec.turn_end(payloads[0] + payloads[5])
    return Run(rec.header, rec.events)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield browser
        browser.close()


@pytest.fixture()
def store(tmp_path: Path) -> RunStore:
    store = RunStore(tmp_path / "store")
    record_sample_run(store, "tuesday")  # step 4 (write_file) fails
    return store


@pytest.fixture()
def viewer(store: RunStore) -> Iterator[Any]:
    from replaykit.viewer.server import ViewerServer

    with ViewerServer(store) as server:
        yield server


@pytest.fixture()
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.dialogs = []
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))
    page.browser_ = browser
    yield page
    context.close()


def shot(page: Any, name: str, *, keep: bool = True) -> Counter[tuple[int, int, int]]:
    """Screenshot the page, check it is not blank, return its colour counts (the PNG is kept under
    docs/img when REPLAYKIT_DOC_SHOTS is set: the screenshots of docs/viewer.md)."""
    import os

    data: bytes = page.screenshot(full_page=False)
    counts = colours(page.browser_, data)
    assert len(counts) > 20 and counts.most_common(1)[0][1] < 0.97 * sum(counts.values()), f"{name} looks blank"
    if keep and os.environ.get("REPLAYKIT_DOC_SHOTS"):
        SHOTS.mkdir(parents=True, exist_ok=True)
        (SHOTS / f"viewer-{name}.png").write_bytes(data)
    return counts


@pytest.mark.slow
def test_debugging_loop_open_failing_step_branch_play_diff(viewer: Any, page: Any, store: RunStore) -> None:
    page.goto(viewer.url)
    assert page.title() == "replaykit · runs"
    runs = shot(page, "runs-start", keep=False)
    assert has_colour(runs, HEADER, at_least=2000)
    page.click("#runs >> text=tuesday")
    assert "/run/tuesday" in page.url
    failing_row = page.locator("tr.failing")
    assert failing_row.count() == 1 and "write_file" in failing_row.inner_text()
    run_png = shot(page, "run")
    assert has_colour(run_png, FAILING_ROW, at_least=1000)  # the failing step stands out

    page.click("#failing-link")
    assert page.url.split("?")[0].endswith("/run/tuesday/step/4")
    assert page.locator("#failing-badge").is_visible()
    assert "PermissionError: out.txt is read-only" in page.inner_text("main")
    shot(page, "step")
    page.click("text=← step 3")  # the LLM call that asked for the write: what the model saw, exactly
    assert "as the provider received them" in page.inner_text("main")
    assert page.locator("details#request").get_attribute("open") is None  # folded: the response comes first
    page.click("details#request > summary")
    assert "Sunny, 21C" in page.inner_text("main") and page.locator("details.pmsg").count() == 4  # system, user, two tool results (text)
    shot(page, "step-llm")
    page.go_back()

    # Branch: replace the failing tool's result (one edit, as `replaykit branch --result`).
    page.fill("#branch-result textarea", '{"status": "ok", "bytes": 16}')
    page.click("#branch-result button")
    page.wait_for_load_state()
    assert "/run/branch-" in page.url, page.inner_text("body")
    branch_id = page.url.split("/run/")[1].split("?")[0]
    child = store.load(branch_id)
    lineage = child.header.lineage
    assert lineage is not None and lineage.edit is not None and lineage.edit.target == "result"
    assert child.steps[4].event.result == '{"status": "ok", "bytes": 16}'
    branch_png = shot(page, "branch")
    assert has_colour(branch_png, SERVED) and has_colour(branch_png, EDITED)

    # Play it against the scripted provider; the job page polls, then opens the diff.
    with ScriptedServer(sequence_policy([], final_text="Wrote out.txt after all.")) as provider:
        page.select_option("#play-form select[name=engine]", "openai")
        page.fill("#play-form input[name=base_url]", provider.base_url)
        page.fill("#play-form input[name=model]", "scripted-model")
        page.click("#play-form button")
        page.wait_for_url(re.compile(r"/diff\?"), timeout=60_000)
        assert len(provider.llm_requests) >= 1  # live from the cut, for real
    assert page.inner_text("#verdict") == "differ"
    first = page.inner_text("#first-divergence")
    assert "cause edit" in first and "step 4" in first
    assert page.locator("#aligned tr.op-removed, #aligned tr.op-changed, #aligned tr.op-inserted").count() >= 1
    diff_png = shot(page, "diff")
    assert has_colour(diff_png, FIRST_DIVERGENCE) and has_colour(diff_png, LIVE, at_least=20)
    played = [s for s in store.iter_summaries() if s.relation == "play"]
    assert len(played) == 1 and played[0].parent_run_id == branch_id
    # The runs list shows the lineage: the branch under the run, the play under the branch.
    page.goto(viewer.url)
    assert branch_id in page.inner_text("#runs tr.depth-1")
    assert played[0].run_id in page.inner_text("#runs tr.depth-2")
    shot(page, "runs")
    assert page.dialogs == []


def test_every_request_needs_the_token(viewer: Any) -> None:
    for path in ("/", "/run/tuesday", "/run/tuesday/step/4", "/diff?a=tuesday&b=tuesday", "/nope"):
        for suffix in ("", "?token=", "?token=wrong" if "?" not in path else "&token=wrong"):
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(viewer.origin + path + suffix, timeout=10)
            assert err.value.code == 403
    ok = urllib.request.urlopen(viewer.url, timeout=10)
    assert ok.status == 200
    csp = ok.headers["Content-Security-Policy"]
    assert "script-src 'none'" in csp and "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
    assert ok.headers["Referrer-Policy"] == "same-origin"
    # A page that reached the viewer under another name (DNS rebinding) is refused too.
    request = urllib.request.Request(viewer.url, headers={"Host": "attacker.example:80"})
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(request, timeout=10)
    assert err.value.code == 403


def _csrf_for(viewer: Any, run_id: str, step: int) -> str:
    import re

    page = urllib.request.urlopen(viewer.origin + viewer.viewer.url(f"/run/{run_id}/step/{step}"), timeout=10)
    match = re.search(r'name="csrf" value="([^"]+)"', page.read().decode())
    assert match
    return match.group(1)


def _post(viewer: Any, path: str, form: dict[str, str], origin: str | None) -> int:
    from urllib.parse import urlencode

    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    if origin is not None:
        headers["Origin"] = origin
    request = urllib.request.Request(viewer.origin + viewer.viewer.url(path), data=urlencode(form).encode(),
                                     headers=headers, method="POST")
    try:
        return int(urllib.request.urlopen(request, timeout=10).status)
    except urllib.error.HTTPError as exc:
        return exc.code


def test_cross_site_posts_are_refused_by_each_check_alone(viewer: Any, page: Any, store: RunStore) -> None:
    before = sorted(s.run_id for s in store.iter_summaries())
    form = {"at": "4", "target": "result", "value": "pwned"}
    # Right CSRF token, wrong or missing Origin: refused.
    assert _post(viewer, "/run/tuesday/branch", {**form, "csrf": _csrf_for(viewer, "tuesday", 4)},
                 "http://evil.example") == 403
    assert _post(viewer, "/run/tuesday/branch", {**form, "csrf": _csrf_for(viewer, "tuesday", 4)}, None) == 403
    # Right Origin, no or a forged CSRF token: refused.
    assert _post(viewer, "/run/tuesday/branch", form, viewer.origin) == 403
    assert _post(viewer, "/run/tuesday/branch", {**form, "csrf": "forged"}, viewer.origin) == 403
    # A token issued for another form does not open this one.
    assert _post(viewer, "/run/tuesday/play", {"engine": "openai", "offline": "on",
                                               "csrf": _csrf_for(viewer, "tuesday", 4)}, viewer.origin) == 403
    # A real cross-site page in the browser, even one that knows the access token, cannot branch.
    action = viewer.origin + viewer.viewer.url("/run/tuesday/branch")
    page.set_content(f'<form method="post" action="{action}"><input name="at" value="4">'
                     '<input name="target" value="result"><input name="value" value="pwned"></form>')
    with page.expect_navigation():
        page.evaluate("document.forms[0].submit()")
    assert "403" in page.inner_text("body")
    assert sorted(s.run_id for s in store.iter_summaries()) == before
    # ...while the same-origin form with its token works (the checks refuse only what they should).
    csrf = _csrf_for(viewer, "tuesday", 4)
    assert _post(viewer, "/run/tuesday/branch", {**form, "csrf": csrf}, viewer.origin) == 200  # 303 followed
    assert len(list(store.iter_summaries())) == len(before) + 1
    assert _post(viewer, "/run/tuesday/branch", {**form, "csrf": csrf}, viewer.origin) == 403  # single use


def test_hostile_trace_content_is_shown_as_text_and_runs_nothing(viewer: Any, page: Any, store: RunStore) -> None:
    import http.server
    import threading

    _Beacon.hits = []
    beacon = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Beacon)
    threading.Thread(target=beacon.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{beacon.server_address[1]}"
    try:
        run = hostile_run(url)
        write_run_file(store.path_for("hostile"), run.header, run.events)
        for path in ("/", "/run/hostile", "/run/hostile/step/0", "/run/hostile/step/1", "/run/hostile/step/2",
                     "/diff?a=hostile&b=tuesday"):
            page.goto(viewer.origin + viewer.viewer.url(path.split("?")[0], **dict(
                p.split("=") for p in path.split("?")[1].split("&")) if "?" in path else {}))
            assert page.title().startswith("replaykit · ")  # the data did not retitle the page
            assert page.locator("script, iframe, img, link[rel=stylesheet]").count() == 0
            assert page.locator("style").count() == 1  # only the viewer's own (nonced) style
        page.goto(viewer.origin + viewer.viewer.url("/run/hostile/step/0"))
        if page.locator("details#request").count():
            page.click("details#request > summary")  # the request is folded by default
        text = page.inner_text("main")
        assert "<script>document.title='PWNED'" in text  # shown, as text
        assert "{{ 7*7 }}" in text and "{% raw %}" in text  # data, never a template
        shot(page, "hostile")
        page.wait_for_timeout(300)
        assert _Beacon.hits == [], f"the page loaded {_Beacon.hits}"
        assert page.dialogs == []
    finally:
        beacon.shutdown()
