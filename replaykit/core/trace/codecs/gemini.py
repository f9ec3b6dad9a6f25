"""Google Gemini ``generateContent`` / ``streamGenerateContent`` <-> IR (requests, responses, SSE chunks).

Round trip: ``encode_request(*decode_request(body))`` equals ``body`` under canonical JSON. Format details
the IR does not model live in ``provider_details["google-gemini"]``.

Mapping (REST JSON, camelCase, as the wire carries it):

- ``systemInstruction`` -> a leading ``system`` message; ``contents[].role`` ``user`` / ``model`` ->
  ``user`` / ``assistant``; ``functionResponse`` parts stay inside the ``user`` content that carries them.
- ``functionCall {id?, name, args}`` -> ``ToolCallPart``. Older models send no ``id``: calls and their
  ``functionResponse`` parts pair by name and order, and the IR id is derived from the call itself
  (name, arguments, place in its message: the same in a response and in the next request), marked so
  it is never sent back.
- A Gemini 3 ``thoughtSignature`` belongs to the part that carries it (a ``functionCall``, a text, a
  thought): it becomes a ``ReasoningPart(signature=..., provider="google-gemini")`` right before that
  part (a ``thought`` part keeps its own). Encoded back to Gemini it is re-attached exactly; any other
  encoder reports it as a loss. A model turn whose function calls carry no Gemini signature (the
  history came from another API) gets the documented skip value on its first call, which Gemini 3
  requires.
- Foreign input: IR ``tool`` messages become ``user`` contents with one ``functionResponse`` per call
  (named after its call), ``system`` messages are joined into ``systemInstruction``. The turn rules
  (results in the next user turn, same-role turns merged, ids fitted) are applied before encoding by
  ``codecs/conform.py``, once for every API; this codec only encodes.
"""

from __future__ import annotations

import hashlib
import json
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
    Role,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    Usage,
)

FMT = "google-gemini"
TARGET = "Google Gemini"
#: The documented value that tells Gemini 3 not to validate a missing thought signature.
SKIP_SIGNATURE = "skip_thought_signature_validator"
_OLD_MODEL = re.compile(r"(?:^|/)gemini-(?:1|2)(?:\.|-|$)")


def _extra(raw: JSONDict, known: set[str]) -> JSONDict | None:
    return {k: v for k, v in raw.items() if k not in known} or None


def derived_call_id(name: str, args: Any, position: int) -> str:
    """The IR id of a ``functionCall`` sent without one: stable for the same call in a response and in
    every later request that repeats it, and valid on every other API (``[A-Za-z0-9_-]``, short)."""
    text = f"{name}\n{position}\n{json.dumps(args, sort_keys=True, ensure_ascii=False)}"
    return "gcall_" + hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def sends_call_ids(model: Any) -> bool:
    """Older Gemini models (1.x, 2.x) take no ``functionCall.id``: calls pair by name and order."""
    return not (isinstance(model, str) and _OLD_MODEL.search(model))


# ------------------------------------------------------------------------------------------- parts


def _signature_part(signature: str) -> ReasoningPart:
    return ReasoningPart(signature=signature, provider=FMT, provider_details=details(FMT, {"attach": True}))


def decode_parts(raw_parts: list[Any], where: str, role: str) -> list[Part]:
    """The parts of one content. ``functionResponse`` parts have no call ids yet when the call had
    none: the caller pairs them (``_pair_results``)."""
    out: list[Part] = []
    calls = 0
    for index, raw in enumerate(raw_parts):
        if not isinstance(raw, dict):
            out.append(OpaquePart(format=FMT, data=raw))
            continue
        signature = raw.get("thoughtSignature") if isinstance(raw.get("thoughtSignature"), str) else None
        known_sig = {"thoughtSignature"} if signature is not None else set()
        if isinstance(raw.get("text"), str) and raw.get("thought") is True:
            out.append(ReasoningPart(text=raw["text"], signature=signature, provider=FMT, provider_details=details(
                FMT, {"extra": _extra(raw, {"text", "thought"} | known_sig)})))
            continue
        part = _decode_part(raw, f"{where}.parts[{index}]", role, calls, known_sig)
        if isinstance(part, ToolCallPart):
            calls += 1
        if signature is not None:
            out.append(_signature_part(signature))
        out.append(part)
    return out


def _decode_part(raw: JSONDict, where: str, role: str, calls: int, known_sig: set[str]) -> Part:
    if isinstance(raw.get("text"), str):
        # An empty text is kept as this format's own (Gemini 3 closes an answer with one that carries the
        # signature); a foreign empty text is not sent.
        text_hint: JSONDict = {"extra": _extra(raw, {"text"} | known_sig), "empty": True if not raw["text"] else None}
        return TextPart(text=raw["text"], provider_details=details(FMT, text_hint))
    call = raw.get("functionCall")
    if isinstance(call, dict) and isinstance(call.get("name"), str):
        args = call.get("args")
        hint: JSONDict = {"extra": _extra(raw, {"functionCall"} | known_sig),
                          "call_extra": _extra(call, {"name", "args", "id"})}
        if "args" not in call:
            hint["args"] = "absent"
        call_id = call.get("id")
        if not isinstance(call_id, str):
            call_id = derived_call_id(call["name"], args, calls)
            hint["no_id"] = True
        return ToolCallPart(id=call_id, name=call["name"], arguments=args if args is not None else {},
                            provider_details=details(FMT, hint))
    result = raw.get("functionResponse")
    if isinstance(result, dict) and isinstance(result.get("name"), str):
        return _decode_result(raw, result, known_sig)
    inline = raw.get("inlineData")
    if isinstance(inline, dict) and isinstance(inline.get("data"), str):
        hint = {"extra": _extra(raw, {"inlineData"} | known_sig), "media_extra": _extra(inline, {"mimeType", "data"})}
        mime = inline.get("mimeType")
        media_type = mime if isinstance(mime, str) else "application/octet-stream"
        return MediaPart(media_type=media_type, data=inline["data"], provider_details=details(FMT, hint))
    file = raw.get("fileData")
    if isinstance(file, dict) and isinstance(file.get("fileUri"), str):
        hint = {"extra": _extra(raw, {"fileData"} | known_sig), "media_extra": _extra(file, {"mimeType", "fileUri"}),
                "file": True}
        mime = file.get("mimeType")
        media_type = mime if isinstance(mime, str) else "application/octet-stream"
        return MediaPart(media_type=media_type, url=file["fileUri"], provider_details=details(FMT, hint))
    # executableCode, codeExecutionResult, toolCall / toolResponse of built-in tools, anything newer.
    data = {k: v for k, v in raw.items() if k not in known_sig}
    return OpaquePart(format=FMT, data=data)


def _decode_result(raw: JSONDict, result: JSONDict, known_sig: set[str]) -> ToolResultPart:
    hint: JSONDict = {"extra": _extra(raw, {"functionResponse"} | known_sig),
                      "result_extra": _extra(result, {"name", "response", "id"})}
    response = result.get("response")
    is_error = False
    content = ""
    if isinstance(response, dict) and set(response) == {"output"} and isinstance(response["output"], str):
        content = response["output"]
    elif isinstance(response, dict) and set(response) == {"error"} and isinstance(response["error"], str):
        content, is_error = response["error"], True
    elif "response" in result:
        hint["response"] = response  # any other shape: kept whole, shown as its JSON text
        content = json.dumps(response, ensure_ascii=False, sort_keys=True)
    else:
        hint["response_absent"] = True
    call_id = result.get("id")
    if not isinstance(call_id, str):
        hint["no_id"] = True
        call_id = ""  # paired with its call by the caller
    return ToolResultPart(tool_call_id=call_id, name=result["name"], content=content, is_error=is_error,
                          provider_details=details(FMT, hint))


def _pair_results(messages: list[Message]) -> None:
    """Give id-less ``functionResponse`` parts the id of their call: the first unanswered call of the same
    name in the closest model turn before them (Gemini's pairing by name and order)."""
    open_calls: list[ToolCallPart] = []
    for message in messages:
        if message.role == "assistant":
            open_calls = [p for p in message.parts if isinstance(p, ToolCallPart)]
            continue
        for part in message.parts:
            if not isinstance(part, ToolResultPart):
                continue
            match = next((c for c in open_calls if c.name == part.name), None) \
                if not part.tool_call_id else next((c for c in open_calls if c.id == part.tool_call_id), None)
            if match is not None:
                open_calls.remove(match)
                if not part.tool_call_id:
                    part.tool_call_id = match.id
            elif not part.tool_call_id:
                part.tool_call_id = derived_call_id(part.name or "", None, -1)


# ------------------------------------------------------------------------------------------ encode


class _Encoder:
    """One request's encoding state: the losses, each call's name (a functionResponse needs it) and
    whether ids are sent."""

    def __init__(self, send_ids: bool) -> None:
        self.losses: list[str] = []
        self.names: dict[str, str] = {}
        self.send_ids = send_ids

    def parts(self, message: Message, where: str) -> list[JSONDict]:
        out: list[JSONDict] = []
        pending_signature: str | None = None
        for index, part in enumerate(message.parts):
            pw = f"{where}.parts[{index}]"
            hint = hints(part, FMT)
            if isinstance(part, ReasoningPart):
                if part.provider == FMT and hint.get("attach") and part.signature:
                    pending_signature = part.signature
                    continue
                if part.provider == FMT and message.role == "assistant":
                    block: JSONDict = {**(hint.get("extra") or {}), "text": part.text, "thought": True}
                    if part.signature is not None:
                        block["thoughtSignature"] = part.signature
                    out.append(block)
                    continue
                if part.text:
                    self.losses.append(f"{pw}: reasoning text dropped (Gemini takes only its own thoughts back)")
                self.losses.extend(reasoning_losses(part, pw, TARGET))
                continue
            encoded = self.part(part, pw, message.role)
            if encoded is None:
                continue
            if pending_signature is not None:
                encoded["thoughtSignature"] = pending_signature
                pending_signature = None
            out.append(encoded)
        if pending_signature is not None:  # its part was dropped (an edit): the signature still goes back
            out.append({"text": "", "thoughtSignature": pending_signature})
        return out

    def part(self, part: Part, where: str, role: str) -> JSONDict | None:
        hint = hints(part, FMT)
        extra = dict(hint.get("extra") or {})
        if isinstance(part, TextPart):
            if not part.text and not hint:
                return None  # an empty foreign text: Gemini rejects a part without data
            return {**extra, "text": part.text}
        if isinstance(part, ToolCallPart):
            self.names[part.id] = part.name
            call: JSONDict = {**(hint.get("call_extra") or {}), "name": part.name}
            if hint.get("args") != "absent" or part.arguments not in (None, {}):
                call["args"] = self._args(part, where)
            if not hint.get("no_id") and (self.send_ids or hint):
                call["id"] = part.id
            return {**extra, "functionCall": call}
        if isinstance(part, ToolResultPart):
            return self.result(part, where)
        if isinstance(part, MediaPart):
            if part.data is not None and not hint.get("file"):
                return {**extra, "inlineData": {**(hint.get("media_extra") or {}), "mimeType": part.media_type,
                                                "data": part.data}}
            if part.url is not None:
                return {**extra, "fileData": {**(hint.get("media_extra") or {}), "mimeType": part.media_type,
                                              "fileUri": part.url}}
            self.losses.append(f"{where}: media part without url or data dropped")
            return None
        if isinstance(part, OpaquePart):
            if part.format == FMT and isinstance(part.data, dict):
                return dict(part.data)
            self.losses.append(opaque_loss(part, where, TARGET))
            return None
        return None

    def _args(self, part: ToolCallPart, where: str) -> Any:
        return object_arguments(part, where, self.losses, as_recorded=bool(hints(part, FMT)))

    def result(self, part: ToolResultPart, where: str) -> JSONDict:
        hint = hints(part, FMT)
        name = part.name or self.names.get(part.tool_call_id)
        if name is None:
            raise CodecError(f"{where}: tool result {part.tool_call_id!r} answers no earlier tool call "
                             "(Gemini needs the function's name)")
        out: JSONDict = {**(hint.get("result_extra") or {}), "name": name}
        shown = json.dumps(hint.get("response"), ensure_ascii=False, sort_keys=True) if "response" in hint else None
        if "response" in hint and shown == part.content:
            out["response"] = hint["response"]
        elif not (hint.get("response_absent") and not part.content):
            out["response"] = {"error" if part.is_error else "output": part.content}
        for block in part.blocks or []:
            if not isinstance(block, TextPart):
                kind = block.media_type if isinstance(block, MediaPart) else block.type
                self.losses.append(f"{where}: {kind} block in a tool result dropped (sent as text)")
        if not hint.get("no_id") and (self.send_ids or hint):
            out["id"] = part.tool_call_id
        return {**(hint.get("extra") or {}), "functionResponse": out}


def _skip_signatures(contents: list[JSONDict], foreign: set[int]) -> None:
    """Gemini 3 requires a thought signature on the first function call of each model turn; a turn
    that carries none and was not produced by Gemini gets the documented skip value."""
    for index, content in enumerate(contents):
        if index not in foreign or content.get("role") != "model":
            continue
        parts = content.get("parts") or []
        calls = [p for p in parts if isinstance(p, dict) and "functionCall" in p]
        if calls and not any("thoughtSignature" in p for p in parts if isinstance(p, dict)):
            calls[0]["thoughtSignature"] = SKIP_SIGNATURE


# ----------------------------------------------------------------------------------------- tools


def json_schema(schema: Any) -> Any:
    """Gemini's OpenAPI-subset ``parameters`` as JSON Schema: its enum type names (``OBJECT``,
    ``STRING``...) in JSON Schema's lower case, so the schema crosses to other APIs as they expect."""
    if isinstance(schema, dict):
        return {k: (v.lower() if k == "type" and isinstance(v, str) else json_schema(v)) for k, v in schema.items()}
    if isinstance(schema, list):
        return [json_schema(v) for v in schema]
    return schema


def decode_tools(raw_tools: list[Any]) -> list[ToolSpec]:
    out: list[ToolSpec] = []
    for index, raw in enumerate(raw_tools):
        tool = expect_dict(raw, f"tools[{index}]")
        declarations = tool.get("functionDeclarations")
        if not isinstance(declarations, list) or not all(isinstance(d, dict) for d in declarations) \
                or not declarations:
            out.append(ToolSpec(name=str(next(iter(tool), "tool")),
                                provider_details=details(FMT, {"raw": tool, "group": index})))
            continue
        group_extra = _extra(tool, {"functionDeclarations"})
        for n, decl in enumerate(declarations):
            name = decl.get("name")
            if not isinstance(name, str):
                raise CodecError(f"tools[{index}].functionDeclarations[{n}]: no string name")
            key = "parametersJsonSchema" if isinstance(decl.get("parametersJsonSchema"), dict) else "parameters"
            raw_schema = decl.get(key) if isinstance(decl.get(key), dict) else None
            schema = json_schema(raw_schema) if key == "parameters" and raw_schema is not None else raw_schema
            description = decl.get("description") if isinstance(decl.get("description"), str) else None
            known = {"name"} | ({key} if schema is not None else set()) | \
                ({"description"} if description is not None else set())
            hint = {"group": index, "key": key, "extra": _extra(decl, known),
                    "group_extra": group_extra if n == 0 else None,
                    "schema": raw_schema if schema is not raw_schema and schema != raw_schema else None}
            out.append(ToolSpec(name=name, description=description, parameters=schema,
                                provider_details=details(FMT, hint)))
    return out


def encode_tools(tools: Sequence[ToolSpec], losses: list[str]) -> list[JSONDict]:
    out: list[JSONDict] = []
    current: JSONDict | None = None
    group: Any = object()
    for index, spec in enumerate(tools):
        hint = hints(spec, FMT)
        if "raw" in hint:
            out.append(hint["raw"])
            current, group = None, object()
            continue
        if spec.parameters is None and spec.provider_details:
            losses.append(f"tools[{index}]: provider-specific tool {spec.name!r} dropped (no Gemini equivalent)")
            continue
        if current is None or hint.get("group", "foreign") != group:
            current = {**(hint.get("group_extra") or {}), "functionDeclarations": []}
            group = hint.get("group", "foreign")
            out.append(current)
        decl: JSONDict = {**(hint.get("extra") or {}), "name": spec.name}
        if spec.description is not None:
            decl["description"] = spec.description
        if spec.parameters is not None:
            # A foreign JSON Schema goes in parametersJsonSchema (the OpenAPI subset of ``parameters``
            # rejects keywords such as additionalProperties).
            original = hint.get("schema")
            same = isinstance(original, dict) and json_schema(original) == spec.parameters
            decl[hint.get("key") or "parametersJsonSchema"] = original if same else spec.parameters
        current["functionDeclarations"].append(decl)
    return out


# -------------------------------------------------------------------------------------- requests


def decode_content(raw: Any, where: str) -> Message:
    content = dict(expect_dict(raw, where))
    role = content.pop("role", None)
    if role not in (None, "user", "model", "function"):
        raise CodecError(f"{where}: unsupported role {role!r} (expected user or model)")
    raw_parts = expect_list(content.pop("parts", []), f"{where}.parts")
    ir_role: Role = "assistant" if role == "model" else "user"
    hint = {"own": True, "role": role if role == "function" else None, "no_role": True if role is None else None,
            "extra": content or None}
    return Message(role=ir_role, parts=decode_parts(raw_parts, where, ir_role), provider_details=details(FMT, hint))


def decode_request(body: Any) -> DecodedRequest:
    params = dict(expect_dict(body, "request"))
    raw_contents = expect_list(params.pop("contents", None), "request.contents")
    messages: list[Message] = []
    system = params.pop("systemInstruction", None)
    if isinstance(system, str):
        system = {"parts": [{"text": system}]}
        params_hint: JSONDict = {"system": "str"}
    else:
        params_hint = {}
    if isinstance(system, dict):
        rest = dict(system)
        parts = decode_parts(expect_list(rest.pop("parts", []), "systemInstruction.parts"), "systemInstruction",
                             "system")
        messages.append(Message(role="system", parts=parts,
                                provider_details=details(FMT, {**params_hint, "extra": rest or None})))
    elif system is not None:
        params["systemInstruction"] = system
    messages += [decode_content(c, f"contents[{i}]") for i, c in enumerate(raw_contents)]
    _pair_results(messages)
    tools: list[ToolSpec] | None = None
    if isinstance(params.get("tools"), list):
        tools = decode_tools(params.pop("tools"))
    return DecodedRequest(messages=messages, tools=tools, params=params)


def _encode_system(messages: list[Message], enc: _Encoder) -> Any:
    if len(messages) == 1:
        hint = hints(messages[0], FMT)
        if hint.get("system") == "str" and all(isinstance(p, TextPart) for p in messages[0].parts):
            return messages[0].text
        if hint:
            return {**(hint.get("extra") or {}), "parts": enc.parts(messages[0], "systemInstruction")}
    texts = [m.text for m in messages if m.text]
    for n, message in enumerate(messages):
        for part in message.parts:
            if not isinstance(part, TextPart):
                enc.losses.append(f"system message {n}: {part.type} part dropped (systemInstruction takes text)")
    return {"parts": [{"text": "\n\n".join(texts)}]}


def encode_request(messages: Sequence[Message], tools: Sequence[ToolSpec] | None = None,
                   params: JSONDict | None = None) -> Encoded:
    body: JSONDict = dict(params or {})
    enc = _Encoder(sends_call_ids(body.get("model")))
    system: list[Message] = []
    contents: list[JSONDict] = []
    foreign: set[int] = set()  # contents built from another format's messages
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        if message.role in ("system", "developer"):
            if contents:
                enc.losses.append(f"{where}: {message.role} message moved into systemInstruction")
            system.append(message)
            continue
        hint = hints(message, FMT)
        role = "model" if message.role == "assistant" else "user"
        parts = enc.parts(message, where)
        if message.name is not None:
            enc.losses.append(f"{where}: message name {message.name!r} dropped (Gemini has no name field)")
        if hint:
            content: JSONDict = {**(hint.get("extra") or {})}
            if not hint.get("no_role"):
                content["role"] = hint.get("role") or role
            content["parts"] = parts
            contents.append(content)
            continue
        # Turn structure (tool results in the next user turn, same-role turns merged, a user turn
        # first) is made legal before encoding, once for every API: codecs/conform.py.
        contents.append({"role": role, "parts": parts})
        foreign.add(len(contents) - 1)
    _skip_signatures(contents, foreign)
    if not contents:
        raise CodecError("nothing to send: Gemini needs at least one user turn in contents and the request "
                         "holds none (only a system prompt, or nothing)")
    if system:
        system_value = _encode_system(system, enc)
        body["systemInstruction"] = system_value
    body["contents"] = contents
    if tools is not None:
        body["tools"] = encode_tools(tools, enc.losses)
    return Encoded(body=body, losses=enc.losses)


# --------------------------------------------------------------------------------------- responses


def decode_usage(raw: JSONDict) -> Usage:
    def num(key: str) -> int | None:
        value = raw.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    candidates, thoughts = num("candidatesTokenCount"), num("thoughtsTokenCount")
    # Thinking tokens are billed as output: counted in output_tokens as Chat's completion_tokens does.
    output = (candidates or 0) + (thoughts or 0) if candidates is not None or thoughts is not None else None
    return Usage(input_tokens=num("promptTokenCount"), output_tokens=output,
                 cache_read_tokens=num("cachedContentTokenCount"), reasoning_tokens=thoughts,
                 total_tokens=num("totalTokenCount"), details={FMT: raw})


def encode_usage(usage: Usage) -> JSONDict:
    raw = (usage.details or {}).get(FMT)
    if isinstance(raw, dict):
        return raw
    out: JSONDict = {}
    if usage.input_tokens is not None:
        out["promptTokenCount"] = usage.input_tokens
    if usage.output_tokens is not None:
        out["candidatesTokenCount"] = usage.output_tokens - (usage.reasoning_tokens or 0)
    if usage.reasoning_tokens is not None:
        out["thoughtsTokenCount"] = usage.reasoning_tokens
    if usage.cache_read_tokens is not None:
        out["cachedContentTokenCount"] = usage.cache_read_tokens
    total = usage.total_tokens
    if total is None and usage.input_tokens is not None and usage.output_tokens is not None:
        total = usage.input_tokens + usage.output_tokens
    if total is not None:
        out["totalTokenCount"] = total
    return out


def decode_response(body: Any) -> LLMResponse:
    top = dict(expect_dict(body, "response"))
    candidates = expect_list(top.pop("candidates", []), "response.candidates")
    candidate = dict(expect_dict(candidates[0], "response.candidates[0]")) if candidates else {}
    content = candidate.pop("content", None)
    if isinstance(content, dict):
        message = decode_content({"role": "model", **content}, "response")
    else:
        message = Message(role="assistant", parts=[])
    finish = candidate.pop("finishReason") if isinstance(candidate.get("finishReason"), str) else None
    usage = decode_usage(top.pop("usageMetadata")) if isinstance(top.get("usageMetadata"), dict) else None
    model = top.pop("modelVersion") if isinstance(top.get("modelVersion"), str) else None
    response_id = top.pop("responseId") if isinstance(top.get("responseId"), str) else None
    hint = {"top": top or None, "candidate": candidate or None, "other_candidates": candidates[1:] or None,
            "no_candidates": True if not candidates else None, "own": True}
    return LLMResponse(message=message, finish_reason=finish, usage=usage, model=model, response_id=response_id,
                       provider_details=details(FMT, hint))


def encode_response(response: LLMResponse) -> Encoded:
    hint = hints(response, FMT)
    enc = _Encoder(True)
    message_hint = hints(response.message, FMT)
    content: JSONDict = {**(message_hint.get("extra") or {}), "parts": enc.parts(response.message, "response"),
                         "role": "model"}
    body: JSONDict = dict(hint.get("top") or {})
    if not hint.get("no_candidates"):
        candidate: JSONDict = {**(hint.get("candidate") or ({} if hint else {"index": 0})), "content": content}
        if response.finish_reason is not None:
            candidate["finishReason"] = response.finish_reason
        body["candidates"] = [candidate, *(hint.get("other_candidates") or [])]
    if response.usage is not None:
        body["usageMetadata"] = encode_usage(response.usage)
    if response.model is not None:
        body["modelVersion"] = response.model
    if response.response_id is not None:
        body["responseId"] = response.response_id
    return Encoded(body=body, losses=enc.losses)


# ------------------------------------------------------------------------------------------ stream


def assemble_chunks(chunks: Sequence[Any]) -> JSONDict:
    """Streamed ``GenerateContentResponse`` chunks -> one response dict. Text deltas join the text part
    before them (same ``thought`` flag, no signature yet); every other part (a ``functionCall`` included:
    parallel calls come in separate chunks, without an index) is appended; the last ``finishReason``,
    ``usageMetadata`` and other candidate keys win."""
    if not chunks:
        raise CodecError("stream: no chunks")
    out: JSONDict = {}
    parts: list[JSONDict] = []
    candidate: JSONDict = {}
    role: str | None = None
    for n, raw in enumerate(chunks):
        chunk = expect_dict(raw, f"stream[{n}]")
        if isinstance(chunk.get("error"), dict):
            raise CodecError(f"stream[{n}]: provider error: {json.dumps(chunk['error'])[:200]}")
        for key, value in chunk.items():
            if key != "candidates":
                out[key] = value
        for c in expect_list(chunk.get("candidates", []), f"stream[{n}].candidates"):
            c = expect_dict(c, f"stream[{n}].candidates[]")
            if c.get("index", 0) != 0:
                continue
            for key, value in c.items():
                if key != "content":
                    candidate[key] = value
            content = c.get("content")
            if not isinstance(content, dict):
                continue
            role = content.get("role", role)
            for part in expect_list(content.get("parts", []), f"stream[{n}].parts"):
                _append_part(parts, expect_dict(part, f"stream[{n}].parts[]"))
    if candidate or parts:
        merged: JSONDict = {**candidate, "content": {"role": role or "model", "parts": parts}}
        out["candidates"] = [merged]
    return out


def _append_part(parts: list[JSONDict], part: JSONDict) -> None:
    last = parts[-1] if parts else None
    text = part.get("text")
    if text == "" and set(part) == {"text"}:
        return  # the empty text of a closing chunk carries nothing

    if isinstance(text, str) and last is not None and isinstance(last.get("text"), str) \
            and bool(last.get("thought")) == bool(part.get("thought")) and "thoughtSignature" not in last \
            and set(part) <= {"text", "thought", "thoughtSignature"}:
        last["text"] += text
        if "thoughtSignature" in part:
            last["thoughtSignature"] = part["thoughtSignature"]
        return
    parts.append(dict(part))


def decode_stream(chunks: Sequence[Any]) -> LLMResponse:
    return decode_response(assemble_chunks(chunks))


def stream_complete(chunks: Sequence[Any], done: bool = False) -> bool:
    """The provider finished: a chunk's candidate carried its ``finishReason``."""
    return any(isinstance(c, dict) and c.get("finishReason")
               for chunk in chunks if isinstance(chunk, dict) for c in (chunk.get("candidates") or []))


def synthesize_stream(response: LLMResponse, request_body: JSONDict | None = None) -> list[JSONDict]:
    """The chunks of a response recorded without its own: one chunk per part (a whole text, a call),
    then a last chunk with ``finishReason`` and ``usageMetadata`` (no ``[DONE]`` on this API)."""
    body = encode_response(response).body
    candidates = body.get("candidates") or [{}]
    candidate = candidates[0]
    content = candidate.get("content") or {"role": "model", "parts": []}
    head: JSONDict = {k: body[k] for k in ("modelVersion", "responseId") if k in body}
    out: list[JSONDict] = []
    for part in content.get("parts") or []:
        out.append({"candidates": [{"content": {"role": content.get("role", "model"), "parts": [part]},
                                    "index": candidate.get("index", 0)}], **head})
    last: JSONDict = {k: v for k, v in candidate.items() if k != "content"}
    last["content"] = {"role": content.get("role", "model"), "parts": []}
    final: JSONDict = {"candidates": [last], **head}
    if "usageMetadata" in body:
        final["usageMetadata"] = body["usageMetadata"]
    out.append(final)
    return out
