"""Reading a trace file as a stream: the header, then each event, validated, migrated from older schema
versions and with the ``same`` fields filled in. Memory is bounded by the longest line.

The one typed reading path: ``Run.load``, ``validate``, redaction and the Hermes capture read through
``iter_trace``; the stdlib listing (``store_index``) shares its line splitting (``event_lines``). A torn
last line (the writer died mid-append) is reported and skipped; any other bad line is a ``TraceError``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from replaykit.core.errors import TraceError
from replaykit.core.trace.ir import EVENT_ADAPTER, HEADER_ADAPTER, Event, RunHeader
from replaykit.core.trace.jsonsafe import may_hold_surrogate_escape
from replaykit.core.trace.migrate import VERBATIM_VERSIONS
from replaykit.core.trace.store_index import ReadReport, SameFiller, event_lines, open_trace, read_raw_header


def _parse_header(raw: dict[str, Any], path: Path) -> RunHeader:
    from replaykit.core.trace.migrate import migrate_header

    try:
        return HEADER_ADAPTER.validate_python(migrate_header(raw))
    except ValidationError as exc:
        raise TraceError(f"{path}: invalid run header: {_first_error(exc)}") from exc


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(x) for x in err.get("loc", ()))
    return f"{loc}: {err.get('msg', 'invalid')}" if loc else str(err.get("msg", "invalid"))


def iter_trace(path: Path, report: ReadReport | None = None) -> Iterator[RunHeader | Event]:
    """Stream a trace file: the header, then each event. Memory is bounded by the longest line.

    A torn last line (no newline, or not JSON) is reported in ``report`` and skipped; a bad line
    anywhere else is a ``TraceError`` naming the line.
    """
    report = report if report is not None else ReadReport(path)
    handle = open_trace(path)
    try:
        header = _parse_header(read_raw_header(handle, path), path)
        yield header
        from replaykit.core.trace.migrate import migrate_event

        fill = SameFiller(raw=False)  # what ``same`` correlations and requests leave out
        for lineno, line, is_last, complete in event_lines(handle, path):
            if complete:
                event = _parse_event(line, lineno, path, header, migrate_event, is_last=is_last, report=report)
            else:
                # No newline: the writer died mid-line. Keep it only if it parses completely.
                try:
                    event = _decode_event(line, header, migrate_event)
                except (ValueError, ValidationError):
                    report.torn(lineno, line)
                    break
            fill(event)
            yield event
    finally:
        handle.close()


def parse_event_line(line: bytes | str) -> Event:
    """One current-version event line as an Event.

    Validated straight from bytes (pydantic-core parses; ~3x faster than json.loads +
    validate_python). pydantic's parser refuses the ``\\udXXX`` escapes of lone surrogates that the
    writer uses (see core/trace/jsonsafe.py): only a refused line holding one takes the json.loads path.
    """
    try:
        return EVENT_ADAPTER.validate_json(line)
    except ValidationError:
        if not may_hold_surrogate_escape(line):
            raise
    raw = json.loads(line)
    if not isinstance(raw, dict):
        raise ValueError("event is not a JSON object")
    return EVENT_ADAPTER.validate_python(raw)


def _decode_event(line: bytes, header: RunHeader, migrate_event: Any) -> Event:
    if header.schema_version in VERBATIM_VERSIONS:  # current, or older lines valid as they stand
        return parse_event_line(line)
    raw = json.loads(line)
    if not isinstance(raw, dict):
        raise ValueError("event is not a JSON object")
    return EVENT_ADAPTER.validate_python(migrate_event(raw, header.schema_version))


def _parse_event(
    line: bytes,
    lineno: int,
    path: Path,
    header: RunHeader,
    migrate_event: Any,
    *,
    is_last: bool,
    report: ReadReport,
) -> Event:
    try:
        return _decode_event(line, header, migrate_event)
    except ValidationError as exc:
        raise TraceError(f"{path}: line {lineno}: invalid event: {_first_error(exc)}") from exc
    except ValueError as exc:
        # A complete line (it ends in a newline) cannot be a torn single-write append: corruption.
        where = "last line" if is_last else f"line {lineno}"
        raise TraceError(f"{path}: {where} (line {lineno}) is not valid JSON ({exc})") from exc
