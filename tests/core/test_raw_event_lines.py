"""Hot-path event lines: ``Recorder.emit_dict`` hands the writer the serializer's bytes (no decode and
re-encode); the line on disk is byte-for-byte what pydantic writes for the same event, non-ASCII and
all, and a redacting writer still redacts a line given as bytes."""

from __future__ import annotations

from replaykit.core.redaction._hook import RedactingWriter
from replaykit.core.trace.ir import EVENT_ADAPTER, RunHeader
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.store import RunWriter


def _body(text: str) -> dict:
    return {"t": 0.5, "provenance": "recorded", "corr": {"session_id": "s"}, "kind": "turn_end",
            "final_answer": text, "status": "completed"}


def test_emit_dict_writes_the_same_bytes_as_pydantic(tmp_path):
    path = tmp_path / "run.jsonl"
    writer = RunWriter(path, RunHeader(run_id="run", created_at="2026-12-02T00:00:00Z"))
    recorder = Recorder(writer.header, writer, keep_events=False)
    texts = ["plain", "héllo ✓ 日本語", "emoji 🎉 and \"quotes\"\nnew line"]
    ids = [recorder.emit_dict(_body(text)) for text in texts]
    writer.close()
    lines = path.read_bytes().splitlines()[1:]
    assert len(lines) == len(texts)
    for line, text, event_id in zip(lines, texts, ids, strict=True):
        event = EVENT_ADAPTER.validate_json(line)
        assert event.id == event_id and event.final_answer == text  # type: ignore[union-attr]
        assert event.model_dump_json(exclude_none=True).encode() == line


def test_append_raw_takes_bytes_or_text(tmp_path):
    path = tmp_path / "run.jsonl"
    writer = RunWriter(path, RunHeader(run_id="run", created_at="2026-12-02T00:00:00Z"))
    writer.append_raw('{"a":"é"}')
    writer.append_raw('{"b":"é"}'.encode())
    writer.close()
    assert path.read_bytes().splitlines()[1:] == ['{"a":"é"}'.encode(), '{"b":"é"}'.encode()]


def test_a_redacting_writer_redacts_a_line_given_as_bytes(tmp_path):
    path = tmp_path / "run.jsonl"
    writer = RedactingWriter(RunWriter(path, RunHeader(run_id="run", created_at="2026-12-02T00:00:00Z")),
                             mode="patterns")
    recorder = Recorder(writer.writer.header, writer, keep_events=False)  # type: ignore[arg-type]
    recorder.emit_dict(_body("write to alice.smith@example.com please"))
    writer.close()
    data = path.read_bytes()
    assert b"alice.smith@example.com" not in data
    assert EVENT_ADAPTER.validate_json(data.splitlines()[1]).kind == "turn_end"
