"""What Hermes hands to ``llm_execution`` (the provider SDK call's keyword arguments) versus the HTTP body
the provider receives: which api format each Hermes api_mode speaks, and which kwargs are SDK-only.
Messages and tools themselves go through the shared codecs (``replaykit.core.trace.codecs``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

API_OF_MODE = {
    "chat_completions": "openai-chat",
    "codex_responses": "openai-responses",
    "anthropic_messages": "anthropic-messages",
}
# Keyword arguments of the provider SDK call that are not part of the HTTP body.
SDK_ONLY_KEYS = frozenset({"timeout", "extra_headers", "extra_query", "extra_body"})


_CONVERSATION_KEYS = {"openai-chat": ("messages",), "openai-responses": ("instructions", "input"),
                      "anthropic-messages": ("system", "messages")}


def conversation_keys(api: str) -> tuple[str, ...]:
    """The request kwargs that carry the conversation (system prompt and messages) in ``api``."""
    return _CONVERSATION_KEYS.get(api, ("messages",))


def split_request(api: str, request: Mapping[str, Any]) -> tuple[str | None, Any, dict[str, Any], dict[str, Any]]:
    """Split Hermes's provider kwargs into (model, raw tools, body params, SDK-only kwargs)."""
    conv = _CONVERSATION_KEYS.get(api, ("messages",))
    params: dict[str, Any] = {}
    sdk: dict[str, Any] = {}
    for key, value in request.items():
        if key in conv or key in ("model", "tools"):
            continue
        if key in SDK_ONLY_KEYS:
            if key == "extra_body" and isinstance(value, dict):
                params.update(value)  # the SDK merges extra_body into the HTTP body
            sdk[key] = value if isinstance(value, (int, float, str, bool, dict, list)) or value is None else repr(value)
        else:
            params[key] = value
    model = request.get("model")
    return (model if isinstance(model, str) else None), request.get("tools"), params, sdk


def http_body(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The HTTP body a provider SDK sends for ``kwargs`` (``extra_body`` merged in, SDK-only keys dropped)."""
    body = {k: v for k, v in kwargs.items() if k not in SDK_ONLY_KEYS}
    extra = kwargs.get("extra_body")
    if isinstance(extra, Mapping):
        body.update(extra)
    return body
