"""A port sees the underlying tools of bridged calls (Hermes 0.22's Tool Search), never the bridge.

A Hermes 0.22 agent with Tool Search on is offered ``tool_search`` / ``tool_describe`` / ``tool_call`` and
invokes its real tools through ``tool_call`` (``replaykit.core.trace.bridge``). A team porting that agent
ports the real tools: the bridge is Hermes's way of keeping a long tool list out of the prompt, not part
of the agent. So, for a port (and only there):

- every recorded model response is read with each bridged call rewritten to the underlying call, through
  the one rule ``bridge.underlying_call`` (the recorded ``ToolCallEvent.underlying`` wins), read by
  ``core.trace.bridge_view.underlying_message`` (``diff`` reads runs the same way). ``spec.recorded_turns`` applies it to what the conformance driver serves and
  checks and to the conversation a turn starts from, so the port's model, answered from the recording,
  calls the underlying tool, and the port's tool calls are compared with the underlying calls;
- the agent's tools are the underlying tools (:func:`underlying_tools`), their schemas found, in order,
  in a declaration of that tool in any of the runs (the same agent recorded with Tool Search off), in
  the result of a recorded ``tool_describe`` call (``{"tools": {name: {"description", "parameters"}}}``),
  else typed from the recorded arguments (:func:`schema_from_arguments`: the JSON type of each argument,
  required when every recorded call passed it; the description taken from the ``tool_search`` catalog
  line ``- name: description`` when there is one). The bridge tools are not ported, unless a recorded
  call of one cannot be mapped (a batch of several calls in one ``tool_call``, a ``tool_search`` or
  ``tool_describe`` call the model made): that call is served as made, so the port keeps that tool.
"""

from __future__ import annotations

import json
import re
from typing import Any

from replaykit.core.trace.bridge import BRIDGE_TOOL_NAMES
from replaykit.core.trace.bridge_view import (
    part_underlying,
    recorded_underlying,
    underlying_message,
    underlying_messages,
)
from replaykit.core.trace.canonical import parsed_arguments
from replaykit.core.trace.ir import (
    ToolCallEvent,
    ToolCallPart,
    ToolSpec,
    UnderlyingCall,
)
from replaykit.core.trace.run import Run

#: the description of an underlying tool no recorded declaration, describe result or catalog line names
UNDESCRIBED = "(called through Hermes's Tool Search bridge; schema typed from the recorded arguments)"

_CATALOG_LINE = re.compile(r"^\s*-\s*([A-Za-z0-9_.:-]+):\s*(.+?)\s*$")


def port_call(part: ToolCallPart, recorded: UnderlyingCall | None = None) -> tuple[str, Any]:
    """The ``(name, arguments)`` a port sees for a recorded tool call part."""
    return part_underlying(part, {part.id: recorded})


#: the recorded messages as a port sees them (core.trace.bridge_view)
port_message = underlying_message
port_messages = underlying_messages


def underlying_tools(runs: list[Run], declared: dict[str, ToolSpec]) -> tuple[list[ToolSpec], set[str]]:
    """The tools the runs called through the bridge that ``declared`` does not hold (schemas: module
    docstring), in first-call order, and the bridge tools some recorded call still needs as made."""
    calls: dict[str, list[Any]] = {}
    still_bridged: set[str] = set()
    described: dict[str, dict[str, Any]] = {}
    catalog: dict[str, str] = {}
    for run in runs:
        recorded = recorded_underlying(run)
        for tools in run.tool_sets.values():
            for tool in tools:
                if tool.name == "tool_search" and tool.description:
                    catalog.update(_catalog(tool.description))
        for event in run.events:
            if isinstance(event, ToolCallEvent) and event.name == "tool_describe" and event.result:
                described.update(_described(event.result))
        for call in run.llm_calls():
            made = {id(part) for part in call.response.message.parts}
            # the calls as the port sees them (a batch Hermes ran entry by entry: one call per tool)
            for part in port_message(call.response.message, recorded).tool_calls:
                if id(part) in made:  # not bridged: a direct call, or a bridge call served as made
                    if part.name in BRIDGE_TOOL_NAMES:
                        still_bridged.add(part.name)
                    continue
                calls.setdefault(part.name, []).append(parsed_arguments(part.arguments, part.raw_arguments))
    out: list[ToolSpec] = []
    for name, arguments in calls.items():
        if name in declared:
            continue
        found = described.get(name)
        if found is not None and isinstance(found.get("parameters"), dict):
            out.append(ToolSpec(name=name, description=str(found.get("description") or catalog.get(name) or ""),
                                parameters=found["parameters"]))
        else:
            out.append(ToolSpec(name=name, description=catalog.get(name) or UNDESCRIBED,
                                parameters=schema_from_arguments(arguments)))
    return out, still_bridged


def schema_from_arguments(calls: list[Any]) -> dict[str, Any]:
    """A JSON Schema typed from the arguments of recorded calls (the fallback of :func:`underlying_tools`):
    each argument's JSON type when every call agrees on it (untyped otherwise), required when every call
    passed it."""
    objects = [c for c in calls if isinstance(c, dict)]
    properties: dict[str, Any] = {}
    for args in objects:
        for key, value in args.items():
            properties.setdefault(key, []).append(value)
    schema: dict[str, Any] = {"type": "object",
                              "properties": {k: _value_schema(v) for k, v in properties.items()}}
    required = [k for k in properties if objects and all(k in a for a in objects)]
    if required:
        schema["required"] = required
    return schema


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _value_schema(values: list[Any]) -> dict[str, Any]:
    types = {_json_type(v) for v in values}
    if types == {"integer", "number"}:
        types = {"number"}
    if len(types) != 1 or types == {"null"}:
        return {}
    kind = types.pop()
    if kind == "array":
        items = [item for v in values for item in v]
        return {"type": "array", "items": _value_schema(items)} if items else {"type": "array"}
    if kind == "object":
        return schema_from_arguments(values)
    return {"type": kind}


def _catalog(description: str) -> dict[str, str]:
    """``name -> description`` from the deferred tool catalog in ``tool_search``'s description."""
    out: dict[str, str] = {}
    for line in description.splitlines():
        match = _CATALOG_LINE.match(line)
        if match:
            out.setdefault(match.group(1), match.group(2))
    return out


def _described(result: str) -> dict[str, dict[str, Any]]:
    """The schemas a ``tool_describe`` result holds (``{"tools": {name: {description, parameters}}}``)."""
    try:
        data = json.loads(result)
    except ValueError:
        return {}
    tools = data.get("tools") if isinstance(data, dict) else None
    return {str(k): v for k, v in tools.items() if isinstance(v, dict)} if isinstance(tools, dict) else {}
