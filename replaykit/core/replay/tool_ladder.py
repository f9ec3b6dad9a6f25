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
