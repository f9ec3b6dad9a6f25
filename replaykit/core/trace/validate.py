"""Deep validation of a trace file, streamed with bounded memory (ids and call ids only)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from replaykit.core.trace.deltas import check_ref
from replaykit.core.trace.ir import LLMCallEvent, MessageRef, RunHeader, ToolCallEvent, ToolsEvent
from replaykit.core.trace.reader import iter_trace
from replaykit.core.trace.run import request_of
from replaykit.core.trace.store_index import ReadReport


def validate_trace(path: Path) -> dict[str, Any]:
    """Schema, ordering and reference checks. Raises ``TraceError`` for unreadable files."""
    report = ReadReport(path)
    errors: list[str] = []
    ids: set[str] = set()
    requests: set[str] = set()
    tools: set[str] = set()
    llm_calls: set[str] = set()
    kinds: dict[str, str] = {}  # event id -> kind (what a request message reference may name)
    events = steps = 0
    last_seq = -1
    header: RunHeader | None = None
    for item in iter_trace(path, report):
        if isinstance(item, RunHeader):
            header = item
            continue
        events += 1
        where = f"event seq {item.seq}"
        if item.seq <= last_seq:
            errors.append(f"{where}: sequence numbers must increase (previous {last_seq})")
        last_seq = max(last_seq, item.seq)
        if item.id in ids:
            errors.append(f"{where}: duplicate event id {item.id!r}")
        ids.add(item.id)
        request = request_of(item)
        if request is not None:
            base = request.context.base
            if base is not None and base not in requests:
                errors.append(f"{where}: request delta refers to unknown earlier request {base!r}")
            if request.tools_ref is not None and request.tools_ref not in tools:
                errors.append(f"{where}: request refers to undeclared tool set {request.tools_ref!r}")
            for message in request.context.append:
                if type(message) is MessageRef:
                    kind = kinds.get(message.ref)
                    problem = check_ref(message.ref, kind, kind, None, None)
                    if problem is not None:
                        errors.append(f"{where}: request message {problem}")
            requests.add(item.id)
        kinds[item.id] = item.kind  # after the request: a reference names an earlier event
        if isinstance(item, ToolsEvent):
            tools.add(item.hash)
        if isinstance(item, LLMCallEvent):
            llm_calls.add(item.id)
            steps += 1
        if isinstance(item, ToolCallEvent):
            steps += 1
            if item.llm_call_id is not None and item.llm_call_id not in llm_calls:
                errors.append(f"{where}: tool call refers to unknown llm_call {item.llm_call_id!r}")
        if len(errors) > 50:
            errors.append("too many errors; stopped")
            break
    assert header is not None
    warnings = list(report.warnings)
    return {
        "path": str(path),
        "run_id": header.run_id,
        "schema_version": header.schema_version,
        "valid": not errors and not report.torn_tail,
        "events": events,
        "steps": steps,
        "torn_tail": report.torn_tail,
        "errors": errors,
        "warnings": warnings,
    }
