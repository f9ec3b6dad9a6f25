"""OpenAI Responses API <-> IR (request ``input``/``instructions``/``tools``, response ``output``, SSE).

Items map to messages: consecutive assistant-side items (``reasoning``, assistant ``message``,
``function_call`` and item types the IR does not model) form ONE assistant message, so a turn is one
LLM answer as in the other formats; ``function_call_output`` is a ``tool`` message; user, system and
developer ``message`` items are messages of that role. ``instructions`` is a leading system message.

Round trip: each part remembers the item it came from (``provider_details["openai-responses"]["item"]``
indexes the message's ``items`` list, which keeps each item's unknown keys), so encoding back gives the
same item list. Encrypted reasoning and reasoning item ids only make sense to OpenAI: other formats
drop them with a reported loss, and this encoder drops foreign signatures the same way.
"""

from __future__ import annotations

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
    opaque_loss,
    parse_arguments,
    reasoning_losses,
)
from replaykit.core.trace.codecs.openai_chat import _media_from_url
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

FMT = "openai-responses"
TARGET = "OpenAI Responses"
ASSISTANT_ITEMS = ("reasoning", "function_call")


def _extra(raw: JSONDict, known: set[str]) -> JSONDict | None:
    return {k: v for k, v in raw.items() if k not in known} or None


def _tag(part: Part, item: int) -> Part:
    """The part with its item index recorded (merged into its existing hints)."""
    current = dict(hints(part, FMT))
    current["item"] = item
    merged = dict(part.provider_details or {})
    merged[FMT] = current
    return part.model_copy(update={"provider_details": merged})


# -------------------------------------------------------------------------------------- content parts


def _decode_content_part(raw: Any) -> Part:
    if not isinstance(raw, dict):
        return OpaquePart(format=FMT, data=raw)
    kind = raw.get("type")
    if kind in ("input_text", "output_text", "text") and isinstance(raw.get("text"), str):
        return TextPart(text=raw["text"], provider_details=details(
            FMT, {"kind": kind, "extra": _extra(raw, {"type", "text"})}))
    if kind == "refusal" and isinstance(raw.get("refusal"), str):
        return TextPart(text=raw["refusal"], provider_details=details(
            FMT, {"kind": kind, "extra": _extra(raw, {"type", "refusal"})}))
    if kind == "input_image" and isinstance(raw.get("image_url"), str):
        media_type, url, data = _media_from_url(raw["image_url"])
        return MediaPart(media_type=media_type, url=url, data=data, provider_details=details(
            FMT, {"kind": kind, "extra": _extra(raw, {"type", "image_url"})}))
    return OpaquePart(format=FMT, data=raw)


def _encode_content_part(part: Part, role: str, where: str, losses: list[str]) -> JSONDict | None:
    hint = hints(part, FMT)
    extra = dict(hint.get("extra") or {})
    if isinstance(part, TextPart):
        kind = hint.get("kind") or ("output_text" if role == "assistant" else "input_text")
        if kind == "refusal":
            return {**extra, "type": "refusal", "refusal": part.text}
        if kind == "output_text" and not hint:
            extra["annotations"] = []
        return {**extra, "type": kind, "text": part.text}
    if isinstance(part, MediaPart):
        if part.url is not None:
            url = part.url
        elif part.data is not None:
            url = f"data:{part.media_type};base64,{part.data}"
        else:
            losses.append(f"{where}: media part without url or data dropped")
            return None
        if not part.media_type.startswith("image/"):
            return {**extra, "type": "input_file", "file_data": url}
        if not hint:
            extra.setdefault("detail", "auto")
        return {**extra, "type": "input_image", "image_url": url}
    if isinstance(part, OpaquePart):
        if part.format == FMT:
            return part.data if isinstance(part.data, dict) else {"value": part.data}
        losses.append(opaque_loss(part, where, TARGET))
    return None


# --------------------------------------------------------------------------------------------- items


def _decode_message_item(item: JSONDict, role: str, where: str) -> tuple[list[Part], JSONDict]:
    meta: JSONDict = {"kind": "message", "typed": "type" in item or None,
                      "extra": _extra(item, {"type", "role", "content"})}
    content = item.get("content")
    parts: list[Part] = []
    if isinstance(content, str):
        meta["content"] = "str"
        if content:
            parts.append(TextPart(text=content))
    elif isinstance(content, list):
        parts = [_decode_content_part(c) for c in content]
    else:
        raise CodecError(f"{where}: message content must be a string or a list of parts")
    return parts, meta


def _decode_assistant_item(item: JSONDict, kind: str, where: str) -> tuple[list[Part], JSONDict]:
    if kind == "message":
        return _decode_message_item(item, "assistant", where)
    if kind == "function_call":
        call_id, name, arguments = item.get("call_id"), item.get("name"), item.get("arguments")
        if not isinstance(call_id, str) or not isinstance(name, str) or not isinstance(arguments, str):
            raise CodecError(f"{where}: function_call needs string call_id, name and arguments")
        fc_meta: JSONDict = {"kind": kind, "extra": _extra(item, {"type", "call_id", "name", "arguments"})}
        return [ToolCallPart(id=call_id, name=name, raw_arguments=arguments,
                             arguments=parse_arguments(arguments))], fc_meta
    if kind == "reasoning":
        summary = item.get("summary")
        texts = [s.get("text") for s in summary or [] if isinstance(s, dict)] if isinstance(summary, list) else []
        text = "\n\n".join(t for t in texts if isinstance(t, str))
        encrypted = item.get("encrypted_content")
        item_id = item.get("id")
        known = {"type", "summary"} | ({"encrypted_content"} if isinstance(encrypted, str) else set()) \
            | ({"id"} if isinstance(item_id, str) else set())
        meta: JSONDict = {"kind": kind, "summary": summary, "has_summary": "summary" in item or None,
                "extra": _extra(item, known)}
        part = ReasoningPart(text=text, id=item_id if isinstance(item_id, str) else None,
                             encrypted=encrypted if isinstance(encrypted, str) else None, provider=FMT)
        return [part], meta
    return [OpaquePart(format=FMT, data=item)], {"kind": "opaque"}


def decode_items(items: Sequence[Any], where: str = "input") -> list[Message]:
    """Responses items -> IR messages (assistant-side runs of items merged into one message)."""
    out: list[Message] = []
    group_parts: list[Part] = []
    group_items: list[JSONDict] = []

    def flush() -> None:
        if group_items:
            out.append(Message(role="assistant", parts=list(group_parts),
                               provider_details={FMT: {"items": list(group_items)}}))
            group_parts.clear()
            group_items.clear()

    for index, raw in enumerate(items):
        item_where = f"{where}[{index}]"
        item = expect_dict(raw, item_where)
        kind = item.get("type", "message" if "role" in item else None)
        role = item.get("role")
        if kind in ASSISTANT_ITEMS or (kind == "message" and role == "assistant") or \
                kind not in ("message", "function_call_output"):
            parts, item_meta = _decode_assistant_item(item, str(kind), item_where)
            group_parts.extend(_tag(p, len(group_items)) for p in parts)
            group_items.append(_clean(item_meta))
            continue
        flush()
        if kind == "function_call_output":
            call_id = item.get("call_id")
            if not isinstance(call_id, str):
                raise CodecError(f"{item_where}: function_call_output without a string call_id")
            output = item.get("output")
            meta: JSONDict = {"kind": kind, "extra": _extra(item, {"type", "call_id", "output"})}
            content, blocks = "", None
            if isinstance(output, str):
                content = output
            elif isinstance(output, list):
                meta["output"] = "list"
                blocks = [_as_block(_decode_content_part(p)) for p in output]
                content = "".join(b.text for b in blocks if isinstance(b, TextPart))
            else:
                raise CodecError(f"{item_where}: function_call_output output must be a string or a list")
            result = ToolResultPart(tool_call_id=call_id, content=content, blocks=blocks)
            out.append(Message(role="tool", parts=[_tag(result, 0)],
                               provider_details={FMT: {"items": [_clean(meta)]}}))
            continue
        if role not in ("user", "system", "developer"):
            raise CodecError(f"{item_where}: unsupported message role {role!r}")
        parts, item_meta = _decode_message_item(item, role, item_where)
        out.append(Message(role=role, parts=[_tag(p, 0) for p in parts],
                           provider_details={FMT: {"items": [_clean(item_meta)]}}))
    flush()
    return out


def _clean(meta: JSONDict) -> JSONDict:
    return {k: v for k, v in meta.items() if v is not None}


def _as_block(part: Part) -> ResultBlock:
    if isinstance(part, TextPart | MediaPart | OpaquePart):
        return part
    return OpaquePart(format=FMT, data=None)


def _encode_item(meta: JSONDict, parts: list[Part], role: str, where: str, losses: list[str]) -> list[JSONDict]:
    kind = meta.get("kind")
    extra = dict(meta.get("extra") or {})
    if kind == "message":
        item: JSONDict = dict(extra)
        if meta.get("typed"):
            item["type"] = "message"
        item["role"] = role
        if meta.get("content") == "str" and all(isinstance(p, TextPart) for p in parts):
            item["content"] = "".join(p.text for p in parts if isinstance(p, TextPart))
        else:
            encoded = [_encode_content_part(p, role, where, losses) for p in parts]
            item["content"] = [c for c in encoded if c is not None]
        return [item]
    if kind == "function_call_output":
        result = next((p for p in parts if isinstance(p, ToolResultPart)), None)
        if result is None:
            return []
        return [_encode_result(result, meta, where, losses)]
    out: list[JSONDict] = []
    for part in parts:  # function_call, reasoning, opaque: one part each
        out.extend(_encode_loose(part, role, where, losses, meta))
    return out


def _encode_result(result: ToolResultPart, meta: JSONDict, where: str, losses: list[str]) -> JSONDict:
    item: JSONDict = {**(meta.get("extra") or {}), "type": "function_call_output", "call_id": result.tool_call_id}
    if result.blocks is not None and (meta.get("output") == "list" or "kind" not in meta):
        encoded = [_encode_content_part(b, "user", where, losses) for b in result.blocks]
        item["output"] = [c for c in encoded if c is not None]
    else:
        item["output"] = result.content
    if result.is_error:
        losses.append(f"{where}: is_error flag of tool result dropped (Responses has no error marker)")
    return item


def _encode_loose(part: Part, role: str, where: str, losses: list[str], meta: JSONDict | None = None) -> list[JSONDict]:
    """One part as its own item (default mapping, used for IR from other formats)."""
    meta = meta or {}
    extra = dict(meta.get("extra") or {})
    if isinstance(part, ToolCallPart):
        return [{**extra, "type": "function_call", "call_id": part.id, "name": part.name,
                 "arguments": part.arguments_json()}]
    if isinstance(part, ReasoningPart):
        if part.provider != FMT or part.id is None:
            if part.text:
                losses.append(f"{where}: reasoning text dropped (Responses only accepts its own reasoning items)")
            losses.extend(reasoning_losses(part, where, TARGET))
            return []
        item: JSONDict = {**extra, "type": "reasoning", "id": part.id}
        raw_summary = meta.get("summary")
        texts = [s.get("text") for s in raw_summary if isinstance(s, dict)] if isinstance(raw_summary, list) else None
        if texts is not None and "\n\n".join(t for t in texts if isinstance(t, str)) == part.text:
            item["summary"] = raw_summary
        elif part.text or not meta or meta.get("has_summary"):
            item["summary"] = [{"type": "summary_text", "text": part.text}] if part.text else []
        if part.encrypted is not None:
            item["encrypted_content"] = part.encrypted
        return [item]
    if isinstance(part, OpaquePart):
        if part.format == FMT and isinstance(part.data, dict):
            return [part.data]
        losses.append(opaque_loss(part, where, TARGET))
        return []
    if isinstance(part, ToolResultPart):
        return [_encode_result(part, {}, where, losses)]
    encoded = _encode_content_part(part, role, where, losses)
    if encoded is None:
        return []
    return [{"type": "message", "role": role, "content": [encoded]}]


def encode_items(messages: Sequence[Message], losses: list[str], where: str = "input") -> list[JSONDict]:
    out: list[JSONDict] = []
    for index, message in enumerate(messages):
        msg_where = f"{where}[{index}]"
        metas = hints(message, FMT).get("items")
        buckets: list[list[Part]] = [[] for _ in metas] if isinstance(metas, list) else []
        loose: list[Part] = []
        for part in message.parts:
            n = hints(part, FMT).get("item")
            if isinstance(n, int) and 0 <= n < len(buckets):
                buckets[n].append(part)
            else:
                loose.append(part)
        if message.name is not None:
            losses.append(f"{msg_where}: message name {message.name!r} dropped (Responses has no name field)")
        role = "user" if message.role == "tool" else message.role
        for meta, parts in zip(metas or [], buckets, strict=False):
            out.extend(_encode_item(meta, parts, role, msg_where, losses))
        # Parts without item hints (another format, or edited): default grouping.
        text_run: list[JSONDict] = []
        for part in loose:
            if isinstance(part, TextPart | MediaPart):
                encoded = _encode_content_part(part, role, msg_where, losses)
                if encoded is not None:
                    text_run.append(encoded)
                continue
            if text_run:
                out.append({"type": "message", "role": role, "content": text_run})
                text_run = []
            out.extend(_encode_loose(part, role, msg_where, losses))
        if text_run:
            out.append({"type": "message", "role": role, "content": text_run})
    return out


# ------------------------------------------------------------------------------------------- tools


def decode_tool(raw: Any, where: str) -> ToolSpec:
    tool = expect_dict(raw, where)
    if tool.get("type") == "function" and isinstance(tool.get("name"), str):
        description = tool.get("description") if isinstance(tool.get("description"), str) else None
        parameters = tool.get("parameters") if isinstance(tool.get("parameters"), dict) else None
        known = {"type", "name"} | ({"description"} if description is not None else set()) \
            | ({"parameters"} if parameters is not None else set())
        return ToolSpec(name=tool["name"], description=description, parameters=parameters,
                        provider_details=details(FMT, {"extra": _extra(tool, known)}))
    name = tool.get("name")
    return ToolSpec(name=name if isinstance(name, str) else str(tool.get("type", "tool")),
                    provider_details=details(FMT, {"raw": tool}))


def encode_tool(spec: ToolSpec, where: str, losses: list[str]) -> JSONDict | None:
    hint = hints(spec, FMT)
    if "raw" in hint:
        raw: JSONDict = hint["raw"]
        return raw
    if spec.parameters is None and spec.provider_details:
        losses.append(f"{where}: provider-specific tool {spec.name!r} dropped (no Responses equivalent)")
        return None
    out: JSONDict = {**(hint.get("extra") or {}), "type": "function", "name": spec.name}
    if spec.description is not None:
        out["description"] = spec.description
    if spec.parameters is not None:
        out["parameters"] = spec.parameters
    return out


# ---------------------------------------------------------------------------------------- requests


def decode_request(body: Any) -> DecodedRequest:
    params = dict(expect_dict(body, "request"))
    messages: list[Message] = []
    if isinstance(params.get("instructions"), str):
        text = params.pop("instructions")
        messages.append(Message(role="system", parts=[TextPart(text=text)] if text else [],
                                provider_details={FMT: {"instructions": True}}))
    if "input" not in params:
        raise CodecError("request: no 'input' (expected a string or a list of items)")
    value = params.pop("input")
    if isinstance(value, str):
        messages.append(Message(role="user", parts=[TextPart(text=value)] if value else [],
                                provider_details={FMT: {"input_string": True}}))
    else:
        messages += decode_items(expect_list(value, "request.input"))
    tools: list[ToolSpec] | None = None
    if isinstance(params.get("tools"), list):
        tools = [decode_tool(t, f"tools[{i}]") for i, t in enumerate(params.pop("tools"))]
    return DecodedRequest(messages=messages, tools=tools, params=params)


def encode_request(messages: Sequence[Message], tools: Sequence[ToolSpec] | None = None,
                   params: JSONDict | None = None) -> Encoded:
    losses: list[str] = []
    body: JSONDict = dict(params or {})
    rest = list(messages)
    if rest and hints(rest[0], FMT).get("instructions"):
        body["instructions"] = rest.pop(0).text
    if len(rest) == 1 and hints(rest[0], FMT).get("input_string") and \
            all(isinstance(p, TextPart) for p in rest[0].parts):
        body["input"] = rest[0].text
    else:
        body["input"] = encode_items(rest, losses)
    if tools is not None:
        encoded = [encode_tool(t, f"tools[{i}]", losses) for i, t in enumerate(tools)]
        body["tools"] = [t for t in encoded if t is not None]
    return Encoded(body=body, losses=losses)


# --------------------------------------------------------------------------------------- responses


def decode_usage(raw: JSONDict) -> Usage:
    def num(obj: Any, key: str) -> int | None:
        value = obj.get(key) if isinstance(obj, dict) else None
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    return Usage(input_tokens=num(raw, "input_tokens"), output_tokens=num(raw, "output_tokens"),
                 total_tokens=num(raw, "total_tokens"),
                 cache_read_tokens=num(raw.get("input_tokens_details"), "cached_tokens"),
                 reasoning_tokens=num(raw.get("output_tokens_details"), "reasoning_tokens"),
                 details={FMT: raw})


def encode_usage(usage: Usage) -> JSONDict:
    raw = (usage.details or {}).get(FMT)
    if isinstance(raw, dict):
        return raw
    out: JSONDict = {"input_tokens": usage.input_tokens or 0, "output_tokens": usage.output_tokens or 0,
                     "total_tokens": usage.total_tokens or (usage.input_tokens or 0) + (usage.output_tokens or 0)}
    out["input_tokens_details"] = {"cached_tokens": usage.cache_read_tokens or 0}
    out["output_tokens_details"] = {"reasoning_tokens": usage.reasoning_tokens or 0}
    return out


def decode_response(body: Any) -> LLMResponse:
    top = dict(expect_dict(body, "response"))
    output = expect_list(top.pop("output", None), "response.output")
    messages = decode_items(output, "response.output")
    if len(messages) > 1 or (messages and messages[0].role != "assistant"):
        raise CodecError("response.output: holds non-assistant items")
    message = messages[0] if messages else Message(role="assistant", provider_details={FMT: {"items": []}})
    status = top.pop("status") if isinstance(top.get("status"), str) else None
    response_id = top.pop("id") if isinstance(top.get("id"), str) else None
    model = top.pop("model") if isinstance(top.get("model"), str) else None
    usage = decode_usage(top.pop("usage")) if isinstance(top.get("usage"), dict) else None
    return LLMResponse(message=message, finish_reason=status, usage=usage, model=model, response_id=response_id,
                       provider_details=details(FMT, {"top": top or None}))


def encode_response(response: LLMResponse) -> Encoded:
    losses: list[str] = []
    hint = hints(response, FMT)
    body: JSONDict = dict(hint.get("top") or {"object": "response"})
    if response.response_id is not None:
        body["id"] = response.response_id
    if response.model is not None:
        body["model"] = response.model
    if response.finish_reason is not None:
        body["status"] = response.finish_reason
    body["output"] = encode_items([response.message], losses, "response.output")
    if response.usage is not None:
        body["usage"] = encode_usage(response.usage)
    return Encoded(body=body, losses=losses)


# ------------------------------------------------------------------------------------------ stream


def assemble_events(events: Sequence[Any]) -> JSONDict:
    """Streamed Responses events (SSE ``data`` payloads) -> the final response dict.

    The terminal ``response.completed`` / ``response.incomplete`` / ``response.failed`` event carries
    the whole response; without one, the response is rebuilt from ``response.created`` and the
    ``response.output_item.done`` items.
    """
    base: JSONDict | None = None
    items: dict[int, Any] = {}
    for n, raw in enumerate(events):
        event = expect_dict(raw, f"stream[{n}]")
        kind = event.get("type")
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            final: JSONDict = dict(expect_dict(event.get("response"), f"stream[{n}].response"))
            return final
        if kind in ("response.created", "response.in_progress") and isinstance(event.get("response"), dict):
            base = dict(event["response"])
        elif kind == "response.output_item.done":
            items[event.get("output_index", len(items))] = event.get("item")
        elif kind == "error":
            raise CodecError(f"stream[{n}]: provider error event: {str(event.get('message'))[:200]}")
    if base is None:
        raise CodecError("stream: no response.created or response.completed event")
    base["output"] = [items[i] for i in sorted(items)]
    return base


def decode_stream(events: Sequence[Any]) -> LLMResponse:
    return decode_response(assemble_events(events))
