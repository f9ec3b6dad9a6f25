"""The provider wires, as the transport sees them: which requests are model calls, and the error body a
refused request gets, per API (OpenAI Chat Completions, OpenAI Responses, Anthropic Messages).

Pure functions over strings and dicts (no httpx import), shared by recording and serving. What a body or
a stream means is the codecs' business (``replaykit.core.trace.codecs``, ``codecs.frames`` for streams).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: URL path suffix -> IR api name. Anything else passes through untouched (not a model call).
_LLM_PATHS = (("/chat/completions", "openai-chat"), ("/responses", "openai-responses"))


def llm_api(method: str, path: str, headers: Mapping[str, str] | None = None) -> str | None:
    """The API a request addresses (``openai-chat``, ``openai-responses``, ``anthropic-messages``), or None.

    Anthropic Messages is ``POST .../v1/messages``, or any ``.../messages`` path sent with the
    ``anthropic-version`` header every Anthropic client sends (a proxy's own prefix); other ``/messages``
    endpoints (OpenAI's thread messages) are not model calls.
    """
    if method.upper() != "POST":
        return None
    path = path.rstrip("/")
    for suffix, api in _LLM_PATHS:
        if path.endswith(suffix):
            return api
    if path.endswith("/v1/messages") or (path.endswith("/messages") and headers is not None
                                         and "anthropic-version" in headers):
        return "anthropic-messages"
    return None


def refusal_body(api: str, message: str) -> dict[str, Any]:
    """The HTTP 400 body of a refused request (a cassette miss), in the API's own error shape, so its SDK
    raises its bad-request error with ``message`` as the text (never retried)."""
    if api == "anthropic-messages":
        return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    return {"error": {"message": message, "type": "replaykit_cassette_miss", "param": None,
                      "code": "cassette_miss"}}
