"""Hot-path builders for the Hermes recorder: IR events as plain dicts, already in their JSON shape.

Every function here returns exactly what ``<IR model>.model_dump(mode="json", exclude_none=True)`` would
give for the object the slow path builds (same keys, same order), without building pydantic models. The
recorder writes these dicts with ``json.dumps`` (``Recorder.emit_dict``); the store validates them on load.

Only the shapes Hermes sends on every call are handled (Chat Completions messages with string content,
standard function tool calls, an optional reasoning key, tool results with a name). Anything else returns
``None`` and the caller decodes it with the shared codec (``replaykit.core.trace.codecs``), so the fast path
never has to be right about a rare shape. ``tests/adapters/hermes/test_fastpath.py`` proves both paths
give equal dicts on the recorded fixtures and on generated messages.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from replaykit.core.trace.bridge import BRIDGE_TOOL_NAME

_FMT = "openai-chat"
_PLAIN_ROLES = frozenset(("system", "developer", "user", "assistant"))
_REASONING_KEYS = ("reasoning_content", "reasoning")
_ToolCallKeys = frozenset(("id", "type", "function"))


# The arguments string of a tool call comes back, as the same object, in the next request's assistant
# message: parse it once. One entry, replaced atomically (threads only ever see a consistent pair).
_last_args: tuple[str | None, Any] = (None, None)
_NON_FINITE = object()  # the arguments hold NaN or Infinity: the model's JSON dump turns them into null


class _NonFinite(ValueError):
    pass


def _refuse_constant(name: str) -> Any:
    raise _NonFinite(name)


# Called only for the NaN / Infinity literals, so ordinary arguments parse at json.loads's speed.
_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


def _args(raw: str) -> Any:
    """The parsed arguments, None for invalid JSON, or ``_NON_FINITE`` (the codec handles those)."""
    global _last_args
    cached = _last_args
    if cached[0] is raw:
        return cached[1]
    try:
        parsed = _DECODER.decode(raw)
    except _NonFinite:
        parsed = _NON_FINITE
    except ValueError:
        parsed = None
    _last_args = (raw, parsed)
    return parsed


def _tool_call(call: Any) -> dict[str, Any] | None:
    if type(call) is not dict or call.keys() != _ToolCallKeys or call["type"] != "function":
        return None
    fn, call_id = call["function"], call["id"]
    if type(fn) is not dict or len(fn) != 2 or type(call_id) is not str:
        return None
    name, raw = fn.get("name"), fn.get("arguments")
    if type(name) is not str or type(raw) is not str:
        return None
    parsed = _args(raw)
    if parsed is _NON_FINITE:
        return None
    out: dict[str, Any] = {"type": "tool_call", "id": call_id, "name": name}
    if parsed is not None:
        out["arguments"] = parsed
    out["raw_arguments"] = raw
    return out


def chat_message(raw: Any) -> dict[str, Any] | None:
    """One Chat Completions request message -> the IR ``Message`` as a JSON dict (None: use the codec)."""
    if type(raw) is not dict:
        return None
    role = raw.get("role")
    size = len(raw)
    name = raw.get("name")
    if name is not None:
        if type(name) is not str:
            return None
        size -= 1
    if role == "tool":
        call_id, content = raw.get("tool_call_id"), raw.get("content")
        if size != 3 or type(call_id) is not str or type(content) is not str:
            return None
        part: dict[str, Any] = {"type": "tool_result", "tool_call_id": call_id}
        if name is not None:
            part["name"] = name
        part["content"] = content
        part["is_error"] = False
        return {"role": "tool", "parts": [part]}
    if role not in _PLAIN_ROLES or "content" not in raw:
        return None
    content = raw["content"]
    size -= 2
    parts: list[dict[str, Any]] = []
    if role == "assistant":
        for key in _REASONING_KEYS:
            if key in raw:
                value = raw[key]
                if type(value) is not str:
                    return None
                parts.append({"type": "reasoning", "text": value, "redacted": False,
                              "provider_details": {_FMT: {"key": key}}})
                size -= 1
                break
    if type(content) is str:
        hint = "str"
        if content:
            parts.append({"type": "text", "text": content})
    elif content is None:
        hint = "null"
    else:
        return None  # content lists (multimodal): the codec handles them
    if "tool_calls" in raw:
        calls = raw["tool_calls"]
        if role != "assistant" or type(calls) is not list or not calls:
            return None
        for call in calls:
            decoded = _tool_call(call)
            if decoded is None:
                return None
            parts.append(decoded)
        size -= 1
    if size != 0:
        return None  # unknown keys (refusal, a second reasoning key, provider extras): the codec keeps them
    out: dict[str, Any] = {"role": role, "parts": parts}
    if name is not None:
        out["name"] = name
    out["provider_details"] = {_FMT: {"content": hint}}
    return out


# ------------------------------------------------------------------------------------ responses


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def chat_response(result: Any) -> dict[str, Any]:
    """A chat completion (SDK object or a namespace rebuilt from a stream) -> ``LLMResponse`` JSON dict.
    This is the single implementation: ``response.response_to_ir`` validates this dict for its model."""
    choices = _get(result, "choices") or []
    choice = choices[0] if choices else None
    msg = _get(choice, "message")
    parts: list[dict[str, Any]] = []
    for key in _REASONING_KEYS:
        value = _get(msg, key)
        if isinstance(value, str) and value:
            parts.append({"type": "reasoning", "text": value, "redacted": False, "provider_details": {"key": key}})
            break
    content = _get(msg, "content")
    if isinstance(content, str) and content:
        parts.append({"type": "text", "text": content})
    for call in _get(msg, "tool_calls") or []:
        fn = _get(call, "function")
        raw = _get(fn, "arguments")
        part: dict[str, Any] = {"type": "tool_call", "id": str(_get(call, "id") or ""),
                                "name": str(_get(fn, "name") or "")}
        if isinstance(raw, str):
            parsed = _args(raw)
            if parsed is _NON_FINITE:
                parsed = json.loads(raw)  # what the slow path validates (its dump writes null)
            if parsed is not None:
                part["arguments"] = parsed
            part["raw_arguments"] = raw
        elif raw is not None:
            part["arguments"] = raw
        parts.append(part)
    out: dict[str, Any] = {"message": {"role": "assistant", "parts": parts}}
    finish = _get(choice, "finish_reason")
    if type(finish) is str:
        out["finish_reason"] = finish
    usage = _get(result, "usage")
    if usage is not None:
        counts: dict[str, Any] = {}  # Usage's field order
        _count(counts, "input_tokens", _get(usage, "prompt_tokens"))
        _count(counts, "output_tokens", _get(usage, "completion_tokens"))
        details = _get(usage, "prompt_tokens_details")
        if details is not None:
            _count(counts, "cache_read_tokens", _get(details, "cached_tokens"))
        details = _get(usage, "completion_tokens_details")
        if details is not None:
            _count(counts, "reasoning_tokens", _get(details, "reasoning_tokens"))
        _count(counts, "total_tokens", _get(usage, "total_tokens"))
        out["usage"] = counts
    model, response_id = _get(result, "model"), _get(result, "id")
    if type(model) is str:
        out["model"] = model
    if type(response_id) is str:
        out["response_id"] = response_id
    return out


def _count(counts: dict[str, Any], key: str, value: Any) -> None:
    if type(value) is int:
        counts[key] = value


def tool_call_ids(response: Mapping[str, Any]) -> list[str]:
    """Ids of the tool calls in an ``LLMResponse`` JSON dict."""
    return [p["id"] for p in response["message"]["parts"] if p.get("type") == "tool_call"]


def bridge_calls(response: Mapping[str, Any]) -> dict[str, Any]:
    """``{call id: arguments}`` of the response's calls of the Tool Search bridge (``tool_call``)."""
    return {p["id"]: p.get("arguments") for p in response["message"]["parts"]
            if p.get("type") == "tool_call" and p.get("name") == BRIDGE_TOOL_NAME}


# --------------------------------------------------------------------------------------- events


def corr(kw: Mapping[str, Any], tool_call_id: str | None = None) -> dict[str, Any]:
    """``Correlation`` as a JSON dict (empty ids dropped, like ``HermesCapture._corr``)."""
    out: dict[str, Any] = {}
    for key in ("session_id", "task_id", "turn_id", "api_request_id"):
        value = kw.get(key)
        if value:
            out[key] = value if type(value) is str else str(value)
    if tool_call_id:
        out["tool_call_id"] = tool_call_id
    return out


def envelope(kind: str, t: float | None, duration: float | None, corr_: dict[str, Any] | None,
             provider_details: dict[str, Any] | None) -> dict[str, Any]:
    """The fields every event has (after ``seq`` and ``id``, which the recorder adds), in model order."""
    out: dict[str, Any] = {}
    if t is not None:
        out["t"] = t
    if duration is not None:
        out["duration"] = duration
    out["provenance"] = "recorded"
    if corr_ is not None:
        out["corr"] = corr_
    if provider_details is not None:
        out["provider_details"] = provider_details
    out["kind"] = kind
    return out


def request(api: str, model: str | None, base: str | None, keep: int, append: list[dict[str, Any]],
            tools_ref: str | None, params: dict[str, Any], provider_details: dict[str, Any] | None) -> dict[str, Any]:
    """``LLMRequest`` as a JSON dict (the context is a delta against event ``base``)."""
    out: dict[str, Any] = {"api": api}
    if model is not None:
        out["model"] = model
    context: dict[str, Any] = {}
    if base is not None:
        context["base"] = base
    context["keep"] = keep
    context["append"] = append
    out["context"] = context
    if tools_ref is not None:
        out["tools_ref"] = tools_ref
    out["params"] = params
    if provider_details is not None:
        out["provider_details"] = provider_details
    return out
