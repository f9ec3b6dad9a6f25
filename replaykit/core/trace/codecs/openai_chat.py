"""OpenAI Chat Completions <-> IR (requests, responses, streamed chunks).

Round trip: ``encode_request(*decode_request(body))`` equals ``body`` under canonical JSON for every
real-world body. What the IR does not model is kept in ``provider_details["openai-chat"]``:

- message: ``content`` shape (``str``/``list``/``null``/``absent``), unknown keys (``extra``);
- part: unknown keys of a content item or tool call (``extra``, ``function_extra``), refusals;
- reasoning: the key it came from (``reasoning_content`` for vLLM/DeepSeek, ``reasoning`` for others).

IR from another format is encoded with defaults; what Chat Completions cannot carry (reasoning,
signatures, encrypted reasoning, foreign opaque blocks, media in tool results) is listed in
``Encoded.losses``.
"""

from __future__ import annotations

import mimetypes
import re
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

FMT = "openai-chat"
TARGET = "OpenAI Chat Completions"
ROLES = ("system", "developer", "user", "assistant", "tool")
REASONING_KEYS = ("reasoning_content", "reasoning")
_DATA_URL = re.compile(r"data:([A-Za-z0-9.+-]+/[A-Za-z0-9.+*-]+);base64,(.*)", re.DOTALL)


# ------------------------------------------------------------------------------------ content items


def _media_from_url(url: str) -> tuple[str, str | None, str | None]:
    """(media_type, url, data) of an image URL; data: URLs are split so other formats can use them."""
    match = _DATA_URL.fullmatch(url)
    if match:
        return match.group(1), None, match.group(2)
    guessed = mimetypes.guess_type(url.split("?", 1)[0])[0]
    return guessed or "image/*", url, None


def _decode_item(raw: Any) -> Part:
    if not isinstance(raw, dict):
        return OpaquePart(format=FMT, data=raw)
    kind = raw.get("type")
    if kind == "text" and isinstance(raw.get("text"), str):
        extra = {k: v for k, v in raw.items() if k not in ("type", "text")}
        return TextPart(text=raw["text"], provider_details=details(FMT, {"extra": extra or None}))
    if kind == "refusal" and isinstance(raw.get("refusal"), str):
        extra = {k: v for k, v in raw.items() if k not in ("type", "refusal")}
        return TextPart(text=raw["refusal"],
                        provider_details=details(FMT, {"refusal": "item", "extra": extra or None}))
    image = raw.get("image_url")
    if kind == "image_url" and isinstance(image, dict) and isinstance(image.get("url"), str):
        media_type, url, data = _media_from_url(image["url"])
        extra = {k: v for k, v in raw.items() if k not in ("type", "image_url")}
        image_extra = {k: v for k, v in image.items() if k != "url"}
        hint = {"extra": extra or None, "image_extra": image_extra or None}
        return MediaPart(media_type=media_type, url=url, data=data, provider_details=details(FMT, hint))
    return OpaquePart(format=FMT, data=raw)


def _encode_item(part: Part, where: str, losses: list[str]) -> JSONDict | None:
    hint = hints(part, FMT)
    extra = dict(hint.get("extra") or {})
    if isinstance(part, TextPart):
        if hint.get("refusal") == "item":
            return {**extra, "type": "refusal", "refusal": part.text}
        return {**extra, "type": "text", "text": part.text}
    if isinstance(part, MediaPart):
        if part.url is not None:
            url = part.url
        elif part.data is not None:
            url = f"data:{part.media_type};base64,{part.data}"
        else:
            losses.append(f"{where}: media part without url or data dropped")
            return None
        if not part.media_type.startswith("image/") and not hint:
            losses.append(f"{where}: {part.media_type} media sent as image_url (Chat has no generic file part)")
        return {**extra, "type": "image_url", "image_url": {**(hint.get("image_extra") or {}), "url": url}}
    if isinstance(part, OpaquePart):
        if part.format == FMT:
            return part.data if isinstance(part.data, dict) else {"value": part.data}
        losses.append(opaque_loss(part, where, TARGET))
        return None
    return None


# ----------------------------------------------------------------------------------------- messages


def decode_message(raw: Any, where: str = "message", *, default_role: str | None = None) -> Message:
    """One Chat Completions message dict -> IR ``Message`` (unknown keys kept for the round trip)."""
    rest = dict(expect_dict(raw, where))
    hint: JSONDict = {}
    role = rest.pop("role", None)
    if role is None and default_role is not None:
        role, hint["no_role"] = default_role, True
    if role not in ROLES:
        raise CodecError(f"{where}: unsupported role {role!r} (expected one of {', '.join(ROLES)})")
    name = rest.pop("name") if isinstance(rest.get("name"), str) else None
    parts: list[Part] = []
    for key in REASONING_KEYS if role == "assistant" else ():
        if isinstance(rest.get(key), str):
            parts.append(ReasoningPart(text=rest.pop(key), provider_details=details(FMT, {"key": key})))
            break

    if role == "tool":
        call_id = rest.pop("tool_call_id", None)
        if not isinstance(call_id, str):
            raise CodecError(f"{where}: tool message without a string tool_call_id")
        content, blocks = "", None
        if "content" not in rest:
            hint["content"] = "absent"
        else:
            value = rest.pop("content")
            if isinstance(value, str):
                content = value
            elif value is None:
                hint["content"] = "null"
            elif isinstance(value, list):
                hint["content"] = "list"
                blocks = [_as_block(_decode_item(item)) for item in value]
                content = "".join(b.text for b in blocks if isinstance(b, TextPart))
            else:
                rest["content"] = value
                hint["content"] = "extra"
        parts.append(ToolResultPart(tool_call_id=call_id, name=name, content=content, blocks=blocks))
        name = None
    else:
        if "content" not in rest:
            hint["content"] = "absent"
        else:
            value = rest.pop("content")
            if isinstance(value, str):
                hint["content"] = "str"
                if value:
                    parts.append(TextPart(text=value))
            elif value is None:
                hint["content"] = "null"
            elif isinstance(value, list):
                hint["content"] = "list"
                parts.extend(_decode_item(item) for item in value)
            else:
                rest["content"] = value
                hint["content"] = "extra"
        if isinstance(rest.get("refusal"), str):
            parts.append(TextPart(text=rest.pop("refusal"), provider_details=details(FMT, {"refusal": "key"})))
        calls = rest.get("tool_calls")
        if role == "assistant" and isinstance(calls, list) and calls:
            parts.extend(_decode_tool_call(call, f"{where}.tool_calls[{i}]") for i, call in enumerate(calls))
            del rest["tool_calls"]
    hint["extra"] = rest or None
    return Message(role=role, parts=parts, name=name, provider_details=details(FMT, hint))


def _as_block(part: Part) -> ResultBlock:
    if isinstance(part, TextPart | MediaPart | OpaquePart):
        return part
    return OpaquePart(format=FMT, data=None)  # unreachable: _decode_item yields only these


def _decode_tool_call(raw: Any, where: str) -> ToolCallPart:
    call = dict(expect_dict(raw, where))
    function = dict(expect_dict(call.pop("function", None), f"{where}.function"))
    call_id, name = call.pop("id", None), function.pop("name", None)
    if not isinstance(call_id, str):
        raise CodecError(f"{where}: tool call without a string id")
    if not isinstance(name, str):
        raise CodecError(f"{where}: tool call without a string function name")
    hint: JSONDict = {}
    if "type" not in call:
        hint["no_type"] = True
    elif call["type"] == "function":
        del call["type"]
    arguments: Any = None
    raw_arguments: str | None = None
    if "arguments" not in function:
        hint["args"] = "absent"
    else:
        value = function.pop("arguments")
        if isinstance(value, str):
            raw_arguments, arguments = value, parse_arguments(value)
        else:  # some OpenAI-compatible servers send an object
            hint["args"] = "value"
            arguments = value
    hint["extra"] = call or None
    hint["function_extra"] = function or None
    return ToolCallPart(id=call_id, name=name, arguments=arguments, raw_arguments=raw_arguments,
                        provider_details=details(FMT, hint))


def _encode_tool_call(part: ToolCallPart) -> JSONDict:
    hint = hints(part, FMT)
    function: JSONDict = {**(hint.get("function_extra") or {}), "name": part.name}
    args_kind = hint.get("args")
    if args_kind == "value" and part.raw_arguments is None:
        function["arguments"] = part.arguments
    elif args_kind != "absent" or part.raw_arguments is not None:
        function["arguments"] = part.arguments_json()
    call: JSONDict = {**(hint.get("extra") or {}), "id": part.id}
    if not hint.get("no_type"):
        call.setdefault("type", "function")
    call["function"] = function
    return call


def _encode_content(parts: list[Part], shape: Any, role: str, has_calls: bool, where: str,
                    losses: list[str]) -> tuple[bool, Any]:
    """(present, value) of a message's ``content`` key."""
    only_text = all(isinstance(p, TextPart) for p in parts)
    if shape == "str" and only_text:
        return True, "".join(p.text for p in parts if isinstance(p, TextPart))
    if shape == "list":
        items = [_encode_item(p, where, losses) for p in parts]
        return True, [i for i in items if i is not None]
    if shape in ("null", "absent", "extra") and not parts:
        return shape == "null", None
    if not parts:
        return True, (None if role == "assistant" and has_calls else "")
    if only_text and len(parts) == 1:
        return True, parts[0].text if isinstance(parts[0], TextPart) else ""
    items = [_encode_item(p, where, losses) for p in parts]
    return True, [i for i in items if i is not None]


def encode_message(message: Message, where: str, losses: list[str]) -> list[JSONDict]:
    """One IR message -> Chat message dicts (tool results become one ``tool`` message each)."""
    hint = hints(message, FMT)
    results = [p for p in message.parts if isinstance(p, ToolResultPart)]
    if results or message.role == "tool":
        out = [_encode_tool_result(p, message, hint, f"{where}.parts[{message.parts.index(p)}]", losses)
               for p in results]
        others = [p for p in message.parts if not isinstance(p, ToolResultPart)]
        if others:
            role = "user" if message.role == "tool" else message.role
            rest = message.model_copy(update={"parts": others, "role": role, "provider_details": None})
            out.extend(encode_message(rest, where, losses))
        return out
    body: JSONDict = dict(hint.get("extra") or {})
    if not hint.get("no_role"):
        body["role"] = message.role
    if message.name is not None:
        body["name"] = message.name
    content_parts: list[Part] = []
    calls: list[ToolCallPart] = []
    for index, part in enumerate(message.parts):
        part_where = f"{where}.parts[{index}]"
        part_hint = hints(part, FMT)
        if isinstance(part, ReasoningPart):
            key = part_hint.get("key")
            if key in REASONING_KEYS and message.role == "assistant":
                body[key] = part.text
            else:
                if part.text:
                    losses.append(f"{part_where}: reasoning text dropped (Chat Completions requests carry none)")
                losses.extend(reasoning_losses(part, part_where, TARGET))
        elif isinstance(part, ToolCallPart):
            if message.role == "assistant":
                calls.append(part)
            else:
                losses.append(f"{part_where}: tool call in a {message.role} message dropped")
        elif isinstance(part, TextPart) and part_hint.get("refusal") == "key":
            body["refusal"] = part.text
        else:
            if isinstance(part, MediaPart) and message.role in ("assistant", "system", "developer"):
                if not part_hint:
                    losses.append(f"{part_where}: media in a {message.role} message may be rejected by Chat")
            content_parts.append(part)
    present, value = _encode_content(content_parts, hint.get("content"), message.role, bool(calls),
                                     where, losses)
    if present:
        body["content"] = value
    if calls:
        body["tool_calls"] = [_encode_tool_call(c) for c in calls]
    return [body]


def _encode_tool_result(part: ToolResultPart, message: Message, hint: JSONDict, where: str,
                        losses: list[str]) -> JSONDict:
    own = message.role == "tool" and len(message.parts) == 1
    body: JSONDict = dict(hint.get("extra") or {}) if own else {}
    body["role"] = "tool"
    body["tool_call_id"] = part.tool_call_id
    name = part.name if part.name is not None else message.name
    if name is not None:
        body["name"] = name
    shape = hint.get("content") if own else None
    if shape == "list" and part.blocks is not None:
        items = [_encode_item(b, where, losses) for b in part.blocks]
        body["content"] = [i for i in items if i is not None]
    elif shape in ("null", "absent", "extra") and not part.content:
        if shape == "null":
            body["content"] = None
    else:
        body["content"] = part.content
        for block in part.blocks or []:
            if isinstance(block, MediaPart):
                losses.append(f"{where}: {block.media_type} block in a tool result dropped (Chat takes text)")
            elif isinstance(block, OpaquePart):
                losses.append(opaque_loss(block, where, TARGET))
    if part.is_error:
        losses.append(f"{where}: is_error flag of tool result dropped (Chat has no error marker)")
    return body


# ------------------------------------------------------------------------------------------- tools


def decode_tool(raw: Any, where: str) -> ToolSpec:
    tool = expect_dict(raw, where)
    function = tool.get("function")
    if tool.get("type") == "function" and isinstance(function, dict) and isinstance(function.get("name"), str):
        description = function.get("description")
        parameters = function.get("parameters")
        hint: JSONDict = {}
        skip = {"name"}
        if isinstance(description, str):
            skip.add("description")
        else:
            description = None
        if isinstance(parameters, dict):
            skip.add("parameters")
        else:
            parameters = None
        hint["extra"] = {k: v for k, v in tool.items() if k not in ("type", "function")} or None
        hint["function_extra"] = {k: v for k, v in function.items() if k not in skip} or None
        return ToolSpec(name=function["name"], description=description, parameters=parameters,
                        provider_details=details(FMT, hint))
    # A built-in or custom tool: kept whole, usable only by this format.
    raw_name = tool.get("name")
    name = raw_name if isinstance(raw_name, str) else str(tool.get("type", "tool"))
    return ToolSpec(name=name, provider_details=details(FMT, {"raw": tool}))


def encode_tool(spec: ToolSpec, where: str, losses: list[str]) -> JSONDict | None:
    hint = hints(spec, FMT)
    if "raw" in hint:
        raw: JSONDict = hint["raw"]
        return raw
    function: JSONDict = {**(hint.get("function_extra") or {}), "name": spec.name}
    if spec.description is not None:
        function["description"] = spec.description
    if spec.parameters is not None:
        function["parameters"] = spec.parameters
    elif not hint and spec.provider_details:
        losses.append(f"{where}: provider-specific tool {spec.name!r} sent as a plain function")
    return {**(hint.get("extra") or {}), "type": "function", "function": function}


# ---------------------------------------------------------------------------------------- requests


def decode_request(body: Any) -> DecodedRequest:
    """A Chat Completions request body -> messages, tools (None if absent) and the other params."""
    params = dict(expect_dict(body, "request"))
    raw_messages = expect_list(params.pop("messages", None), "request.messages")
    messages = [decode_message(m, f"messages[{i}]") for i, m in enumerate(raw_messages)]
    tools: list[ToolSpec] | None = None
    if "tools" in params and isinstance(params["tools"], list):
        tools = [decode_tool(t, f"tools[{i}]") for i, t in enumerate(params.pop("tools"))]
    return DecodedRequest(messages=messages, tools=tools, params=params)


def encode_request(messages: Sequence[Message], tools: Sequence[ToolSpec] | None = None,
                   params: JSONDict | None = None) -> Encoded:
    losses: list[str] = []
    body: JSONDict = dict(params or {})
    out: list[JSONDict] = []
    for index, message in enumerate(messages):
        out.extend(encode_message(message, f"messages[{index}]", losses))
    body["messages"] = out
    if tools is not None:
        encoded = [encode_tool(t, f"tools[{i}]", losses) for i, t in enumerate(tools)]
        body["tools"] = [t for t in encoded if t is not None]
    return Encoded(body=body, losses=losses)


# --------------------------------------------------------------------------------------- responses


def decode_usage(raw: JSONDict) -> Usage:
    def num(obj: Any, key: str) -> int | None:
        value = obj.get(key) if isinstance(obj, dict) else None
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    return Usage(
        input_tokens=num(raw, "prompt_tokens"),
        output_tokens=num(raw, "completion_tokens"),
        total_tokens=num(raw, "total_tokens"),
        cache_read_tokens=num(raw.get("prompt_tokens_details"), "cached_tokens"),
        reasoning_tokens=num(raw.get("completion_tokens_details"), "reasoning_tokens"),
        details={FMT: raw},
    )


def encode_usage(usage: Usage) -> JSONDict:
    raw = (usage.details or {}).get(FMT)
    if isinstance(raw, dict):
        return raw
    out: JSONDict = {}
    if usage.input_tokens is not None:
        out["prompt_tokens"] = usage.input_tokens
    if usage.output_tokens is not None:
        out["completion_tokens"] = usage.output_tokens
    total = usage.total_tokens
    if total is None and usage.input_tokens is not None and usage.output_tokens is not None:
        total = usage.input_tokens + usage.output_tokens
    if total is not None:
        out["total_tokens"] = total
    if usage.cache_read_tokens is not None:
        out["prompt_tokens_details"] = {"cached_tokens": usage.cache_read_tokens}
    if usage.reasoning_tokens is not None:
        out["completion_tokens_details"] = {"reasoning_tokens": usage.reasoning_tokens}
    return out


def decode_response(body: Any) -> LLMResponse:
    """A ChatCompletion dict -> ``LLMResponse`` (the first choice; others kept in provider_details)."""
    top = dict(expect_dict(body, "response"))
    choices = expect_list(top.pop("choices", None), "response.choices")
    if not choices:
        raise CodecError("response.choices: empty (no completion to decode)")
    choice = dict(expect_dict(choices[0], "response.choices[0]"))
    message = decode_message(choice.pop("message", None), "response.choices[0].message",
                             default_role="assistant")
    finish = choice.pop("finish_reason") if isinstance(choice.get("finish_reason"), str) else None
    response_id = top.pop("id") if isinstance(top.get("id"), str) else None
    model = top.pop("model") if isinstance(top.get("model"), str) else None
    usage = decode_usage(top.pop("usage")) if isinstance(top.get("usage"), dict) else None
    hint = {"top": top or None, "choice": choice or None, "other_choices": choices[1:] or None}
    return LLMResponse(message=message, finish_reason=finish, usage=usage, model=model,
                       response_id=response_id, provider_details=details(FMT, hint))


def encode_response(response: LLMResponse) -> Encoded:
    losses: list[str] = []
    hint = hints(response, FMT)
    messages = encode_message(response.message, "response.message", losses)
    if len(messages) != 1:
        raise CodecError("response.message: an assistant answer cannot hold tool results")
    choice: JSONDict = {**(hint.get("choice") or {"index": 0}), "message": messages[0]}
    if response.finish_reason is not None or "choice" not in hint:
        choice["finish_reason"] = response.finish_reason
    body: JSONDict = dict(hint.get("top") or {"object": "chat.completion"})
    if response.response_id is not None:
        body["id"] = response.response_id
    if response.model is not None:
        body["model"] = response.model
    body["choices"] = [choice, *(hint.get("other_choices") or [])]
    if response.usage is not None:
        body["usage"] = encode_usage(response.usage)
    return Encoded(body=body, losses=losses)


# ------------------------------------------------------------------------------------------ stream


def assemble_chunks(chunks: Sequence[Any]) -> JSONDict:
    """Streamed ``chat.completion.chunk`` dicts -> the equivalent ``chat.completion`` dict.

    Content, refusal and reasoning deltas are joined; tool-call fragments are joined by ``index``
    (id, type and name come from the first fragment that carries them); the usage-only final chunk
    (``choices == []``) provides ``usage``.
    """
    if not chunks:
        raise CodecError("stream: no chunks")
    out: JSONDict = {}
    choices: dict[int, JSONDict] = {}
    for n, raw in enumerate(chunks):
        chunk = expect_dict(raw, f"stream[{n}]")
        for key in ("id", "created", "model", "system_fingerprint", "service_tier"):
            if chunk.get(key) is not None:
                out.setdefault(key, chunk[key])
        if chunk.get("usage") is not None:
            out["usage"] = chunk["usage"]
        for c in expect_list(chunk.get("choices", []), f"stream[{n}].choices"):
            c = expect_dict(c, f"stream[{n}].choices[]")
            index = c.get("index", 0)
            state = choices.setdefault(index, {"index": index, "text": {}, "calls": {}, "role": None,
                                               "finish_reason": None, "logprobs": None})
            delta = c.get("delta") or {}
            if delta.get("role"):
                state["role"] = delta["role"]
            for key in ("content", "refusal", *REASONING_KEYS):
                if isinstance(delta.get(key), str):
                    state["text"][key] = state["text"].get(key, "") + delta[key]
            for frag in delta.get("tool_calls") or []:
                frag = expect_dict(frag, f"stream[{n}].tool_calls[]")
                call = state["calls"].setdefault(frag.get("index", 0), {"id": None, "type": None,
                                                                        "name": None, "arguments": ""})
                for key in ("id", "type"):
                    if frag.get(key) and call[key] is None:
                        call[key] = frag[key]
                function = frag.get("function") or {}
                if function.get("name") and call["name"] is None:
                    call["name"] = function["name"]
                if isinstance(function.get("arguments"), str):
                    call["arguments"] += function["arguments"]
            if c.get("finish_reason") is not None:
                state["finish_reason"] = c["finish_reason"]
            if c.get("logprobs") is not None:
                merged = state["logprobs"] or {}
                for key, value in c["logprobs"].items():
                    if isinstance(value, list):
                        merged[key] = [*(merged.get(key) or []), *value]
                    else:
                        merged[key] = value
                state["logprobs"] = merged
    out["object"] = "chat.completion"
    out["choices"] = [_assembled_choice(choices[i]) for i in sorted(choices)]
    if not out["choices"]:
        raise CodecError("stream: no chunk carried a choice")
    return out


def _assembled_choice(state: JSONDict) -> JSONDict:
    message: JSONDict = {"role": state["role"] or "assistant", "content": state["text"].get("content")}
    for key in ("refusal", *REASONING_KEYS):
        if key in state["text"]:
            message[key] = state["text"][key]
    if state["calls"]:
        message["tool_calls"] = [
            {"id": c["id"] or "", "type": c["type"] or "function",
             "function": {"name": c["name"] or "", "arguments": c["arguments"]}}
            for _, c in sorted(state["calls"].items())
        ]
    return {"index": state["index"], "message": message, "finish_reason": state["finish_reason"],
            "logprobs": state["logprobs"]}


def decode_stream(chunks: Sequence[Any]) -> LLMResponse:
    return decode_response(assemble_chunks(chunks))
