"""Redact-before-disk for recorders: wrap a RunWriter so every event is redacted as it is written.

    from replaykit.core.redaction import RedactingWriter
    writer = RedactingWriter.create(store, header, mode="patterns")   # header redacted, then written
    recorder = Recorder(header, writer)          # events on disk are redacted; nothing raw is written

Or wrap an existing writer (its header line is already on disk): ``RedactingWriter(writer)``.
One wrapper per run: it owns the run's placeholder numbering. Pattern mode is the right choice inside a live agent (about a millisecond
per new message, cached repeats cost a hash); NER mode adds spaCy latency to every new message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from replaykit.core.trace import jsonsafe
from replaykit.core.trace.ir import Event, RunHeader
from replaykit.core.trace.store import RunStore, RunWriter

from ._engine import Mode
from ._ir import redact_event
from ._redactor import Redactor


class RedactingWriter:
    """A RunWriter look-alike (append / append_raw / sync / close / context manager)."""

    def __init__(
        self,
        writer: RunWriter,
        mode: Mode = "patterns",
        allow_list: Sequence[str] = (),
        redactor: Redactor | None = None,
    ) -> None:
        self.writer = writer
        self.redactor = redactor or Redactor(mode=mode, allow_list=allow_list)

    @classmethod
    def create(
        cls, store: RunStore, header: RunHeader, mode: Mode = "patterns", allow_list: Sequence[str] = ()
    ) -> RedactingWriter:
        """Create the run file in ``store`` with a redacted header (same run id, tag ``redacted``)."""
        redactor = Redactor(mode=mode, allow_list=allow_list)
        data = jsonsafe.model_data(header)
        for key in ("title", "base_url"):
            if isinstance(data.get(key), str):
                data[key] = redactor.redact_value(data[key])
        data["metadata"] = redactor.redact_value(data.get("metadata") or {})
        data["tags"] = [*data.get("tags", []), "redacted"]
        return cls(store.create(RunHeader.model_validate(data)), redactor=redactor)

    def append(self, event: Event) -> None:
        self.writer.append(redact_event(event, self.redactor))

    def append_raw(self, line: str | bytes) -> None:
        # A raw line cannot be redacted structurally; parse it as an event and redact that.
        from replaykit.core.trace.reader import parse_event_line

        self.append(parse_event_line(line))

    def sync(self) -> None:
        self.writer.sync()

    def close(self) -> None:
        self.writer.close()

    @property
    def closed(self) -> bool:
        return bool(self.writer.closed)

    def __enter__(self) -> RedactingWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.writer, name)


REDACT_ENV = "REPLAYKIT_REDACT"


def maybe_redacting(writer: RunWriter, env: dict[str, str] | None = None) -> RunWriter | RedactingWriter:
    """``writer`` wrapped in a RedactingWriter when ``$REPLAYKIT_REDACT`` is ``patterns`` or ``ner``.

    The Hermes capture calls this on every RunWriter it opens (one line), so a user turns on
    redact-before-disk with an environment variable; unset, empty or ``off`` leaves the writer as is.
    """
    import os

    from ._errors import RedactionError

    value = (os.environ if env is None else env).get(REDACT_ENV, "").strip().lower()
    if value in ("", "off", "0", "no", "false"):
        return writer
    if value not in ("patterns", "ner"):
        raise RedactionError(f"${REDACT_ENV} must be patterns, ner or off, not {value!r}")
    return RedactingWriter(writer, mode=value)  # type: ignore[arg-type]
