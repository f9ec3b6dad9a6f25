"""The live-tool ladder (``replaykit.core.replay.tool_ladder``) wired to a play: the cursor serves, the store's
guard policy gates, the user's ``--tools-module`` implements, and every answer is recorded.

    tools = LiveTools(session.cursor, options)            # once per play
    answer = tools.answer(call_id, name, arguments)       # sync engines
    answer = await tools.aanswer(call_id, name, arguments)  # async engines (awaits async tools)

``answer.content`` is what the model sees; the step is already in the new run. In an offline play
(``options.offline``) nothing is executed: a call the record does not hold climbs past the
implementation rung.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replaykit.core.errors import BadInput
from replaykit.core.replay import tool_ladder
from replaykit.core.replay.tool_gate import gate
from replaykit.core.replay.tool_ladder import Found, ToolAnswer
from replaykit.core.trace.bridge import underlying_call
from replaykit.core.trace.ir import Provenance

if TYPE_CHECKING:
    from replaykit.core.replay.cursor import ReplayCursor
    from replaykit.core.replay.play import PlayOptions

_PROVENANCE = {"served": Provenance.SERVED, "live": Provenance.LIVE, "synthetic": Provenance.SYNTHETIC}


def guard_for(allow_destructive: bool, *, store: str | Path | None = None, policy: Any = None) -> tool_ladder.Guard:
    """The ladder's guard rung: ``core.tool_gate`` with the store's ``guard.toml`` (or ``policy``)."""

    def guard(name: str, arguments: Any) -> tuple[str, str] | None:
        verdict = gate(name, arguments, allow_destructive, store=store, policy=policy)
        return None if verdict.run else (str(verdict.result_text), str(verdict.status or "dry_run"))

    return guard


class LiveTools:
    """Answers the tool calls of one play through the ladder and records each answer on the cursor."""

    def __init__(self, cursor: ReplayCursor, options: PlayOptions | None = None, *,
                 implementations: Mapping[str, Callable[..., Any]] | None = None, policy: Any = None) -> None:
        self.cursor = cursor
        extra = options.extra if options is not None else {}
        impls = dict(implementations) if implementations is not None else tool_implementations(options)
        # An offline play runs nothing: the implementation rung is skipped.
        self.offline = options is not None and (options.offline or options.serve_only)
        self.implementations = {} if self.offline else impls
        self.guard = guard_for(options.allow_destructive if options is not None else False,
                               store=options.store.root if options is not None else None,
                               policy=policy if policy is not None else extra.get("guard_policy"))

    def _decide(self, call_id: str, name: str, arguments: Any,
                implementation: Callable[..., Any] | None = None) -> tuple[ToolAnswer | None, Any]:
        def served() -> Found | None:
            decision = self.cursor.tool(call_id, name, arguments)
            if decision.action != "serve" or decision.event is None:
                return None
            event = decision.event
            return Found(event.result if event.result is not None else (event.error or ""), event.status, event.error)

        def stand_in() -> Found | None:
            event = self.cursor.recorded_tool(name, arguments)
            if event is None or event.status not in ("ok", "error"):
                return None
            return Found(event.result or "", event.status, event.error)

        if self.offline:
            function = None
        elif implementation is not None:
            function = implementation
        else:
            function = _implementation(self.implementations, name, arguments)
        answer = tool_ladder.decide(name, arguments, served=served, guard=self.guard,
                                    has_implementation=function is not None, stand_in=stand_in)
        return answer, function

    def _record(self, call_id: str, name: str, arguments: Any, answer: ToolAnswer, started: float) -> ToolAnswer:
        if answer.rung != "served":  # the cursor recorded the served step itself
            self.cursor.live_tool(call_id, name, arguments, result=answer.content, status=answer.status,
                                  error=answer.error, executed=answer.executed,
                                  provenance=_PROVENANCE[answer.provenance],
                                  duration=round(time.monotonic() - started, 6))
        return answer

    def answer(self, call_id: str, name: str, arguments: Any, *,
               implementation: Callable[..., Any] | None = None) -> ToolAnswer:
        """Climb the ladder for one call. ``implementation``: the framework's own tool for this call (the
        Hermes engine passes Hermes's real tool), used instead of the ``--tools-module`` table."""
        started = time.monotonic()
        answer, function = self._decide(call_id, name, arguments, implementation)
        if answer is None:
            answer = tool_ladder.climb(name, arguments, implementation=function)
        return self._record(call_id, name, arguments, answer, started)

    async def aanswer(self, call_id: str, name: str, arguments: Any) -> ToolAnswer:
        started = time.monotonic()
        answer, function = self._decide(call_id, name, arguments)
        if answer is None:
            try:
                value = tool_ladder.call_implementation(function, arguments)
                if inspect.isawaitable(value):
                    value = await value
                answer = tool_ladder.ran(value)
            except Exception as exc:  # a failing tool is a result the model sees
                answer = tool_ladder.failed(exc)
        return self._record(call_id, name, arguments, answer, started)


def _implementation(implementations: Mapping[str, Callable[..., Any]], name: str,
                    arguments: Any) -> Callable[..., Any] | None:
    """The implementation for a call; a bridged call (core.trace.bridge: Hermes's Tool Search
    ``tool_call``) runs its underlying tool's, with the underlying arguments."""
    function = tool_ladder.implementation_for(implementations, name)
    if function is not None:
        return function
    target, target_arguments = underlying_call(name, arguments)
    if target == name:
        return None
    inner = tool_ladder.implementation_for(implementations, target)
    if inner is None:
        return None

    def bridged(*_args: Any, **_kw: Any) -> Any:
        return tool_ladder.call_implementation(inner, target_arguments)

    return bridged


def tool_implementations(options: PlayOptions | None) -> dict[str, Callable[..., Any]]:
    """The play's tool implementations: ``--tools-module`` (``extra["tools_module"]``) and, from Python,
    ``extra["tool_impls"]`` (a mapping; wins on a name clash). Engines call this before the new run is
    created, so a bad module is a one-line error with nothing written."""
    extra = options.extra if options is not None else {}
    module = extra.get("tools_module")
    impls = load_tools_module(module) if module else {}
    return {**impls, **dict(extra.get("tool_impls") or {})}


def load_tools_module(path: str | Path) -> dict[str, Callable[..., Any]]:
    """Import the user's tools module (a file they named: trace content is never executed) and return
    its implementations by tool name: a ``TOOLS = {"name": fn}`` dict, plus every public function
    (``tool_ladder.load_tools_file``: the one rule, which the standalone script embeds too)."""
    try:
        return tool_ladder.load_tools_file(str(path))
    except ValueError as exc:
        raise BadInput(str(exc)) from exc
