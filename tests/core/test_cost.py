"""The cost ledger: pricing from genai-prices, unknown never 0, runs, and branches against originals."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from replaykit.core.analysis.cost import price_usage, pricing_source, run_cost, to_json
from replaykit.core.trace.ir import (
    Lineage,
    LLMCallEvent,
    LLMRequest,
    LLMResponse,
    Message,
    Provenance,
    RunHeader,
    TextPart,
    ToolCallEvent,
    Usage,
)
from replaykit.core.trace.run import Run

genai_prices = pytest.importorskip("genai_prices")
WHEN = datetime(2026, 1, 15, tzinfo=UTC)


def _reference(model: str, provider: str, **tokens: int) -> Decimal:
    """genai-prices called directly, to check replaykit's mapping (not the prices themselves)."""
    return Decimal(genai_prices.calc_price(genai_prices.Usage(**tokens), model, provider_id=provider,
                                           genai_request_timestamp=WHEN).total_price)


# -- pricing one call ------------------------------------------------------------------------------

def test_openai_call_priced_from_genai_prices() -> None:
    price = price_usage("gpt-4o", Usage(input_tokens=1000, output_tokens=500, cache_read_tokens=200),
                        provider="openai", when=WHEN)
    assert price.known and price.total is not None and price.total > 0
    assert price.total == _reference("gpt-4o", "openai", input_tokens=1000, output_tokens=500, cache_read_tokens=200)
    assert price.total == price.input + price.output  # type: ignore[operator]
    assert (price.provider, price.model) == ("openai", "gpt-4o")
    # cached input is cheaper than fresh input: the cache tokens were passed through, not dropped
    fresh = price_usage("gpt-4o", Usage(input_tokens=1000, output_tokens=500), provider="openai", when=WHEN)
    assert fresh.total is not None and fresh.total > price.total


def test_price_scales_linearly_with_tokens() -> None:
    one = price_usage("gpt-4o-mini", Usage(input_tokens=1000, output_tokens=100), provider="openai", when=WHEN)
    two = price_usage("gpt-4o-mini", Usage(input_tokens=2000, output_tokens=200), provider="openai", when=WHEN)
    assert one.total is not None and two.total == 2 * one.total


def test_anthropic_input_tokens_exclude_cache_and_are_added_back() -> None:
    """Anthropic's input_tokens do not include cache reads; genai-prices' do."""
    price = price_usage("claude-sonnet-4-5", Usage(input_tokens=100, output_tokens=50, cache_read_tokens=1000),
                        provider="anthropic", api="anthropic-messages", when=WHEN)
    assert price.total == _reference("claude-sonnet-4-5", "anthropic", input_tokens=1100, output_tokens=50,
                                     cache_read_tokens=1000)


def test_provider_found_from_base_url() -> None:
    by_url = price_usage("anthropic/claude-sonnet-4", {"input_tokens": 1000, "output_tokens": 10},
                         provider="custom", base_url="https://openrouter.ai/api/v1", when=WHEN)
    assert by_url.provider == "openrouter" and by_url.known
    openai = price_usage("gpt-4o", Usage(input_tokens=10, output_tokens=1), base_url="https://api.openai.com/v1",
                         when=WHEN)
    assert openai.provider == "openai"


def test_model_only_inference() -> None:
    assert price_usage("gpt-4o-mini", Usage(input_tokens=10, output_tokens=1), when=WHEN).provider == "openai"


@pytest.mark.parametrize(("kwargs", "reason"), [
    ({"model": "scripted-model", "usage": Usage(input_tokens=10, output_tokens=1)}, "no price for model 'scripted-model'"),
    ({"model": None, "usage": Usage(input_tokens=10)}, "model is not recorded"),
    ({"model": "gpt-4o", "usage": None}, "no token usage"),
    ({"model": "gpt-4o", "usage": Usage()}, "no token usage"),
    ({"model": "gpt-4o", "usage": Usage(input_tokens=10), "base_url": "http://127.0.0.1:8080/v1"}, "local endpoint"),
    ({"model": "gpt-4o", "usage": Usage(input_tokens=10), "base_url": "http://localhost:11434/v1"}, "local endpoint"),
    ({"model": "gpt-4o", "usage": Usage(input_tokens=10), "base_url": "http://10.0.0.5/v1"}, "local endpoint"),
    ({"model": "gpt-4o", "usage": Usage(input_tokens=10), "price_as": "no-such-provider"}, "no-such-provider"),
    ({"model": "not-a-real-model-xyz", "usage": Usage(input_tokens=10), "provider": "openai"}, "not-a-real-model"),
])
def test_unknown_is_none_never_zero(kwargs: dict, reason: str) -> None:
    price = price_usage(kwargs.pop("model"), kwargs.pop("usage"), when=WHEN, **kwargs)
    assert price.total is None and not price.known
    assert price.reason is not None and reason in price.reason


def test_price_as_overrides_a_local_endpoint() -> None:
    price = price_usage("gpt-4o", Usage(input_tokens=10, output_tokens=5), base_url="http://127.0.0.1:9/v1",
                        price_as="openai", when=WHEN)
    assert price.total == _reference("gpt-4o", "openai", input_tokens=10, output_tokens=5)


def test_missing_genai_prices_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "genai_prices", None)  # import now raises ImportError
    price = price_usage("gpt-4o", Usage(input_tokens=10, output_tokens=5), provider="openai")
    assert price.total is None and "replaykit[cost]" in (price.reason or "")
    assert pricing_source() is None


# -- runs and branches ------------------------------------------------------------------------------

def _llm(seq: int, provenance: Provenance, tokens: int, model: str = "gpt-4o-mini") -> LLMCallEvent:
    return LLMCallEvent(
        seq=seq, id=f"e{seq}", t=float(seq), provenance=provenance,
        request=LLMRequest(model=model),
        response=LLMResponse(message=Message(role="assistant", parts=[TextPart(text=f"step {seq}")]),
                             usage=Usage(input_tokens=tokens, output_tokens=tokens // 10), model=model),
    )


def _header(run_id: str, lineage: Lineage | None = None) -> RunHeader:
    return RunHeader(run_id=run_id, created_at="2026-01-15T10:00:00Z", model="gpt-4o-mini", provider="openai",
                     lineage=lineage)


def _parent() -> Run:
    events = [_llm(0, Provenance.RECORDED, 1000), _llm(1, Provenance.RECORDED, 2000),
              ToolCallEvent(seq=2, id="e2", call_id="c1", name="read_file", result="x"),
              _llm(3, Provenance.RECORDED, 3000), _llm(4, Provenance.RECORDED, 4000)]
    return Run(_header("orig"), events)


def _branch() -> Run:
    """Branched at step 3 (a response edit), then played: 0-2 served, 3 edited, 4 live."""
    lineage = Lineage(relation="branch", parent_run_id="orig", parent_step=3)
    events = [_llm(0, Provenance.SERVED, 1000), _llm(1, Provenance.SERVED, 2000),
              ToolCallEvent(seq=2, id="e2", call_id="c1", name="read_file", result="x", provenance=Provenance.SERVED),
              _llm(3, Provenance.EDITED, 3000), _llm(4, Provenance.LIVE, 5000)]
    return Run(_header("br", lineage), events)


def test_run_ledger_per_step_and_total() -> None:
    ledger = run_cost(_parent())
    assert [s.step for s in ledger.steps] == [0, 1, 3, 4]  # tool steps are not LLM costs
    assert all(s.cost is not None and s.cost > 0 for s in ledger.steps)
    assert ledger.paid.value == sum(s.cost for s in ledger.steps if s.cost is not None)
    assert ledger.paid.steps == 4 and ledger.live.steps == 0 and ledger.served.steps == 0
    assert ledger.steps[1].cost == 2 * ledger.steps[0].cost  # type: ignore[operator]


def test_branch_against_its_original() -> None:
    parent, child = _parent(), _branch()
    ledger = run_cost(child, parent=parent)
    served = [s for s in ledger.steps if s.provenance == "served"]
    assert [s.cost for s in served] == [Decimal(0), Decimal(0)]  # free for this run...
    assert ledger.served.value is not None and ledger.served.value > 0  # ...but worth this much
    edited = next(s for s in ledger.steps if s.provenance == "edited")
    assert edited.cost == 0 and ledger.no_call == 1
    assert ledger.paid.value == ledger.live.value == ledger.steps[-1].cost
    assert ledger.branch is not None and ledger.branch.cut_step == 3
    original = run_cost(parent).paid.value
    assert ledger.branch.original_total.value == original
    # what was served for free plus what the original spent from the cut on is the whole original
    assert ledger.served.value + ledger.branch.original_after_cut.value == original  # type: ignore[operator]


def test_partial_totals_are_unknown_not_partial_sums() -> None:
    events = [_llm(0, Provenance.RECORDED, 1000), _llm(1, Provenance.RECORDED, 1000, model="scripted-model")]
    ledger = run_cost(Run(_header("mixed"), events))
    assert ledger.paid.value is None and ledger.paid.known > 0 and ledger.paid.unknown_steps == 1
    doc = to_json(ledger)
    assert doc["paid"]["cost"] is None and doc["paid"]["known_cost"] > 0
    assert doc["steps"][1]["cost"] is None and "scripted-model" in doc["steps"][1]["unknown_reason"]
    assert doc["steps"][0]["priced_as"] == "openai:gpt-4o-mini"


def test_price_as_reprices_a_local_run() -> None:
    header = RunHeader(run_id="local", created_at="2026-01-15T10:00:00Z", provider="openai",
                       base_url="http://127.0.0.1:9/v1")
    run = Run(header, [_llm(0, Provenance.RECORDED, 1000)])
    assert run_cost(run).paid.value is None
    assert run_cost(run, price_as="openai").paid.value == run_cost(_parent()).steps[0].cost
