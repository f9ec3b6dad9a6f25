"""Messages as observability platforms store them (Langfuse, LangSmith): decoded into IR messages.

A platform keeps whatever the instrumented code handed it, so one reader accepts every shape seen in
their exports and SDKs:

- OpenAI Chat Completions message dicts (``{"role": ..., "content": ..., "tool_calls": [...]}``),
  decoded by the one Chat codec (``replaykit.core.trace.codecs.openai_chat``);
- LangChain messages, serialised (``{"lc": 1, "type": "constructor", "id": [..., "AIMessage"],
  "kwargs": {...}}``, what ``langchain_core.load.dumpd`` and LangSmith write) or as plain dicts
  (``{"type": "ai", "content": ..., "tool_calls": [...]}``, what ``message.model_dump()`` gives);
- containers: a list of messages, ``{"messages": [...]}`` (LangChain batches: ``[[...]]``), a
  ChatCompletion (``choices``), a LangChain ``LLMResult`` (``generations``), or a plain string.

What a shape carries beyond the IR (LangChain's ``response_metadata``, message ids, ...) is kept in
the message's ``provider_details`` under ``"langchain"``.
"""

from __future__ import annotations

import json
from typing import Any

from replaykit.core.errors import CodecError
from replaykit.core.trace.codecs import openai_chat
from replaykit.core.trace.ir import (
    MediaPart,
    Message,
    OpaquePart,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    Usage,
)

LC_ROLES = {"human": "user", "HumanMessage": "user", "HumanMessageChunk": "user",
            "ai": "assistant", "AIMessage": "assistant", "AIMessageChunk": "assistant",
            "system": "system", "SystemMessage": "system", "SystemMessageChunk": "system",
            "tool": "tool", "ToolMessage": "tool", "ToolMessageChunk": "tool",
            "function": "tool", "FunctionMessage": "tool", "chat": None, "ChatMessage": None}
LC_KEYS = {"content", "type", "tool_calls", "tool_call_id", "name", "role", "invalid_tool_calls",
           "additional_kwargs", "status", "artifact"}


def maybe_json(value: Any) -> Any:
    """A value that may be JSON text (Langfuse's v2 API returns input and output as raw strings)."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is an object, else an empty one (optional objects in platform exports)."""
    return value if isinstance(value, dict) else {}


def is_message(value: Any) -> bool:
    return isinstance(value, dict) and (
        _lc_class(value) is not None or (isinstance(value.get("role"), str) and value["role"] in openai_chat.ROLES)
        or (value.get("type") in LC_ROLES and "content" in value))


def decode(value: Any, where: str, *, default_role: str = "user") -> Message:
    """One message in any of the shapes above (a string is a message of ``default_role``)."""
    if isinstance(value, str):
        return Message(role=default_role, parts=[TextPart(text=value)] if value else [])  # type: ignore[arg-type]
    if not isinstance(value, dict):
        raise CodecError(f"{where}: a message is {type(value).__name__}, expected an object or text")
    cls = _lc_class(value)
    if cls is not None:
        return _langchain(dict(value.get("kwargs") or {}), cls, where)
    if "role" not in value and value.get("type") in LC_ROLES:
        return _langchain(value, str(value["type"]), where)
    if "role" not in value:
        value = {**value, "role": default_role}
    return openai_chat.decode_message(value, where)


class MessageCache:
    """Decoded messages by their JSON text. Platforms store every request whole, so a run's history comes
    again in each later request: each distinct message is decoded once, and the requests of a run share
    their message objects (which the recorder's delta encoding compares by identity first)."""

    def __init__(self) -> None:
        self.messages: dict[Any, Message] = {}
        self.tools: dict[str, list[ToolSpec]] = {}
        self.last: list[tuple[Any, Message]] = []  # the previous request: (raw, decoded) by position

    def decode_all(self, values: list[Any], where: str) -> list[Message]:
        """A request's messages; a message equal to the previous request's at its position (a history
        prefix, the usual case) is that request's object, found by one comparison."""
        last = self.last
        out = [last[i][1] if i < len(last) and last[i][0] == value else self.decode(value, f"{where}[{i}]")
               for i, value in enumerate(values)]
        self.last = list(zip(values, out, strict=True))
        return out

    def decode(self, value: Any, where: str) -> Message:
        if not isinstance(value, dict):
            return decode(value, where)
        key: Any
        if all(v is None or type(v) in (str, int, bool) for v in value.values()):
            key = tuple(value.items())  # most messages: hashing their strings beats serialising them
        else:
            key = json.dumps(value, sort_keys=True, ensure_ascii=False)
        found = self.messages.get(key)
        if found is None:
            found = self.messages[key] = decode(value, where)
        return found


def decode_list(value: Any, where: str, cache: MessageCache | None = None) -> list[Message] | None:
    """The messages of a request input, or None when ``value`` holds no message list."""
    value = maybe_json(value)
    if isinstance(value, dict) and "messages" in value:
        value = value["messages"]
        if isinstance(value, list) and len(value) == 1 and isinstance(value[0], list):
            value = value[0]  # a LangChain batch of one prompt
    if isinstance(value, list) and value and all(is_message(m) for m in value):
        if cache is not None:
            return cache.decode_all(value, where)
        return [decode(m, f"{where}[{i}]") for i, m in enumerate(value)]
    return None


def decode_tools(value: Any, where: str, cache: MessageCache | None = None) -> list[ToolSpec] | None:
    """Tool declarations in OpenAI's shape (``{"type": "function", "function": {...}}``, or the bare
    function), as LangChain's ``bind_tools``, the OpenAI wrapper and Langfuse's integration keep them; the
    same declarations give the same list object (the recorder then hashes them once)."""
    value = maybe_json(value)
    if not isinstance(value, list) or not value or not all(isinstance(t, dict) for t in value):
        return None
    key = json.dumps(value, sort_keys=True, ensure_ascii=False)
    found = cache.tools.get(key) if cache is not None else None
    if found is None:
        found = [openai_chat.decode_tool(t if "type" in t else {"type": "function", "function": t},
                                         f"{where}[{i}]") for i, t in enumerate(value)]
        if cache is not None:
            cache.tools[key] = found
    return found


def decode_output(value: Any, where: str) -> tuple[Message, dict[str, Any]] | None:
    """The assistant message of a model's output and what came with it (``finish_reason``, ``usage``,
    ``model``, ``response_id`` when the shape has them); None when ``value`` holds no answer."""
    value = maybe_json(value)
    extra: dict[str, Any] = {}
    if isinstance(value, dict) and isinstance(value.get("choices"), list) and value["choices"]:
        response = openai_chat.decode_response(value)
        extra = {"finish_reason": response.finish_reason, "usage": response.usage, "model": response.model,
                 "response_id": response.response_id}
        return response.message, extra
    if isinstance(value, dict) and isinstance(value.get("generations"), list):
        generations = value["generations"]
        first = generations[0] if generations else None
        first = first[0] if isinstance(first, list) and first else first
        if not isinstance(first, dict):
            return None
        info = as_dict(first.get("generation_info"))
        extra["finish_reason"] = info.get("finish_reason")
        llm_output = as_dict(value.get("llm_output"))
        extra["model"] = llm_output.get("model_name") or llm_output.get("model")
        if isinstance(llm_output.get("token_usage"), dict):
            extra["usage"] = openai_chat.decode_usage(llm_output["token_usage"])
        raw = first.get("message")
        message = decode(raw, f"{where}.generations[0][0].message", default_role="assistant") \
            if raw is not None else decode(str(first.get("text") or ""), where, default_role="assistant")
        if extra.get("usage") is None and isinstance(raw, dict):
            extra["usage"] = lc_usage(raw.get("kwargs", raw))
        return message, extra
    if isinstance(value, dict) and "messages" in value and isinstance(value["messages"], list):
        answers = [m for m in value["messages"] if is_message(m)]
        value = answers[-1] if answers else None
    if isinstance(value, list):
        answers = [m for m in value if is_message(m)]
        if not answers:
            return None
        value = answers[-1]
    if value is None:
        return None
    if isinstance(value, dict) and not is_message(value):
        if isinstance(value.get("content"), str | list):
            value = {**value, "role": "assistant"}
        else:
            return None
    message = decode(value, where, default_role="assistant")
    if message.role != "assistant":
        return None
    usage = lc_usage(value.get("kwargs", value) if isinstance(value, dict) else None)
    if usage is not None:
        extra["usage"] = usage
    return message, extra


def lc_usage(kwargs: Any) -> Usage | None:
    """A LangChain ``usage_metadata`` as IR usage."""
    raw = kwargs.get("usage_metadata") if isinstance(kwargs, dict) else None
    if not isinstance(raw, dict):
        return None
    cached = as_dict(raw.get("input_token_details"))
    output = as_dict(raw.get("output_token_details"))
    return Usage(input_tokens=as_int(raw.get("input_tokens")), output_tokens=as_int(raw.get("output_tokens")),
                 total_tokens=as_int(raw.get("total_tokens")), cache_read_tokens=as_int(cached.get("cache_read")),
                 cache_write_tokens=as_int(cached.get("cache_creation")),
                 reasoning_tokens=as_int(output.get("reasoning")), details={"langchain": raw})


def text_of(value: Any) -> str:
    """A tool's input or output as the text a model would see."""
    value = maybe_json(value)
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and (_lc_class(value) or value.get("type") == "tool") and (
            "content" in value or "kwargs" in value):
        content = (value.get("kwargs") or value).get("content")
        return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    return json.dumps(value, ensure_ascii=False, sort_keys=False)


# ------------------------------------------------------------------------------------------ LangChain


def _lc_class(value: Any) -> str | None:
    if isinstance(value, dict) and value.get("lc") == 1 and value.get("type") == "constructor":
        ident = value.get("id")
        if isinstance(ident, list) and ident and isinstance(ident[-1], str):
            return ident[-1]
    return None


def as_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _langchain(kwargs: dict[str, Any], cls: str, where: str) -> Message:
    role = LC_ROLES.get(cls, "unknown")
    if role is None:
        role = str(kwargs.get("role") or "user")
    if role == "unknown" or role not in openai_chat.ROLES:
        raise CodecError(f"{where}: unsupported LangChain message type {cls!r}")
    parts: list[Part] = []
    content = kwargs.get("content")
    extras = dict(as_dict(kwargs.get("additional_kwargs")))
    if role == "assistant" and isinstance(extras.get("reasoning_content"), str):
        parts.append(ReasoningPart(text=extras.pop("reasoning_content")))
    blocks = _content_parts(content, where)
    if role == "tool":
        text = "".join(p.text for p in blocks if isinstance(p, TextPart)) if isinstance(content, list) else (
            content if isinstance(content, str) else json.dumps(content))
        call_id = kwargs.get("tool_call_id") or extras.get("tool_call_id") or kwargs.get("name") or ""
        parts = [ToolResultPart(tool_call_id=str(call_id), name=kwargs.get("name"), content=text,
                                is_error=kwargs.get("status") == "error")]
    else:
        parts.extend(p for p in blocks if not isinstance(p, ToolCallPart))
        calls = kwargs.get("tool_calls")
        if role == "assistant" and isinstance(calls, list) and calls:
            for i, call in enumerate(calls):
                if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                    raise CodecError(f"{where}.tool_calls[{i}]: a tool call without a name")
                parts.append(ToolCallPart(id=str(call.get("id") or f"call_{i}"), name=call["name"],
                                          arguments=call.get("args")))
            extras.pop("tool_calls", None)
        elif role == "assistant" and isinstance(extras.get("tool_calls"), list):
            decoded = openai_chat.decode_message({"role": "assistant", "tool_calls": extras.pop("tool_calls")},
                                                 where)
            parts.extend(decoded.tool_calls)
    kept = {k: v for k, v in kwargs.items() if k not in LC_KEYS and v not in (None, {}, [])}
    if extras:
        kept["additional_kwargs"] = extras
    if kwargs.get("invalid_tool_calls"):
        kept["invalid_tool_calls"] = kwargs["invalid_tool_calls"]
    name = kwargs.get("name") if role != "tool" and isinstance(kwargs.get("name"), str) else None
    return Message(role=role, parts=parts, name=name,  # type: ignore[arg-type]
                   provider_details={"langchain": kept} if kept else None)


def _content_parts(content: Any, where: str) -> list[Part]:
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [TextPart(text=content)]
    if not isinstance(content, list):
        return [OpaquePart(format="langchain", data=content)]
    parts: list[Part] = []
    for item in content:
        if isinstance(item, str):
            parts.append(TextPart(text=item))
        elif isinstance(item, dict) and item.get("type") == "text" and isinstance(item.get("text"), str):
            parts.append(TextPart(text=item["text"]))
        elif isinstance(item, dict) and item.get("type") in ("reasoning", "thinking"):
            text = item.get("reasoning") or item.get("thinking") or ""
            parts.append(ReasoningPart(text=str(text), signature=item.get("signature")))
        elif isinstance(item, dict) and item.get("type") == "image_url":
            url = item.get("image_url")
            url = url.get("url") if isinstance(url, dict) else url
            parts.append(MediaPart(media_type="image/*", url=str(url)) if isinstance(url, str) else
                         OpaquePart(format="langchain", data=item))
        else:
            parts.append(OpaquePart(format="langchain", data=item))
    return parts
