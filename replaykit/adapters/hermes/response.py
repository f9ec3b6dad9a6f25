"""Turn the response object Hermes's ``llm_execution`` chain returns into an ``LLMResponse``.

The object differs per api_mode and transport: an openai ``ChatCompletion`` or a ``SimpleNamespace``
rebuilt from a stream (chat), a namespace holding Responses ``output`` items (codex), an Anthropic
``Message``/``ParsedMessage``. Everything is read with ``getattr`` so any of them (and Hermes versions
that rename the container) work.
"""

from __future__ import annotations

import json
from typing import Any

from replaykit.adapters.hermes.fastpath import chat_response
from replaykit.core.trace.ir import (
    LLMResponse,
    Message,
    OpaquePart,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    Usage,
)


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _dump(obj: Any) -> Any:
    """A JSON-able copy of a provider object (pydantic models, namespaces, dicts)."""
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    if isinstance(obj, dict):
        return {str(k): _dump(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_dump(v) for v in obj]
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        try:
            return dump(mode="json", exclude_none=True)
        except Exception:  # a provider object that cannot dump itself: fall back to its attributes
            dump = None
    if hasattr(obj, "__dict__"):
        return {k: _dump(v) for k, v in vars(obj).items() if not k.startswith("_")}
    return repr(obj)


def _parse(raw: Any) -> Any:
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _chat(result: Any) -> LLMResponse:
    # One implementation for both paths: the recorder's hot path writes this dict as it is.
    return LLMResponse.model_validate(chat_response(result))


def _responses(result: Any) -> LLMResponse:
    parts: list[Part] = []
    for item in _get(result, "output") or []:
        kind = _get(item, "type")
        if kind == "message":
            for block in _get(item, "content") or []:
                if _get(block, "type") == "output_text":
                    parts.append(TextPart(text=_get(block, "text") or "", provider_details={"item_id": _get(item, "id")}))
                else:
                    parts.append(OpaquePart(format="openai-responses", data=_dump(block)))
        elif kind == "function_call":
            raw = _get(item, "arguments")
            parts.append(ToolCallPart(id=str(_get(item, "call_id") or ""), name=str(_get(item, "name") or ""),
                                      arguments=_parse(raw), raw_arguments=raw if isinstance(raw, str) else None,
                                      provider_details={"item_id": _get(item, "id")}))
        elif kind == "reasoning":
            summary = "".join(_get(s, "text") or "" for s in _get(item, "summary") or [])
            parts.append(ReasoningPart(text=summary, id=_get(item, "id"), encrypted=_get(item, "encrypted_content"),
                                       provider="openai-responses"))
        else:
            parts.append(OpaquePart(format="openai-responses", data=_dump(item)))
    status = _get(result, "status")
    if status == "incomplete":
        finish = "length"
    elif any(isinstance(p, ToolCallPart) for p in parts):
        finish = "tool_calls"
    else:
        finish = "stop" if status in (None, "completed") else str(status)
    usage = _get(result, "usage")
    return LLMResponse(
        message=Message(role="assistant", parts=parts),
        finish_reason=finish,
        usage=None if usage is None else Usage(
            input_tokens=_int(_get(usage, "input_tokens")), output_tokens=_int(_get(usage, "output_tokens")),
            total_tokens=_int(_get(usage, "total_tokens")),
            cache_read_tokens=_int(_get(_get(usage, "input_tokens_details"), "cached_tokens")),
            reasoning_tokens=_int(_get(_get(usage, "output_tokens_details"), "reasoning_tokens"))),
        model=_get(result, "model"),
        response_id=_get(result, "id"),
        provider_details={"status": status} if status not in (None, "completed") else None,
    )


def _anthropic(result: Any) -> LLMResponse:
    parts: list[Part] = []
    for block in _get(result, "content") or []:
        kind = _get(block, "type")
        if kind == "text":
            parts.append(TextPart(text=_get(block, "text") or ""))
        elif kind == "tool_use":
            parts.append(ToolCallPart(id=str(_get(block, "id") or ""), name=str(_get(block, "name") or ""),
                                      arguments=_dump(_get(block, "input"))))
        elif kind == "thinking":
            parts.append(ReasoningPart(text=_get(block, "thinking") or "", signature=_get(block, "signature"),
                                       provider="anthropic"))
        elif kind == "redacted_thinking":
            parts.append(ReasoningPart(redacted=True, encrypted=_get(block, "data"), provider="anthropic"))
        else:
            parts.append(OpaquePart(format="anthropic", data=_dump(block)))
    usage = _get(result, "usage")
    return LLMResponse(
        message=Message(role="assistant", parts=parts),
        finish_reason=_get(result, "stop_reason"),
        usage=None if usage is None else Usage(
            input_tokens=_int(_get(usage, "input_tokens")), output_tokens=_int(_get(usage, "output_tokens")),
            cache_read_tokens=_int(_get(usage, "cache_read_input_tokens")),
            cache_write_tokens=_int(_get(usage, "cache_creation_input_tokens"))),
        model=_get(result, "model"),
        response_id=_get(result, "id"),
    )


def response_to_ir(api: str, result: Any) -> LLMResponse:
    if api == "openai-responses" or (_get(result, "output") is not None and _get(result, "choices") is None):
        return _responses(result)
    if api == "anthropic-messages" or (_get(result, "stop_reason", "?") != "?" and _get(result, "choices") is None):
        return _anthropic(result)
    return _chat(result)


def was_streamed(api: str, result: Any) -> bool:
    """Whether Hermes fetched ``result`` over a stream (it then added ``stream: true`` to the body)."""
    name = type(result).__name__
    if api == "openai-chat":
        return name == "SimpleNamespace"
    if api == "anthropic-messages":
        return name == "ParsedMessage"
    return name != "Response"
