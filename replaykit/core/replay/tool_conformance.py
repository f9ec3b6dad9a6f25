"""Does a tool body someone wrote agree with the recording? The one rule and the one failure text.

A ported tool runs for real while a recording is replayed around it: its result must equal the
recorded one (text as is, anything else as JSON; equal as text or as the JSON value both parse to,
after a declared normaliser of volatile output if any), and so must its error flag. When it does not, the failure names the tool, the step, the user turn, the call, its
arguments, and the expected and actual results, clipped so it stays one screen.

This module imports only the standard library and nothing from replaykit: the exported LangGraph and
PydanticAI modules embed it verbatim, so a port's check and replaykit's own say the same thing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

#: characters of a value shown in a mismatch (the rest is counted, not shown)
SHOWN = 300


def result_text(value: Any) -> str:
    """A tool's return value as the model sees it: text as is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def agrees(actual: Any, expected: Any, *, actual_error: bool = False, expected_error: bool = False,
           normalize: Callable[[str], str] | None = None) -> bool:
    """True when a real tool result reproduces the recorded one: the same text (after ``normalize``, a
    declared normaliser of volatile output, on both sides), or the same JSON value when both parse
    (``{"a": 1}`` and ``{"a":1}`` are one result); and the same error flag."""
    if bool(actual_error) != bool(expected_error):
        return False
    left, right = result_text(expected), result_text(actual)
    if normalize is not None:
        left, right = normalize(left), normalize(right)
    if left == right:
        return True
    try:
        return bool(json.loads(left) == json.loads(right))
    except (ValueError, TypeError, RecursionError):
        return False


def shown(value: Any, limit: int = SHOWN) -> str:
    """A value for a one-screen message: its ``repr``, at most ``limit`` characters of it."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True,
                                                            separators=(",", ":"), default=str)
    clipped = repr(text[:limit])
    return clipped + (f" ... ({len(text)} characters)" if len(text) > limit else "")


def mismatch_text(name: str, step: Any, turn: Any, call_id: Any, arguments: Any, expected: Any,
                  actual: Any, recording: str | None = None) -> str:
    """The failure of a tool whose real body gave another result than the record: four lines."""
    where = f"step {step}, user turn {turn}, call {call_id}"
    if recording:
        where = f"recording {recording}, {where}"
    return "\n".join([
        f"tool {name!r} does not match the record ({where})",
        f"  arguments: {shown(arguments)}",
        f"  expected:  {shown(result_text(expected))}",
        f"  actual:    {shown(result_text(actual))}",
    ])
