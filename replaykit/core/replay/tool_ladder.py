"""The live-tool ladder: how every engine answers a tool call it meets in the live part of a play.

One decision, climbed top to bottom, the first rung that answers wins:

1. ``served``: the record holds this call (same call id, or same name and arguments where the id
   differs) -> its recorded result, provenance ``served``, nothing runs;
2. ``guard``: an implementation would run and the destructive-tool guard says no -> the guard's
   dry-run text, status ``dry_run``, nothing runs;
3. ``implementation``: the user's implementation (``--tools-module``, or the framework's own tool)
   runs -> its result (``ok``) or its exception as the result (``error``), provenance ``live``;
4. ``stand_in``: a recorded call with the same name and arguments elsewhere in the record (or the
   run a branch came from) -> that result, provenance ``served``, nothing runs;
5. ``unavailable``: :func:`unavailable_text`, status ``unavailable``, provenance ``synthetic``.

The guard is asked only when something would execute: it protects executions, and a call with no
implementation executes nothing.

This module imports only the standard library and nothing from replaykit: the generated LangGraph
module embeds it verbatim (``replaykit.exporters.langgraph_source``), so the exported graph climbs the
very same ladder. Engines with a ``ReplayCursor`` use it through ``replaykit.core.replay.live_tools``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, NamedTuple

from replaykit.core.trace.bridge import underlying_call

UNAVAILABLE_STATUS = "unavailable"
UNAVAILABLE_MARKER = "[replaykit: tool not available]"


def unavailable_text(name: str) -> str:
    """The one text a live tool call gets when nothing can answer it (shown to the model)."""
    shown = " ".join(str(name).split())[:80]
    return (f"{UNAVAILABLE_MARKER} The tool `{shown}` was not executed: this call is not in the recording "
            "and no implementation was given (pass --tools-module to run real tools).")


# NamedTuples, not dataclasses: the standalone script is sometimes executed as a namespace that is not
# in sys.modules, where a dataclass with string annotations cannot be built.
class Found(NamedTuple):
    """A recorded answer to a tool call (what the ``served`` and ``stand_in`` lookups return)."""

    content: str
    status: str = "ok"
    error: str | None = None


class ToolAnswer(NamedTuple):
    """The ladder's answer: what the model sees (``content``) and what the trace records."""

    rung: str  # served | guard | implementation | stand_in | unavailable
    content: str
    status: str
    provenance: str  # served | live | synthetic
    executed: bool
    error: str | None = None

    @property
    def is_error(self) -> bool:
        """The model is told the call failed: it raised, or nothing could answer it."""
        return self.status in ("error", UNAVAILABLE_STATUS)


#: (name, arguments) -> None when the call may run, else (dry-run text, status)
Guard = Callable[[str, Any], "tuple[str, str] | None"]


def decide(name: str, arguments: Any, *, served: Callable[[], Found | None] | None = None,
           guard: Guard | None = None, has_implementation: bool = False,
           stand_in: Callable[[], Found | None] | None = None) -> ToolAnswer | None:
    """Climb the ladder; ``None`` means "run the implementation now" (then :func:`ran` or :func:`failed`).
    Split this way so an async engine can await the implementation itself."""
    found = served() if served is not None else None
    if found is not None:
        return ToolAnswer("served", found.content, found.status, "served", False, found.error)
    if has_implementation:
        # A bridged call (core.trace.bridge) is guarded as the tool it runs: tool_call(write_file) writes.
        verdict = guard(*underlying_call(name, arguments)) if guard is not None else None
        if verdict is not None:
            return ToolAnswer("guard", verdict[0], verdict[1], "live", False)
        return None
    found = stand_in() if stand_in is not None else None
    if found is not None:
        return ToolAnswer("stand_in", found.content, found.status, "served", False, found.error)
    return ToolAnswer("unavailable", unavailable_text(name), UNAVAILABLE_STATUS, "synthetic", False)


def ran(value: Any) -> ToolAnswer:
    """The answer of an implementation that returned ``value`` (text as is, anything else as JSON)."""
    content = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return ToolAnswer("implementation", content, "ok", "live", True)


def failed(exc: BaseException) -> ToolAnswer:
    """The answer of an implementation that raised: the model sees the error, as in the real agent."""
    error = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
    return ToolAnswer("implementation", f"Error: {error}", "error", "live", True, error)


def call_implementation(function: Callable[..., Any], arguments: Any) -> Any:
    """Call a tool implementation the way frameworks do: keyword arguments from an object, else one
    positional argument."""
    return function(**arguments) if isinstance(arguments, dict) else function(arguments)


def climb(name: str, arguments: Any, *, served: Callable[[], Found | None] | None = None,
          guard: Guard | None = None, implementation: Callable[..., Any] | None = None,
          stand_in: Callable[[], Found | None] | None = None) -> ToolAnswer:
    """The whole ladder for a synchronous implementation."""
    answer = decide(name, arguments, served=served, guard=guard, has_implementation=implementation is not None,
                    stand_in=stand_in)
    if answer is not None:
        return answer
    assert implementation is not None
    try:
        value = call_implementation(implementation, arguments)
    except Exception as exc:  # a failing tool is a result the model sees
        return failed(exc)
    import inspect  # here, not at the top: generated scripts embed this module and rarely get this far

    if inspect.isawaitable(value):
        close = getattr(value, "close", None)
        if close is not None:
            close()
        return failed(TypeError(f"tool {name!r} is async; this engine runs synchronous tools only"))
    return ran(value)


def implementations_in(namespace: dict[str, Any], module_name: str | None = None) -> dict[str, Callable[..., Any]]:
    """The tool implementations a tools module offers, by tool name: its ``TOOLS = {"name": fn}`` dict
    (names that are not identifiers live there), plus every public function the module itself defines
    (``module_name``: functions imported into it from elsewhere are not tools). The one tool-module
    convention of replaykit: each function takes the call's arguments as keyword arguments."""
    import inspect

    found: dict[str, Callable[..., Any]] = {}
    table = namespace.get("TOOLS")
    if isinstance(table, dict):
        found.update({str(k): v for k, v in table.items() if callable(v)})
    for attr, value in namespace.items():
        if (not attr.startswith("_") and inspect.isfunction(value)
                and (module_name is None or value.__module__ == module_name)):
            found.setdefault(attr, value)
    return found


def load_tools_file(path: str) -> dict[str, Callable[..., Any]]:
    """Import a tools module from its file (one the user named: trace content is never executed) and
    return :func:`implementations_in` it. Its folder is on ``sys.path`` while it is imported, as
    ``python FILE`` would have it, so it can import its neighbours (a port's ``agent_tools.py`` imports
    ``hermes_tools``). A file that is not Python, or fails to import: ``ValueError`` with one line
    saying why."""
    import importlib.util
    import os
    import sys

    file = os.path.abspath(os.path.expanduser(path))
    if not os.path.isfile(file) or not file.endswith(".py"):
        raise ValueError(f"--tools-module {path}: not a Python file")
    module_name = f"replaykit_user_tools_{abs(hash(file))}"
    spec = importlib.util.spec_from_file_location(module_name, file)
    if spec is None or spec.loader is None:
        raise ValueError(f"--tools-module {path}: cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    folder = os.path.dirname(file)
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(module_name, None)
        first = " ".join(str(exc).split())[:200]
        raise ValueError(f"--tools-module {path}: importing it failed ({type(exc).__name__}: {first})") from exc
    finally:
        if folder in sys.path:
            sys.path.remove(folder)
    return implementations_in(vars(module), module_name)


def implementation_for(implementations: Any, name: str) -> Callable[..., Any] | None:
    """The implementation of tool ``name`` in a mapping: by its name, or by its Python identifier
    (``web-search`` -> ``web_search``)."""
    if not implementations:
        return None
    function = implementations.get(name)
    if function is None:
        ident = "".join(c if c.isalnum() or c == "_" else "_" for c in str(name))
        function = implementations.get(ident)
    return function if callable(function) else None
