"""diff: alignment, first divergence and its cause, later differences, volatile fields ignored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from replaykit.core.analysis.diff import diff_runs
from replaykit.core.replay.branch import branch
from replaykit.core.replay.cursor import ReplayCursor
from replaykit.core.trace.ir import RunHeader
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.testing.engine_runs import record_sample_run

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def store(tmp_path: Path) -> RunStore:
    store = RunStore(tmp_path)
    record_sample_run(store, "a")
    return store


def test_same_agent_recorded_twice_is_equal(store: RunStore) -> None:
    record_sample_run(store, "a2")  # other ids, timestamps, event ids
    result = diff_runs(store.load("a"), store.load("a2"))
    assert result.equal and result.first is None and len(result.rows) == 9
    assert all(row["a"]["provenance"] == "recorded" for row in result.rows)


def test_edit_is_the_first_divergence(store: RunStore) -> None:
    child = branch(store, store.load("a"), 4, result="written")
    result = diff_runs(store.load("a"), child)
    first = result.first
    assert first is not None and (first.step, first.field, first.cause) == (4, "result", "edit")
    assert first.b == "written" and "read-only" in first.a
    missing = [d for d in result.differences if d.field == "step"]
    assert [d.step for d in missing] == [5, 6, 7, 8] and all(d.follows == 4 for d in missing)
    assert result.rows[4]["b"]["provenance"] == "edited" and result.rows[3]["b"]["provenance"] == "served"


def test_tool_result_then_consequences(store: RunStore) -> None:
    record_sample_run(store, "b", weather="Rainy, 9C")
    result = diff_runs(store.load("a"), store.load("b"))
    first = result.first
    assert (first.step, first.field, first.cause) == (2, "result", "tool_result")
    later = [d for d in result.differences if d.step > 2]
    assert later and all(d.cause == "tool_result" and d.follows == 2 for d in later)
    assert {d.field for d in later} == {"request.messages"}


def test_model_drift(store: RunStore) -> None:
    record_sample_run(store, "c", last_answer="It is empty, sorry.")
    result = diff_runs(store.load("a"), store.load("c"))
    assert [(d.step, d.field, d.cause) for d in result.differences] == [(8, "response.text", "model_drift")]


def _serve_all(run: Run, recorder: Recorder, *, tamper_at: int | None = None) -> ReplayCursor:
    cursor = ReplayCursor(run, recorder=recorder)
    for step in run.steps:
        event = step.event
        if step.kind == "llm":
            messages = run.request_messages(event)
            if step.index == tamper_at:
                messages = messages[:-1]
            decision = cursor.llm(messages)
            if decision.action == "live":
                recorder.llm_call(messages, event.response.model_copy(update={"finish_reason": "length"}))
                return cursor
        else:
            cursor.tool(event.call_id, event.name, event.arguments)
    return cursor


def test_desync_and_synthetic_causes(store: RunStore, tmp_path: Path) -> None:
    run = store.load("a")
    header = RunHeader(run_id="d", created_at="2026-11-30T00:00:00Z")
    recorder = Recorder(header, store.create(header))
    _serve_all(run, recorder, tamper_at=3)
    recorder.close()
    result = diff_runs(run, store.load("d"))
    assert result.first.cause == "desync" and result.first.step == 3
    assert any(n["kind"] == "desync" and n["run"] == "b" for n in result.notes)

    header = RunHeader(run_id="s", created_at="2026-11-30T00:00:00Z")
    recorder = Recorder(header, store.create(header))
    cursor = _serve_all(run, recorder)
    assert cursor.llm(run.conversation()).action == "synthetic"
    recorder.close()
    result = diff_runs(run, store.load("s"))
    assert [(d.step, d.field, d.cause) for d in result.differences] == [(9, "step", "synthetic_end")]


def test_cli_exit_codes_and_html(store: RunStore, tmp_path: Path) -> None:
    record_sample_run(store, "a2")
    record_sample_run(store, "c", last_answer="Different.")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "replaykit", "diff", *args, "--store", str(store.root)],
                              capture_output=True, text=True, env=env, timeout=60)

    assert cli("a", "a2").returncode == 0
    differ = cli("a", "c", "--json")
    assert differ.returncode == 1
    doc = json.loads(differ.stdout)
    assert doc["first_divergence"]["step"] == 8 and doc["first_divergence"]["cause"] == "model_drift"
    assert doc["steps"][0]["a"]["provenance"] == "recorded"
    human = cli("a", "c")
    assert human.returncode == 1 and "first divergence at step 8" in human.stdout
    page = tmp_path / "diff.html"
    assert cli("a", "c", "--html", str(page)).returncode == 1
    assert page.is_file() and "<script" not in page.read_text()
    bad = cli("a", "nope")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_parallel_tools_in_another_order_are_equal(store: RunStore) -> None:
    from replaykit.core.trace.store import write_run_file

    run = store.load("a")
    events = list(run.events)
    i = next(n for n, e in enumerate(events) if e.kind == "tool_call" and e.call_id == "call_a")
    events[i], events[i + 1] = events[i + 1], events[i]  # call_b finished first this time
    swapped = Run.load(write_run_file(store.path_for("swapped"), run.header.model_copy(update={"run_id": "swapped"}),
                                      events))
    assert [s.event.call_id for s in swapped.steps[1:3]] == ["call_b", "call_a"]
    assert diff_runs(run, swapped).equal
    other = [e.model_copy(update={"result": "Cloudy"}) if e.kind == "tool_call" and e.call_id == "call_b" else e
             for e in events]
    changed = Run.load(write_run_file(store.path_for("changed"), run.header.model_copy(update={"run_id": "changed"}),
                                      other))
    first = diff_runs(run, changed).first
    assert (first.step, first.field, first.cause) == (2, "result", "tool_result")


def test_unavailable_tool_stand_in_has_its_own_cause(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from replaykit.core.trace.ir import Provenance, RunHeader
    from replaykit.core.trace.recorder import Recorder
    from replaykit.core.trace.run import Run as _Run

    def make(provenance: Provenance, result: str) -> _Run:
        rec = Recorder(RunHeader(run_id=f"u{provenance}", created_at="2026-11-30T00:00:00Z"))
        rec.tool_call("c1", "todo", {"x": 1}, result=result, provenance=provenance)
        return _Run(rec.header, rec.events)

    original = make(Provenance.RECORDED, "done")
    played = make(Provenance.SYNTHETIC, "[replaykit] tool `todo` is not available in replay")
    result = diff_runs(original, played)
    assert result.first is not None and result.first.cause == "unavailable_tool"
