"""Provider codecs: OpenAI Chat Completions, OpenAI Responses, Anthropic Messages, Google Gemini and AWS
Bedrock Converse <-> the trace IR.

Pure functions over plain dicts (no provider SDK imports). Engines go through the dispatch below::

    encoded = encode_request("anthropic-messages", messages, tools, params)
    encoded.body      # the request body for that API
    encoded.losses    # what could not cross into that format (empty for a same-format round trip)
    response = decode_response("openai-chat", body)

Round trip: for each format, ``encode_request(api, *decode_request(api, body))`` reproduces ``body``
(equal under canonical JSON); see docs/codecs.md for the mapping tables and the loss rules.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from replaykit.core.errors import CodecError
from replaykit.core.trace.codecs._common import DecodedRequest, Encoded, neutral_finish_reason
from replaykit.core.trace.ir import LLMRequest, LLMResponse, Message, ToolSpec

__all__ = [
    "APIS",
    "DecodedRequest",
    "Encoded",
    "assemble_stream",
    "decode_request",
    "decode_response",
    "encode_llm_request",
    "encode_request",
    "encode_response",
    "neutral_finish_reason",
    "translate_request",
]

#: API name (``LLMRequest.api``) -> codec module. "anthropic" is accepted as an alias.
APIS = {
    "openai-chat": "replaykit.core.trace.codecs.openai_chat",
    "openai-responses": "replaykit.core.trace.codecs.openai_responses",
    "anthropic-messages": "replaykit.core.trace.codecs.anthropic",
    "anthropic": "replaykit.core.trace.codecs.anthropic",
    "google-gemini": "replaykit.core.trace.codecs.gemini",
    "bedrock-converse": "replaykit.core.trace.codecs.bedrock",
}


def codec(api: str) -> ModuleType:
    """The codec module of ``api`` (raises CodecError for an unknown API)."""
    name = APIS.get(api)
    if name is None:
        raise CodecError(f"unknown provider API {api!r} (known: {', '.join(k for k in APIS if k != 'anthropic')})")
    return importlib.import_module(name)


def decode_request(api: str, body: Any) -> DecodedRequest:
    result: DecodedRequest = codec(api).decode_request(body)
    return result


def encode_request(api: str, messages: Sequence[Message], tools: Sequence[ToolSpec] | None = None,
                   params: dict[str, Any] | None = None) -> Encoded:
    result: Encoded = codec(api).encode_request(messages, tools, params)
    return result


def encode_llm_request(request: LLMRequest, messages: Sequence[Message], tools: Sequence[ToolSpec] | None,
                       api: str | None = None) -> Encoded:
    """The body of a recorded request (``Run.request_messages`` / ``Run.request_tools`` give the
    messages and tools); ``api`` re-targets it to another format (losses reported)."""
    params = dict(request.params)
    if request.model is not None:
        params.setdefault("model", request.model)
    return encode_request(api or request.api, messages, tools, params)


def translate_request(api: str, messages: Sequence[Message], tools: Sequence[ToolSpec] | None,
                      params: dict[str, Any] | None, source: str) -> Encoded:
    """The body of a request recorded on API ``source``, sent on API ``api``: the history made legal
    for ``api`` (``conform.conform``), the parameters moved to ``api``'s keys
    (``conform.translate_params``; ``model`` passes through), then ``api``'s own encoder. Every change
    and every drop is in ``Encoded.losses`` (the conform losses first). For ``source == api`` use
    ``encode_request``: a same-API body is sent as recorded."""
    from replaykit.core.trace.codecs.conform import conform, translate_params

    fitted = conform(messages, tools, api)
    rest = dict(params or {})
    model = rest.pop("model", None)
    moved, param_losses = translate_params(source, api, rest)
    if model is not None:
        moved = {"model": model, **moved}
    encoded = encode_request(api, fitted.messages, fitted.tools, moved)
    return Encoded(body=encoded.body, losses=[*fitted.losses, *param_losses, *encoded.losses])


def decode_response(api: str, body: Any) -> LLMResponse:
    result: LLMResponse = codec(api).decode_response(body)
    return result


def encode_response(api: str, response: LLMResponse) -> Encoded:
    result: Encoded = codec(api).encode_response(response)
    return result


def assemble_stream(api: str, events: Sequence[Any]) -> LLMResponse:
    """A streamed response (chunk dicts / SSE event payloads, in order) -> ``LLMResponse``."""
    result: LLMResponse = codec(api).decode_stream(events)
    return result
