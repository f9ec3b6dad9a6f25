"""The viewer at size: the runs list, a run's timeline and a request come a page at a time, the links
between pages work, a bad page number is a clean 400 or 404, and a step page does not grow with the step
(a 2,000-tool-step run generated straight through the recorder, in a store of 250 runs)."""

from __future__ import annotations

import html
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from replaykit.core.analysis.inspect_view import inspect_trace
from replaykit.core.trace.store import RunStore
from replaykit.testing.long_runs import stamp_copies, write_tool_loop_run

pytest.importorskip("starlette")
pytest.importorskip("jinja2")

from replaykit.viewer.run_views import INLINE_MESSAGES, MESSAGES_PER_PAGE, ROWS_PER_PAGE
from replaykit.viewer.server import ViewerServer

TOOL_STEPS = 2000
SHORT_RUNS = 250
HOSTILE = "<script>document.title='PWNED'</script>"


def _result(i: int) -> str:
    return f"result {i}: " + ("x" * 200) + (HOSTILE if i == TOOL_STEPS - 3 else "")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> RunStore:
    store = RunStore(tmp_path_factory.mktemp("big") / "store")
    write_tool_loop_run(store, "long", TOOL_STEPS, result_of=_result, failing_step=TOOL_STEPS - 10)
    template = write_tool_loop_run(RunStore(store.root.parent / "templates"), "short", 3, per_turn=3)
    stamp_copies(store.root, template, SHORT_RUNS - 1, branch_every=5)
    return store


@pytest.fixture(scope="module")
def server(store: RunStore) -> Iterator[ViewerServer]:
    with ViewerServer(store) as running:
        yield running


def fetch(server: ViewerServer, path: str, **params: Any) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(server.origin + server.viewer.url(path, **params), timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def follow(server: ViewerServer, page: str, rel: str) -> tuple[int, str] | None:
    """Follow the page's ``rel="next"``/``"prev"`` link as a browser would."""
    match = re.search(rf'<a rel="{rel}" href="([^"]+)"', page)
    if match is None:
        return None
    with urllib.request.urlopen(server.origin + html.unescape(match.group(1)), timeout=60) as response:
        return response.status, response.read().decode()


def run_ids(page: str) -> list[str]:
    table = page.split('<table id="runs">')[1].split("</table>")[0]
    return re.findall(r'<td class="id"><a href="/run/([^?"]+)\?', table)


def test_the_runs_list_comes_a_page_at_a_time_and_every_run_once(server: ViewerServer) -> None:
    status, first = fetch(server, "/", limit="40")
    assert status == 200 and "page 1 of" in first
    seen: list[str] = []
    page: tuple[int, str] | None = (status, first)
    while page is not None:
        assert page[0] == 200
        ids = run_ids(page[1])
        depth0 = page[1].count('<tr class="depth-0')
        assert depth0 <= 40 and ids  # 40 top-level runs a page, each with its branches under it
        seen += ids
        page = follow(server, page[1], "next")
    assert sorted(seen) == sorted(["long", *(f"run-{n:05d}" for n in range(SHORT_RUNS - 1))])
    # a branch is on the same page as its parent, right under it
    status, default = fetch(server, "/", sort="run", order="asc")
    ids = run_ids(default)
    assert ids.index("run-00004") == ids.index("run-00003") + 1 and 'class="depth-1' in default
    assert len(re.findall('<tr class="depth-0', default)) == 100  # the default page size
    # filters keep working across pages: the link to the next page keeps them
    status, failing = fetch(server, "/", q="run-000", limit="3")
    nxt = follow(server, failing, "next")
    assert nxt is not None and all(i.startswith("run-000") for i in run_ids(nxt[1]))


@pytest.mark.parametrize("params, code", [
    ({"page": "0"}, 400), ({"page": "-1"}, 400), ({"page": "two"}, 400), ({"limit": "0"}, 400),
    ({"limit": "100000"}, 400), ({"page": "9999"}, 404),
])
def test_bad_page_numbers_are_a_clean_error(server: ViewerServer, params: dict[str, str], code: int) -> None:
    status, page = fetch(server, "/", **params)
    assert status == code and "Traceback" not in page and 'class="error"' in page


def test_a_long_runs_timeline_is_paged(server: ViewerServer, store: RunStore) -> None:
    rows = inspect_trace(store.path_for("long")).rows
    pages = -(-len(rows) // ROWS_PER_PAGE)
    status, first = fetch(server, "/run/long")
    assert status == 200 and f"page 1 of {pages}" in first
    assert f"{len(rows)} events: {2 * TOOL_STEPS + TOOL_STEPS // 10} steps" in first  # one streaming pass
    ids = re.findall(r'id="row-(?:step|seq)-(\d+)"', first)
    assert len(ids) == ROWS_PER_PAGE
    second = follow(server, first, "next")
    assert second is not None and "page 2 of" in second[1]
    shown = [r for r in rows[ROWS_PER_PAGE:2 * ROWS_PER_PAGE] if r["step"] is not None]
    assert re.findall(r'id="row-step-(\d+)"', second[1]) == [str(r["step"]) for r in shown]
    back = follow(server, second[1], "prev")
    assert back is not None and back[1].count('id="row-') == ROWS_PER_PAGE
    status, last = fetch(server, "/run/long", page=str(pages))
    assert status == 200 and last.count('id="row-') == len(rows) - (pages - 1) * ROWS_PER_PAGE
    failing = next(r for r in rows if r["failing"])
    failing_page = rows.index(failing) // ROWS_PER_PAGE + 1
    assert 'tr class="kind-tool_call failing"' in fetch(server, "/run/long", page=str(failing_page))[1]
    assert fetch(server, "/run/long", page=str(pages + 1))[0] == 404
    assert fetch(server, "/run/long", page="0")[0] == 400
    assert fetch(server, "/run/nope")[0] == 404
    assert len(first) < 400_000  # the page of a 6,000-step run


def test_a_step_page_does_not_grow_with_the_step(server: ViewerServer, store: RunStore) -> None:
    rows = inspect_trace(store.path_for("long")).rows
    llm_steps = [r["step"] for r in rows if r["kind"] == "llm_call"]
    sizes = {}
    for step in (llm_steps[40], llm_steps[len(llm_steps) // 2], llm_steps[-2]):
        status, page = fetch(server, f"/run/long/step/{step}")
        assert status == 200 and 'id="request-delta"' in page and 'id="whole-request"' in page
        sizes[step] = len(page)
    assert max(sizes.values()) - min(sizes.values()) < 2_000 and max(sizes.values()) < 40_000, sizes
    # the new messages are the tool result the model saw (escaped), and the earlier ones a link
    last = llm_steps[-3]  # its request carries the result of tool call TOOL_STEPS - 3
    status, page = fetch(server, f"/run/long/step/{last}")
    assert "&lt;script&gt;document.title=" in page
    assert "<script" not in page
    base = re.search(r'id="base-step">step (\d+)<', page)
    assert base is not None and int(base.group(1)) < last
    # a short request is still shown whole, as the provider received it
    status, early = fetch(server, "/run/long/step/0")
    assert status == 200 and "as the provider received them" in early and 'id="request-delta"' not in early
    assert fetch(server, f"/run/long/step/{len(llm_steps) + TOOL_STEPS}")[0] == 400


def test_the_whole_request_has_its_own_paged_page(server: ViewerServer, store: RunStore) -> None:
    from replaykit.core.trace.run import Run

    run = Run.load(store.path_for("long"))
    last = max(s.index for s in run.steps if s.kind == "llm")
    count = len(run.request_messages(run.step(last).event))
    assert count > INLINE_MESSAGES
    pages = -(-count // MESSAGES_PER_PAGE)
    status, first = fetch(server, f"/run/long/step/{last}/request")
    assert status == 200 and f"page 1 of {pages}" in first and first.count('class="pmsg"') == MESSAGES_PER_PAGE
    status, tail = fetch(server, f"/run/long/step/{last}/request", page=str(pages))
    assert tail.count('class="pmsg"') == count - (pages - 1) * MESSAGES_PER_PAGE
    assert "&lt;script&gt;document.title=" in tail and "<script" not in tail and len(first) < 500_000
    assert fetch(server, f"/run/long/step/{last}/request", page=str(pages + 1))[0] == 404
    assert fetch(server, f"/run/long/step/{last - 1}/request")[0] == 400  # a tool step has no request


def test_a_run_the_fast_reader_cannot_vouch_for_is_shown_through_the_full_reader(server: ViewerServer,
                                                                                  store: RunStore) -> None:
    """A ``request_fix`` (the Hermes capture restating a request's delta) needs the validating reader: the
    pages come from ``Run.load`` then, the same pages."""
    import json

    lines = store.path_for("run-00000").read_bytes().splitlines(keepends=True)
    header = dict(json.loads(lines[0]), run_id="fixed")
    events = [json.loads(line) for line in lines[1:]]
    llm = next(e for e in events if e["kind"] == "llm_call")
    fix = {"kind": "opaque", "seq": events[-1]["seq"] + 1, "id": "fix-1", "t": events[-1]["t"], "source": "replaykit",
           "name": "request_fix", "data": {"event": llm["id"], "context": llm["request"]["context"]}}
    (store.root / "fixed.jsonl").write_text("".join(json.dumps(x) + "\n" for x in [header, *events, fix]))
    status, page = fetch(server, "/run/fixed")
    assert status == 200 and 'id="timeline-fixed"' in page and "page 1 of" not in page
    status, step = fetch(server, "/run/fixed/step/0")
    assert status == 200 and "as the provider received them" in step
    assert fetch(server, "/run/fixed/step/0/request")[0] == 200
