"""The serve decision: what a replay serves at a position of the record, and how a request is matched.

One implementation for every consumer: ``replaykit.core.replay.cursor.ReplayCursor`` (the openai, Hermes,
PydanticAI and LangGraph play engines) wraps it, and generated code embeds this module verbatim (the
standalone script through ``replaykit.core.replay.replay_doc``, the LangGraph module through
``replaykit.engines.langgraph.runtime``). Standard library only; its one replaykit import,
``replaykit.core.trace.canonical`` (also stdlib-only), is embedded alongside it. How a recorded request's
messages are rebuilt from the trace's deltas is ``replaykit.core.trace.deltas``.

The rules:

- the record is a list of *rounds*: one LLM step and the tool steps that answer its calls;
- a request is matched against the recorded request of the next round by ``canonical.fingerprint``
  (volatile fields ignored, call ids positional, arguments parsed): a mismatch is a *desync*, and the
  replay goes live from there (fail open, never a wrong answer);
- rounds at or after the cut are live;
- tool calls are matched by call id among the calls of the round just served, in any arrival order
  (parallel tools), else by name and parsed arguments (a framework that mints its own ids);
- a completion asked for after the record ended, in a pure replay, gets a synthetic end of turn.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from replaykit.core.trace.canonical import canonical_json, fingerprint


def arguments_key(arguments: Any) -> str:
    """Tool arguments as compared by the serve decision: parsed if a JSON string, canonical JSON."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            pass
    try:
        return canonical_json(arguments)
    except TypeError:
        return repr(arguments)


def request_fingerprint(messages: Iterable[Any], tools: Iterable[Any] | None = None) -> str:
    """The one request-matching rule (``replaykit.core.trace.canonical.fingerprint``)."""
    return fingerprint(messages, tools)


class Round:
    """One LLM step of the record (``llm``: its event, in whatever form the caller keeps events) and the
    tool steps that answer its calls (``tools``: call id -> (step index, event))."""

    __slots__ = ("llm", "llm_step", "tools")

    def __init__(self, llm_step: int, llm: Any) -> None:
        self.llm_step = llm_step
        self.llm = llm
        self.tools: dict[str, tuple[int, Any]] = {}


def rounds_of(steps: Iterable[tuple[int, str | None, Any]]) -> list[Round]:
    """Rounds from the record's steps in order, each ``(step index, tool call id or None for an LLM
    step, event)``. Tool steps before the first LLM step belong to no round (never served)."""
    rounds: list[Round] = []
    for index, call_id, event in steps:
        if call_id is None:
            rounds.append(Round(index, event))
        elif rounds:
            rounds[-1].tools.setdefault(call_id, (index, event))
    return rounds


class LLMServe:
    """What to do with an LLM request: ``serve`` (the round's recorded answer), ``live`` (reason:
    ``live`` already, ``cut`` reached, or ``desync`` with the ``expected`` and ``actual``
    fingerprints), or ``synthetic`` (the record ended)."""

    __slots__ = ("action", "actual", "expected", "reason", "round")

    def __init__(self, action: str, rnd: Round | None = None, reason: str = "", expected: str | None = None,
                 actual: str | None = None) -> None:
        self.action = action
        self.round = rnd
        self.reason = reason
        self.expected = expected
        self.actual = actual


class ToolServe:
    """What to do with a tool call: ``serve`` (``event`` at ``step``) or ``live`` (reason ``live``,
    ``cut`` or ``desync``: the call is not among the served round's calls; ``step`` is then the
    round's LLM step)."""

    __slots__ = ("action", "event", "expected", "reason", "step")

    def __init__(self, action: str, step: int | None = None, event: Any = None, reason: str = "",
                 expected: str | None = None) -> None:
        self.action = action
        self.step = step
        self.event = event
        self.reason = reason
        self.expected = expected


class ServeState:
    """Where a replay stands in the record: serve rounds in order before ``cut``, live from there.

    ``cut=None`` is a pure replay: every round is served and a request past the end of the record gets
    a synthetic answer. ``step_count`` is the record's number of steps (the cut of a pure replay).
    Not thread-safe on its own: callers that serve parallel tools hold a lock around it.
    """

    def __init__(self, rounds: Sequence[Round], step_count: int, cut: int | None = None) -> None:
        self.rounds = list(rounds)
        self.serve_only = cut is None
        self.cut = step_count if cut is None else max(0, cut)
        self.next_round = 0
        self.pending: Round | None = None
        self.live = False

    @property
    def exhausted(self) -> bool:
        return self.next_round >= len(self.rounds)

    def go_live(self) -> None:
        self.live = True
        self.pending = None

    def seek(self, index: int) -> None:
        """Continue at recorded LLM call ``index`` (a framework that keeps its own state, such as a
        LangGraph checkpoint, says where it stands)."""
        self.next_round = max(0, index)
        self.pending = None

    def llm(self, actual: str | None, expected: Callable[[Round], str]) -> LLMServe:
        """Decide an LLM request whose fingerprint is ``actual`` (None: trust the position, as a state
        built only from served content is in sync by construction); ``expected(round)`` gives the
        recorded request's fingerprint."""
        if self.live:
            return LLMServe("live", None, "live")
        if self.exhausted:
            if not self.serve_only:  # the record ends at (or before) the cut: the rest is live
                self.go_live()
                return LLMServe("live", None, "cut")
            return LLMServe("synthetic", None, "record ended")
        rnd = self.rounds[self.next_round]
        if rnd.llm_step >= self.cut:
            self.go_live()
            return LLMServe("live", rnd, "cut")
        if actual is not None:
            wanted = expected(rnd)
            if wanted != actual:
                self.go_live()
                return LLMServe("live", rnd, "desync", wanted, actual)
        self.next_round += 1
        self.pending = rnd
        return LLMServe("serve", rnd)

    def tool(self, call_id: str, name: str, arguments: Any, name_of: Callable[[Any], str],
             arguments_of: Callable[[Any], Any]) -> ToolServe:
        """Decide a tool call of the round just served: by ``call_id`` (any order), else by name and
        parsed arguments; each recorded call answers once."""
        rnd = self.pending
        if self.live or rnd is None:
            return ToolServe("live", reason="live")
        match = rnd.tools.get(call_id)
        if match is None:
            wanted = arguments_key(arguments)
            found = next((key for key, (_, e) in rnd.tools.items()
                          if name_of(e) == name and arguments_key(arguments_of(e)) == wanted), None)
            if found is None:
                self.go_live()
                return ToolServe("live", rnd.llm_step, reason="desync",
                                 expected=",".join(sorted(rnd.tools)) or None)
            call_id, match = found, rnd.tools[found]
        step, event = match
        del rnd.tools[call_id]
        if step >= self.cut:
            return ToolServe("live", step, reason="cut")
        return ToolServe("serve", step, event)


def next_llm_index(stashes: Iterable[dict[str, Any] | None]) -> int:
    """The recorded LLM call a framework state stands before: one past the last served answer
    (``llm_index``) or the call whose recorded request the state adopted (``next_llm``)."""
    index = 0
    for stash in stashes:
        if stash is None:
            continue
        if "llm_index" in stash:
            index = max(index, int(stash["llm_index"]) + 1)
        if "next_llm" in stash:
            index = max(index, int(stash["next_llm"]))
    return index
