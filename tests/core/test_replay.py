"""Deterministic replay: the document, ranges, and the 0-calls / 0-bytes invariant."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from replaykit.core.errors import BadInput
from replaykit.core.replay.replay import replay_path, replay_run, run_as_json
from replaykit.core.replay.replay_doc import build_replay_document
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.testing.engine_runs import record_sample_run


@pytest.fixture()
def sample(tmp_path: Path) -> tuple[RunStore, str]:
    store = RunStore(tmp_path / "store")
    return store, record_sample_run(store, "sample-1")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_full_replay_serves_every_step_and_changes_nothing(sample: tuple[RunStore, str]) -> None:
    store, run_id = sample
    path = store.path_for(run_id)
    before = _sha(path)
    doc = replay_path(path)
    assert _sha(path) == before
    run = Run.load(path)
    assert doc["counters"] == {"provider_calls": 0, "tool_executions": 0, "served_llm_steps": 5,
                               "served_tool_steps": 4, "trace_bytes_changed": 0}
    assert [s["step"] for s in doc["steps"]] == list(range(len(run.steps)))
    assert all(s["provenance"] == "served" for s in doc["steps"])
    assert [s["kind"] for s in doc["steps"]] == [s.kind for s in run.steps]
    assert [s["tool_call_id"] for s in doc["steps"] if s["kind"] == "tool"] == ["call_a", "call_b", "call_c",
                                                                                "call_d"]
    assert doc["final_answer"] == run.final_answer == "out.txt is empty."
    # The replayed conversation is the run's own conversation, message for message.
    assert doc["messages"] == [m.model_dump(mode="json", exclude_none=True) for m in run.conversation()]
    assert doc["message_count"] == len(doc["messages"])
    assert doc["usage"]["input_tokens"] == 100 + 160 + 200 + 240 + 260
    assert doc["cost"] is None
    assert doc["range"] == {"from": 0, "to": 8}
    assert doc["original_duration"] == pytest.approx(run.duration)
    json.dumps(doc)  # plain JSON


def test_range_keeps_context_before_from(sample: tuple[RunStore, str]) -> None:
    store, run_id = sample
    run = store.load(run_id)
    doc = replay_run(run, start=3, stop=5)
    assert [s["step"] for s in doc["steps"]] == [3, 4, 5]
    assert doc["counters"]["served_llm_steps"] == 2 and doc["counters"]["served_tool_steps"] == 1
    # Context: the request of step 5 (system, user, 0's calls, two results, 3's call, 4's error) + answer.
    expected = [*run.request_messages(run.steps[5].event), run.steps[5].event.response.message]
    assert doc["messages"] == [m.model_dump(mode="json", exclude_none=True) for m in expected]
    assert doc["final_answer"] == "I could not write out.txt: it is read-only."
    mid = replay_run(run, start=0, stop=0)
    assert mid["final_answer"] is None  # step 0 asked for tools
    assert mid["message_count"] == 3


def test_tool_step_end_includes_tool_results(sample: tuple[RunStore, str]) -> None:
    store, run_id = sample
    doc = replay_run(store.load(run_id), stop=2)
    roles = [m["role"] for m in doc["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "tool"]
    assert doc["messages"][-1]["parts"][0]["content"] == "Sunny, 21C"


@pytest.mark.parametrize(("start", "stop"), [(9, None), (-1, None), (None, 9), (5, 3)])
def test_bad_range_is_one_line_error(sample: tuple[RunStore, str], start: int | None, stop: int | None) -> None:
    store, run_id = sample
    with pytest.raises(BadInput) as info:
        replay_run(store.load(run_id), start=start, stop=stop)
    assert "\n" not in str(info.value)


def test_document_is_pure_apart_from_wall_clock(sample: tuple[RunStore, str]) -> None:
    store, run_id = sample
    header, events = run_as_json(store.load(run_id))
    ticks = iter(range(1000))
    a = build_replay_document(header, events, clock=lambda: float(next(ticks)))
    b = build_replay_document(json.loads(json.dumps(header)), json.loads(json.dumps(events)),
                              clock=lambda: 0.0)
    for doc in (a, b):
        doc.pop("replay_duration")
        for entry in doc["steps"] + doc["timing"]:
            entry.pop("t_replay")
    assert a == b
    # The same document from the raw trace lines (what a standalone script embeds).
    lines = store.path_for(run_id).read_text().splitlines()
    c = build_replay_document(json.loads(lines[0]), [json.loads(x) for x in lines[1:]])
    c.pop("replay_duration")
    for entry in c["steps"] + c["timing"]:
        entry.pop("t_replay")
    assert c == a


def test_replay_doc_module_is_stdlib_only() -> None:
    """replay_doc is embedded in the standalone script: it and the replaykit modules it imports (embedded
    before it: serve, canonical) import nothing but the standard library."""
    import ast
    import importlib
    import sys

    embeddable = {"replaykit.core.replay.replay_doc", "replaykit.core.replay.serve", "replaykit.core.trace.canonical"}
    for name in sorted(embeddable):
        tree = ast.parse(Path(importlib.import_module(name).__file__).read_text())
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
        outside = {m for m in imported if m not in embeddable and m.split(".")[0] not in sys.stdlib_module_names
                   and m != "__future__"}
        assert not outside, f"{name} imports {sorted(outside)}"


def test_cost_summed_when_recorded(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    run = store.load(record_sample_run(store, "c1"))
    header, events = run_as_json(run)
    for event in events:
        if event["kind"] == "llm_call":
            event["response"]["usage"]["details"] = {"cost_usd": 0.25}
    assert build_replay_document(header, events)["cost"] == pytest.approx(1.25)


HERMES_FIXTURES = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "hermes").glob("*.jsonl"))


@pytest.mark.skipif(not HERMES_FIXTURES, reason="no recorded Hermes fixtures")
@pytest.mark.parametrize("path", HERMES_FIXTURES, ids=lambda p: p.name)
def test_replay_real_hermes_recordings(path: Path) -> None:
    before = _sha(path)
    doc = replay_path(path)
    run = Run.load(path)
    assert _sha(path) == before and doc["counters"]["trace_bytes_changed"] == 0
    assert doc["counters"]["provider_calls"] == 0 and doc["counters"]["tool_executions"] == 0
    assert doc["counters"]["served_llm_steps"] + doc["counters"]["served_tool_steps"] == len(run.steps)
    assert doc["final_answer"] == run.final_answer
    assert doc["messages"] == [m.model_dump(mode="json", exclude_none=True) for m in run.conversation()]
    assert doc["source_framework"] == "hermes"
