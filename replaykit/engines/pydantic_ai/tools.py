"""The run's tools as PydanticAI tools, built from their recorded JSON schemas.

Each tool is one ``Tool.from_schema(..., takes_ctx=True)`` whose function hands the call to a
``ToolBroker`` with ``ctx.tool_call_id``: the broker serves the recorded result by call id (the served
prefix), or, in the live part, climbs the core live-tool ladder (``replaykit.core.replay.live_tools``).
"""

from __future__ import annotations

import json
import keyword
import re
from collections.abc import Callable
from typing import Any, Protocol

from replaykit.core.trace.ir import ToolSpec
from replaykit.engines.pydantic_ai import compat


class ToolBroker(Protocol):
    async def call_tool(self, name: str, call_id: str | None, arguments: dict[str, Any]) -> str: ...


def build_tools(specs: list[ToolSpec], broker: ToolBroker) -> list[Any]:
    """One PydanticAI ``Tool`` per recorded declaration, in order."""
    compat.require()
    return [compat.tool_from_schema(_function_for(spec.name, broker), spec.name, spec.description,
                                    _schema(spec)) for spec in specs]


def _schema(spec: ToolSpec) -> dict[str, Any]:
    schema = json.loads(json.dumps(spec.parameters)) if spec.parameters else {}
    if not schema:
        schema = {"type": "object", "properties": {}}
    return schema


def _function_for(name: str, broker: ToolBroker) -> Callable[..., Any]:
    async def recorded_tool(ctx: Any, **arguments: Any) -> str:
        return await broker.call_tool(name, getattr(ctx, "tool_call_id", None), arguments)

    recorded_tool.__name__ = _identifier(name)
    recorded_tool.__doc__ = f"Recorded tool {name!r} (served from the trace by replaykit)."
    return recorded_tool


def _identifier(name: str) -> str:
    text = re.sub(r"\W", "_", name, flags=re.ASCII) or "tool"
    if text[0].isdigit() or keyword.iskeyword(text):
        text = f"tool_{text}"
    return text
