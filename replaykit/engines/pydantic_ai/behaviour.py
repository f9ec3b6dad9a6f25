"""What a PydanticAI history *did*, as plain JSON: the part of it two runs of one agent must agree on.

A history (``ModelMessagesTypeAdapter.dump_python(messages, mode="json")``) also holds what differs
between any two runs: timestamps, run and conversation ids, request durations (``ModelResponse.duration``
since 2.7x), usage estimates, provider ids. Comparing whole dumps made ``run() == recorded_history()``
false on every newer PydanticAI. This keeps an allow-list instead of a deny-list, so a field PydanticAI
adds later cannot break the comparison: each message's kind and instructions, and each part's kind,
content, tool name, arguments (a JSON string parsed; ``None`` is ``{}``), call id and outcome.

This module imports only the standard library: the exported PydanticAI module embeds it verbatim.
"""

from __future__ import annotations

import json
from typing import Any

#: the fields of a message that are behaviour
MESSAGE_FIELDS = ("kind", "instructions")
#: the fields of a part that are behaviour (what the model said or was told, and which tool with what)
PART_FIELDS = ("part_kind", "content", "tool_name", "args", "tool_call_id", "outcome")


def behaviour_of_dump(dumped: list[Any]) -> list[dict[str, Any]]:
    """The behaviour of a dumped history (``ModelMessagesTypeAdapter.dump_python(..., mode="json")``)."""
    return [_message(m) for m in dumped if isinstance(m, dict)]


def _message(message: dict[str, Any]) -> dict[str, Any]:
    out = {k: message[k] for k in MESSAGE_FIELDS if message.get(k) is not None}
    out["parts"] = [_part(p) for p in message.get("parts") or () if isinstance(p, dict)]
    return out


def _part(part: dict[str, Any]) -> dict[str, Any]:
    out = {k: part[k] for k in PART_FIELDS if part.get(k) is not None}
    if "tool_name" in out and part.get("part_kind") in ("tool-call", "builtin-tool-call"):
        out["args"] = _arguments(part.get("args"))
    return out


def _arguments(args: Any) -> Any:
    """Arguments as a value: ``'{"city": "Paris"}'`` and ``{"city": "Paris"}`` are the same call."""
    if args is None:
        return {}
    if isinstance(args, str):
        try:
            return json.loads(args) if args.strip() else {}
        except ValueError:
            return args
    return args
