"""The structural check of a streaming, pydantic-free reader of trace lines (plain ``inspect``, the python
export): what the validating reader (``core/trace/reader.py``) would refuse and such a pass would not
notice by itself. Standard library only, and cheap: a few set and type tests per event.

Whatever it cannot vouch for (an unknown event kind or field, a broken delta or message reference, a
``request_fix``) raises ``NeedsFullReader``; the caller then reads the run through ``Run.load``, which words
the error exactly as every other command does (or accepts what this check could not judge). Deeper
validation of every field is ``replaykit validate``'s job.
"""

from __future__ import annotations

from typing import Any


class NeedsFullReader(Exception):
    """The fast reader met something only the validating reader can judge (it words the error)."""


_COMMON = frozenset({"kind", "seq", "id", "t", "duration", "provenance", "corr", "provider_details"})
#: The fields of each event kind (``core/trace/ir.py``; tests/core/test_inspect_view.py keeps them equal).
EVENT_FIELDS: dict[str, frozenset[str]] = {kind: _COMMON | set(extra) for kind, extra in {
    "tools": ("hash", "tools"),
    "turn_start": ("message", "turn"),
    "llm_call": ("attempt", "request", "response"),
    "tool_call": ("arguments", "call_id", "error", "llm_call_id", "name", "raw_arguments", "result",
                  "result_blocks", "status", "underlying"),
    "error": ("attempt", "error_type", "message", "request", "retryable", "status_code", "where"),
    "subagent": ("child_run_id", "child_session_id", "goal", "launched_by", "phase", "role", "status", "summary"),
    "desync": ("actual", "expected", "reason", "step"),
    "synthetic": ("reason", "step"),
    "turn_end": ("final_answer", "reason", "status"),
    "meta": ("data",),
    "opaque": ("data", "name", "source"),
    "run_end": ("final_answer", "reason", "status"),
}.items()}
HEADER_FIELDS = frozenset({"api_mode", "base_url", "created_at", "kind", "lineage", "metadata", "model", "platform",
                           "provider", "run_id", "schema_name", "schema_version", "session_id", "source", "tags",
                           "title"})
PROVENANCES = frozenset({"recorded", "served", "live", "edited", "synthetic", "desync", "reconstructed"})
SOURCE_FIELDS = ("framework", "framework_version", "adapter", "replaykit_version")
#: ``Lineage`` and ``Edit`` fields in their order (the order ``model_dump`` writes them in)
LINEAGE_FIELDS = ("relation", "parent_run_id", "parent_step", "parent_event_id", "edit", "engine", "details")
EDIT_FIELDS = ("target", "step", "value", "tool_call_id")
_REQUEST_FIX = ("replaykit", "request_fix")  # core/trace/run.py REQUEST_FIX_SOURCE / REQUEST_FIX_NAME


def check_header(header: dict[str, Any]) -> None:
    """A raw run header's structure (its version was checked by ``store_index.read_raw_header``)."""
    source, lineage, tags = header.get("source", {}), header.get("lineage"), header.get("tags", [])
    if not header.keys() <= HEADER_FIELDS or not isinstance(header.get("run_id"), str) \
            or not isinstance(header.get("created_at"), str) or not isinstance(source, dict) \
            or not source.keys() <= set(SOURCE_FIELDS) or not isinstance(source.get("framework", ""), str) \
            or not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags) \
            or not isinstance(header.get("metadata", {}), dict) \
            or not all(isinstance(header.get(k), str | None) for k in ("model", "provider", "base_url", "api_mode")):
        raise NeedsFullReader("unexpected run header")
    if lineage is not None:
        edit = lineage.get("edit") if isinstance(lineage, dict) else None
        if not isinstance(lineage, dict) or not lineage.keys() <= set(LINEAGE_FIELDS) \
                or not isinstance(lineage.get("relation"), str) or not isinstance(lineage.get("parent_run_id"), str) \
                or not isinstance(edit, dict | None) or (edit is not None and not edit.keys() <= set(EDIT_FIELDS)):
            raise NeedsFullReader("unexpected lineage")


class EventCheck:
    """Checks raw events one at a time, in file order (references may only name earlier events)."""

    __slots__ = ("requests", "tool_call_ids", "tool_sets")

    def __init__(self) -> None:
        self.requests: set[str] = set()
        self.tool_sets: set[str] = set()
        self.tool_call_ids: set[str] = set()  # what a request message reference may name (schema 2)

    def __call__(self, event: Any) -> None:
        if not isinstance(event, dict):
            raise NeedsFullReader("event is not a JSON object")
        fields = EVENT_FIELDS.get(event.get("kind"))  # type: ignore[arg-type]
        seq, t = event.get("seq"), event.get("t", 0.0)
        if fields is None or not event.keys() <= fields or not isinstance(event.get("id"), str) \
                or type(seq) is not int or seq < 0 or isinstance(t, bool) or not isinstance(t, int | float) \
                or event.get("provenance", "recorded") not in PROVENANCES:
            raise NeedsFullReader("unexpected event structure")
        kind = event["kind"]
        if kind in ("llm_call", "error") and event.get("request") is not None:
            context = event["request"].get("context") or {}
            base, tools_ref = context.get("base"), event["request"].get("tools_ref")
            if (base is not None and base not in self.requests) or (tools_ref is not None
                                                                      and tools_ref not in self.tool_sets):
                raise NeedsFullReader("a reference the validating reader words")
            for item in context.get("append") or ():
                if "ref" in item and item["ref"] not in self.tool_call_ids:
                    raise NeedsFullReader("a message reference the validating reader words")
            self.requests.add(event["id"])
        elif kind == "tools":
            self.tool_sets.add(event["hash"])
        elif kind == "opaque" and (event.get("source"), event.get("name")) == _REQUEST_FIX:
            raise NeedsFullReader("a request_fix rewrites an earlier request")
        elif kind == "tool_call":
            if not (isinstance(event.get("name"), str) and isinstance(event.get("call_id"), str)):
                raise NeedsFullReader("unexpected tool call")
            self.tool_call_ids.add(event["id"])
