"""``Recorder.emit_dict``: the hot path writes the same line as ``emit`` would, shares numbering with the
slow path, and falls back to (or fails like) pydantic for what its serializer cannot write."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from replaykit.core.trace.ir import EVENT_ADAPTER, Message, TextPart, ToolCallEvent
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.testing.sample_runs import sample_header

TOOL_BODY = {"t": 0.5, "duration": 1.5e-05, "provenance": "recorded", "corr": {"session_id": "s", "tool_call_id": "c"},
             "kind": "tool_call", "call_id": "c", "name": "echo", "arguments": {"text": "héllo ✓", "n": [1, 2.5, None]},
             "result": "ok", "status": "ok"}


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()[1:]


def test_line_equals_what_emit_writes_and_numbering_is_shared(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    header = sample_header("hot")
    with store.create(header) as writer:
        rec = Recorder(header, writer, keep_events=False)
        rec.turn_start(Message(role="user", parts=[TextPart(text="go")]))
        event_id = rec.emit_dict(dict(TOOL_BODY))
        rec.turn_end("done")
    assert re.fullmatch(r"e1-[0-9a-f]{6}", event_id)
    lines = _lines(store.path_for("hot"))
    event = EVENT_ADAPTER.validate_json(lines[1])
    assert isinstance(event, ToolCallEvent) and event.id == event_id and event.seq == 1
    assert event.model_dump_json(exclude_none=True).encode() == lines[1]
    run = Run.load(store.path_for("hot"))
    assert [e.seq for e in run.events] == [0, 1, 2]


def test_kept_events_are_validated(tmp_path: Path) -> None:
    rec = Recorder(sample_header("mem"))  # in memory only: keep_events
    event_id = rec.emit_dict(dict(TOOL_BODY))
    assert isinstance(rec.events[0], ToolCallEvent) and rec.events[0].id == event_id
    with pytest.raises(ValidationError):
        rec.emit_dict({**TOOL_BODY, "status": "maybe"})
    assert len(rec.events) == 1
    assert rec.emit_dict(dict(TOOL_BODY)).startswith("e1-")  # a rejected event used no number


class Opaque:
    """A value neither serializer knows."""


def test_values_the_serializer_cannot_write_behave_like_the_slow_path(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    header = sample_header("odd")
    with store.create(header) as writer:
        rec = Recorder(header, writer, keep_events=False)
        # A tuple is not JSON, but pydantic writes it as an array, and so does the hot path.
        rec.emit_dict({**TOOL_BODY, "arguments": {"pair": (1, 2)}})
        body = {**TOOL_BODY, "arguments": {"obj": Opaque()}}
        with pytest.raises(Exception) as fast_error:
            rec.emit_dict(body)
        with pytest.raises(Exception) as slow_error:
            ToolCallEvent.model_validate({"seq": 0, "id": "e0-000000", **body}).model_dump_json(exclude_none=True)
        assert type(fast_error.value) is type(slow_error.value)
        # A lone surrogate (legal JSON) is written, escaped, through the slow path (core/trace/jsonsafe.py).
        rec.emit_dict({**TOOL_BODY, "result": "lone \ud800"})
    lines = _lines(store.path_for("odd"))
    assert len(lines) == 2  # nothing half-written
    assert EVENT_ADAPTER.validate_json(lines[0]).arguments == {"pair": [1, 2]}
    assert b"lone \\ud800" in lines[1] and store.load("odd").events[1].result == "lone \ud800"


def test_empty_body_is_refused() -> None:
    with pytest.raises(ValueError):
        Recorder(sample_header("x")).emit_dict({})
