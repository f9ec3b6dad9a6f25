"""The MCP tools without a transport: paging with cursors, clipping with notes, searches, the exports
folder, and the secret scrubber."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from replaykit.core.errors import BadInput, InvalidRunId, RunNotFound
from replaykit.core.trace.store import RunStore
from replaykit.mcp.limits import MARK
from replaykit.mcp.scrub import REPLACEMENT, Scrubber
from replaykit.mcp.tools import Tools
from replaykit.testing.engine_runs import record_long_run, record_sample_run


@pytest.fixture
def tools(tmp_path: Path) -> Tools:
    store = RunStore(tmp_path / "store")
    record_sample_run(store, "failing-a")
    record_sample_run(store, "other-b", weather="Rain over Lisbon", last_answer="out.txt holds a poem.")
    record_long_run(store, 60, "long-c")
    return Tools(store)


def test_pages_follow_their_cursor_and_cover_everything(tools: Tools) -> None:
    seen, cursor, pages = [], None, 0
    while True:
        page = tools.inspect_run("long-c", cursor=cursor, limit=25)
        seen += [row["seq"] for row in page.timeline]
        pages += 1
        if page.next_cursor is None:
            assert page.notes == []
            break
        assert "call again with cursor=next_cursor" in page.notes[0]
        cursor = page.next_cursor
    assert pages > 2 and seen == sorted(set(seen)) and len(seen) == page.total


def test_a_cursor_of_another_query_or_a_forged_one_is_refused(tools: Tools) -> None:
    first = tools.inspect_run("long-c", limit=5)
    assert first.next_cursor
    with pytest.raises(BadInput, match="another query"):
        tools.inspect_run("failing-a", cursor=first.next_cursor, limit=5)
    with pytest.raises(BadInput, match="invalid cursor"):
        tools.inspect_run("long-c", cursor="not-a-cursor!", limit=5)
    with pytest.raises(BadInput, match="limit"):
        tools.list_runs(limit=0)


def test_long_values_are_clipped_and_every_cut_is_listed(tools: Tools) -> None:
    clipped = tools.get_step("failing-a", 3, max_chars=20)
    assert clipped.truncated and clipped.notes and "replaykit://run/failing-a/step/3" in clipped.notes[0]
    for cut in clipped.truncated:
        assert cut.length > cut.shown
    system = clipped.detail["request"]["messages"][0]["parts"][0]["text"]
    assert system.endswith(MARK) and len(system) == 20 + len(MARK)
    whole = tools.get_step("failing-a", 3, max_chars=0)
    assert whole.truncated == [] and whole.notes == []
    assert not whole.detail["request"]["messages"][0]["parts"][0]["text"].endswith(MARK)


def test_search_by_text_tool_model_status_and_health(tools: Tools) -> None:
    def ids(**query: object) -> list[str]:
        return [r.run_id for r in tools.list_runs(**query).runs]  # type: ignore[arg-type]

    assert ids() == ["failing-a", "other-b", "long-c"]
    assert ids(text="lisbon") == ["other-b"]  # only in a tool result: searched in the record
    assert tools.list_runs(text="lisbon").runs[0].matched_in == "record"
    assert ids(text="OTHER") == ["other-b"] and tools.list_runs(text="other").runs[0].matched_in == "list"
    assert ids(tool="write_file") == ["failing-a", "other-b"]
    assert ids(status="failing") == ["failing-a", "other-b"]
    assert ids(model="SAMPLE-MODEL") == ["failing-a", "other-b", "long-c"]
    assert ids(min_health=100) == ["long-c"]
    assert ids(max_health=99, text="poem") == ["other-b"]
    with pytest.raises(BadInput, match="min_health"):
        tools.list_runs(min_health=101)


def test_runs_are_named_by_id_only(tools: Tools, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_bytes(tools.store.path_for("failing-a").read_bytes())
    for ref in (str(outside), "../elsewhere", "/etc/passwd"):
        with pytest.raises((InvalidRunId, RunNotFound)):
            tools.inspect_run(ref)
    with pytest.raises(RunNotFound, match="list_runs"):
        tools.get_step("no-such-run", 0)


def test_exports_stay_in_the_store(tools: Tools) -> None:
    done = tools.export_run("failing-a", "html")
    path = Path(done.path)
    assert path == (tools.store.root / "exports" / "failing-a.html").resolve()
    assert path.stat().st_mode & 0o777 == 0o600
    with pytest.raises(BadInput, match="exists"):
        tools.export_run("failing-a", "html")
    assert tools.export_run("failing-a", "html", overwrite=True).path == done.path
    for name in ("../escape.py", "sub/x.py", ".hidden", "/tmp/x.py"):
        with pytest.raises(BadInput, match="plain file name"):
            tools.export_run("failing-a", "python", filename=name)
    with pytest.raises(BadInput, match="unknown export format"):
        tools.export_run("failing-a", "openai-jsonl")
    assert sorted(p.name for p in (tools.store.root / "exports").iterdir()) == ["failing-a.html"]


def test_exports_refuse_a_folder_that_leads_outside(tools: Tools, tmp_path: Path) -> None:
    target = tmp_path / "outside"
    target.mkdir()
    os.symlink(target, tools.store.root / "exports")
    with pytest.raises(BadInput, match="outside the store"):
        tools.export_run("failing-a", "python")
    assert list(target.iterdir()) == []


def test_failing_step_of_a_run_without_one(tools: Tools) -> None:
    result = tools.failing_step("long-c")
    assert result.failing_step is None and "no step failed" in result.why and result.detail is None


def test_branch_takes_exactly_one_edit(tools: Tools) -> None:
    with pytest.raises(BadInput, match="exactly one edit"):
        tools.branch_run("failing-a", 4)
    with pytest.raises(BadInput, match="exactly one edit"):
        tools.branch_run("failing-a", 4, result="x", response="y")
    made = tools.branch_run("failing-a", 4, args={"path": "out2.txt", "content": "ok"})
    assert made.edit["target"] == "args" and made.live_from == 4


def test_scrubber_replaces_secret_values_only() -> None:
    env = {"OPENAI_API_KEY": "sk-abcdefghijkl", "MY_PASSWORD": "hunter2hunter2", "HOME": "/home/alice-long-path",
           "SHORT_TOKEN": "abc", "CUSTOM": "custom-secret-value"}
    scrub = Scrubber(extra_names=("CUSTOM",), environ=env)
    doc = {"a": "key sk-abcdefghijkl and hunter2hunter2", "b": ["/home/alice-long-path", "abc"],
           "custom-secret-value": 1}
    out = scrub(doc)
    assert out["a"] == f"key {REPLACEMENT} and {REPLACEMENT}"
    assert out["b"] == ["/home/alice-long-path", "abc"]
    assert list(out)[2] == REPLACEMENT


def test_a_lineage_naming_a_path_does_not_lead_outside_the_store(tools: Tools, tmp_path: Path) -> None:
    """A trace is untrusted text: its lineage may name a file elsewhere; the tools never read it."""
    import json

    from replaykit.core.trace.store import RunStore as PlainStore

    elsewhere = PlainStore(tmp_path / "elsewhere")
    record_sample_run(elsewhere, "secret-run", weather="TOP SECRET WEATHER")
    branch = tools.branch_run("failing-a", 4, result="ok")
    path = tools.store.path_for(branch.run_id)
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    header["lineage"]["parent_run_id"] = str(elsewhere.path_for("secret-run"))
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    cost = tools.run_cost(branch.run_id)
    assert "invalid run id" in cost.ledger["parent_note"] or "could not be read" in cost.ledger["parent_note"]
    diff = tools.diff_runs("failing-a", branch.run_id)
    assert "TOP SECRET" not in json.dumps(cost.model_dump()) + json.dumps(diff.model_dump())


def test_a_live_play_goes_to_the_api_the_server_was_started_with(tmp_path: Path) -> None:
    """``mcp --allow-live --api anthropic-messages``: the client plays live on that API (the endpoint,
    model and API fixed by the operator, never chosen by the client)."""
    pytest.importorskip("anthropic")
    from replaykit.core.trace.run import Run
    from replaykit.core.trace.store import RunStore
    from replaykit.mcp.tools import LiveEndpoint, Tools
    from replaykit.testing.scripted_server import ScriptedServer, hermes_default_policy

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "hermes" / "tools_sequence.jsonl"
    store = RunStore(tmp_path / "store")
    source = Run.load(fixture)
    store.write_run(source.header, list(source.events))
    with ScriptedServer(hermes_default_policy(), strict=True) as srv:
        tools = Tools(store, LiveEndpoint(base_url=srv.base_url, model="candidate", api_key_env=None,
                                          api="anthropic-messages"))
        played = tools.play_run(source.run_id, live=True)
        assert {r.path for r in srv.llm_requests} == {"/v1/messages"} and srv.violations == []
    run = store.load(played.run_id)
    assert {e.request.api for e in run.llm_calls() if e.provenance == "live"} == {"anthropic-messages"}
