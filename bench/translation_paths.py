"""The two ways to translate a recorded history for another API, measured on the same histories.

    PYTHONPATH=. python bench/translation_paths.py

(A) replaykit's codecs with ``codecs/conform.py`` (what the live model uses): ``translate_request``.
(B) PydanticAI's provider models under the live model: IR -> PydanticAI history (the pydantic-ai
    engine's converter) -> ``AnthropicModel._map_message`` / ``OpenAIChatModel._map_messages``.

Histories: every recorded request of the Hermes fixtures and of the real-world provider logs beside the
checkout, plus the hostile histories of tests/core/codecs/test_conform.py. For each path and target API:
requests the provider would refuse (``replaykit.testing.validate``), requests for which the path reported
what it dropped or changed, and the total of those lines. Needs pydantic-ai (the hermes environment).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from replaykit.core.trace.codecs import translate_request
from replaykit.testing.validate import check_request
from tests.core.codecs.test_conform import HOSTILE, RUNS


def histories() -> list[tuple[str, str, list[Any], Any, dict[str, Any]]]:
    out = []
    for name, run in RUNS:
        for event in run.llm_calls():
            messages = run.request_messages(event)
            if any(m.role not in ("system", "developer") for m in messages):
                source = "anthropic-messages" if event.request.api == "anthropic" else event.request.api
                params = {k: v for k, v in event.request.params.items() if k not in ("stream", "stream_options", "n")}
                out.append((name, source, messages, run.request_tools(event.request), params))
    for name, messages in HOSTILE.items():
        out.append((f"hostile:{name}", "openai-chat", messages, None, {}))
    return out


def path_b(api: str, messages: list[Any]) -> tuple[dict[str, Any], int]:
    from pydantic_ai.models import ModelRequestParameters
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.anthropic import AnthropicProvider
    from pydantic_ai.providers.openai import OpenAIProvider

    from replaykit.engines.pydantic_ai.messages import to_pydantic_ai

    history = to_pydantic_ai(messages)
    reported = len(history.lost)  # our converter's notes; PydanticAI's mapping itself reports nothing
    if api == "anthropic-messages":
        model = AnthropicModel("claude-sonnet-4-5", provider=AnthropicProvider(api_key="x"))
        system, mapped = asyncio.run(model._map_message(history.messages, ModelRequestParameters(), {}))
        body: dict[str, Any] = {"max_tokens": 1024, "messages": mapped}
        if system:
            body["system"] = system
        return body, reported
    chat = OpenAIChatModel("gpt-x", provider=OpenAIProvider(api_key="x"))
    return {"messages": asyncio.run(chat._map_messages(history.messages, ModelRequestParameters()))}, reported


def main() -> None:
    cases = histories()
    print(f"{len(cases)} recorded or hostile requests")
    print(f"{'path':<12} {'target':<20} {'refused':>8} {'reported':>9} {'lines':>6}")
    for api in ("anthropic-messages", "openai-chat"):
        for label in ("A codecs", "B pydantic"):
            refused = reported = lines = 0
            for _name, source, messages, tools, params in cases:
                if source == api:
                    continue
                if label == "A codecs":
                    encoded = translate_request(api, messages, tools, {**params, "model": "m"}, source)
                    body, n = encoded.body, len(encoded.losses)
                else:
                    try:
                        body, n = path_b(api, messages)
                    except Exception as exc:  # a mapping that raises: refused before sending
                        body, n = {"error": str(exc)}, 0
                refused += bool(check_request(api, body)) or "error" in body
                reported += bool(n)
                lines += n
            note = "" if label == "A codecs" else "  (B: notes of our IR->PydanticAI converter on message layout; PydanticAI's own mapping lists no loss)"
            print(f"{label:<12} {api:<20} {refused:>8} {reported:>9} {lines:>6}{note}")


if __name__ == "__main__":
    main()
