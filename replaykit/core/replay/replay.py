"""Deterministic in-process replay: serve every step of a recorded run from the record.

Nothing is executed: no provider is called, no tool runs, and the trace file is only read. The result
is the plain-JSON *replay document* built by ``replaykit.core.replay.replay_doc`` (stdlib-only, so a
standalone script computes the identical document); this module adapts a loaded ``Run`` or a trace
file to it and measures that the trace was left untouched (``counters.trace_bytes_changed``).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from replaykit.core.errors import BadInput, TraceError
from replaykit.core.gcpause import cyclic_gc_paused
from replaykit.core.replay.replay_doc import RangeError, build_replay_document
from replaykit.core.trace import jsonsafe
from replaykit.core.trace.codecs import frames
from replaykit.core.trace.ir import (
    MESSAGES_ADAPTER,
    LLMCallEvent,
    Message,
    Provenance,
    TextPart,
    ToolCallEvent,
    ToolCallPart,
    TurnEndEvent,
)
from replaykit.core.trace.run import Run


def run_as_json(run: Run) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The run's header and events as plain JSON (exactly what a trace file line holds)."""
    header = jsonsafe.model_data(run.header, exclude_none=True)
    events = [jsonsafe.model_data(event, exclude_none=True) for event in run.events]
    return header, events


_COST_KEYS = ("cost_usd", "cost")


def _cost_holder(details: dict[str, Any] | None) -> dict[str, Any] | None:
    if not details:
        return None
    found = {k: details[k] for k in _COST_KEYS if k in details}
    return found or None


# ``Provenance`` member -> its plain string (``.value`` is a descriptor call, paid twice per step)
_PROVENANCE_TEXT = {p: p.value for p in Provenance}
_USAGE_COUNTS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
                 "total_tokens")


def _light_llm(event: LLMCallEvent) -> dict[str, Any]:
    """What the document builder reads of an LLM step, built from attributes (a full ``model_dump`` of
    every event would cost as much as the replay itself). The whole answer comes from the hook."""
    response = event.response
    parts: list[dict[str, Any]] = []
    for part in response.message.parts:
        # ``type``, not isinstance: isinstance against pydantic models goes through ABCMeta (slow per miss)
        kind = part.type
        if kind == "text":
            parts.append({"type": "text", "text": cast(TextPart, part).text})
        elif kind == "tool_call":
            part = cast(ToolCallPart, part)
            call: dict[str, Any] = {"type": "tool_call", "id": part.id, "name": part.name}
            if part.arguments is not None:
                call["arguments"] = part.arguments
            if part.raw_arguments is not None:
                call["raw_arguments"] = part.raw_arguments
            parts.append(call)
    usage = response.usage
    usage_json: dict[str, Any] | None = None
    if usage is not None:
        fields = usage.__dict__  # a pydantic model's field values: one dict, no attribute lookups
        usage_json = {k: fields[k] for k in _USAGE_COUNTS if fields[k] is not None}
        cost = _cost_holder(fields["details"]) if fields["details"] else None
        if cost:
            usage_json["details"] = cost
    return {
        "kind": "llm_call", "seq": event.seq, "id": event.id, "t": event.t, "duration": event.duration,
        "provenance": _PROVENANCE_TEXT[event.provenance],
        "request": {"model": event.request.model},
        "response": {"message": {"role": response.message.role, "parts": parts},
                     "finish_reason": response.finish_reason, "model": response.model, "usage": usage_json,
                     "provider_details": _cost_holder(response.provider_details) if response.provider_details else None},
        "provider_details": _cost_holder(event.provider_details) if event.provider_details else None,
    }


def _light_tool(event: ToolCallEvent) -> dict[str, Any]:
    light: dict[str, Any] = {
        "kind": "tool_call", "seq": event.seq, "id": event.id, "t": event.t, "duration": event.duration,
        "provenance": _PROVENANCE_TEXT[event.provenance], "call_id": event.call_id, "name": event.name,
        "arguments": event.arguments, "status": event.status,
    }
    if event.raw_arguments is not None:
        light["raw_arguments"] = event.raw_arguments
    if event.result is not None:
        light["result"] = event.result
    if event.error is not None:
        light["error"] = event.error
    return light


def _messages_json(messages: list[Message]) -> list[dict[str, Any]]:
    """Messages as their trace JSON, in one serializer call (per message costs twice as much)."""
    try:
        dumped: list[dict[str, Any]] = MESSAGES_ADAPTER.dump_python(messages, mode="json", exclude_none=True)
    except UnicodeEncodeError:  # a lone surrogate in a dict key: the per-message fallback handles it
        return [jsonsafe.model_data(m, exclude_none=True) for m in messages]
    return dumped


# Events of which the builder reads only the kind and the timing (it reads a turn or run end's answer;
# an opaque event it lists whole: ``events`` in the document).
_TIMED_ONLY = frozenset(("tools", "meta", "subagent"))


def _run_as_light_json(run: Run) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The events as the builder reads them, without dumping whole models (see ``_light_llm``)."""
    header = jsonsafe.model_data(run.header, exclude_none=True)
    events: list[dict[str, Any]] = []
    for event in run.events:
        kind = event.kind  # (a string test, not isinstance: see ``_light_llm``)
        if kind == "llm_call":
            events.append(_light_llm(cast(LLMCallEvent, event)))
        elif kind == "tool_call":
            events.append(_light_tool(cast(ToolCallEvent, event)))
        elif kind in _TIMED_ONLY:
            events.append({"kind": kind, "seq": event.seq, "id": event.id, "t": event.t, "duration": event.duration})
        elif kind in ("turn_end", "run_end"):
            end = cast(TurnEndEvent, event)
            events.append({"kind": kind, "seq": end.seq, "id": end.id, "t": end.t, "duration": end.duration,
                           "status": end.status, "final_answer": end.final_answer})
        else:
            events.append(jsonsafe.model_data(event, exclude={"request"}, exclude_none=True))
    return header, events


def replay_run(
    run: Run,
    *,
    start: int | None = None,
    stop: int | None = None,
    trace_bytes_changed: int = 0,
    clock: Callable[[], float] | None = None,
    stream_timing: str = "fast",
    sleep: Callable[[float], Any] = time.sleep,
) -> dict[str, Any]:
    """Replay a loaded run (steps ``start``..``stop`` inclusive) and return the replay document.
    ``stream_timing``: how an LLM step recorded as a stream is served (``frames.play``: ``fast``, every
    frame at once; ``recorded``, after the recorded gaps, waited with ``sleep``); a step recorded without
    frames is served whole, as before."""
    frames.check_timing(stream_timing)
    # The replay allocates many short-lived acyclic dicts; with a large Run loaded, the cyclic GC
    # would rescan it over and over (it halves throughput on a 5000-step run). Nothing here makes cycles.
    with cyclic_gc_paused():
        try:
            header, events = _run_as_light_json(run)

            def resolve(event: dict[str, Any]) -> list[dict[str, Any]]:
                return _messages_json(run.request_messages(run.by_id[event["id"]]))

            def answer(event: dict[str, Any]) -> dict[str, Any]:
                found = run.by_id[event["id"]]
                assert isinstance(found, LLMCallEvent)
                message: dict[str, Any] = jsonsafe.model_data(found.response.message, exclude_none=True)
                return message

            def serve_llm(event: dict[str, Any]) -> None:
                found = run.by_id[event["id"]]
                assert isinstance(found, LLMCallEvent)
                frames.replayed(found.response, stream_timing, sleep)

            return build_replay_document(
                header, events, start=start, stop=stop, trace_bytes_changed=trace_bytes_changed, clock=clock,
                resolve_messages=resolve, response_message=answer,
                # fast: nothing to wait for and no one reads the chunks, so nothing is rendered
                serve_llm=serve_llm if stream_timing == "recorded" else None,
            )
        except RangeError as exc:
            raise BadInput(str(exc)) from exc
        except (KeyError, TypeError, ValueError) as exc:  # a structurally broken trace that still validated
            raise TraceError(f"run {run.run_id}: cannot replay: {exc}") from exc


class FileFingerprint:
    """Size and SHA-256 of a file, read as a stream (bounded memory)."""

    def __init__(self, path: Path) -> None:
        digest = hashlib.sha256()
        size = 0
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
                size += len(block)
        self.size = size
        self.sha256 = digest.hexdigest()

    def bytes_changed(self, after: FileFingerprint) -> int:
        """0 when the file is byte-identical; otherwise at least 1 (the size delta when it grew)."""
        if after.sha256 == self.sha256 and after.size == self.size:
            return 0
        return max(1, abs(after.size - self.size))


def replay_path(
    path: str | Path,
    *,
    start: int | None = None,
    stop: int | None = None,
    clock: Callable[[], float] | None = None,
    stream_timing: str = "fast",
    sleep: Callable[[float], Any] = time.sleep,
) -> dict[str, Any]:
    """Load a trace file, replay it, and report whether the file changed (it must not)."""
    frames.check_timing(stream_timing)
    path = Path(path)
    before = FileFingerprint(path)
    run = Run.load(path)
    document = replay_run(run, start=start, stop=stop, clock=clock, stream_timing=stream_timing, sleep=sleep)
    document["counters"]["trace_bytes_changed"] = before.bytes_changed(FileFingerprint(path))
    return document
