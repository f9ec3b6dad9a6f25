"""Bridged tool calls: the one rule for "which tool does this call stand for".

Hermes 0.22's Tool Search offers the model three bridge tools (``tool_search``, ``tool_describe``,
``tool_call``) in place of the tools it defers. The model then invokes a deferred tool as
``tool_call({"calls": [{"name": "todo_list", "arguments": {...}}]})`` (or the legacy single shape
``{"name": ..., "arguments": ...}``); Hermes peels the wrapper and runs the underlying tool, which is what
its hooks and middleware see.

A trace keeps both sides: the model's call as the model made it (``ToolCallEvent.name`` /
``arguments``, equal to the tool call in the LLM response: what a replay must serve) and the underlying
tool beside it (``ToolCallEvent.underlying``). Everything that must see the *tool* rather than the
*model's words* (ports, exports, training data, tool implementations) asks :func:`underlying_call`;
nothing else re-implements the unwrapping.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

#: the bridge tool whose calls stand for another tool's call
BRIDGE_TOOL_NAME = "tool_call"
#: the three names Hermes's Tool Search offers in place of the deferred tools
BRIDGE_TOOL_NAMES = frozenset({"tool_search", "tool_describe", BRIDGE_TOOL_NAME})


def underlying_call(name: str, arguments: Any, *, recorded: Any = None) -> tuple[str, Any]:
    """The ``(name, arguments)`` of the tool a call really invokes.

    - ``recorded``: the ``underlying`` a recorder wrote beside the call (a ``ToolCallEvent.underlying``
      model or its JSON dict): what the agent actually ran; it wins.
    - Otherwise a call of :data:`BRIDGE_TOOL_NAME` whose arguments (a dict or its JSON text) name exactly
      one tool, as ``{"calls": [{"name", "arguments"}]}`` or ``{"name", "arguments"}``, stands for that tool;
      its arguments are parsed from JSON text when needed (``None`` or blank means ``{}``), as Hermes does.
    - Anything else (another tool, a batch of several calls, a malformed bridge call) is its own
      underlying call: returned unchanged.
    """
    if recorded is not None:
        target = recorded if isinstance(recorded, Mapping) else {
            "name": getattr(recorded, "name", None), "arguments": getattr(recorded, "arguments", None)}
        if isinstance(target.get("name"), str) and target["name"]:
            return target["name"], target.get("arguments")
    if name != BRIDGE_TOOL_NAME:
        return name, arguments
    entry = _bridge_entry(arguments)
    if entry is None:
        return name, arguments
    return entry


def is_bridged(name: str, arguments: Any, *, recorded: Any = None) -> bool:
    """Whether the call stands for another tool (see :func:`underlying_call`)."""
    return underlying_call(name, arguments, recorded=recorded)[0] != name


def event_underlying(event: Any) -> tuple[str, Any]:
    """:func:`underlying_call` of a ``ToolCallEvent`` (or its JSON dict)."""
    if isinstance(event, Mapping):
        return underlying_call(str(event.get("name") or ""), event.get("arguments"), recorded=event.get("underlying"))
    return underlying_call(event.name, event.arguments, recorded=getattr(event, "underlying", None))


def _bridge_json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def bridge_entries(name: str, arguments: Any) -> list[tuple[str, Any]] | None:
    """Every ``(name, arguments)`` a call of :data:`BRIDGE_TOOL_NAME` names, in order (a batch
    ``{"calls": [a, b, ...]}`` names several; Hermes 0.22 expands it into one bridged call per entry before
    running them, the first keeping the call's id). None for another tool or a malformed bridge call (an
    entry without a name, or naming a bridge tool)."""
    if name != BRIDGE_TOOL_NAME:
        return None
    args = _bridge_json(arguments)
    if not isinstance(args, Mapping):
        return None
    calls = _bridge_json(args["calls"]) if "calls" in args else [args]
    if isinstance(calls, Mapping):
        calls = [calls]
    if not isinstance(calls, list) or not calls:
        return None
    out: list[tuple[str, Any]] = []
    for call in calls:
        entry = _entry(call)
        if entry is None:
            return None
        out.append(entry)
    return out


def _entry(call: Any) -> tuple[str, Any] | None:
    if not isinstance(call, Mapping):
        return None
    target = str(call.get("name") or "").strip()
    if not target or target in BRIDGE_TOOL_NAMES:
        return None
    inner = call.get("arguments")
    if inner is None or (isinstance(inner, str) and not inner.strip()):
        return target, {}
    parsed = _bridge_json(inner)
    return target, parsed if parsed is not None else inner


def _bridge_entry(arguments: Any) -> tuple[str, Any] | None:
    entries = bridge_entries(BRIDGE_TOOL_NAME, arguments)
    return entries[0] if entries is not None and len(entries) == 1 else None
