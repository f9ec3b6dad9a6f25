"""A redacted run still replays: 0 provider calls, 0 tool executions, no desync, clean diff.

Runs on the real recorded Hermes fixtures and on the PII-heavy sample run, in both modes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from replaykit.core.analysis.diff import diff_runs
from replaykit.core.redaction import redact_run, redact_trace_file
from replaykit.core.replay.cursor import ReplayCursor
from replaykit.core.replay.replay import replay_path
from replaykit.core.trace.ir import LLMCallEvent, ToolCallEvent
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.testing.sample_pii_run import build_support_run

HERMES = Path(__file__).resolve().parents[2] / "fixtures" / "hermes"
RUN_FILES = sorted(p for p in HERMES.glob("*.jsonl"))


def _drive(run: Run) -> ReplayCursor:
    """What an engine does: ask for each recorded request and tool call, in order, from the run."""
    cursor = ReplayCursor(run)
    for event in run.events:
        if isinstance(event, LLMCallEvent):
            decision = cursor.llm(run.request_messages(event), run.request_tools(event.request))
            assert decision.action == "serve", decision.reason
        elif isinstance(event, ToolCallEvent):
            assert cursor.tool(event.call_id, event.name, event.arguments).action == "serve"
    return cursor


def _sources() -> list[tuple[str, Run]]:
    return [("support", build_support_run()), *[(p.stem, Run.load(p)) for p in RUN_FILES]]


@pytest.mark.parametrize("mode", ["patterns", "ner"])
def test_redacted_runs_replay_and_diff_clean(mode: str, tmp_path: Path) -> None:
    assert RUN_FILES, "recorded Hermes fixtures are missing"
    store = RunStore(tmp_path / "s")
    for name, run in _sources():
        red_a = redact_run(run, mode)
        red_b = redact_run(run, mode)
        counters = _drive(red_a).counters
        assert counters.provider_calls == 0 and counters.tool_executions == 0 and counters.desyncs == 0, name
        assert counters.served_llm_steps == len(run.llm_calls())
        assert diff_runs(red_a, red_b).equal, name  # two redactions of one run are the same run
        src = store.write_run(run.header, run.events)
        dst = store.path_for(f"{red_a.run_id}-file")
        redact_trace_file(src, dst, mode, run_id=f"{red_a.run_id}-file")
        doc = replay_path(dst)
        assert doc["counters"]["provider_calls"] == 0 and doc["counters"]["tool_executions"] == 0
        assert doc["counters"]["trace_bytes_changed"] == 0
        assert doc["step_count"] == len(run.steps), name
