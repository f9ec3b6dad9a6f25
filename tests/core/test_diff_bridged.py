"""``diff`` compares a bridged call (Hermes 0.22 Tool Search ``tool_call``) as its underlying call: a 0.22
recording and a run that called the same tools directly (a play of its port) are equal; a different
underlying argument is still a difference, named on the underlying call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from replaykit.cli.main import main
from replaykit.core.analysis.diff import diff_runs
from replaykit.core.trace.bridge_view import recorded_underlying, underlying_message, underlying_messages
from replaykit.core.trace.ir import LLMCallEvent
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunWriter

NEXT = Path(__file__).resolve().parents[1] / "fixtures" / "hermes" / "0.22"


def direct_copy(run: Run, path: Path, change: dict[str, Any] | None = None) -> Run:
    """``run`` as an agent calling the underlying tools directly would record it (a port's play):
    every bridged call and its result rewritten to the underlying tool; ``change`` overrides the
    arguments of the first direct call."""
    header = run.header.model_copy(update={"run_id": run.run_id + "-direct"})
    writer = RunWriter(path, header)
    recorder = Recorder(header, writer)
    recorded = recorded_underlying(run)
    changed = False
    for step in run.steps:
        event = step.event
        if isinstance(event, LLMCallEvent):
            message = underlying_message(event.response.message, recorded)
            if change and not changed and message.tool_calls:
                part = message.tool_calls[0]
                message = message.model_copy(update={"parts": [
                    p.model_copy(update={"arguments": change}) if p is part else p for p in message.parts]})
            recorder.llm_call(underlying_messages(run.request_messages(event), recorded),
                              event.response.model_copy(update={"message": message}),
                              api=event.request.api, model=event.request.model, params=event.request.params)
        else:
            underlying = recorded.get(event.call_id)
            assert underlying is not None or event.name != "tool_call"
            name, arguments = (underlying.name, underlying.arguments) if underlying else (event.name, event.arguments)
            if change and not changed:
                arguments, changed = change, True
            recorder.tool_call(event.call_id, name, arguments, result=event.result, status=event.status,
                               error=event.error)
    writer.close()
    return Run.load(path)


@pytest.mark.parametrize("name", ["tools_sequence", "two_turns", "anthropic_messages", "codex_responses",
                                  "tool_search", "tool_batch"])
def test_bridged_recording_equals_its_direct_play(tmp_path: Path, name: str) -> None:
    recording = Run.load(NEXT / f"{name}.jsonl")
    direct = direct_copy(recording, tmp_path / "direct.jsonl")
    assert {c.name for c in direct.tool_calls()} & {"harness_echo"}  # the copy called the tool directly
    result = diff_runs(recording, direct)
    assert result.differences == []
    assert [n["kind"] for n in result.notes] == ["bridged_calls"] and result.notes[0]["run"] == "a"
    assert diff_runs(recording, recording).notes == []  # both bridged alike: nothing to say


def test_a_different_underlying_argument_is_a_difference(tmp_path: Path) -> None:
    recording = Run.load(NEXT / "tools_sequence.jsonl")
    direct = direct_copy(recording, tmp_path / "direct.jsonl", change={"text": "goodbye"})
    result = diff_runs(recording, direct)
    first = result.first
    assert first is not None and first.field == "response.tool_calls" and first.cause == "model_drift"
    assert first.a == [["harness_echo", {"text": "hello replaykit"}]]
    assert first.b == [["harness_echo", {"text": "goodbye"}]]
    assert any(d.field == "arguments" and d.a == {"text": "hello replaykit"} for d in result.differences)


def test_cli_diff_exit_0_and_says_calls_were_bridged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    direct = direct_copy(Run.load(NEXT / "tools_sequence.jsonl"), tmp_path / "direct.jsonl")
    code = main(["diff", str(NEXT / "tools_sequence.jsonl"), str(tmp_path / "direct.jsonl")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "bridged_calls in run A" in out and "0 difference(s)" in out
    assert direct.run_id.endswith("-direct")
