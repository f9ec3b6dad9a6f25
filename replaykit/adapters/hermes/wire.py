"""Exact, reversible mapping between the request bodies Hermes sends (per api_mode) and IR messages.

A minimal codec private to the Hermes adapter (the shared codecs in ``replaykit.core.codecs`` had not
landed when it was written). Its one promise: ``body_from_ir(request_to_ir(body)) == body`` for every
body Hermes sends, so the request a provider received is reconstructable exactly from the trace. Keys
the IR does not model are kept in ``provider_details["extra"]``; content it cannot type is an
``OpaquePart`` holding the original verbatim.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

from replaykit.core.ir import (
    MediaPart,
    Message,
    OpaquePart,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)

API_OF_MODE = {
    "chat_completions": "openai-chat",
    "codex_responses": "openai-responses",
    "anthropic_messages": "anthropic-messages",
}
# Keyword arguments of the provider SDK call that are not part of the HTTP body.
SDK_ONLY_KEYS = frozenset({"timeout", "extra_headers", "extra_query", "extra_body"})


def _details(extra: Mapping[str, Any], **more: Any) -> dict[str, Any] | None:
    out: dict[str, Any] = {k: v for k, v in more.items() if v is not None}
    if extra:
        out["extra"] = dict(extra)
    return out or None


def _parse_json(raw: Any) -> Any:
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return None


# --------------------------------------------------------------------------- OpenAI Chat Completions

_CHAT_KEYS = frozenset({"role", "content", "tool_calls", "tool_call_id", "name", "reasoning_content", "reasoning"})


def chat_message_to_ir(msg: Mapping[str, Any]) -> Message:
    role = msg.get("role")
    parts: list[Part] = []
    shape: str | None = None
    for key in ("reasoning_content", "reasoning"):
        value = msg.get(key)
        if isinstance(value, str):
            parts.append(ReasoningPart(text=value, provider_details={"key": key}))
    extra = {k: v for k, v in msg.items() if k not in _CHAT_KEYS or (k in ("reasoning_content", "reasoning")
                                                                         and not isinstance(v, str))}
    content = msg.get("content")
    if "content" not in msg:
        shape = "absent"
    elif content is None:
        shape = "null"
    elif isinstance(content, str):
        if role == "tool":
            parts.append(ToolResultPart(tool_call_id=str(msg.get("tool_call_id", "")), content=content))
        else:
            parts.append(TextPart(text=content))
    elif isinstance(content, list):
        shape = "list"
        for item in content:
            parts.append(_chat_content_part(item))
    else:
        shape = "other"
        parts.append(OpaquePart(format="openai-chat", data=content))
    if role == "tool" and (shape is not None):
        # A tool message whose content is not a plain string: keep the id on the message.
        extra = {**extra, "tool_call_id": msg.get("tool_call_id")} if "tool_call_id" in msg else extra
    for call in msg.get("tool_calls") or ():
        fn = call.get("function") or {}
        raw = fn.get("arguments")
        call_extra = {k: v for k, v in call.items() if k not in ("id", "function")}
        fn_extra = {k: v for k, v in fn.items() if k not in ("name", "arguments")}
        parts.append(ToolCallPart(
            id=str(call.get("id", "")), name=str(fn.get("name", "")), arguments=_parse_json(raw),
            raw_arguments=raw if isinstance(raw, str) else None,
            provider_details=_details(call_extra, fn_extra=fn_extra or None,
                                      arguments=None if isinstance(raw, str) else raw),
        ))
    if "tool_calls" in msg and not msg.get("tool_calls"):
        extra["tool_calls"] = msg["tool_calls"]
    safe_role = role if role in ("system", "developer", "user", "assistant", "tool") else "user"
    if safe_role != role:
        extra["role"] = role
    return Message(role=cast(Any, safe_role), parts=parts, name=msg.get("name"),
                   provider_details=_details(extra, content_shape=shape))


def _chat_content_part(item: Any) -> Part:
    if isinstance(item, dict) and item.get("type") == "text" and isinstance(item.get("text"), str):
        extra = {k: v for k, v in item.items() if k not in ("type", "text")}
        return TextPart(text=item["text"], provider_details=_details(extra))
    if (isinstance(item, dict) and item.get("type") == "image_url" and isinstance(item.get("image_url"), dict)
            and set(item) == {"type", "image_url"} and set(item["image_url"]) == {"url"}):
        return MediaPart(media_type="image/*", url=item["image_url"]["url"])
    return OpaquePart(format="openai-chat", data=item)


def chat_message_from_ir(m: Message) -> dict[str, Any]:
    details = m.provider_details or {}
    extra = dict(details.get("extra") or {})
    shape = details.get("content_shape")
    out: dict[str, Any] = {"role": extra.pop("role", m.role)}
    if m.name is not None:
        out["name"] = m.name
    texts: list[Part] = []
    calls: list[dict[str, Any]] = []
    for part in m.parts:
        if isinstance(part, ReasoningPart):
            out[(part.provider_details or {}).get("key", "reasoning_content")] = part.text
        elif isinstance(part, ToolCallPart):
            pd = part.provider_details or {}
            fn: dict[str, Any] = {"name": part.name,
                                  "arguments": part.raw_arguments if part.raw_arguments is not None else pd.get("arguments")}
            fn.update(pd.get("fn_extra") or {})
            calls.append({"id": part.id, **(pd.get("extra") or {}), "function": fn})
        elif isinstance(part, ToolResultPart):
            out["tool_call_id"] = part.tool_call_id
            out["content"] = part.content
        else:
            texts.append(part)
    if shape == "null":
        out["content"] = None
    elif shape == "list":
        out["content"] = [_chat_part_from_ir(p) for p in texts]
    elif shape == "other":
        out["content"] = texts[0].data if texts and isinstance(texts[0], OpaquePart) else None
    elif shape is None and m.role != "tool":
        out["content"] = "".join(p.text for p in texts if isinstance(p, TextPart))
    if calls:
        out["tool_calls"] = calls
    out.update(extra)
    return out


def _chat_part_from_ir(part: Part) -> Any:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text, **((part.provider_details or {}).get("extra") or {})}
    if isinstance(part, MediaPart):
        return {"type": "image_url", "image_url": {"url": part.url}}
    if isinstance(part, OpaquePart):
        return part.data
    raise ValueError(f"cannot place a {part.type} part in chat content")


# ---------------------------------------------------------------------------- OpenAI Responses

def responses_item_to_ir(item: Any) -> Message:
    if not isinstance(item, dict):
        return Message(role="user", parts=[OpaquePart(format="openai-responses", data=item)])
    kind = item.get("type")
    if kind == "function_call":
        raw = item.get("arguments")
        extra = {k: v for k, v in item.items() if k not in ("type", "call_id", "name", "arguments")}
        part = ToolCallPart(id=str(item.get("call_id", "")), name=str(item.get("name", "")),
                            arguments=_parse_json(raw), raw_arguments=raw if isinstance(raw, str) else None)
        return Message(role="assistant", parts=[part], provider_details=_details(extra, item="function_call"))
    if kind == "function_call_output" and isinstance(item.get("output"), str):
        extra = {k: v for k, v in item.items() if k not in ("type", "call_id", "output")}
        part_r = ToolResultPart(tool_call_id=str(item.get("call_id", "")), content=item["output"])
        return Message(role="tool", parts=[part_r], provider_details=_details(extra, item="function_call_output"))
    role = item.get("role")
    if kind in (None, "message") and role in ("user", "assistant", "system", "developer") \
            and isinstance(item.get("content"), str):
        extra = {k: v for k, v in item.items() if k not in ("role", "content")}
        return Message(role=cast(Any, role), parts=[TextPart(text=item["content"])], provider_details=_details(extra, item="message"))
    return Message(role=cast(Any, role if role in ("user", "assistant", "system", "developer") else "assistant"),
                   parts=[OpaquePart(format="openai-responses", data=item)], provider_details={"item": "opaque"})


def responses_item_from_ir(m: Message) -> Any:
    details = m.provider_details or {}
    extra = details.get("extra") or {}
    kind = details.get("item")
    if kind == "function_call":
        part = m.tool_calls[0]
        return {"type": "function_call", "call_id": part.id, "name": part.name,
                "arguments": part.raw_arguments if part.raw_arguments is not None else json.dumps(part.arguments),
                **extra}
    if kind == "function_call_output":
        res = m.tool_results[0]
        return {"type": "function_call_output", "call_id": res.tool_call_id, "output": res.content, **extra}
    if kind == "message":
        return {"role": m.role, "content": m.text, **extra}
    first = m.parts[0]
    if isinstance(first, OpaquePart):
        return first.data
    # Built by another engine: a plain message item.
    return {"role": m.role, "content": m.text}


# ---------------------------------------------------------------------------- Anthropic Messages

def _anthropic_block_to_ir(block: Any) -> Part:
    if not isinstance(block, dict):
        return OpaquePart(format="anthropic", data=block)
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return TextPart(text=block["text"], provider_details=_details({k: v for k, v in block.items() if k not in ("type", "text")}))
    if kind == "tool_use":
        extra = {k: v for k, v in block.items() if k not in ("type", "id", "name", "input")}
        return ToolCallPart(id=str(block.get("id", "")), name=str(block.get("name", "")), arguments=block.get("input"),
                            provider_details=_details(extra))
    if kind == "tool_result" and isinstance(block.get("content"), str):
        extra = {k: v for k, v in block.items() if k not in ("type", "tool_use_id", "content", "is_error")}
        return ToolResultPart(tool_call_id=str(block.get("tool_use_id", "")), content=block["content"],
                              is_error=bool(block.get("is_error", False)),
                              provider_details=_details(extra, has_is_error=True if "is_error" in block else None))
    if kind == "thinking" and isinstance(block.get("thinking"), str):
        extra = {k: v for k, v in block.items() if k not in ("type", "thinking", "signature")}
        return ReasoningPart(text=block["thinking"], signature=block.get("signature"), provider="anthropic",
                             provider_details=_details(extra))
    return OpaquePart(format="anthropic", data=block)


def _anthropic_block_from_ir(part: Part) -> Any:
    extra = (part.provider_details or {}).get("extra") or {}
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text, **extra}
    if isinstance(part, ToolCallPart):
        return {"type": "tool_use", "id": part.id, "name": part.name, "input": part.arguments, **extra}
    if isinstance(part, ToolResultPart):
        out: dict[str, Any] = {"type": "tool_result", "tool_use_id": part.tool_call_id, "content": part.content, **extra}
        if part.is_error or (part.provider_details or {}).get("has_is_error"):
            out["is_error"] = part.is_error
        return out
    if isinstance(part, ReasoningPart):
        block: dict[str, Any] = {"type": "thinking", "thinking": part.text, **extra}
        if part.signature is not None:
            block["signature"] = part.signature
        return block
    if isinstance(part, OpaquePart):
        return part.data
    raise ValueError(f"cannot place a {part.type} part in an Anthropic message")


def anthropic_message_to_ir(msg: Mapping[str, Any]) -> Message:
    role = msg.get("role")
    safe_role = role if role in ("user", "assistant") else "user"
    extra = {k: v for k, v in msg.items() if k not in ("role", "content")}
    if safe_role != role:
        extra["role"] = role
    content = msg.get("content")
    if isinstance(content, str):
        return Message(role=cast(Any, safe_role), parts=[TextPart(text=content)], provider_details=_details(extra, content_shape="str"))
    parts = [_anthropic_block_to_ir(b) for b in content or ()]
    # A user message made only of tool results is a tool message in the IR.
    if safe_role == "user" and parts and all(isinstance(p, ToolResultPart) for p in parts):
        safe_role = "tool"
        extra["role"] = extra.get("role", "user")
    return Message(role=cast(Any, safe_role), parts=parts, provider_details=_details(extra))


def anthropic_message_from_ir(m: Message) -> dict[str, Any]:
    details = m.provider_details or {}
    extra = dict(details.get("extra") or {})
    role = extra.pop("role", "user" if m.role == "tool" else m.role)
    if details.get("content_shape") == "str":
        return {"role": role, "content": m.text, **extra}
    return {"role": role, "content": [_anthropic_block_from_ir(p) for p in m.parts], **extra}


# ------------------------------------------------------------------------------------ tools

def tools_to_ir(api: str, tools: Sequence[Any] | None) -> list[ToolSpec]:
    specs = []
    for tool in tools or ():
        if not isinstance(tool, dict):
            specs.append(ToolSpec(name="?", provider_details={"raw": tool}))
            continue
        if api == "openai-chat" and isinstance(tool.get("function"), dict):
            fn = tool["function"]
            known = {k: fn[k] for k in ("name", "description", "parameters") if k in fn}
            extra = {k: v for k, v in tool.items() if k not in ("type", "function")}
            specs.append(ToolSpec(name=str(fn.get("name", "")), description=known.get("description"),
                                  parameters=known.get("parameters"),
                                  provider_details={"raw": tool} if extra or set(fn) - set(known) or tool.get("type") != "function" else None))
        elif api == "anthropic-messages":
            specs.append(ToolSpec(name=str(tool.get("name", "")), description=tool.get("description"),
                                  parameters=tool.get("input_schema"), provider_details={"raw": tool}))
        else:
            specs.append(ToolSpec(name=str(tool.get("name", "")), description=tool.get("description"),
                                  parameters=tool.get("parameters"), provider_details={"raw": tool}))
    return specs


def tools_from_ir(api: str, specs: Sequence[ToolSpec]) -> list[Any]:
    out = []
    for spec in specs:
        raw = (spec.provider_details or {}).get("raw")
        if raw is not None:
            out.append(raw)
            continue
        fn: dict[str, Any] = {"name": spec.name}
        if spec.description is not None:
            fn["description"] = spec.description
        if spec.parameters is not None:
            fn["parameters"] = spec.parameters
        out.append({"type": "function", "function": fn})
    return out


# --------------------------------------------------------------------------------- requests

def messages_to_ir(api: str, body: Mapping[str, Any]) -> list[Message]:
    if api == "openai-chat":
        return [chat_message_to_ir(m) for m in body.get("messages") or ()]
    if api == "openai-responses":
        out = []
        if "instructions" in body:
            ins = body["instructions"]
            part: Part = TextPart(text=ins) if isinstance(ins, str) else OpaquePart(format="openai-responses", data=ins)
            out.append(Message(role="system", parts=[part], provider_details={"from": "instructions"}))
        items = body.get("input")
        if isinstance(items, str):
            out.append(Message(role="user", parts=[TextPart(text=items)], provider_details={"from": "input_str"}))
        else:
            out.extend(responses_item_to_ir(i) for i in items or ())
        return out
    out = []
    if "system" in body:
        system = body["system"]
        spart: Part = TextPart(text=system) if isinstance(system, str) else OpaquePart(format="anthropic", data=system)
        out.append(Message(role="system", parts=[spart], provider_details={"from": "system"}))
    out.extend(anthropic_message_to_ir(m) for m in body.get("messages") or ())
    return out


def messages_from_ir(api: str, messages: Sequence[Message]) -> dict[str, Any]:
    """The body fields that carry the conversation (``messages``, or ``instructions``/``input``, or
    ``system``/``messages``)."""
    if api == "openai-chat":
        return {"messages": [chat_message_from_ir(m) for m in messages]}
    out: dict[str, Any] = {}
    rest = list(messages)
    if rest and (rest[0].provider_details or {}).get("from") in ("instructions", "system"):
        first = rest.pop(0)
        value = first.parts[0].data if isinstance(first.parts[0], OpaquePart) else first.text
        out["instructions" if api == "openai-responses" else "system"] = value
    if api == "openai-responses":
        if len(rest) == 1 and (rest[0].provider_details or {}).get("from") == "input_str":
            out["input"] = rest[0].text
        else:
            out["input"] = [responses_item_from_ir(m) for m in rest]
        return out
    out["messages"] = [anthropic_message_from_ir(m) for m in rest]
    return out


_CONVERSATION_KEYS = {"openai-chat": ("messages",), "openai-responses": ("instructions", "input"),
                      "anthropic-messages": ("system", "messages")}


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


def body_from_ir(api: str, model: str | None, messages: Sequence[Message], tools: Sequence[ToolSpec] | None,
                 params: Mapping[str, Any]) -> dict[str, Any]:
    """The HTTP body a provider received, rebuilt from the IR (the inverse of the recording)."""
    body: dict[str, Any] = {}
    if model is not None:
        body["model"] = model
    body.update(messages_from_ir(api, messages))
    if tools is not None:
        body["tools"] = tools_from_ir(api, tools)
    body.update(params)
    return body
