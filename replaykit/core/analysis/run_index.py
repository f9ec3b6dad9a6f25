"""A run file's index, for readers that show one page of a run at a time (the viewer).

It is built in the streaming ``inspect`` pass (``core/analysis/inspect_view.py``: one pass over the lines,
which gives the summary, the health and one page of timeline rows on the way) and notes where lines
start: a checkpoint every ``CHECKPOINT_EVERY`` event lines (its offset, the step and row counts before it,
and the small state of the ``same`` filler). Another page of the timeline, or one step, is then read by
seeking to the checkpoint before it and reading at most that many lines: never the whole run again.

Memory: a few integers per event (the line of each step, each event id's line, each request's message
count and base), never the events or their content. A request is shown from its delta (the messages new
since its base request, references to tool results expanded); its whole message list, which can hold the
whole conversation, is rebuilt only when asked (``whole_messages``). Standard library only.
"""

from __future__ import annotations

import json
import os
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replaykit.core.analysis.inspect_view import InspectView, inspect_trace
from replaykit.core.analysis.timeline import BOOKKEEPING_KINDS, Timeline
from replaykit.core.errors import BadInput
from replaykit.core.trace.deltas import check_ref, expand_refs, resolve_delta_chain, tool_message
from replaykit.core.trace.store_index import (
    SCHEMA_VERSION,
    SameFiller,
    event_lines_at,
    open_trace,
    read_raw_header,
)

#: Event lines between two checkpoints: a single step costs at most this many lines parsed.
CHECKPOINT_EVERY = 64
_REQUEST_KINDS = ("llm_call", "error")


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """Where a reader can start in the middle of the file."""

    lineno: int  # the number of the line before the next one (the header is line 1)
    offset: int  # where the next line starts (in the decompressed lines of a compacted run)
    steps: int  # steps before it
    rows: int  # timeline rows before it (bookkeeping events are not rows)
    fill: tuple[dict[str, Any] | None, dict[str, Any] | None]  # ``SameFiller.state()``


@dataclass(frozen=True, slots=True)
class RequestInfo:
    message_count: int
    chain: int  # requests in its delta chain, itself included
    base: str | None  # the request it keeps messages of


@dataclass
class _Builder:
    """The ``inspect_trace`` observer that fills the index, one event line at a time."""

    checkpoints: list[Checkpoint] = field(default_factory=list)
    step_lines: array[int] = field(default_factory=lambda: array("q"))
    llm_steps: array[int] = field(default_factory=lambda: array("q"))  # step numbers of the LLM calls
    ids: dict[str, int] = field(default_factory=dict)  # event id -> line number
    tool_sets: dict[str, int] = field(default_factory=dict)  # tools hash -> line number
    requests: dict[str, RequestInfo] = field(default_factory=dict)
    events: int = 0
    steps: int = 0
    rows: int = 0

    def __call__(self, lineno: int, offset: int, event: dict[str, Any], fill: SameFiller) -> None:
        events = self.events
        if not events % CHECKPOINT_EVERY:
            self.checkpoints.append(Checkpoint(lineno - 1, offset, self.steps, self.rows, fill.state()))
        self.events = events + 1
        kind = event["kind"]
        self.ids[event["id"]] = lineno
        if kind == "tool_call":
            self.step_lines.append(lineno)
            self.steps += 1
            self.rows += 1
            return
        if kind == "llm_call":
            self.step_lines.append(lineno)
            self.llm_steps.append(self.steps)
            self.steps += 1
        if kind not in BOOKKEEPING_KINDS:
            self.rows += 1
        if kind == "tools":
            self.tool_sets[event["hash"]] = lineno
        elif kind in _REQUEST_KINDS and event.get("request") is not None:
            context = event["request"].get("context") or {}
            base = context.get("base")
            appended = len(context.get("append") or ())
            known = self.requests.get(base) if base is not None else None
            if known is None:  # no base (or one the pass rejects anyway): the request stands alone
                self.requests[event["id"]] = RequestInfo(appended, 1, None)
            else:
                self.requests[event["id"]] = RequestInfo(int(context.get("keep", 0)) + appended, known.chain + 1, base)


def fast_loads() -> Callable[[bytes], Any]:
    """pydantic-core's JSON parser when it is installed (about twice as fast as ``json.loads`` on trace
    lines), else ``json.loads``. pydantic-core refuses the ``\\udXXX`` escapes of lone surrogates the
    writer may use (``core/trace/jsonsafe.py``): a line it refuses goes to ``json.loads``, which accepts
    them or raises the ``ValueError`` a broken line raises."""
    try:
        from pydantic_core import from_json
    except ImportError:
        return json.loads

    def loads(line: bytes) -> Any:
        try:
            return from_json(line)
        except ValueError:
            return json.loads(line)

    return loads


class RunIndex:
    """One run file's summary, health, counts and line index (``build``), and the readers on it."""

    def __init__(self, path: Path, stamp: tuple[int, int], view: InspectView, built: _Builder,
                 header: dict[str, Any]) -> None:
        self.path = path
        self.stamp = stamp
        self.view = view  # summary, health, and the rows of the window asked for when built
        self.header = header
        self.version = int(header["schema_version"])
        self._b = built
        self._cp_lines = [cp.lineno for cp in built.checkpoints]
        self._cp_rows = [cp.rows for cp in built.checkpoints]

    @classmethod
    def build(cls, path: Path, *, window: tuple[int, int] | None = (0, 0), with_cost: bool = True,
              price_limit: int | None = None) -> RunIndex:
        """One streaming pass over ``path`` (raises ``NeedsFullReader`` like ``inspect_trace``: the caller
        then reads the run through the validating reader). ``window``: the timeline rows to keep;
        ``with_cost``, ``price_limit``: as ``inspect_trace``'s."""
        info = os.stat(path)
        built = _Builder()
        view = inspect_trace(path, window=window, observer=built, with_cost=with_cost, loads=fast_loads(),
                             price_limit=price_limit)
        handle = open_trace(path)
        try:
            header = read_raw_header(handle, path)
        finally:
            handle.close()
        return cls(path, (info.st_size, info.st_mtime_ns), view, built, header)

    # ------------------------------------------------------------------------------ counts

    @property
    def steps(self) -> int:
        return self._b.steps

    @property
    def rows(self) -> int:
        return self._b.rows

    @property
    def checkpoints(self) -> int:
        return len(self._b.checkpoints)

    @property
    def llm_calls(self) -> int:
        return len(self._b.llm_steps)

    @property
    def failing_step(self) -> int | None:
        failing: int | None = self.view.summary["failing_step"]
        return failing

    # ------------------------------------------------------------------------------ reading lines

    def _events_from(self, checkpoint: Checkpoint) -> Iterator[tuple[int, dict[str, Any]]]:
        """``(line number, event filled in)`` from the checkpoint to the end of the file."""
        from replaykit.core.trace.migrate import migrate_event

        loads = fast_loads()
        handle = open_trace(self.path)
        try:
            handle.seek(checkpoint.offset)
            fill = SameFiller(raw=True)
            fill.restore(checkpoint.fill)
            for lineno, _offset, line, _is_last, complete in event_lines_at(handle, self.path, checkpoint.lineno,
                                                                           checkpoint.offset):
                try:
                    event = loads(line)
                except ValueError:
                    if complete:
                        raise
                    return  # the torn last line the pass skipped too
                if self.version != SCHEMA_VERSION:
                    event = migrate_event(event, self.version)
                fill(event)
                yield lineno, event
        finally:
            handle.close()

    def event_at_line(self, lineno: int) -> dict[str, Any]:
        checkpoint = self._b.checkpoints[max(0, bisect_right(self._cp_lines, lineno - 1) - 1)]
        for number, event in self._events_from(checkpoint):
            if number == lineno:
                return event
        raise BadInput(f"{self.path}: line {lineno} is not an event line")

    def event_by_id(self, event_id: str) -> dict[str, Any] | None:
        lineno = self._b.ids.get(event_id)
        return None if lineno is None else self.event_at_line(lineno)

    def step_event(self, step: int) -> dict[str, Any]:
        if not 0 <= step < self.steps:
            raise BadInput(f"step {step} out of range (run has {self.steps} steps: 0-{self.steps - 1})")
        return self.event_at_line(self._b.step_lines[step])

    def step_of(self, event_id: str) -> int | None:
        """The step number of an LLM or tool call event, by id."""
        lineno = self._b.ids.get(event_id)
        if lineno is None:
            return None
        at = bisect_right(self._b.step_lines, lineno) - 1
        return at if at >= 0 and self._b.step_lines[at] == lineno else None

    def rows_page(self, start: int, stop: int) -> list[dict[str, Any]]:
        """Timeline rows ``start <= n < stop`` (``core/analysis/timeline.py``), read from the checkpoint
        before the first of them."""
        if start >= stop or start >= self.rows:
            return []
        checkpoint = self._b.checkpoints[max(0, bisect_right(self._cp_rows, start) - 1)]
        timeline = Timeline(window=(start, stop), first_step=checkpoint.steps, first_row=checkpoint.rows)
        for _lineno, event in self._events_from(checkpoint):
            timeline.add(event)
            if timeline.shown >= stop:
                break
        failing = self.failing_step  # the run's first failing step, which the page may not start before
        for row in timeline.rows:
            row["failing"] = row["step"] is not None and row["step"] == failing
        return timeline.rows

    # ------------------------------------------------------------------------------ requests

    def request_info(self, event_id: str) -> RequestInfo | None:
        return self._b.requests.get(event_id)

    def tools_of(self, request: dict[str, Any]) -> list[dict[str, Any]] | None:
        ref = request.get("tools_ref")
        lineno = self._b.tool_sets.get(ref) if ref is not None else None
        if lineno is None:
            return None
        tools: list[dict[str, Any]] = self.event_at_line(lineno)["tools"]
        return tools

    def _tool_message(self, event: dict[str, Any]) -> Any:
        def message_of(ref: str, strip: bool) -> dict[str, Any]:
            target = self.event_by_id(ref)
            problem = check_ref(ref, target, target.get("kind") if target else None,
                                target.get("seq") if target else None, event.get("seq"))
            if problem is not None:
                raise BadInput(f"event {event.get('seq')}: request message {problem}")
            return tool_message(target, strip=strip)  # type: ignore[arg-type]  # checked above

        return message_of

    def appended_messages(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        """The messages a request appended to its base, each reference to a tool result expanded."""
        append = (event["request"].get("context") or {}).get("append") or ()
        return expand_refs(append, self._tool_message(event))

    def whole_messages(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        """The request's whole message list, rebuilt from its delta chain: the chain's requests and the
        tool calls they may refer to, read in one pass from the start to the request (O(the request), which may be the
        whole conversation; a page shows it only when asked)."""
        chain: set[str] = set()
        cursor: str | None = event["id"]
        while cursor is not None and cursor not in chain:
            chain.add(cursor)
            info = self._b.requests.get(cursor)
            cursor = info.base if info is not None else None
        last = self._b.ids[event["id"]]
        events_by_id: dict[str, dict[str, Any]] = {}
        # From the start: a reference may name a tool call older than the chain's first request.
        for lineno, item in self._events_from(self._b.checkpoints[0]):
            if item["id"] in chain or item["kind"] == "tool_call":
                events_by_id[item["id"]] = item
            if lineno >= last:
                break
        events_by_id[event["id"]] = event
        try:
            return resolve_delta_chain(event, events_by_id)
        except ValueError as exc:
            raise BadInput(f"{self.path}: {exc}") from exc

