"""Recorded answers as the provider objects Hermes's loop consumes, in each of its api modes.

Hermes validates and normalises what its ``llm_execution`` chain returns with its per-mode transport:
a ``ChatCompletion`` (chat_completions), a Responses ``Response`` (codex_responses), an Anthropic
``Message`` (anthropic_messages). A served step returns the same kind of object, built from the IR
through the shared codecs, so Hermes cannot tell a served answer from a live one.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from replaykit.core.trace.codecs import encode_response
from replaykit.core.trace.ir import LLMResponse

_CHAT_FINISH = {"stop", "length", "tool_calls", "content_filter", "function_call"}
_ANTHROPIC_STOP = {"end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal"}


def _namespace(value: Any) -> Any:
    """Attribute access all the way down: what Hermes's transports read when no SDK model fits."""
    if isinstance(value, dict):
        return SimpleNamespace(**{str(k): _namespace(v) for k, v in value.items()})
    if isinstance(value, list):
        return [_namespace(v) for v in value]
    return value


def _validated(model_type: Any, body: dict[str, Any]) -> Any:
    try:
        return model_type.model_validate(body)
    except Exception:  # a recorded field the installed SDK does not accept: plain attributes still work
        return _namespace(body)


def _chat(response: LLMResponse, model: str | None, index: int) -> Any:
    from openai.types.chat import ChatCompletion

    body = encode_response("openai-chat", response).body
    body["object"] = "chat.completion"
    body.setdefault("id", f"replaykit-served-{index}")
    body.setdefault("created", 0)
    body["model"] = body.get("model") or model or "replaykit"
    choice = body["choices"][0]
    choice.setdefault("index", 0)
    if choice.get("finish_reason") not in _CHAT_FINISH:
        choice["finish_reason"] = "tool_calls" if response.message.tool_calls else "stop"
    body.pop("usage", None)  # recorded usage may carry provider-specific details; not needed to replay
    return _validated(ChatCompletion, body)


def _responses(response: LLMResponse, model: str | None, index: int) -> Any:
    from openai.types.responses import Response

    body = encode_response("openai-responses", response).body
    body.setdefault("id", f"resp_replaykit_served_{index}")
    body.update(object="response", created_at=0, parallel_tool_calls=True, tool_choice="auto", tools=[])
    body["model"] = body.get("model") or model or "replaykit"
    # The IR keeps the finish reason; Hermes reads the Responses status (incomplete = cut by length).
    body["status"] = "incomplete" if response.finish_reason == "length" else "completed"
    if body["status"] == "incomplete":
        body["incomplete_details"] = {"reason": "max_output_tokens"}
    body.pop("usage", None)
    return _validated(Response, body)


def _anthropic(response: LLMResponse, model: str | None, index: int) -> Any:
    from anthropic.types import Message as AnthropicMessage

    body = encode_response("anthropic-messages", response).body
    body.setdefault("id", f"msg_replaykit_served_{index}")
    body.update(type="message", role="assistant")
    body["model"] = body.get("model") or model or "replaykit"
    if body.get("stop_reason") not in _ANTHROPIC_STOP:
        body["stop_reason"] = "tool_use" if response.message.tool_calls else "end_turn"
    body.setdefault("stop_sequence", None)
    body["usage"] = {"input_tokens": 0, "output_tokens": 0}
    return _validated(AnthropicMessage, body)


_BUILDERS = {"openai-chat": _chat, "openai-responses": _responses, "anthropic-messages": _anthropic}


def served_response(api: str, response: LLMResponse, model: str | None, index: int) -> Any:
    """The provider object for a served step of a run recorded in ``api``."""
    return _BUILDERS[api](response, model, index)
