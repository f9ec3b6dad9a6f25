"""The cost ledger: what each LLM step cost, what a run cost, and what a branch saved.

Prices come from `genai-prices` (pydantic/genai-prices, the package PydanticAI uses), imported lazily.
It is a maintained, dated price database, not a table written here. When the package is missing, the
model or the endpoint is unknown, or a step has no token usage, the cost is **unknown** (`None`),
never 0. Only steps that made no provider call (served from the record, synthetic, edited) are known
to have cost this run nothing.

Billing by provenance:

- recorded / reconstructed: paid by the original run.
- live / desync: paid by this replay.
- served: free here. The ledger still prices it, as "served for free", which is what it would have
  cost to call the provider again.
- synthetic / edited: no provider call, so exactly 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast

from replaykit.core.analysis.endpoint import local_host as _is_local
from replaykit.core.trace.wire_record import step_wire

if TYPE_CHECKING:  # the IR (pydantic) is imported only where a Usage model must be built: the streaming
    # ``inspect`` prices plain JSON usage through this module without loading it
    from replaykit.core.trace.ir import LLMCallEvent, RunHeader, Usage

if TYPE_CHECKING:
    from replaykit.core.trace.run import Run

__all__ = [
    "BILLED_PROVENANCES",
    "FREE_PROVENANCES",
    "BranchComparison",
    "Price",
    "RunCost",
    "StepCost",
    "Total",
    "price_usage",
    "pricing_source",
    "run_cost",
]

# ``Provenance`` values (a StrEnum: its members are equal to, and hash as, these strings)
BILLED_PROVENANCES = frozenset({"recorded", "reconstructed", "live", "desync"})
LIVE_PROVENANCES = frozenset({"live", "desync"})
FREE_PROVENANCES = frozenset({"served", "synthetic", "edited"})
NO_CALL_PROVENANCES = frozenset({"synthetic", "edited"})
_TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "total_tokens")
ZERO = Decimal(0)


@dataclass(frozen=True, slots=True)
class Price:
    """The price of one LLM call's usage, or why it is unknown (`total is None`)."""

    total: Decimal | None
    input: Decimal | None = None
    output: Decimal | None = None
    provider: str | None = None  # genai-prices provider id it was priced as
    model: str | None = None  # genai-prices model id it matched
    reason: str | None = None  # set when total is None

    @property
    def known(self) -> bool:
        return self.total is not None


def pricing_source() -> str | None:
    """`genai-prices <version>` when installed, else None."""
    gp = _genai_prices()
    return None if gp is None else f"genai-prices {gp.__version__}"


def _genai_prices() -> Any:
    try:
        import genai_prices
    except ImportError:
        return None
    return genai_prices


def _unknown(reason: str) -> Price:
    return Price(total=None, reason=reason)


def _gp_usage(gp: Any, usage: Usage | Mapping[str, Any], api: str | None) -> Any:
    """genai-prices counts input tokens *including* cache reads and writes (OpenAI's convention).

    Anthropic reports `input_tokens` without them, and so does Bedrock Converse (`inputTokens` beside
    `cacheReadInputTokens` / `cacheWriteInputTokens`); their codecs keep it that way, so they are added
    back here. Gemini's `promptTokenCount` already includes `cachedContentTokenCount`.
    """
    if isinstance(usage, Mapping):
        counts = {k: usage.get(k) for k in _TOKEN_FIELDS}
        if all(v is None or type(v) is int for v in counts.values()):
            usage = cast("Usage", SimpleNamespace(**counts))  # plain counts (a trace line): nothing to validate
        else:
            from replaykit.core.trace.ir import Usage  # validates (or refuses) anything else

            usage = Usage(**{k: v for k, v in usage.items() if k in Usage.model_fields})
    inp = usage.input_tokens or 0
    read = usage.cache_read_tokens or 0
    write = usage.cache_write_tokens or 0
    if api in ("anthropic-messages", "bedrock-converse"):
        inp += read + write
    out = usage.output_tokens
    if out is None and usage.total_tokens is not None and usage.input_tokens is not None:
        out = max(usage.total_tokens - usage.input_tokens, 0)
    kwargs: dict[str, int] = {"input_tokens": inp, "output_tokens": out or 0}
    if read:
        kwargs["cache_read_tokens"] = read
    if write:
        kwargs["cache_write_tokens"] = write
    return gp.Usage(**kwargs)


def price_usage(
    model: str | None,
    usage: Usage | Mapping[str, Any] | None,
    *,
    provider: str | None = None,
    base_url: str | None = None,
    api: str | None = None,
    when: datetime | None = None,
    price_as: str | None = None,
) -> Price:
    """Price one LLM call.

    Where the call went is taken, in order, from `price_as` (a genai-prices provider id chosen by the
    user), then `base_url` when it matches a known provider's API, then `provider`, then the model name.
    A call sent to a local or private endpoint (127.0.0.1, 10.x, localhost) is unknown unless
    `price_as` is given: whatever answered there, it was not a priced provider.
    """
    gp = _genai_prices()
    if gp is None:
        return _unknown("genai-prices is not installed (pip install 'replaykit[cost]')")
    if not model:
        return _unknown("the model is not recorded")
    local = _is_local(base_url) if base_url and not price_as else None
    if local:
        return _unknown(f"sent to a local endpoint ({local}), not a priced provider; "
                        "use --provider to price it as one")
    if usage is None or (not isinstance(usage, Mapping) and usage.input_tokens is None
                         and usage.output_tokens is None and usage.total_tokens is None):
        return _unknown("no token usage recorded")
    try:
        gp_usage = _gp_usage(gp, usage, api)
    except (TypeError, ValueError) as exc:
        return _unknown(f"token usage is malformed ({exc})")
    when = when or datetime.now(tz=UTC)

    attempts: list[dict[str, str]] = []
    if price_as:
        attempts.append({"provider_id": price_as})
    else:
        if base_url:
            attempts.append({"provider_api_url": base_url})
        if provider:
            attempts.append({"provider_id": provider})
        attempts.append({})
    last = "unknown"
    for where in attempts:
        try:
            calc = gp.calc_price(gp_usage, model, genai_request_timestamp=when, **where)
        except LookupError as exc:
            last = str(exc)
            if "find model" in last or price_as:
                break  # the provider is known but does not list the model: do not guess another
            continue
        except Exception as exc:  # a pricing bug must not break a report
            last = f"{type(exc).__name__}: {exc}"
            break
        return Price(total=Decimal(calc.total_price), input=Decimal(calc.input_price),
                     output=Decimal(calc.output_price), provider=calc.provider.id, model=calc.model.id)
    return _unknown(f"no price for model {model!r} ({' '.join(last.split())[:200]})")


# ------------------------------------------------------------------------------------ the ledger


@dataclass(frozen=True, slots=True)
class StepCost:
    step: int
    event_id: str
    provenance: str
    model: str | None
    usage: Usage | None
    price: Price

    @property
    def billed(self) -> bool:
        """Did this run pay a provider for this step?"""
        return self.provenance in BILLED_PROVENANCES

    @property
    def cost(self) -> Decimal | None:
        """What this run paid: the price when billed, 0 when no call was made, None when unknown."""
        if self.provenance in FREE_PROVENANCES:
            return ZERO
        return self.price.total


@dataclass(slots=True)
class Total:
    known: Decimal = ZERO
    steps: int = 0
    unknown_steps: int = 0
    unknown_reasons: list[str] = field(default_factory=list)

    def add(self, value: Decimal | None, reason: str | None = None) -> None:
        self.steps += 1
        if value is None:
            self.unknown_steps += 1
            if reason and reason not in self.unknown_reasons:
                self.unknown_reasons.append(reason)
        else:
            self.known += value

    @property
    def value(self) -> Decimal | None:
        """The total, or None when any step's cost is unknown (a partial sum is never passed off as it)."""
        return None if self.unknown_steps else self.known


@dataclass(frozen=True, slots=True)
class BranchComparison:
    parent_run_id: str
    relation: str
    cut_step: int | None
    original_total: Total  # everything the original run paid
    original_after_cut: Total  # what the original paid from the cut on (the part re-run live here)


@dataclass(frozen=True, slots=True)
class RunCost:
    run_id: str
    model: str | None
    steps: list[StepCost]
    paid: Total  # every step this run paid for (recorded + live)
    live: Total  # steps paid during this replay
    served: Total  # steps served from the record: their price, saved
    no_call: int  # synthetic / edited steps: no provider call
    source: str | None  # pricing source (genai-prices version)
    branch: BranchComparison | None = None
    parent_note: str | None = None


def call_time(created_at: str, offset: float) -> datetime:
    try:
        start = datetime.fromisoformat(created_at)
    except ValueError:
        return datetime.now(tz=UTC)
    if start.tzinfo is None:
        start = start.replace(tzinfo=UTC)
    return start + timedelta(seconds=max(offset, 0.0))


def step_costs(run: Run, *, price_as: str | None = None) -> list[StepCost]:
    return [step_cost(run.header, step.index, cast("LLMCallEvent", step.event), price_as=price_as)
            for step in run.steps if step.event.kind == "llm_call"]


def step_cost(header: RunHeader, index: int, event: LLMCallEvent, *, price_as: str | None = None) -> StepCost:
    """The ledger line of one LLM step (step number ``index``): readers that hold one step price it alone."""
    model = event.response.model or event.request.model or header.model
    provenance = str(event.provenance)
    usage = event.response.usage
    if provenance in NO_CALL_PROVENANCES:
        price = Price(total=ZERO, reason=None)
    else:
        # a live step of a play names the provider it ran on (core/trace/wire_record.py): priced there
        provider = step_wire(event).get("provider") or header.provider
        price = price_usage(model, usage, provider=provider, base_url=header.base_url,
                            api=event.request.api, when=call_time(header.created_at, event.t), price_as=price_as)
    return StepCost(index, event.id, provenance, model, usage, price)


def _totals(steps: Iterable[StepCost], after: int | None = None) -> tuple[Total, Total, Total, int]:
    paid, live, served, no_call = Total(), Total(), Total(), 0
    for s in steps:
        if after is not None and s.step < after:
            continue
        prov = s.provenance
        if prov in NO_CALL_PROVENANCES:
            no_call += 1
        elif prov == "served":
            served.add(s.price.total, s.price.reason)
        else:
            paid.add(s.price.total, s.price.reason)
            if prov in LIVE_PROVENANCES:
                live.add(s.price.total, s.price.reason)
    return paid, live, served, no_call


def run_cost(run: Run, *, parent: Run | None = None, price_as: str | None = None,
             parent_note: str | None = None) -> RunCost:
    """The ledger of `run`; with `parent` (the run it was branched or replayed from), the comparison."""
    steps = step_costs(run, price_as=price_as)
    paid, live, served, no_call = _totals(steps)
    branch = None
    lineage = run.header.lineage
    if parent is not None and lineage is not None:
        parent_steps = step_costs(parent, price_as=price_as)
        original, _, _, _ = _totals(parent_steps)
        after, _, _, _ = _totals(parent_steps, after=lineage.parent_step or 0)
        branch = BranchComparison(parent.run_id, lineage.relation, lineage.parent_step, original, after)
    return RunCost(run.run_id, run.model, steps, paid, live, served, no_call, pricing_source(), branch, parent_note)


# ------------------------------------------------------------------------------------------- JSON


def _money(value: Decimal | None) -> float | None:
    return None if value is None else float(value)


def total_json(total: Total) -> dict[str, Any]:
    return {
        "cost": _money(total.value),
        "known_cost": _money(total.known),
        "steps": total.steps,
        "unknown_steps": total.unknown_steps,
        "unknown_reasons": total.unknown_reasons,
    }


def to_json(ledger: RunCost) -> dict[str, Any]:
    """The `replaykit cost --json` document. Costs are USD numbers; `null` means unknown, never 0."""
    doc: dict[str, Any] = {
        "run_id": ledger.run_id,
        "model": ledger.model,
        "currency": "USD",
        "pricing_source": ledger.source,
        "steps": [
            {
                "step": s.step,
                "event_id": s.event_id,
                "provenance": s.provenance,
                "billed": s.billed,
                "model": s.model,
                "input_tokens": s.usage.input_tokens if s.usage else None,
                "output_tokens": s.usage.output_tokens if s.usage else None,
                "cache_read_tokens": s.usage.cache_read_tokens if s.usage else None,
                "cache_write_tokens": s.usage.cache_write_tokens if s.usage else None,
                "price": _money(s.price.total),
                "cost": _money(s.cost),
                "priced_as": None if not s.price.provider else f"{s.price.provider}:{s.price.model}",
                "unknown_reason": s.price.reason,
            }
            for s in ledger.steps
        ],
        "paid": total_json(ledger.paid),
        "live": total_json(ledger.live),
        "served_free": total_json(ledger.served),
        "no_call_steps": ledger.no_call,
        "branch": None,
    }
    if ledger.branch is not None:
        b = ledger.branch
        doc["branch"] = {
            "parent_run_id": b.parent_run_id,
            "relation": b.relation,
            "cut_step": b.cut_step,
            "original": total_json(b.original_total),
            "original_from_cut": total_json(b.original_after_cut),
        }
    if ledger.parent_note:
        doc["parent_note"] = ledger.parent_note
    return doc
