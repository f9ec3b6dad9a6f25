"""A live step is priced for the provider it ran on (``wire.provider`` on its request), not the play's
header; a model without a price stays unknown, never 0."""

from __future__ import annotations

import pytest

from replaykit.core.analysis.cost import step_cost
from replaykit.core.trace.ir import (
    LLMCallEvent,
    LLMRequest,
    LLMResponse,
    Message,
    Provenance,
    RunHeader,
    TextPart,
    Usage,
)
from replaykit.core.trace.wire_record import wire_details

pytest.importorskip("genai_prices")


def _step(model: str, provider: str | None) -> LLMCallEvent:
    return LLMCallEvent(seq=1, id="e1", t=0.0, provenance=Provenance.LIVE,
                        request=LLMRequest(api="anthropic-messages", model=model,
                                           provider_details=wire_details("anthropic-messages", "openai-chat", provider)),
                        response=LLMResponse(message=Message(role="assistant", parts=[TextPart(text="hi")]), model=model,
                                             usage=Usage(input_tokens=1000, output_tokens=100)))


def test_a_live_step_is_priced_for_its_provider() -> None:
    """The same model sold by two providers: the step's own provider decides, not the play's header."""
    header = RunHeader(run_id="play-x", created_at="2026-12-01T00:00:00Z", provider="anthropic")
    line = step_cost(header, 0, _step("claude-3-5-sonnet-20241022", "aws"))
    assert line.price.total is not None and line.price.total > 0 and line.price.provider == "aws"
    served = step_cost(header, 0, _step("claude-3-5-sonnet-20241022", None))
    assert served.price.provider == "anthropic"


def test_a_model_without_a_price_is_unknown_not_zero() -> None:
    header = RunHeader(run_id="play-x", created_at="2026-12-01T00:00:00Z", provider="openai-compatible")
    line = step_cost(header, 0, _step("no-such-model-xyz", "anthropic"))
    assert line.price.total is None and line.price.reason
