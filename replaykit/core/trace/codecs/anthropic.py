"""Anthropic Messages <-> IR (requests, responses, streamed events).

Round trip: ``encode_request(*decode_request(body))`` equals ``body`` under canonical JSON. Format
details the IR does not model live in ``provider_details["anthropic"]`` (content shape, unknown block
keys such as ``cache_control``, image source details, redacted-thinking data).

Mapping: ``system`` becomes leading ``system`` messages; ``tool_result`` blocks stay inside the ``user``
message that carries them (as ``ToolResultPart``); IR ``tool`` messages from other formats are merged
into one ``user`` message of ``tool_result`` blocks, as Anthropic requires.
"""

from __future__ import annotations

import json
import mimetypes
from collections.abc import Sequence
from typing import Any

from replaykit.core.errors import CodecError
from replaykit.core.trace.codecs._common import (
    DecodedRequest,
    Encoded,
    JSONDict,
    details,
    expect_dict,
    expect_list,
    hints,
    object_arguments,
    opaque_loss,
    reasoning_losses,
)
from replaykit.core.trace.ir import (
    LLMResponse,
    MediaPart,
    Message,
    OpaquePart,
    Part,
    ReasoningPart,
    ResultBlock,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    Usage,
)

FMT = "anthropic"
TARGET = "Anthropic Messages"


def _extra(raw: JSONDict, known: set[str]) -> JSONDict | None:
    return {k: v for k, v in raw.items() if k not in known} or None


# ------------------------------------------------------------------------------------------- blocks


def decode_block(raw: Any) -> Part:
    """One content block -> IR part (unknown block types are kept whole as opaque parts)."""
    if not isinstance(raw, dict):
        return OpaquePart(format=FMT, data=raw)
    kind = raw.get("type")
    if kind == "text" and isinstance(raw.get("text"), str):
        return TextPart(text=raw["text"], provider_details=details(FMT, {"extra": _extra(raw, {"type", "text"})}))
    if kind == "thinking" and isinstance(raw.get("thinking"), str):
        signature = raw.get("signature")
        known = {"type", "thinking"} | ({"signature"} if isinstance(signature, str) else set())
        return ReasoningPart(text=raw["thinking"], signature=signature if isinstance(signature, str) else None,
                             provider=FMT, provider_details=details(FMT, {"extra": _extra(raw, known)}))
    if kind == "redacted_thinking" and isinstance(raw.get("data"), str):
        return ReasoningPart(redacted=True, provider=FMT, provider_details=details(
            FMT, {"data": raw["data"], "extra": _extra(raw, {"type", "data"})}))
    if kind == "tool_use" and isinstance(raw.get("id"), str) and isinstance(raw.get("name"), str) \
            and "input" in raw:
        return ToolCallPart(id=raw["id"], name=raw["name"], arguments=raw["input"],
                            provider_details=details(FMT, {"extra": _extra(raw, {"type", "id", "name", "input"})}))
    source = raw.get("source")
    if kind in ("image", "document") and isinstance(source, dict):
        if source.get("type") == "base64" and isinstance(source.get("data"), str) \
                and isinstance(source.get("media_type"), str):
            hint = {"block": kind, "extra": _extra(raw, {"type", "source"}),
                    "source_extra": _extra(source, {"type", "data", "media_type"})}
            return MediaPart(media_type=source["media_type"], data=source["data"], provider_details=details(FMT, hint))
        if source.get("type") == "url" and isinstance(source.get("url"), str):
            hint = {"block": kind, "extra": _extra(raw, {"type", "source"}),
                    "source_extra": _extra(source, {"type", "url"})}
            guessed = mimetypes.guess_type(source["url"].split("?", 1)[0])[0]
            default = "image/*" if kind == "image" else "application/pdf"
            return MediaPart(media_type=guessed or default, url=source["url"], provider_details=details(FMT, hint))
    return OpaquePart(format=FMT, data=raw)


def encode_block(part: Part, where: str, losses: list[str]) -> JSONDict | None:
    hint = hints(part, FMT)
    extra = dict(hint.get("extra") or {})
    if isinstance(part, TextPart):
        return {**extra, "type": "text", "text": part.text}
    if isinstance(part, ReasoningPart):
        if part.provider == FMT and part.redacted and isinstance(hint.get("data"), str):
            return {**extra, "type": "redacted_thinking", "data": hint["data"]}
        if part.provider == FMT and part.signature is not None:
            return {**extra, "type": "thinking", "thinking": part.text, "signature": part.signature}
        # Thinking without a valid signature is rejected by the API: send nothing, say so.
        if part.text:
            losses.append(f"{where}: reasoning text dropped (Anthropic only accepts its own signed thinking)")
        losses.extend(reasoning_losses(part, where, TARGET))
        return None
    if isinstance(part, ToolCallPart):
        arguments = object_arguments(part, where, losses, as_recorded=bool(hint))
        return {**extra, "type": "tool_use", "id": part.id, "name": part.name, "input": arguments}
    if isinstance(part, MediaPart):
        block = hint.get("block") or ("image" if part.media_type.startswith("image/") else "document")
        if part.data is not None:
            source: JSONDict = {**(hint.get("source_extra") or {}), "type": "base64",
                                "media_type": part.media_type, "data": part.data}
        elif part.url is not None:
            source = {**(hint.get("source_extra") or {}), "type": "url", "url": part.url}
        else:
            losses.append(f"{where}: media part without url or data dropped")
            return None
        return {**extra, "type": block, "source": source}
    if isinstance(part, OpaquePart):
        if part.format == FMT:
            return part.data if isinstance(part.data, dict) else {"value": part.data}
        losses.append(opaque_loss(part, where, TARGET))
        return None
    if isinstance(part, ToolResultPart):
        return _encode_tool_result(part, where, losses)
    return None


def _decode_tool_result(raw: JSONDict) -> ToolResultPart:
    hint: JSONDict = {"extra": _extra(raw, {"type", "tool_use_id", "content", "is_error"})}
    is_error = raw.get("is_error")
    if "is_error" in raw:
        if isinstance(is_error, bool):
            hint["is_error_key"] = True
        else:
            hint["extra"] = {**(hint["extra"] or {}), "is_error": is_error}
            is_error = False
    content, blocks = "", None
    value = raw.get("content")
    if "content" not in raw:
        hint["content"] = "absent"
    elif isinstance(value, str):
        content = value
    elif isinstance(value, list):
        hint["content"] = "list"
        blocks = [_as_block(decode_block(b)) for b in value]
        content = "".join(b.text for b in blocks if isinstance(b, TextPart))
    else:
        hint["extra"] = {**(hint["extra"] or {}), "content": value}
        hint["content"] = "extra"
    return ToolResultPart(tool_call_id=raw["tool_use_id"], content=content, blocks=blocks,
                          is_error=bool(is_error), provider_details=details(FMT, hint))


def _as_block(part: Part) -> ResultBlock:
    if isinstance(part, TextPart | MediaPart | OpaquePart):
        return part
    # Thinking or tool_use inside a tool result is not valid Anthropic; keep it verbatim anyway.
    return OpaquePart(format=FMT, data=encode_block(part, "tool_result", []))


def _encode_tool_result(part: ToolResultPart, where: str, losses: list[str]) -> JSONDict:
    hint = hints(part, FMT)
    out: JSONDict = {**(hint.get("extra") or {}), "type": "tool_result", "tool_use_id": part.tool_call_id}
    shape = hint.get("content")
    if part.blocks is not None and (shape == "list" or not hint):
        encoded = [encode_block(b, where, losses) for b in part.blocks]
        out["content"] = [b for b in encoded if b is not None]
    # A block that had no "content" key (and still has nothing to say) keeps none: exact round trip.
    elif not (shape in ("absent", "extra") and not part.content):
        out["content"] = part.content
    if part.is_error or hint.get("is_error_key"):
        out["is_error"] = part.is_error
    return out


# ----------------------------------------------------------------------------------------- messages


def decode_message(raw: Any, where: str) -> Message:
    rest = dict(expect_dict(raw, where))
    role = rest.pop("role", None)
    if role not in ("user", "assistant"):
        raise CodecError(f"{where}: unsupported role {role!r} (expected user or assistant)")
    hint: JSONDict = {}
    parts: list[Part] = []
    value = rest.pop("content", None)
    if isinstance(value, str):
        hint["content"] = "str"
        if value:
            parts.append(TextPart(text=value))
    elif isinstance(value, list):
        hint["content"] = "list"
        for index, block in enumerate(value):
            if isinstance(block, dict) and block.get("type") == "tool_result":
                if not isinstance(block.get("tool_use_id"), str):
                    raise CodecError(f"{where}.content[{index}]: tool_result without a string tool_use_id")
                parts.append(_decode_tool_result(block))
            else:
                parts.append(decode_block(block))
    else:
        raise CodecError(f"{where}: content must be a string or a list of blocks")
    hint["extra"] = rest or None
    return Message(role=role, parts=parts, provider_details=details(FMT, hint))


def _encode_message(message: Message, where: str, losses: list[str]) -> JSONDict:
    hint = hints(message, FMT)
    role = "assistant" if message.role == "assistant" else "user"
    body: JSONDict = {**(hint.get("extra") or {}), "role": role}
    if message.name is not None:
        losses.append(f"{where}: message name {message.name!r} dropped (Anthropic has no name field)")
    only_text = all(isinstance(p, TextPart) and not hints(p, FMT) for p in message.parts)
    if hint.get("content") == "str" and only_text:
        body["content"] = "".join(p.text for p in message.parts if isinstance(p, TextPart))
        return body
    blocks = [encode_block(p, f"{where}.parts[{i}]", losses) for i, p in enumerate(message.parts)]
    body["content"] = [b for b in blocks if b is not None]
    if not hint and only_text and len(message.parts) == 1:
        body["content"] = body["content"][0]["text"]
    return body


def decode_system(value: Any) -> Message:
    if isinstance(value, str):
        return Message(role="system", parts=[TextPart(text=value)] if value else [],
                       provider_details=details(FMT, {"system": "str"}))
    blocks = expect_list(value, "request.system")
    return Message(role="system", parts=[decode_block(b) for b in blocks],
                   provider_details=details(FMT, {"system": "list"}))


def _encode_system(messages: list[Message], losses: list[str]) -> Any:
    if len(messages) == 1 and hints(messages[0], FMT).get("system") == "str":
        return messages[0].text
    if len(messages) == 1 and hints(messages[0], FMT).get("system") == "list":
        blocks = [encode_block(p, "system", losses) for p in messages[0].parts]
        return [b for b in blocks if b is not None]
    texts = [m.text for m in messages]
    return "\n\n".join(t for t in texts if t)


# ------------------------------------------------------------------------------------------- tools


def decode_tool(raw: Any, where: str) -> ToolSpec:
    tool = expect_dict(raw, where)
    name = tool.get("name")
    schema = tool.get("input_schema")
    if isinstance(name, str) and tool.get("type") in (None, "custom") and isinstance(schema, dict):
        description = tool.get("description") if isinstance(tool.get("description"), str) else None
        known = {"name", "input_schema"} | ({"description"} if description is not None else set())
        return ToolSpec(name=name, description=description, parameters=schema,
                        provider_details=details(FMT, {"extra": _extra(tool, known)}))
    # Server tools (web_search_..., bash_..., text_editor_...): kept whole for this format only.
    return ToolSpec(name=name if isinstance(name, str) else str(tool.get("type", "tool")),
                    provider_details=details(FMT, {"raw": tool}))


def encode_tool(spec: ToolSpec, where: str, losses: list[str]) -> JSONDict | None:
    hint = hints(spec, FMT)
    if "raw" in hint:
        raw: JSONDict = hint["raw"]
        return raw
    if spec.parameters is None and spec.provider_details:
        losses.append(f"{where}: provider-specific tool {spec.name!r} dropped (no Anthropic equivalent)")
        return None
    out: JSONDict = {**(hint.get("extra") or {}), "name": spec.name}
    if spec.description is not None:
        out["description"] = spec.description
    out["input_schema"] = spec.parameters if spec.parameters is not None else {"type": "object", "properties": {}}
    return out


# ---------------------------------------------------------------------------------------- requests


def decode_request(body: Any) -> DecodedRequest:
    params = dict(expect_dict(body, "request"))
    raw_messages = expect_list(params.pop("messages", None), "request.messages")
    messages: list[Message] = []
    if "system" in params and isinstance(params["system"], str | list):
        messages.append(decode_system(params.pop("system")))
    messages += [decode_message(m, f"messages[{i}]") for i, m in enumerate(raw_messages)]
    tools: list[ToolSpec] | None = None
    if isinstance(params.get("tools"), list):
        tools = [decode_tool(t, f"tools[{i}]") for i, t in enumerate(params.pop("tools"))]
    return DecodedRequest(messages=messages, tools=tools, params=params)


def encode_request(messages: Sequence[Message], tools: Sequence[ToolSpec] | None = None,
                   params: JSONDict | None = None) -> Encoded:
    losses: list[str] = []
    body: JSONDict = dict(params or {})
    system: list[Message] = []
    out: list[JSONDict] = []
    pending_results: list[Part] = []  # IR tool messages, merged into one user message

    def flush() -> None:
        if pending_results:
            blocks = [encode_block(p, "tool results", losses) for p in pending_results]
            out.append({"role": "user", "content": [b for b in blocks if b is not None]})
            pending_results.clear()

    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        if message.role in ("system", "developer"):
            if out or pending_results:
                losses.append(f"{where}: {message.role} message moved into the top-level system prompt")
            system.append(message)
            continue
        if message.role == "tool":
            pending_results.extend(message.parts)
            continue
        if pending_results and message.role == "user":
            # A user message right after tool results joins their turn (the API requires alternation).
            pending_results.extend(message.parts)
            continue
        flush()
        out.append(_encode_message(message, where, losses))
    flush()
    if system:
        body["system"] = _encode_system(system, losses)
    body["messages"] = out
    if tools is not None:
        encoded = [encode_tool(t, f"tools[{i}]", losses) for i, t in enumerate(tools)]
        body["tools"] = [t for t in encoded if t is not None]
    return Encoded(body=body, losses=losses)


# --------------------------------------------------------------------------------------- responses


def decode_usage(raw: JSONDict) -> Usage:
    def num(key: str) -> int | None:
        value = raw.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    return Usage(input_tokens=num("input_tokens"), output_tokens=num("output_tokens"),
                 cache_read_tokens=num("cache_read_input_tokens"),
                 cache_write_tokens=num("cache_creation_input_tokens"), details={FMT: raw})


def encode_usage(usage: Usage) -> JSONDict:
    raw = (usage.details or {}).get(FMT)
    if isinstance(raw, dict):
        return raw
    out: JSONDict = {"input_tokens": usage.input_tokens or 0, "output_tokens": usage.output_tokens or 0}
    if usage.cache_read_tokens is not None:
        out["cache_read_input_tokens"] = usage.cache_read_tokens
    if usage.cache_write_tokens is not None:
        out["cache_creation_input_tokens"] = usage.cache_write_tokens
    return out


def decode_response(body: Any) -> LLMResponse:
    top = dict(expect_dict(body, "response"))
    content = top.pop("content", None)
    role = top.pop("role", "assistant")
    message = decode_message({"role": role, "content": expect_list(content, "response.content")},
                             "response")
    stop = top.pop("stop_reason") if isinstance(top.get("stop_reason"), str) else None
    response_id = top.pop("id") if isinstance(top.get("id"), str) else None
    model = top.pop("model") if isinstance(top.get("model"), str) else None
    usage = decode_usage(top.pop("usage")) if isinstance(top.get("usage"), dict) else None
    return LLMResponse(message=message, finish_reason=stop, usage=usage, model=model, response_id=response_id,
                       provider_details=details(FMT, {"top": top or None}))


def encode_response(response: LLMResponse) -> Encoded:
    losses: list[str] = []
    hint = hints(response, FMT)
    message = _encode_message(response.message, "response.message", losses)
    content = message["content"]
    body: JSONDict = dict(hint.get("top") or {"type": "message", "stop_sequence": None})
    if response.response_id is not None:
        body["id"] = response.response_id
    body["role"] = "assistant"
    if response.model is not None:
        body["model"] = response.model
    body["content"] = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if response.finish_reason is not None or "top" not in hint:
        body["stop_reason"] = response.finish_reason
    if response.usage is not None:
        body["usage"] = encode_usage(response.usage)
    return Encoded(body=body, losses=losses)


# ------------------------------------------------------------------------------------------ stream


def assemble_events(events: Sequence[Any]) -> JSONDict:
    """Streamed Messages events (the SSE ``data`` payloads, in order) -> the final message dict."""
    message: JSONDict | None = None
    blocks: dict[int, JSONDict] = {}
    partial_json: dict[int, str] = {}
    for n, raw in enumerate(events):
        event = expect_dict(raw, f"stream[{n}]")
        kind = event.get("type")
        if kind == "message_start":
            message = dict(expect_dict(event.get("message"), f"stream[{n}].message"))
            message["usage"] = dict(message.get("usage") or {})
        elif kind == "content_block_start":
            blocks[event.get("index", len(blocks))] = dict(expect_dict(event.get("content_block"), f"stream[{n}]"))
        elif kind == "content_block_delta":
            index = event.get("index", 0)
            block = blocks.setdefault(index, {"type": "text", "text": ""})
            delta = expect_dict(event.get("delta"), f"stream[{n}].delta")
            dtype = delta.get("type")
            if dtype == "text_delta":
                block["text"] = block.get("text", "") + delta.get("text", "")
            elif dtype == "input_json_delta":
                partial_json[index] = partial_json.get(index, "") + delta.get("partial_json", "")
            elif dtype == "thinking_delta":
                block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
            elif dtype == "signature_delta":
                block["signature"] = block.get("signature", "") + delta.get("signature", "")
            elif dtype == "citations_delta":
                block.setdefault("citations", []).append(delta.get("citation"))
        elif kind == "message_delta":
            if message is None:
                raise CodecError(f"stream[{n}]: message_delta before message_start")
            message.update(event.get("delta") or {})
            message["usage"].update(event.get("usage") or {})
        elif kind == "error":
            raise CodecError(f"stream[{n}]: provider error event: {json.dumps(event.get('error'))[:200]}")
    if message is None:
        raise CodecError("stream: no message_start event")
    for index, text in partial_json.items():
        try:
            blocks[index]["input"] = json.loads(text) if text else {}
        except ValueError as exc:
            raise CodecError(f"stream: tool_use block {index} input is not valid JSON") from exc
    message["content"] = [blocks[i] for i in sorted(blocks)]
    return message


def decode_stream(events: Sequence[Any]) -> LLMResponse:
    return decode_response(assemble_events(events))


def stream_complete(events: Sequence[Any], done: bool = False) -> bool:
    """The provider finished: ``message_stop`` arrived."""
    return any(isinstance(e, dict) and e.get("type") == "message_stop" for e in events)


def synthesize_stream(response: LLMResponse, request_body: JSONDict | None = None) -> list[JSONDict]:
    """The events of a response recorded without its own: ``message_start``, each content block with
    one delta holding all of it (text, thinking and its signature, a tool call's whole input as JSON),
    ``message_delta`` with the stop reason and usage, ``message_stop``."""
    body = encode_response(response).body
    usage = body.get("usage") or {}
    start = {k: v for k, v in body.items() if k not in ("content", "usage")}
    start.update(content=[], stop_reason=None, stop_sequence=None,
                 usage={**usage, "output_tokens": 0} if usage else {"input_tokens": 0, "output_tokens": 0})
    out: list[JSONDict] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(body.get("content") or []):
        kind = block.get("type")
        deltas: list[JSONDict]
        if kind == "text":
            head, deltas = {**block, "text": ""}, [{"type": "text_delta", "text": block.get("text", "")}]
        elif kind == "thinking":
            head = {k: v for k, v in block.items() if k != "signature"} | {"thinking": ""}
            deltas = [{"type": "thinking_delta", "thinking": block.get("thinking", "")}]
            if block.get("signature"):
                deltas.append({"type": "signature_delta", "signature": block["signature"]})
        elif kind in ("tool_use", "server_tool_use"):
            head = {**block, "input": {}}
            deltas = [{"type": "input_json_delta",
                       "partial_json": json.dumps(block.get("input", {}), ensure_ascii=False,
                                                  separators=(",", ":"))}]
        else:
            head, deltas = block, []
        out.append({"type": "content_block_start", "index": index, "content_block": head})
        out.extend({"type": "content_block_delta", "index": index, "delta": d} for d in deltas)
        out.append({"type": "content_block_stop", "index": index})
    out.append({"type": "message_delta", "delta": {"stop_reason": body.get("stop_reason"),
                                                   "stop_sequence": body.get("stop_sequence")},
                "usage": {"output_tokens": usage.get("output_tokens", 0)}})
    out.append({"type": "message_stop"})
    return out
