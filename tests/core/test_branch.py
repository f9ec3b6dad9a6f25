"""Branching: prefix served, one edited step, lineage, the parent file untouched."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from replaykit.core.errors import BadInput
from replaykit.core.replay.branch import branch, parse_response
from replaykit.core.replay.cursor import ReplayCursor, play_cut
from replaykit.core.trace.ir import Provenance
from replaykit.core.trace.store import RunStore
from replaykit.testing.engine_runs import record_sample_run


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture()
def store(tmp_path: Path) -> RunStore:
    store = RunStore(tmp_path)
    record_sample_run(store, "parent")
    return store


@pytest.mark.parametrize(
    ("at", "kind", "live_from"),
    [(4, {"result": "written"}, 5), (4, {"args": '{"path": "tmp/out.txt", "content": "x"}'}, 4),
     (5, {"response": "A different answer."}, 6), (0, {"response": '[{"name": "web_search", "arguments": {"query": "x"}}]'}, 1)],
)
def test_branch_each_kind(store: RunStore, at: int, kind: dict[str, str], live_from: int) -> None:
    parent_path = store.path_for("parent")
    before = _sha(parent_path)
    parent = store.load("parent")
    child = branch(store, parent, at, **kind)
    assert _sha(parent_path) == before
    lineage = child.header.lineage
    assert lineage is not None and lineage.relation == "branch" and lineage.parent_run_id == "parent"
    assert lineage.parent_step == at and lineage.edit is not None and lineage.edit.step == at
    assert lineage.details == {"live_from": live_from}
    assert play_cut(child) == live_from
    assert len(child.steps) == at + 1
    edited = child.steps[at].event
    assert edited.provenance == Provenance.EDITED
    assert all(s.event.provenance == Provenance.SERVED for s in child.steps[:at])
    # The prefix is the parent's, content for content.
    for mine, theirs in zip(child.steps[:at], parent.steps[:at], strict=True):
        assert mine.event.model_dump(exclude={"provenance"}) == theirs.event.model_dump(exclude={"provenance"})
    if "result" in kind:
        assert edited.result == "written" and edited.status == "ok"
    if "args" in kind:
        assert edited.arguments == {"path": "tmp/out.txt", "content": "x"} and edited.result is None
    if "response" in kind and at == 5:
        assert edited.response.message.text == "A different answer."
        # The edited LLM step keeps the parent's request (same messages).
        assert child.request_messages(edited) == parent.request_messages(parent.steps[5].event)
    if at == 0:
        calls = edited.response.message.tool_calls
        assert [(c.name, c.arguments) for c in calls] == [("web_search", {"query": "x"})]
        assert edited.response.finish_reason == "tool_calls"


def test_branch_from_branch(store: RunStore) -> None:
    first = branch(store, store.load("parent"), 4, result="written")
    first_sha = _sha(store.path_for(first.run_id))
    second = branch(store, first, 2, result="cloudy")
    assert _sha(store.path_for(first.run_id)) == first_sha
    assert second.header.lineage.parent_run_id == first.run_id
    assert len(second.steps) == 3 and second.steps[2].event.result == "cloudy"


def test_served_edit_rewrites_call_arguments(store: RunStore) -> None:
    child = branch(store, store.load("parent"), 4, args='{"path": "tmp/out.txt", "content": "x"}')
    cursor = ReplayCursor(child, cut=play_cut(child))
    for step in child.steps[:3]:
        event = step.event
        if step.kind == "llm":
            cursor.llm(child.request_messages(event))
        else:
            cursor.tool(event.call_id, event.name, event.arguments)
    served = cursor.llm(child.request_messages(child.steps[3].event))
    assert served.action == "serve"
    assert served.response.message.tool_calls[0].arguments == {"path": "tmp/out.txt", "content": "x"}
    # The edited call is at the cut: it runs live.
    assert cursor.tool("call_c", "write_file", {"path": "tmp/out.txt", "content": "x"}).action == "live"


@pytest.mark.parametrize(
    ("at", "kind", "message"),
    [(0, {"result": "x"}, "LLM step"), (1, {"response": "x"}, "tool step"), (1, {"args": "{nope"}, "not valid JSON"),
     (99, {"result": "x"}, "out of range"), (1, {}, "exactly one edit"), (0, {"response": "  "}, "empty"),
     (0, {"response": '[{"arguments": {}}]'}, "no name")],
)
def test_bad_edits(store: RunStore, at: int, kind: dict[str, str], message: str) -> None:
    with pytest.raises(BadInput, match=message):
        branch(store, store.load("parent"), at, **kind)


def test_parse_response_forms() -> None:
    assert parse_response("plain").text == "plain"
    assert parse_response('{"content": "hi", "tool_calls": [{"function": {"name": "f", "arguments": "{\\"a\\": 1}"}}]}'
                          ).tool_calls[0].arguments == {"a": 1}
    assert parse_response('"json string"').text == '"json string"'
    assert json.loads(parse_response('[{"name": "f", "arguments": {"b": 2}, "id": "c1"}]').tool_calls[0].raw_arguments) == {"b": 2}
