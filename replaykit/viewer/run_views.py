"""What the run, step and request pages show, read through each run's index (``core/analysis/run_index.py``).

A run's first page costs one streaming pass over its file (no pydantic, no rows kept but the page's);
the index it leaves is cached by the file's size and modification time, so every other page of the run,
and every step page, reads only the lines it shows (a seek to the checkpoint before them). A step page
shows its request's new messages (what the request appended to the previous one, tool results
expanded), and the whole request only when it is short (``INLINE_MESSAGES``); the whole request of any
step is its own page, a page of messages at a time. So no page grows with the run.

A run the fast pass cannot vouch for (``NeedsFullReader``: an unknown field, a ``request_fix``...) is read
through the validating reader (``Run.load``) as before, and shown the same way.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replaykit.core.analysis.health import Health
from replaykit.core.analysis.inspect_view import NeedsFullReader, inspect_run
from replaykit.core.analysis.run_index import RunIndex
from replaykit.core.errors import BadInput, ReplaykitError
from replaykit.core.trace.ir import RunHeader
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore

#: Runs whose index is kept (a debugging session moves between a run, its branch and a play).
INDEX_CACHE = 8
#: Timeline rows a page of the run page shows.
ROWS_PER_PAGE = 200
#: A request of at most this many messages, in a delta chain of at most ``INLINE_CHAIN`` requests, is shown
#: whole on its step page; a longer one shows its new messages and links to its own page.
INLINE_MESSAGES = 50
INLINE_CHAIN = 8
#: Messages a page of the whole-request page shows.
MESSAGES_PER_PAGE = 200
#: Timeline rows of a subagent's run shown nested under the event that launched it.
CHILD_ROWS = 200
#: The run page prices at most this many LLM calls (genai-prices takes about 0.3 ms a call: 11,000 calls
#: would be 3 s); past it the cost line points to ``replaykit cost``.
PRICE_LIMIT = 1000


class PageOutOfRange(BadInput):
    """A page number past the last page (answered 404)."""


def page_count(total: int, size: int) -> int:
    return max(1, -(-total // size))


def check_page(page: int, total: int, size: int, what: str) -> int:
    pages = page_count(total, size)
    if page > pages:
        raise PageOutOfRange(f"page {page} of {pages}: there are {total} {what} ({size} a page)")
    return pages


@dataclass
class RunView:
    """A run as its page shows it (the fields the templates read)."""

    run_id: str
    header: RunHeader
    status: str
    model: str | None
    steps: int
    llm_calls: int
    duration: float
    failing_step: int | None
    final_answer: str | None
    rows: int  # timeline rows over the whole run
    health: Health
    cost: float | None
    cost_skipped: bool = False
    index: RunIndex | None = None
    run: Run | None = None  # (read through the validating reader)
    mtime: float = 0.0
    _all_rows: list[dict[str, Any]] = field(default_factory=list)

    def rows_page(self, start: int, stop: int) -> list[dict[str, Any]]:
        if self.index is not None:
            return self.index.rows_page(start, stop)
        return self._all_rows[start:stop]


def _header(raw: dict[str, Any]) -> RunHeader:
    from replaykit.core.trace.ir import HEADER_ADAPTER
    from replaykit.core.trace.migrate import migrate_header

    header: RunHeader = HEADER_ADAPTER.validate_python(migrate_header(dict(raw)))
    return header


class RunViews:
    """Runs of one store as pages, by id; each run's index cached while its file is unchanged."""

    def __init__(self, store: RunStore) -> None:
        self.store = store
        self._cache: OrderedDict[Path, tuple[tuple[int, int], RunView]] = OrderedDict()
        self._lock = threading.Lock()
        self._request: tuple[RunView, int, dict[str, Any]] | None = None  # the last whole request built

    def get(self, run_id: str) -> RunView:
        path = self.store.resolve(run_id)
        info = path.stat()
        stamp = (info.st_size, info.st_mtime_ns)
        with self._lock:
            cached = self._cache.get(path)
            if cached is not None and cached[0] == stamp:
                self._cache.move_to_end(path)
                return cached[1]
        view = self._build(path)
        view.mtime = info.st_mtime
        with self._lock:
            self._cache[path] = (stamp, view)
            while len(self._cache) > INDEX_CACHE:
                self._cache.popitem(last=False)
        return view

    @staticmethod
    def _build(path: Path) -> RunView:
        try:
            index = RunIndex.build(path, price_limit=PRICE_LIMIT)
        except NeedsFullReader:
            run = Run.load(path)
            inspected = inspect_run(run)
            info = inspected.summary
            return RunView(run.run_id, run.header, info["status"], info["model"], info["steps"],
                           sum(1 for s in run.steps if s.kind == "llm"), info["duration"], info["failing_step"],
                           info["final_answer"], len(inspected.rows), inspected.health, inspected.cost, run=run,
                           _all_rows=inspected.rows)
        info = index.view.summary
        return RunView(info["run_id"], _header(index.header), info["status"], info["model"], info["steps"],
                       index.llm_calls, info["duration"], info["failing_step"], info["final_answer"], index.rows,
                       index.view.health, index.view.cost, index.view.cost_skipped, index=index)

    # ---------------------------------------------------------------------------------- subagents

    def children(self, rows: list[dict[str, Any]], depth: int = 0) -> dict[str, Any]:
        """The first rows of each subagent's child run present in the store (nested, at most 3 deep)."""
        children: dict[str, Any] = {}
        if depth >= 3:
            return children
        for row in rows:
            child_id = row.get("child_run_id")
            if row["kind"] != "subagent" or row.get("phase") != "start" or not child_id or child_id in children:
                continue
            try:
                child = self.get(child_id)
            except (ReplaykitError, OSError):
                continue
            child_rows = child.rows_page(0, CHILD_ROWS)
            children[child_id] = {"run": child, "rows": child_rows, "children": self.children(child_rows, depth + 1)}
        return children

    # ---------------------------------------------------------------------------------- one step

    def step(self, view: RunView, index: int) -> dict[str, Any]:
        """The step page's document (``core/analysis/step_detail.py``'s shape) and what goes with it."""
        from replaykit.core.analysis.step_detail import step_detail

        if view.index is None:
            run = view.run
            assert run is not None
            step = run.step(index)
            short = step.kind != "llm" or len(run.request_messages(step.event)) <= INLINE_MESSAGES
            doc = step_detail(run, index, whole_request=short)
            wait = _tool_wait_of_run(run, index) if doc["kind"] == "tool" and doc.get("duration") is None else None
            return {"d": doc, "base_step": _base_step_of_run(run, index), "tool_wait": wait}
        return _indexed_step(view, view.index, index)

    def whole_request(self, view: RunView, index: int) -> dict[str, Any]:
        """Step ``index``'s whole request as the provider received it (every message): ``api``, ``model``,
        ``tools``, ``params``, ``provider_messages`` (None when the API has no codec: then ``messages``, in
        the IR), ``body``, ``losses``. The last one built is kept while the run is unchanged: its pages
        are read one after the other."""
        from replaykit.core.analysis.step_detail import provider_request

        with self._lock:
            if self._request is not None and self._request[0] is view and self._request[1] == index:
                return self._request[2]
        if view.index is None:
            run = view.run
            assert run is not None
            from replaykit.core.trace.ir import LLMCallEvent

            asked = run.step(index).event
            if not isinstance(asked, LLMCallEvent):
                raise BadInput(f"step {index} is a tool call: it has no request")
            doc = provider_request(asked, run.request_messages(asked), run.request_tools(asked.request))
        else:
            from replaykit.core.trace.ir import EVENT_ADAPTER, LLMCallEvent, Message, ToolSpec

            idx = view.index
            raw = idx.step_event(index)
            if raw["kind"] != "llm_call":
                raise BadInput(f"step {index} is a tool call: it has no request")
            event = EVENT_ADAPTER.validate_python(raw)
            assert isinstance(event, LLMCallEvent)
            tools = idx.tools_of(raw["request"])
            messages = [Message.model_validate(m) for m in idx.whole_messages(raw)]
            doc = provider_request(event, messages, None if tools is None else [ToolSpec.model_validate(t)
                                                                                for t in tools])
        with self._lock:
            self._request = (view, index, doc)
        return doc


def _short(message_count: int, chain: int) -> bool:
    return message_count <= INLINE_MESSAGES and chain <= INLINE_CHAIN


def _indexed_step(view: RunView, idx: RunIndex, index: int) -> dict[str, Any]:
    from replaykit.core.analysis.step_detail import llm_detail, one_step_cost, step_head, tool_detail
    from replaykit.core.trace.ir import EVENT_ADAPTER, LLMCallEvent, Message, ToolCallEvent, ToolSpec

    raw = idx.step_event(index)
    event = EVENT_ADAPTER.validate_python(raw)
    assert isinstance(event, LLMCallEvent | ToolCallEvent)
    doc = step_head(view.run_id, index, event, failing=view.failing_step == index)
    base_step = None
    wait = None
    if isinstance(event, LLMCallEvent):
        info = idx.request_info(event.id)
        count = info.message_count if info is not None else len(event.request.context.append)
        chain = info.chain if info is not None else 1
        tools = idx.tools_of(raw["request"])
        appended = [Message.model_validate(m) for m in idx.appended_messages(raw)]
        whole = [Message.model_validate(m) for m in idx.whole_messages(raw)] if _short(count, chain) else None
        doc.update(llm_detail(event, messages=whole, appended=appended, message_count=count,
                              tools=None if tools is None else [ToolSpec.model_validate(t) for t in tools]))
        doc["cost"] = one_step_cost(view.header, index, event)
        if info is not None and info.base is not None:
            base_step = idx.step_of(info.base)
    else:
        doc.update(tool_detail(event))
        if event.duration is None:
            wait = _tool_wait(raw, _asking_call(idx, raw, index))
    return {"d": doc, "base_step": base_step, "tool_wait": wait}


def _asking_call(idx: RunIndex, tool: dict[str, Any], index: int) -> dict[str, Any] | None:
    """The LLM call whose answer asked for this tool call: by its id when recorded, else the nearest
    earlier LLM step naming the call id (looked for among the 16 steps before)."""
    if tool.get("llm_call_id"):
        asked = idx.event_by_id(tool["llm_call_id"])
        if asked is not None and asked.get("kind") == "llm_call":
            return asked
    for earlier in range(index - 1, max(-1, index - 17), -1):
        event = idx.step_event(earlier)
        if event["kind"] == "llm_call" and _asks_for(event, tool["call_id"]):
            return event
    return None


def _asks_for(event: dict[str, Any], call_id: str) -> bool:
    parts = event["response"]["message"].get("parts") or ()
    return any(p.get("type") == "tool_call" and p.get("id") == call_id for p in parts)


def _tool_wait(tool: dict[str, Any], asked: dict[str, Any] | None) -> float | None:
    """For a tool step recorded without its own duration (through an HTTP client, the tool runs out of
    sight): the time from the answer that asked for it to the event that carried its result."""
    if asked is None:
        return None
    end = float(asked.get("t", 0.0)) + float(asked.get("duration") or 0.0)
    return max(0.0, round(float(tool.get("t", 0.0)) - end, 6))


def _tool_wait_of_run(run: Run, index: int) -> float | None:
    from replaykit.core.trace import jsonsafe
    from replaykit.core.trace.ir import LLMCallEvent

    event = run.step(index).event
    for earlier in reversed(run.steps[:index]):
        asked = earlier.event
        if isinstance(asked, LLMCallEvent) and any(c.id == getattr(event, "call_id", None)
                                                   for c in asked.response.message.tool_calls):
            return _tool_wait(jsonsafe.model_data(event), jsonsafe.model_data(asked))
    return None


def _base_step_of_run(run: Run, index: int) -> int | None:
    from replaykit.core.trace.ir import LLMCallEvent

    event = run.step(index).event
    if not isinstance(event, LLMCallEvent) or event.request.context.base is None:
        return None
    base = event.request.context.base
    return next((s.index for s in run.steps if s.event.id == base), None)
