"""The run's tools as PydanticAI tools, built from their recorded JSON schemas.

Each tool is one ``Tool.from_schema(..., takes_ctx=True)`` whose function hands the call to a
``ToolBroker`` with ``ctx.tool_call_id``: the broker serves the recorded result by call id (the served
prefix), or, in the live part, serves a matching recorded call, runs the user's own implementation
(through the destructive-tool guard), or answers with a marked "not available" result.

A user's implementations come from a Python module *they named* (``--tools-module path.py``): a
function named like the tool (or listed in a ``TOOLS = {"tool_name": fn}`` dict). Trace content is
never executed; only that explicitly named file is imported.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import keyword
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from replaykit.core.errors import BadInput
from replaykit.core.ir import ToolSpec
from replaykit.engines.pydantic_ai import compat

UNAVAILABLE_MARKER = "[replaykit: tool not available]"


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


def unavailable_text(name: str) -> str:
    return (f"{UNAVAILABLE_MARKER} The tool `{name[:80]}` was not executed: this call does not match the "
            "recorded run and no implementation was provided (pass --tools-module to run real tools).")


# ------------------------------------------------------------------------------ user implementations


def load_tools_module(path: str | Path) -> dict[str, Callable[..., Any]]:
    """Import the user's tools module (a file they named) and return its implementations by tool name."""
    file = Path(path).expanduser()
    if not file.is_file() or file.suffix != ".py":
        raise BadInput(f"--tools-module {file}: not a Python file")
    module_name = f"replaykit_user_tools_{abs(hash(str(file.resolve())))}"
    spec = importlib.util.spec_from_file_location(module_name, file)
    if spec is None or spec.loader is None:
        raise BadInput(f"--tools-module {file}: cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(module_name, None)
        first = " ".join(str(exc).split())[:200]
        raise BadInput(f"--tools-module {file}: importing it failed ({type(exc).__name__}: {first})") from exc
    found: dict[str, Callable[..., Any]] = {}
    table = getattr(module, "TOOLS", None)
    if isinstance(table, dict):
        found.update({str(k): v for k, v in table.items() if callable(v)})
    for attr, value in vars(module).items():
        if callable(value) and not attr.startswith("_") and inspect.isfunction(value) \
                and value.__module__ == module_name:
            found.setdefault(attr, value)
    return found


def implementation_for(impls: dict[str, Callable[..., Any]], name: str) -> Callable[..., Any] | None:
    return impls.get(name) or impls.get(_identifier(name))


async def run_implementation(function: Callable[..., Any], arguments: dict[str, Any]) -> str:
    result = function(**arguments)
    if inspect.isawaitable(result):
        result = await result
    if isinstance(result, str):
        return result
    return json.dumps(result, ensure_ascii=False, default=str)
