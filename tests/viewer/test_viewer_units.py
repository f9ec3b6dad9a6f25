"""The viewer without a browser: the runs catalog (filters, sorting, lineage), the play form (a key's
NAME only, the guard's default), offline plays, the command line and its missing-extra error."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from replaykit.core.analysis.diff import diff_runs
from replaykit.core.errors import BadInput
from replaykit.core.replay.branch import branch
from replaykit.core.trace.store import RunStore
from replaykit.testing.engine_runs import record_sample_run
from replaykit.testing.script import sequence_policy
from replaykit.testing.scripted_server import ScriptedServer
from tests.conftest import subprocess_env

pytest.importorskip("starlette")
pytest.importorskip("jinja2")

from replaykit.viewer.catalog import Catalog, Query, lineage_tree
from replaykit.viewer.jobs import Jobs, PlayForm


@pytest.fixture()
def store(tmp_path: Path) -> RunStore:
    store = RunStore(tmp_path / "store")
    record_sample_run(store, "tuesday")
    record_sample_run(store, "wednesday", weather="Rainy, 9C")
    return store


def _wait(job: object, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not job.done and time.monotonic() < deadline:  # type: ignore[attr-defined]
        time.sleep(0.05)


def test_catalog_nests_lineage_filters_and_sorts(store: RunStore) -> None:
    child = branch(store, store.load("tuesday"), 4, result="ok", run_id="tuesday-fix")
    branch(store, child, 0, response="Nothing to do.", run_id="tuesday-fix-2")
    rows = Catalog(store).rows()
    order = [(r.run_id, r.depth) for r in lineage_tree(rows, Query(sort="run", desc=False))]
    assert order == [("tuesday", 0), ("tuesday-fix", 1), ("tuesday-fix-2", 2), ("wednesday", 0)]
    by_id = {r.run_id: r for r in rows}
    assert by_id["tuesday"].failing_step == 4 and by_id["tuesday"].status == "completed"
    assert by_id["tuesday-fix"].relation == "branch" and by_id["tuesday-fix"].parent_run_id == "tuesday"
    # Filters: a search, a status, a date range; a child whose parent is filtered out becomes a root.
    assert [r.run_id for r in lineage_tree(rows, Query(q="fix-2"))] == ["tuesday-fix-2"]
    assert {r.run_id for r in lineage_tree(rows, Query(status="failing"))} == {"tuesday", "wednesday"}
    assert lineage_tree(rows, Query(since="2999-01-01")) == []
    assert next(r.run_id for r in lineage_tree(rows, Query(sort="steps", desc=True))) in ("tuesday", "wednesday")
    assert next(r.run_id for r in lineage_tree(rows, Query(sort="run", desc=True))) == "wednesday"
    # Health: the score of core/analysis/health.py (a failed tool costs points; a branch never reaches run_end).
    from replaykit.core.analysis.health import run_health

    for run_id in ("tuesday", "tuesday-fix"):
        assert by_id[run_id].health == run_health(store.load(run_id), with_cost=False).score
    floor = (by_id["tuesday"].health + by_id["tuesday-fix"].health) / 2
    assert by_id["tuesday"].health != by_id["tuesday-fix"].health
    kept = {r.run_id for r in lineage_tree(rows, Query(min_health=str(floor)))}
    better = "tuesday" if by_id["tuesday"].health > floor else "tuesday-fix"
    assert better in kept and ({"tuesday", "tuesday-fix"} - {better}).isdisjoint(kept)
    roots = [r for r in lineage_tree(rows, Query(sort="health", desc=False)) if r.depth == 0]
    assert [r.health for r in roots] == sorted(r.health for r in roots)


def test_descendants_reuse_the_listing_until_a_run_appears(store: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = Catalog(store)
    catalog.entries()  # what the runs list does first
    listings = []
    real = Catalog.entries
    monkeypatch.setattr(Catalog, "entries", lambda self: listings.append(1) or real(self))
    assert catalog.descendants("tuesday") == [] and listings == []  # the last listing, no stat of every run
    time.sleep(0.02)  # a directory's modification time moves by clock ticks
    branch(store, store.load("tuesday"), 4, result="ok", run_id="tuesday-fix")
    assert [r.run_id for r in catalog.descendants("tuesday")] == ["tuesday-fix"] and listings == [1]
    assert [r.run_id for r in catalog.descendants("tuesday")] == ["tuesday-fix"] and listings == [1]
    monkeypatch.setattr("replaykit.viewer.catalog.LINEAGE_MAX_AGE", 0.0)  # an old listing is not trusted
    assert [r.run_id for r in catalog.descendants("tuesday")] == ["tuesday-fix"] and listings == [1, 1]


def test_catalog_marks_a_run_being_recorded(store: RunStore) -> None:
    from replaykit.core.trace.ir import Message, RunHeader, TextPart
    from replaykit.core.trace.recorder import Recorder

    header = RunHeader(run_id="live-now", created_at="2026-12-01T00:00:00Z")
    recorder = Recorder(header, store.create(header))
    recorder.turn_start(Message(role="user", parts=[TextPart(text="hi")]))
    recorder.sync()
    catalog = Catalog(store)
    assert {r.run_id: r.recording for r in catalog.rows()}["live-now"] is True
    recorder.run_end("done")
    recorder.close()
    assert {r.run_id: r.recording for r in catalog.rows()}["live-now"] is False  # re-read: it grew


def test_play_form_takes_a_key_name_never_a_key(store: RunStore) -> None:
    run = store.load("tuesday")
    with pytest.raises(BadInput, match="NAME of an environment variable"):
        PlayForm.parse({"engine": "openai", "base_url": "http://127.0.0.1:1/v1", "model": "m",
                        "api_key_env": "sk-live-1234567890abcdef"}, run)
    with pytest.raises(BadInput, match="unknown engine"):
        PlayForm.parse({"engine": "rm -rf /", "offline": "on"}, run)
    with pytest.raises(BadInput, match="leave the endpoint empty"):
        PlayForm.parse({"engine": "openai", "offline": "on", "base_url": "http://x/v1"}, run)
    form = PlayForm.parse({"engine": "openai", "base_url": "http://127.0.0.1:1/v1", "model": "m"}, run)
    assert form.allow_destructive is False  # the guard's dry-run default, as on the command line
    options = form.options(store, "p1")
    assert options.allow_destructive is False and options.api_key_env is None
    with pytest.raises(BadInput, match="not set"):
        PlayForm.parse({"engine": "openai", "base_url": "http://127.0.0.1:1/v1", "model": "m",
                        "api_key_env": "RK_TEST_UNSET_VAR"}, run).options(store, "p2")


def test_live_play_reads_the_key_from_the_named_variable_and_never_writes_it(
        store: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-viewer-secret-0123456789abcdef"
    monkeypatch.setenv("RK_VIEWER_KEY", secret)
    child = branch(store, store.load("tuesday"), 4, result="ok")
    with ScriptedServer(sequence_policy([], final_text="Fixed.")) as provider:
        form = PlayForm.parse({"engine": "openai", "base_url": provider.base_url, "model": "m",
                               "api_key_env": "RK_VIEWER_KEY"}, child)
        job = Jobs(store).start(child, form)
        _wait(job)
        assert job.status == "completed", job.error
        assert provider.llm_requests and job.compare_to == "tuesday"
    # The provider saw the key; no file in the store holds it (the header logs of the server drop it).
    assert all(secret not in path.read_text() for path in store.root.iterdir() if path.is_file())
    assert secret not in repr(job) and secret not in repr(form)


def test_play_form_api_choice(store: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    run = store.load("tuesday")
    with pytest.raises(BadInput, match="unknown API"):
        PlayForm.parse({"engine": "openai", "base_url": "http://127.0.0.1:1/v1", "model": "m", "api": "smtp"}, run)
    with pytest.raises(BadInput, match="base-url is required"):  # no endpoint and nothing native chosen
        PlayForm.parse({"engine": "openai", "model": "m"}, run)
    # A native API (chosen, or named by a provider:model string) may leave the endpoint empty: its SDK's host.
    monkeypatch.setenv("RK_VIEWER_KEY", "sk-viewer-native-0123456789")
    for fields in ({"api": "anthropic-messages", "model": "claude-x"}, {"model": "anthropic:claude-x"}):
        form = PlayForm.parse({"engine": "openai", "api_key_env": "RK_VIEWER_KEY", **fields}, run)
        options = form.options(store, "p-native")
        assert options.api == "anthropic-messages" and options.model == "claude-x"
        assert options.safe_base_url() == "https://api.anthropic.com"
    with pytest.raises(BadInput, match="api-key-env"):  # a native host and no key named: refused up front
        PlayForm.parse({"engine": "openai", "api": "anthropic-messages", "model": "claude-x"}, run).options(store, "p3")


def test_live_play_from_the_viewer_on_another_api(store: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("anthropic")
    monkeypatch.setenv("RK_VIEWER_KEY", "sk-viewer-anthropic-0123456789")
    child = branch(store, store.load("tuesday"), 4, result="ok")
    with ScriptedServer(sequence_policy([], final_text="Fixed."), strict=True) as provider:
        form = PlayForm.parse({"engine": "openai", "base_url": provider.base_url, "model": "m",
                               "api": "anthropic-messages", "api_key_env": "RK_VIEWER_KEY"}, child)
        job = Jobs(store).start(child, form)
        _wait(job)
        assert job.status == "completed", job.error
        assert provider.llm_requests and {r.path for r in provider.llm_requests} == {"/v1/messages"}


@pytest.mark.parametrize("engine", ["openai"])
def test_offline_play_from_the_viewer_is_equal_to_the_record(store: RunStore, engine: str) -> None:
    run = store.load("tuesday")
    job = Jobs(store).start(run, PlayForm.parse({"engine": engine, "offline": "on"}, run))
    _wait(job)
    assert job.status == "completed", job.error
    assert job.result is not None and job.result["counters"]["provider_calls"] == 0
    assert diff_runs(run, store.load(job.run_id)).equal
    assert Jobs(store).progress(job)["steps"] == len(run.steps)


def test_cli_prints_a_token_url_and_serves_only_with_it(store: RunStore) -> None:
    process = subprocess.Popen([sys.executable, "-m", "replaykit", "view", "--no-open", "--store", str(store.root)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=subprocess_env())
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and "?token=" in url
        with urllib.request.urlopen(url, timeout=20) as response:
            assert response.status == 200 and "tuesday" in response.read().decode()
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(url.split("?")[0], timeout=20)
        assert err.value.code == 403
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_missing_extra_is_one_line_exit_2(tmp_path: Path) -> None:
    code = ("import sys; sys.modules['starlette'] = None; from replaykit.cli.main import main; "
            f"sys.exit(main(['view', '--no-open', '--store', {str(tmp_path)!r}]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env(),
                         timeout=60)
    assert out.returncode == 2 and "'view' extra" in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_port_in_use_is_one_line_exit_2(store: RunStore) -> None:
    import socket

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    try:
        out = subprocess.run([sys.executable, "-m", "replaykit", "view", "--no-open", "--port",
                              str(taken.getsockname()[1]), "--store", str(store.root)],
                             capture_output=True, text=True, env=subprocess_env(), timeout=60)
    finally:
        taken.close()
    assert out.returncode == 2 and "cannot listen" in out.stderr and "Traceback" not in out.stderr


def _get(server: object, path: str, **params: str) -> str:
    url = server.origin + server.viewer.url(path, **params)  # type: ignore[attr-defined]
    with urllib.request.urlopen(url, timeout=20) as response:
        return str(response.read().decode())


def test_run_page_nests_subagents_and_diff_page_shows_changed_messages(store: RunStore) -> None:
    from replaykit.core.trace.ir import Message, RunHeader, TextPart
    from replaykit.core.trace.recorder import Recorder
    from replaykit.viewer.server import ViewerServer

    child_header = RunHeader(run_id="helper-run", created_at="2026-12-01T00:00:00Z")
    child = Recorder(child_header, store.create(child_header))
    child.tool_call("k1", "grep_notes", {"q": "milk"}, result="buy milk")
    child.run_end("found it")
    child.close()
    parent_header = RunHeader(run_id="boss-run", created_at="2026-12-01T00:00:00Z")
    parent = Recorder(parent_header, store.create(parent_header))
    parent.turn_start(Message(role="user", parts=[TextPart(text="delegate")]))
    parent.subagent("start", child_run_id="helper-run", goal="find the notes")
    parent.subagent("stop", child_run_id="helper-run", summary="found it")
    parent.run_end("done")
    parent.close()
    with ViewerServer(store) as server:
        page = _get(server, "/run/boss-run")
        nested = page.split('id="timeline-boss-run"')[1]
        assert 'id="timeline-helper-run"' in nested and "grep_notes" in nested  # inside the parent's table
        diff = _get(server, "/diff", a="tuesday", b="wednesday")
        assert 'id="first-divergence"' in diff and "tool_result" in diff
        assert "<del>Sunny, 21C</del><ins>Rainy, 9C</ins>" in diff  # which message changed, and how
