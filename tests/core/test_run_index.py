"""The run index (core/analysis/run_index.py): built in the streaming inspect pass, it reads any page of the
timeline, any step and any request's messages by seeking, and gives exactly what a whole read gives."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from replaykit.core.analysis.inspect_view import inspect_trace
from replaykit.core.analysis.run_index import CHECKPOINT_EVERY, RunIndex
from replaykit.core.errors import BadInput
from replaykit.core.trace import jsonsafe
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.testing.long_runs import write_tool_loop_run

TOOL_STEPS = 120


@pytest.fixture(scope="module")
def run_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = RunStore(tmp_path_factory.mktemp("index") / "store")
    return write_tool_loop_run(store, "loop", TOOL_STEPS, per_turn=7, failing_step=TOOL_STEPS - 5)


@pytest.fixture(scope="module")
def compacted(run_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from replaykit.core.trace.compact import compact_run

    copy = tmp_path_factory.mktemp("packed") / "loop.jsonl"
    shutil.copyfile(run_file, copy)
    compact_run(copy)
    return copy


@pytest.mark.parametrize("which", ["plain", "compacted"])
def test_pages_steps_and_requests_equal_a_whole_read(run_file: Path, compacted: Path, which: str) -> None:
    path = run_file if which == "plain" else compacted
    index = RunIndex.build(path, window=(0, 10))
    whole = inspect_trace(run_file)
    run = Run.load(run_file)
    assert index.view.summary == whole.summary and index.view.rows == whole.rows[:10]
    assert index.steps == len(run.steps) and index.rows == len(whole.rows)
    assert index.llm_calls == sum(1 for s in run.steps if s.kind == "llm")
    # a checkpoint every CHECKPOINT_EVERY events: any one line is read from at most that many lines back
    assert index.checkpoints == -(-whole.summary["events"] // CHECKPOINT_EVERY)
    for start in (0, 1, 63, 64, 65, 100, len(whole.rows) - 3):
        assert index.rows_page(start, start + 50) == whole.rows[start:start + 50], start
    assert index.rows_page(len(whole.rows), len(whole.rows) + 5) == []
    failing = [r for r in index.rows_page(0, len(whole.rows)) if r["failing"]]
    assert [r["step"] for r in failing] == [run.failing_step]
    for n in (0, 1, 64, len(run.steps) - 2, len(run.steps) - 1):
        event = run.step(n).event
        raw = index.step_event(n)
        assert raw["id"] == event.id and index.step_of(event.id) == n
        assert raw.get("corr") == jsonsafe.model_data(event.corr, exclude_none=True) if event.corr else True
        if event.kind == "llm_call":
            assert raw["request"].get("tools_ref") == event.request.tools_ref  # ``same`` fields filled in
            messages = [jsonsafe.model_data(m, exclude_none=True) for m in run.request_messages(event)]
            assert index.whole_messages(raw) == messages
            appended = [jsonsafe.model_data(m, exclude_none=True) for m in run.appended_messages(event)]
            assert index.appended_messages(raw) == appended
            info = index.request_info(event.id)
            assert info is not None and info.message_count == len(messages)
    with pytest.raises(BadInput, match="out of range"):
        index.step_event(len(run.steps))
