"""Redact-before-disk: a real Recorder writing through RedactingWriter never puts raw PII on disk."""

from __future__ import annotations

from replaykit.core.redaction import RedactingWriter, make_event_redactor
from replaykit.core.trace.ir import Message, RunHeader, TextPart
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.store import RunStore, utc_now_iso
from replaykit.testing.sample_pii_run import build_support_run


def test_recorder_through_redacting_writer(tmp_path) -> None:
    store = RunStore(tmp_path / "s")
    header = RunHeader(run_id="live-1", created_at=utc_now_iso(), title="call with ann@example.com")
    writer = RedactingWriter.create(store, header, mode="patterns")
    rec = Recorder(header, writer)  # type: ignore[arg-type]
    rec.turn_start(Message(role="user", parts=[TextPart(text="my key is sk-proj-Abc123Def456Ghi789Jkl012Mno")]))
    rec.turn_end("mail ann@example.com")
    rec.close()
    raw = store.path_for("live-1").read_text()
    assert "ann@example.com" not in raw and "sk-proj-Abc123" not in raw
    assert "<EMAIL_ADDRESS_1>" in raw and raw.count("<EMAIL_ADDRESS_1>") == 2  # header and event agree
    assert rec.events[0].message.text.startswith("my key is sk-proj")  # in-memory events untouched
    assert store.load("live-1").header.tags == ["redacted"]


def test_event_redactor_matches_whole_run_pass() -> None:
    from replaykit.core.redaction import redact_run

    run = build_support_run()
    hook = make_event_redactor("patterns")
    streamed = [hook(e) for e in run.events]
    whole = redact_run(run, "patterns").events
    for a, b in zip(streamed, whole, strict=True):
        # same content; the whole-run pass also recomputes fingerprints
        assert a.model_dump(exclude={"request": {"fingerprint"}}) == b.model_dump(exclude={"request": {"fingerprint"}})


def test_maybe_redacting_follows_the_environment(tmp_path) -> None:
    import pytest

    from replaykit.core.errors import BadInput
    from replaykit.core.redaction import maybe_redacting
    from replaykit.core.trace.store import RunWriter

    header = RunHeader(run_id="env-1", created_at=utc_now_iso())
    plain = RunWriter(tmp_path / "a.jsonl", header)
    assert maybe_redacting(plain, {}) is plain
    assert maybe_redacting(plain, {"REPLAYKIT_REDACT": "off"}) is plain
    wrapped = maybe_redacting(plain, {"REPLAYKIT_REDACT": "patterns"})
    assert isinstance(wrapped, RedactingWriter) and wrapped.writer is plain
    with pytest.raises(BadInput, match="REPLAYKIT_REDACT"):
        maybe_redacting(plain, {"REPLAYKIT_REDACT": "everything"})
    plain.close()
