"""AWS Bedrock Converse / ConverseStream <-> IR (requests, responses, stream events).

Bodies are the wire JSON (``POST /model/{modelId}/converse``): byte fields (image and document
``bytes``, ``redactedContent``) are base64 strings, as the HTTP body carries them; the transport turns them
into ``bytes`` for boto3. The model id is in the URL, not the body: ``params["model"]`` names it.

Round trip: ``encode_request(*decode_request(body))`` equals ``body`` under canonical JSON; what the IR
does not model lives in ``provider_details["bedrock-converse"]``.

Mapping: ``system`` blocks -> a leading ``system`` message (a ``cachePoint`` there or in a message is an
``OpaquePart``, reported as a loss by every other encoder); ``toolUse`` / ``toolResult`` ->
``ToolCallPart`` / ``ToolResultPart`` (results stay in the ``user`` message that carries them);
``reasoningContent`` -> ``ReasoningPart(provider="bedrock-converse")``; ``toolConfig.tools[].toolSpec``
-> ``ToolSpec`` (``toolChoice`` and other ``toolConfig`` keys stay in ``params["toolConfig"]``).

Foreign input: system messages are joined into ``system``, IR ``tool`` messages become ``user`` turns of
``toolResult`` blocks, media goes as bytes (``image`` png/jpeg/gif/webp, ``document`` pdf/csv/...; a
URL is a loss). The rules Converse enforces on a history (results in the next user turn, same-role
turns merged, tool-use ids 1-64 of ``[A-Za-z0-9_-]``, one result per call) are applied before encoding
by ``codecs/conform.py``, once for every API; this codec only encodes.
"""

from __future__ import annotations

import json
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

FMT = "bedrock-converse"
TARGET = "Bedrock Converse"
IMAGE_FORMATS = {"image/png": "png", "image/jpeg": "jpeg", "image/jpg": "jpeg", "image/gif": "gif",
                 "image/webp": "webp"}
DOCUMENT_FORMATS = {"application/pdf": "pdf", "text/csv": "csv", "application/msword": "doc",
                    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
                    "application/vnd.ms-excel": "xls",
                    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
                    "text/html": "html", "text/plain": "txt", "text/markdown": "md"}
_MEDIA_TYPES = {**{v: k for k, v in IMAGE_FORMATS.items() if k != "image/jpg"},
                **{v: k for k, v in DOCUMENT_FORMATS.items()}}


def _extra(raw: JSONDict, known: set[str]) -> JSONDict | None:
    return {k: v for k, v in raw.items() if k not in known} or None


# ------------------------------------------------------------------------------------------ blocks


def decode_block(raw: Any, where: str) -> Part:
    if not isinstance(raw, dict):
        return OpaquePart(format=FMT, data=raw)
    if isinstance(raw.get("text"), str) and len(raw) == 1:
        # a blank text of this format's own is kept as it was (a foreign blank text is not sent)
        return TextPart(text=raw["text"], provider_details=details(FMT, {"blank": True if not raw["text"].strip()
                                                                          else None}))
    use = raw.get("toolUse")
    if isinstance(use, dict) and isinstance(use.get("toolUseId"), str) and isinstance(use.get("name"), str):
        hint: JSONDict = {"extra": _extra(raw, {"toolUse"}), "use_extra": _extra(use, {"toolUseId", "name", "input"})}
        return ToolCallPart(id=use["toolUseId"], name=use["name"], arguments=use.get("input"),
                            provider_details=details(FMT, hint))
    result = raw.get("toolResult")
    if isinstance(result, dict) and isinstance(result.get("toolUseId"), str):
        return _decode_result(raw, result, where)
    reasoning = raw.get("reasoningContent")
    if isinstance(reasoning, dict) and len(raw) == 1:
        text = reasoning.get("reasoningText")
        if isinstance(text, dict) and isinstance(text.get("text"), str) and len(reasoning) == 1:
            signature = text.get("signature") if isinstance(text.get("signature"), str) else None
            known = {"text"} | ({"signature"} if signature is not None else set())
            return ReasoningPart(text=text["text"], signature=signature, provider=FMT,
                                 provider_details=details(FMT, {"text_extra": _extra(text, known)}))
        if isinstance(reasoning.get("redactedContent"), str) and len(reasoning) == 1:
            return ReasoningPart(redacted=True, provider=FMT,
                                 provider_details=details(FMT, {"data": reasoning["redactedContent"]}))
    for kind in ("image", "document"):
        media = raw.get(kind)
        if isinstance(media, dict) and len(raw) == 1:
            source = media.get("source")
            fmt = media.get("format")
            if isinstance(source, dict) and isinstance(source.get("bytes"), str) and len(source) == 1 \
                    and isinstance(fmt, str):
                media_type = _MEDIA_TYPES.get(fmt, f"{kind}/{fmt}")
                hint = {"block": kind, "format": fmt, "media_extra": _extra(media, {"format", "source"})}
                return MediaPart(media_type=media_type, data=source["bytes"], provider_details=details(FMT, hint))
    # cachePoint, guardContent, citationsContent, video, s3 sources, anything newer: kept whole.
    return OpaquePart(format=FMT, data=raw)


def _decode_result(raw: JSONDict, result: JSONDict, where: str) -> ToolResultPart:
    hint: JSONDict = {"own": True, "extra": _extra(raw, {"toolResult"}),
                      "result_extra": _extra(result, {"toolUseId", "content", "status"})}
    status = result.get("status")
    if "status" in result:
        hint["status"] = status
    content = expect_list(result.get("content", []), f"{where}.toolResult.content")
    blocks: list[ResultBlock] | None = None
    text = ""
    if len(content) == 1 and isinstance(content[0], dict) and set(content[0]) == {"text"} \
            and isinstance(content[0]["text"], str):
        text = content[0]["text"]
    elif len(content) == 1 and isinstance(content[0], dict) and set(content[0]) == {"json"}:
        # A JSON result crosses as its text; re-encoded here unchanged, it is a json block again.
        hint["json"] = content[0]["json"]
        text = json.dumps(content[0]["json"], ensure_ascii=False)
    else:
        blocks = []
        for block in content:
            part = decode_block(block, where)
            if isinstance(part, TextPart | MediaPart | OpaquePart):
                blocks.append(part)
            else:
                blocks.append(OpaquePart(format=FMT, data=block))
        texts = [b.text for b in blocks if isinstance(b, TextPart)]
        jsons = [b.data["json"] for b in blocks if isinstance(b, OpaquePart) and isinstance(b.data, dict)
                 and set(b.data) == {"json"}]
        text = "".join(texts) if texts else (json.dumps(jsons[0], ensure_ascii=False) if len(jsons) == 1 else "")
    return ToolResultPart(tool_call_id=result["toolUseId"], content=text, blocks=blocks, is_error=status == "error",
                          provider_details=details(FMT, hint))


class _Encoder:
    def __init__(self) -> None:
        self.losses: list[str] = []
        self.documents = 0

    def block(self, part: Part, where: str, role: str) -> JSONDict | None:
        hint = hints(part, FMT)
        if isinstance(part, TextPart):
            if not part.text.strip() and not hint:
                return None  # Converse rejects a blank text block
            return {"text": part.text}
        if isinstance(part, ReasoningPart):
            if part.provider == FMT and part.redacted and isinstance(hint.get("data"), str):
                return {"reasoningContent": {"redactedContent": hint["data"]}}
            if part.provider == FMT and role == "assistant":
                text: JSONDict = {**(hint.get("text_extra") or {}), "text": part.text}
                if part.signature is not None:
                    text["signature"] = part.signature
                return {"reasoningContent": {"reasoningText": text}}
            if part.text:
                self.losses.append(f"{where}: reasoning text dropped (Bedrock takes back only its own reasoning)")
            self.losses.extend(reasoning_losses(part, where, TARGET))
            return None
        if isinstance(part, ToolCallPart):
            use: JSONDict = {**(hint.get("use_extra") or {}), "toolUseId": part.id,
                             "name": part.name, "input": self._input(part, where)}
            return {**(hint.get("extra") or {}), "toolUse": use}
        if isinstance(part, ToolResultPart):
            return self.result(part, where)
        if isinstance(part, MediaPart):
            return self.media(part, where)
        if isinstance(part, OpaquePart):
            if part.format == FMT and isinstance(part.data, dict):
                return dict(part.data)
            self.losses.append(opaque_loss(part, where, TARGET))
            return None
        return None

    def _input(self, part: ToolCallPart, where: str) -> Any:
        return object_arguments(part, where, self.losses, as_recorded=bool(hints(part, FMT)))

    def media(self, part: MediaPart, where: str) -> JSONDict | None:
        hint = hints(part, FMT)
        if part.data is None:
            self.losses.append(f"{where}: {part.media_type} by URL dropped (Bedrock takes media as bytes only)")
            return None
        block = hint.get("block")
        fmt = hint.get("format")
        if block is None:
            if part.media_type in IMAGE_FORMATS:
                block, fmt = "image", IMAGE_FORMATS[part.media_type]
            elif part.media_type in DOCUMENT_FORMATS:
                block, fmt = "document", DOCUMENT_FORMATS[part.media_type]
            else:
                self.losses.append(f"{where}: {part.media_type} media dropped (no Bedrock image or document format)")
                return None
        media: JSONDict = {**(hint.get("media_extra") or {}), "format": fmt, "source": {"bytes": part.data}}
        if block == "document" and "name" not in media:
            self.documents += 1
            media["name"] = f"document-{self.documents}"
        return {block: media}

    def result(self, part: ToolResultPart, where: str) -> JSONDict | None:
        hint = hints(part, FMT)
        tool_id = part.tool_call_id
        content: list[JSONDict] = []
        if part.blocks is not None:
            for index, block in enumerate(part.blocks):
                encoded = self.block(block, f"{where}.blocks[{index}]", "user")
                if encoded is not None:
                    content.append(encoded)
        elif "json" in hint and part.content == json.dumps(hint["json"], ensure_ascii=False):
            content.append({"json": hint["json"]})
        elif hint.get("own") or part.content:
            content.append({"text": part.content})
        else:
            content.append({"text": " "})  # a foreign empty result: Converse wants some content
        out: JSONDict = {**(hint.get("result_extra") or {}), "toolUseId": tool_id, "content": content}
        if part.is_error:
            out["status"] = "error"
        elif "status" in hint:
            out["status"] = hint["status"]
        return {**(hint.get("extra") or {}), "toolResult": out}


# ------------------------------------------------------------------------------------------- tools


def decode_tools(raw_tools: list[Any]) -> list[ToolSpec]:
    out: list[ToolSpec] = []
    for index, raw in enumerate(raw_tools):
        tool = expect_dict(raw, f"toolConfig.tools[{index}]")
        spec = tool.get("toolSpec")
        schema = spec.get("inputSchema") if isinstance(spec, dict) else None
        if isinstance(spec, dict) and isinstance(spec.get("name"), str) and len(tool) == 1 \
                and isinstance(schema, dict) and isinstance(schema.get("json"), dict) and len(schema) == 1:
            description = spec.get("description") if isinstance(spec.get("description"), str) else None
            known = {"name", "inputSchema"} | ({"description"} if description is not None else set())
            hint = {"extra": _extra(spec, known), "empty_description": True if description == "" else None}
            out.append(ToolSpec(name=spec["name"], description=description, parameters=schema["json"],
                                provider_details=details(FMT, hint)))
            continue
        # cachePoint and system tools: kept whole for this format only (other encoders drop them with a loss).
        out.append(ToolSpec(name=str(next(iter(tool), "tool")), provider_details=details(FMT, {"raw": tool})))
    return out


def encode_tools(tools: Sequence[ToolSpec], losses: list[str]) -> list[JSONDict]:
    out: list[JSONDict] = []
    for index, spec in enumerate(tools):
        hint = hints(spec, FMT)
        if "raw" in hint:
            out.append(hint["raw"])
            continue
        if spec.parameters is None and spec.provider_details:
            losses.append(f"tools[{index}]: provider-specific tool {spec.name!r} dropped (no Bedrock equivalent)")
            continue
        body: JSONDict = {**(hint.get("extra") or {}), "name": spec.name}
        if spec.description is not None and (spec.description or hint):
            body["description"] = spec.description  # Converse refuses an empty description: none is sent
        body["inputSchema"] = {"json": spec.parameters if spec.parameters is not None
                               else {"type": "object", "properties": {}}}
        out.append({"toolSpec": body})
    return out


# ---------------------------------------------------------------------------------------- requests


def decode_message(raw: Any, where: str) -> Message:
    rest = dict(expect_dict(raw, where))
    role = rest.pop("role", None)
    if role not in ("user", "assistant"):
        raise CodecError(f"{where}: unsupported role {role!r} (expected user or assistant)")
    content = expect_list(rest.pop("content", None), f"{where}.content")
    parts = [decode_block(b, f"{where}.content[{i}]") for i, b in enumerate(content)]
    return Message(role=role, parts=parts, provider_details=details(FMT, {"own": True, "extra": rest or None}))


def decode_request(body: Any) -> DecodedRequest:
    params = dict(expect_dict(body, "request"))
    raw_messages = expect_list(params.pop("messages", None), "request.messages")
    messages: list[Message] = []
    if isinstance(params.get("system"), list):
        blocks = params.pop("system")
        messages.append(Message(role="system", parts=[decode_block(b, f"system[{i}]") for i, b in enumerate(blocks)],
                                provider_details=details(FMT, {"own": True})))
    messages += [decode_message(m, f"messages[{i}]") for i, m in enumerate(raw_messages)]
    tools: list[ToolSpec] | None = None
    config = params.get("toolConfig")
    if isinstance(config, dict) and isinstance(config.get("tools"), list):
        rest = dict(config)
        tools = decode_tools(rest.pop("tools"))
        if rest:
            params["toolConfig"] = rest
        else:
            del params["toolConfig"]
    return DecodedRequest(messages=messages, tools=tools, params=params)


def encode_request(messages: Sequence[Message], tools: Sequence[ToolSpec] | None = None,
                   params: JSONDict | None = None) -> Encoded:
    body: JSONDict = dict(params or {})
    enc = _Encoder()
    system: list[JSONDict] = []
    out: list[JSONDict] = []
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        if message.role in ("system", "developer"):
            if out:
                enc.losses.append(f"{where}: {message.role} message moved into the top-level system prompt")
            for n, part in enumerate(message.parts):
                if isinstance(part, MediaPart):
                    enc.losses.append(f"{where}.parts[{n}]: media in a system message dropped")
                    continue
                block = enc.block(part, f"{where}.parts[{n}]", "system")
                if block is not None:
                    system.append(block)
            continue
        if message.name is not None:
            enc.losses.append(f"{where}: message name {message.name!r} dropped (Converse has no name field)")
        hint = hints(message, FMT)
        role = "assistant" if message.role == "assistant" else "user"
        blocks = [b for b in (enc.block(p, f"{where}.parts[{i}]", role) for i, p in enumerate(message.parts))
                  if b is not None]
        if hint.get("own"):
            out.append({**(hint.get("extra") or {}), "role": role, "content": blocks})
            continue
        # Turn structure (results in the next user turn, same-role turns merged, a user turn first),
        # tool-use ids (1-64 of [A-Za-z0-9_-]) and duplicate results are made legal before encoding,
        # once for every API: codecs/conform.py.
        out.append({"role": role, "content": blocks})
    if not out:
        raise CodecError("nothing to send: Bedrock Converse needs at least one user message and the request "
                         "holds none (only a system prompt, or nothing)")
    if system:
        body["system"] = system
    body["messages"] = out
    if tools is not None:
        config = dict(body.get("toolConfig") or {})
        encoded = encode_tools(tools, enc.losses)
        if encoded or config:
            body["toolConfig"] = {**config, "tools": encoded}
    foreign = any(not hints(m, FMT) for m in messages if m.role not in ("system", "developer"))
    if "toolConfig" not in body and foreign:
        declared = _declare_used_tools(messages)
        if declared:
            # Converse refuses toolUse / toolResult blocks without a toolConfig: the tools the history
            # calls are declared, with an open schema (the recording did not say theirs).
            body["toolConfig"] = {"tools": declared}
            enc.losses.append(f"toolConfig declared for the tools the history calls ({', '.join(t['toolSpec']['name'] for t in declared)}): "
                              "Bedrock requires one; the recorded request offered no tools")
    return Encoded(body=body, losses=enc.losses)


def _declare_used_tools(messages: Sequence[Message]) -> list[JSONDict]:
    names = dict.fromkeys(c.name for m in messages for c in m.tool_calls)
    return [{"toolSpec": {"name": name, "inputSchema": {"json": {"type": "object"}}}} for name in names]


# --------------------------------------------------------------------------------------- responses


def decode_usage(raw: JSONDict) -> Usage:
    def num(key: str) -> int | None:
        value = raw.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    return Usage(input_tokens=num("inputTokens"), output_tokens=num("outputTokens"),
                 total_tokens=num("totalTokens"), cache_read_tokens=num("cacheReadInputTokens"),
                 cache_write_tokens=num("cacheWriteInputTokens"), details={FMT: raw})


def encode_usage(usage: Usage) -> JSONDict:
    raw = (usage.details or {}).get(FMT)
    if isinstance(raw, dict):
        return raw
    out: JSONDict = {"inputTokens": usage.input_tokens or 0, "outputTokens": usage.output_tokens or 0}
    out["totalTokens"] = usage.total_tokens if usage.total_tokens is not None else \
        out["inputTokens"] + out["outputTokens"]
    if usage.cache_read_tokens is not None:
        out["cacheReadInputTokens"] = usage.cache_read_tokens
    if usage.cache_write_tokens is not None:
        out["cacheWriteInputTokens"] = usage.cache_write_tokens
    return out


def decode_response(body: Any) -> LLMResponse:
    top = dict(expect_dict(body, "response"))
    top.pop("ResponseMetadata", None)  # boto3's own bookkeeping, not the provider's answer
    output = dict(expect_dict(top.pop("output", None), "response.output"))
    message = decode_message(output.pop("message", None), "response.output.message")
    stop = top.pop("stopReason") if isinstance(top.get("stopReason"), str) else None
    usage = decode_usage(top.pop("usage")) if isinstance(top.get("usage"), dict) else None
    hint = {"top": top or None, "output": output or None, "own": True}
    return LLMResponse(message=message, finish_reason=stop, usage=usage, provider_details=details(FMT, hint))


def encode_response(response: LLMResponse) -> Encoded:
    enc = _Encoder()
    hint = hints(response, FMT)
    blocks = [b for b in (enc.block(p, f"response.parts[{i}]", "assistant")
                          for i, p in enumerate(response.message.parts)) if b is not None]
    extra = hints(response.message, FMT).get("extra") or {}
    body: JSONDict = {"output": {**(hint.get("output") or {}),
                                 "message": {**extra, "role": "assistant", "content": blocks}}}
    if response.finish_reason is not None or not hint:
        body["stopReason"] = response.finish_reason or "end_turn"
    if response.usage is not None:
        body["usage"] = encode_usage(response.usage)
    body.update(hint.get("top") or ({} if hint else {"metrics": {"latencyMs": 0}}))
    return Encoded(body=body, losses=enc.losses)


# ------------------------------------------------------------------------------------------ stream

#: the ConverseStream event types (``:event-type``), in the order a stream sends them
EVENT_TYPES = ("messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop",
               "metadata")


def assemble_events(events: Sequence[Any]) -> JSONDict:
    """ConverseStream events (``{"<eventType>": payload}``, as boto3 yields them) -> a Converse response.
    Text, reasoning text and signatures are joined per ``contentBlockIndex``; a ``toolUse`` block's
    ``input`` fragments are joined and parsed; ``messageStop`` gives the stop reason, ``metadata``
    the usage and metrics."""
    role = "assistant"
    blocks: dict[int, JSONDict] = {}
    partial: dict[int, str] = {}
    top: JSONDict = {}
    stopped = False
    for n, raw in enumerate(events):
        event = expect_dict(raw, f"stream[{n}]")
        if len(event) != 1:
            raise CodecError(f"stream[{n}]: expected one event type, got {sorted(event)}")
        kind, payload = next(iter(event.items()))
        payload = expect_dict(payload, f"stream[{n}].{kind}")
        index = payload.get("contentBlockIndex", 0)
        if kind == "messageStart":
            role = payload.get("role", role)
        elif kind == "contentBlockStart":
            start = payload.get("start") or {}
            use = start.get("toolUse") if isinstance(start, dict) else None
            if isinstance(use, dict):
                blocks[index] = {"toolUse": {**use, "input": {}}}
                partial[index] = ""
        elif kind == "contentBlockDelta":
            _apply_delta(blocks, partial, index, expect_dict(payload.get("delta"), f"stream[{n}].delta"))
        elif kind == "messageStop":
            stopped = True
            top["stopReason"] = payload.get("stopReason")
            if "additionalModelResponseFields" in payload:
                top["additionalModelResponseFields"] = payload["additionalModelResponseFields"]
        elif kind == "metadata":
            top.update({k: v for k, v in payload.items() if k != "p"})  # "p": the service's padding
        elif kind.endswith("Exception"):
            raise CodecError(f"stream[{n}]: provider error {kind}: {json.dumps(payload)[:200]}")
    if not stopped and not blocks:
        raise CodecError("stream: no messageStop event and no content")
    for index, text in partial.items():
        if text:
            try:
                blocks[index]["toolUse"]["input"] = json.loads(text)
            except ValueError as exc:
                raise CodecError(f"stream: toolUse block {index} input is not valid JSON") from exc
    content = [blocks[i] for i in sorted(blocks)]
    return {"output": {"message": {"role": role, "content": content}}, **top}


def _apply_delta(blocks: dict[int, JSONDict], partial: dict[int, str], index: int, delta: JSONDict) -> None:
    if isinstance(delta.get("text"), str):
        block = blocks.setdefault(index, {"text": ""})
        block["text"] = block.get("text", "") + delta["text"]
    elif isinstance(delta.get("toolUse"), dict):
        partial[index] = partial.get(index, "") + str(delta["toolUse"].get("input", ""))
    elif isinstance(delta.get("reasoningContent"), dict):
        reasoning = delta["reasoningContent"]
        block = blocks.setdefault(index, {"reasoningContent": {}})
        holder = block["reasoningContent"]
        if isinstance(reasoning.get("redactedContent"), str):
            holder["redactedContent"] = holder.get("redactedContent", "") + reasoning["redactedContent"]
            return
        text = holder.setdefault("reasoningText", {"text": ""})
        if isinstance(reasoning.get("text"), str):
            text["text"] += reasoning["text"]
        if isinstance(reasoning.get("signature"), str):
            text["signature"] = text.get("signature", "") + reasoning["signature"]


def decode_stream(events: Sequence[Any]) -> LLMResponse:
    return decode_response(assemble_events(events))


def stream_complete(events: Sequence[Any], done: bool = False) -> bool:
    """The provider finished: ``messageStop`` arrived."""
    return any(isinstance(e, dict) and "messageStop" in e for e in events)


def synthesize_stream(response: LLMResponse, request_body: JSONDict | None = None) -> list[JSONDict]:
    """The events of a response recorded without its own: ``messageStart``, per block a start (tool use)
    and one delta holding all of it, ``contentBlockStop``, ``messageStop``, ``metadata``."""
    body = encode_response(response).body
    out: list[JSONDict] = [{"messageStart": {"role": "assistant"}}]
    for index, block in enumerate(body["output"]["message"]["content"]):
        if "toolUse" in block:
            use = block["toolUse"]
            out.append({"contentBlockStart": {"contentBlockIndex": index, "start": {
                "toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}}}})
            out.append({"contentBlockDelta": {"contentBlockIndex": index, "delta": {"toolUse": {
                "input": json.dumps(use.get("input", {}), ensure_ascii=False, separators=(",", ":"))}}}})
        elif "text" in block:
            out.append({"contentBlockDelta": {"contentBlockIndex": index, "delta": {"text": block["text"]}}})
        elif "reasoningContent" in block:
            reasoning = block["reasoningContent"]
            if "redactedContent" in reasoning:
                deltas: list[JSONDict] = [{"redactedContent": reasoning["redactedContent"]}]
            else:
                text = reasoning.get("reasoningText") or {}
                deltas = [{"text": text.get("text", "")}]
                if "signature" in text:
                    deltas.append({"signature": text["signature"]})
            out.extend({"contentBlockDelta": {"contentBlockIndex": index, "delta": {"reasoningContent": d}}}
                       for d in deltas)
        else:
            continue
        out.append({"contentBlockStop": {"contentBlockIndex": index}})
    stop: JSONDict = {"stopReason": body.get("stopReason", "end_turn")}
    if "additionalModelResponseFields" in body:
        stop["additionalModelResponseFields"] = body["additionalModelResponseFields"]
    out.append({"messageStop": stop})
    metadata = {k: body[k] for k in ("usage", "metrics", "trace", "performanceConfig") if k in body}
    if metadata:
        out.append({"metadata": metadata})
    return out
