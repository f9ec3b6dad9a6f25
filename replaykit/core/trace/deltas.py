"""Delta resolution: a recorded request's full message list rebuilt from the trace's compact encoding.

Requests are stored as deltas (``request.context``: ``base`` request id, ``keep`` messages of it,
``append`` new ones); an appended item may be a reference ``{"ref": <tool call event id>}`` to the
tool message of an earlier tool call (``tool_message``; schema 2), so a tool result is stored once.
``resolve_delta_chain`` and ``resolve_all_requests`` rebuild full message lists (``expand_refs`` is
the one expansion of references, shared with ``replaykit.core.trace.run.Run``).

Standard library only: generated code (the standalone script, the LangGraph module) embeds this module
verbatim, before ``replaykit.core.replay.serve``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


def message_ref(item: Any) -> tuple[str, bool] | None:
    """``(event id, strip)`` of a request message reference (``{"ref": id}``, optionally with
    ``"strip": true``; schema 2), else None. A message never has a ``ref`` key, so any item with one is a
    reference."""
    if type(item) is dict:
        ref = item.get("ref")
        return (ref, item.get("strip") is True) if isinstance(ref, str) else None
    ref = getattr(item, "ref", None)  # the typed form (replaykit.core.trace.ir.MessageRef)
    return (ref, getattr(item, "strip", None) is True) if isinstance(ref, str) else None


def check_ref(ref: str, target: Any, kind: str | None, target_seq: Any, seq: Any) -> str | None:
    """Why ``ref`` (in the request of the event at ``seq``) is bad, else None: it must name an earlier
    ``tool_call`` event of the same run (``target`` as found by id, None if unknown)."""
    if target is None:
        return f"refers to unknown tool call event {ref!r}"
    if kind != "tool_call":
        return f"refers to {ref!r}, a {kind} event, not a tool call"
    if isinstance(target_seq, int) and isinstance(seq, int) and target_seq >= seq:
        return f"refers to {ref!r}, which is not an earlier event"
    return None


def expand_refs(append: Iterable[Any], message_of: Callable[[str, bool], Any]) -> list[Any]:
    """A request's appended items with every reference replaced by ``message_of(event id, strip)``: the
    one expansion every reader uses (dict resolvers here, ``replaykit.core.trace.run.Run`` on typed events)."""
    out: list[Any] = []
    for item in append:
        ref = message_ref(item)
        out.append(item if ref is None else message_of(*ref))
    return out


def _ref_expander(event: dict[str, Any], events_by_id: dict[str, dict[str, Any]]) -> Callable[[str, bool], Any]:
    def message_of(ref: str, strip: bool) -> dict[str, Any]:
        target = events_by_id.get(ref)
        problem = check_ref(ref, target, target.get("kind") if target else None,
                            target.get("seq") if target else None, event.get("seq"))
        if problem is not None:
            raise ValueError(f"event {event.get('seq', event.get('id'))}: request message {problem}")
        return tool_message(target, strip=strip)  # type: ignore[arg-type]  # checked above

    return message_of


def resolve_delta_chain(event: dict[str, Any], events_by_id: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Rebuild a request's full message list from its delta chain (iterative: long runs).
    ``events_by_id``: the run's earlier events by id, at least its requests and tool calls."""
    chain: list[dict[str, Any]] = []
    cursor: dict[str, Any] | None = event
    while cursor is not None:
        context = cursor["request"].get("context", {})
        chain.append(cursor)
        base = context.get("base")
        if base is None:
            break
        cursor = events_by_id.get(base)
        if cursor is None or cursor.get("request") is None:
            raise ValueError(f"unknown request base {base!r}")
    messages: list[dict[str, Any]] = []
    for link in reversed(chain):
        context = link["request"].get("context", {})
        keep = int(context.get("keep", 0)) if context.get("base") is not None else 0
        if keep > len(messages):
            raise ValueError(f"a request keeps {keep} messages of a request that has {len(messages)}")
        # In place: each step only trims and extends, so the walk stays linear in the run's length.
        del messages[keep:]
        messages.extend(expand_refs(context.get("append", ()), _ref_expander(link, events_by_id)))
    return messages


def resolve_all_requests(events: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Every request's full message list by event id, in one pass (each built from its base's list:
    linear in the run's content, not in the sum of its requests' lengths)."""
    out: dict[str, list[dict[str, Any]]] = {}
    tool_calls: dict[str, dict[str, Any]] = {}  # the tool call events seen so far: what a ref may name
    for event in events:
        kind = event.get("kind")
        if kind == "tool_call":
            tool_calls[event["id"]] = event
        request = event.get("request") if kind in ("llm_call", "error") else None
        if request is None:
            continue
        context = request.get("context", {})
        base = context.get("base")
        if base is None:
            messages: list[dict[str, Any]] = []
        else:
            if base not in out:
                raise ValueError(f"unknown request base {base!r}")
            keep = int(context.get("keep", 0))
            if keep > len(out[base]):
                raise ValueError(f"a request keeps {keep} messages of a request that has {len(out[base])}")
            messages = out[base][:keep]
        messages.extend(expand_refs(context.get("append", ()), _ref_expander(event, tool_calls)))
        out[event["id"]] = messages
    return out


def tool_message(event: dict[str, Any], *, strip: bool = False) -> dict[str, Any]:
    """The tool-role message a recorded tool call event puts into the conversation: what a request
    message reference (``{"ref": <tool call event id>}``) stands for. ``strip`` (``"strip": true`` in the
    reference): the result with surrounding whitespace removed (``str.strip``), as agents that normalise
    every message's whitespace before sending it (Hermes) put it into the request."""
    part: dict[str, Any] = {"type": "tool_result", "tool_call_id": event["call_id"]}
    if event.get("name") is not None:
        part["name"] = event["name"]
    content = event.get("result") or ""
    part["content"] = content.strip() if strip else content
    part["is_error"] = event.get("status") == "error"
    return {"role": "tool", "parts": [part]}
