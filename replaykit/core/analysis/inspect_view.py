"""What ``replaykit inspect RUN [--json]`` shows, computed in one streaming pass over the trace's lines.

The summary (status, steps, failing step, final answer, duration, model), the timeline rows
(``core/analysis/timeline.py``) and the health score (``core/analysis/health.py``) are all counted one event at a time
from the JSON of each line. Only the rows and the counters are kept: memory is O(rows printed), not
O(trace); no event is validated into the pydantic IR and no request message list is resolved (the
timeline shows none), so this module imports only the standard library.

The same pass runs over a loaded ``Run`` (``inspect_run``: ``--graph``, and the fallback below), so
there is one definition of the output whichever way the events come.

The line discipline (torn last line reported and skipped, errors about the file) is the validating
reader's (``core/trace/store_index.py``). The fast reader checks the structure of what it reads (known event
kinds, no unknown fields, the fields it shows); whatever it cannot vouch for (a line that is not JSON,
an unknown field, a broken delta reference, a ``request_fix``) raises ``NeedsFullReader`` and the caller
reads the run through ``Run.load``, which words the error exactly as every other command does (or
accepts what the fast reader could not judge). Deeper validation of every field is ``replaykit
validate``'s job.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from replaykit.core.analysis import cost
from replaykit.core.analysis.endpoint import local_host
from replaykit.core.analysis.health import Health, HealthTally
from replaykit.core.analysis.timeline import Timeline, event_data
from replaykit.core.gcpause import cyclic_gc_paused
from replaykit.core.trace.raw_check import (  # noqa: F401  (re-exported: inspect's callers and tests)
    EDIT_FIELDS,
    EVENT_FIELDS,
    HEADER_FIELDS,
    LINEAGE_FIELDS,
    PROVENANCES,
    SOURCE_FIELDS,
    EventCheck,
    NeedsFullReader,
    check_header,
)
from replaykit.core.trace.store_index import (
    SCHEMA_VERSION,
    ReadReport,
    SameFiller,
    event_lines_at,
    open_trace,
    read_raw_header,
)
from replaykit.core.trace.wire_record import step_wire

if TYPE_CHECKING:
    from replaykit.core.trace.run import Run


@dataclass
class InspectView:
    """The summary fields, the timeline rows and the health of one run."""

    summary: dict[str, Any]
    rows: list[dict[str, Any]]
    health: Health
    report: ReadReport | None = None
    extras: dict[str, Any] = field(default_factory=dict)
    #: the run's known cost in USD (None: unknown, or not priced); what the health score was given
    cost: float | None = None
    #: the cost was left unknown because the run has more billed calls than the pass was asked to price
    cost_skipped: bool = False

    def to_json(self) -> dict[str, Any]:
        return {**self.summary, "timeline": self.rows, **self.extras, "health": self.health.to_json()}


class _KnownCost:
    """The run's known cost in USD as ``core.cost.run_cost(run).paid.value`` gives it, counted per LLM
    step: None as soon as one billed step cannot be priced. genai-prices (and with it pydantic) is
    imported only when a step really has a price to look up."""

    def __init__(self, header: dict[str, Any], limit: int | None = None) -> None:
        self.header = header
        #: price at most this many billed calls (about 0.3 ms each in genai-prices): past it the total is
        #: unknown and ``skipped`` says why
        self.limit = limit
        self.priced = 0
        self.skipped = False
        base_url = header.get("base_url")
        self.local = bool(base_url and local_host(base_url))
        self.priceable: bool | None = None  # genai-prices installed (looked up once, on the first billed step)
        self.total: Decimal | None = Decimal(0)

    def add(self, event: dict[str, Any]) -> None:
        if self.total is None or event.get("provenance", "recorded") not in cost.BILLED_PROVENANCES:
            return
        if self.limit is not None and self.priced >= self.limit:
            self.total, self.skipped = None, True
            return
        self.priced += 1
        response, request = event["response"], event["request"]
        model = response.get("model") or request.get("model") or self.header.get("model")
        usage = response.get("usage")
        if self.priceable is None:
            self.priceable = find_spec("genai_prices") is not None
        if self.local or not model or not self.priceable or usage is None \
                or all(usage.get(k) is None for k in ("input_tokens", "output_tokens", "total_tokens")):
            self.total = None  # what ``price_usage`` answers for these, without importing genai-prices
            return
        header = self.header
        provider = step_wire(event).get("provider") or header.get("provider")  # a live step's own provider
        price = cost.price_usage(model, usage, provider=provider, base_url=header.get("base_url"),
                                 api=request.get("api", "openai-chat"),
                                 when=cost.call_time(header["created_at"], float(event.get("t", 0.0))))
        self.total = None if price.total is None else self.total + price.total

    @property
    def value(self) -> float | None:
        return None if self.total is None else float(self.total)


def _lineage_json(lineage: dict[str, Any]) -> dict[str, Any]:
    """A header's lineage as ``model_dump(exclude_none=True)`` writes it: field order, no None."""
    out = {k: lineage[k] for k in LINEAGE_FIELDS if lineage.get(k) is not None}
    if "edit" in out:
        out["edit"] = {k: out["edit"][k] for k in EDIT_FIELDS if out["edit"].get(k) is not None}
    return out


class _Inspector:
    """One pass: feed the header, then every event, then ``view()``."""

    def __init__(self, header: dict[str, Any], *, include_bookkeeping: bool, raw: bool, with_cost: bool,
                 window: tuple[int, int] | None = None, price_limit: int | None = None) -> None:
        self.raw = raw  # lines straight from the file: check their structure and references
        if raw:
            _check_header(header)
        self.header = header
        self.timeline = Timeline(include_bookkeeping=include_bookkeeping, window=window)
        self.health = HealthTally(header)
        self.cost = _KnownCost(header, price_limit) if with_cost else None
        self.events = 0
        self.end = 0.0
        self.status = "incomplete"
        self.final_answer: str | None = None
        self.first_llm_model: tuple[str | None] | None = None
        metadata = header.get("metadata") or {}
        self.meta_model = metadata.get("model")
        self._raw_check = EventCheck()  # core/trace/raw_check.py

    def add(self, event: dict[str, Any]) -> None:
        if self.raw:
            self._check(event)
        kind = event["kind"]
        self.events += 1
        self.end = max(self.end, float(event.get("t", 0.0)) + float(event.get("duration") or 0.0))
        if kind == "llm_call":
            response = event["response"]
            if self.first_llm_model is None:
                self.first_llm_model = (event["request"].get("model") or response.get("model"),)
            message = response["message"]
            calls = any(p.get("type") == "tool_call" for p in message.get("parts", ()))
            self.final_answer = None if calls else "".join(
                p.get("text", "") for p in message.get("parts", ()) if p.get("type") == "text")
            if self.cost is not None:
                self.cost.add(event)
        elif kind in ("run_end", "turn_end"):
            self.status = event.get("status", "completed")
            if event.get("final_answer") is not None:
                self.final_answer = event["final_answer"]
        elif kind == "meta" and "model" in event["data"]:
            self.meta_model = event["data"]["model"]
        self.timeline.add(event)
        self.health.add(event)

    def _check(self, event: Any) -> None:
        """What the validating reader would refuse and this pass would not notice by itself."""
        self._raw_check(event)

    def view(self, report: ReadReport | None = None) -> InspectView:
        header = self.header
        model = header.get("model")
        if not model:
            if self.first_llm_model is not None:
                model = self.first_llm_model[0]
            else:
                model = self.meta_model if isinstance(self.meta_model, str) else None
        source = header.get("source") or {}
        lineage = header.get("lineage")
        summary = {
            "run_id": header["run_id"],
            "created_at": header["created_at"],
            "source": {"framework": source.get("framework", "unknown"),
                       **{k: source[k] for k in SOURCE_FIELDS[1:] if source.get(k) is not None}},
            "model": model,
            "provider": header.get("provider"),
            "base_url": header.get("base_url"),
            "api_mode": header.get("api_mode"),
            "lineage": _lineage_json(lineage) if lineage else None,
            "tags": list(header.get("tags", ())),
            "status": self.status,
            "steps": self.timeline.steps,
            "events": self.events,
            "failing_step": self.timeline.failing_step,
            "final_answer": self.final_answer,
            "duration": round(self.end, 6),
        }
        known = None if self.cost is None else self.cost.value
        return InspectView(summary, self.timeline.rows, self.health.health(cost=known), report, cost=known,
                           cost_skipped=self.cost is not None and self.cost.skipped)


_check_header = check_header  # core/trace/raw_check.py


class LineObserver(Protocol):
    def __call__(self, lineno: int, offset: int, event: dict[str, Any], fill: SameFiller) -> None:
        """Called with each event line's number, offset and JSON before it is filled in and counted (so
        ``fill.state()`` is the state a reader starting at this line restores)."""


def inspect_trace(path: Path, *, include_bookkeeping: bool = False, with_cost: bool = True,
                  window: tuple[int, int] | None = None, observer: LineObserver | None = None,
                  loads: Callable[[bytes], Any] = json.loads, price_limit: int | None = None) -> InspectView:
    """Inspect a trace file in one streaming pass (raises ``NeedsFullReader``, see the module doc).
    ``window``: keep only the timeline rows ``start <= n < stop`` (every row is still counted);
    ``observer``: sees every event line (``core/analysis/run_index.py`` builds its index from them);
    ``loads``: the JSON parser of a line (a faster one must raise ``ValueError`` where ``json.loads`` does);
    ``price_limit``: price at most this many calls (past it the cost is unknown, ``cost_skipped``)."""
    from replaykit.core.trace.migrate import migrate_event

    report = ReadReport(path)
    handle = open_trace(path)
    # The pass keeps a growing list of acyclic rows; the cyclic GC would rescan it again and again
    # (measured: it doubles the cost of parsing and of building rows). Nothing here makes cycles.
    with cyclic_gc_paused():
        try:
            header = read_raw_header(handle, path)
            version = int(header["schema_version"])  # one of READABLE_SCHEMA_VERSIONS (read_raw_header)
            inspector = _Inspector(header, include_bookkeeping=include_bookkeeping, raw=True, with_cost=with_cost,
                                   window=window, price_limit=price_limit)
            fill = SameFiller(raw=True)  # schema 2: what ``same`` correlations and requests leave out
            for lineno, offset, line, _is_last, complete in event_lines_at(handle, path):
                try:
                    event = loads(line)
                except ValueError:
                    if complete:  # a complete line that is not JSON: corruption, worded by the full reader
                        raise NeedsFullReader("a line is not JSON") from None
                    report.torn(lineno, line)
                    break
                if version != SCHEMA_VERSION and isinstance(event, dict):
                    event = migrate_event(event, version)
                try:
                    if observer is not None:
                        observer(lineno, offset, event, fill)
                    fill(event)
                    inspector.add(event)
                except (KeyError, TypeError, AttributeError, ValueError) as exc:
                    raise NeedsFullReader(f"line {lineno}: {exc}") from exc
        finally:
            handle.close()
    return inspector.view(report)


def inspect_run(run: Run, *, include_bookkeeping: bool = False, with_cost: bool = True,
                window: tuple[int, int] | None = None) -> InspectView:
    """The same view of a loaded (validated) run."""
    from replaykit.core.trace import jsonsafe

    inspector = _Inspector(jsonsafe.model_data(run.header, exclude_none=True), include_bookkeeping=include_bookkeeping,
                           raw=False, with_cost=with_cost, window=window)
    for event in run.events:
        inspector.add(event_data(event))
    return inspector.view(run.report)


def inspect_file(path: Path, *, with_cost: bool = True, window: tuple[int, int] | None = None) -> InspectView:
    """``inspect_trace``, or the same view through the validating reader when the fast pass cannot vouch
    for the file (``NeedsFullReader``): what a list of runs shows per run. Raises what ``Run.load`` raises."""
    try:
        return inspect_trace(path, with_cost=with_cost, window=window)
    except NeedsFullReader:
        from replaykit.core.trace.run import Run

        return inspect_run(Run.load(path), with_cost=with_cost, window=window)
