"""Lossless conversion between the IR's messages and PydanticAI's message history.

IR -> PydanticAI (``to_pydantic_ai``): consecutive non-assistant IR messages become one ``ModelRequest``
(system -> ``SystemPromptPart``, user -> ``UserPromptPart``, tool results -> ``ToolReturnPart``), each
assistant message one ``ModelResponse`` (text, thinking, tool calls). The result is exactly what a
PydanticAI agent would hold and send, so live requests made from it match the recorded ones.

What PydanticAI cannot hold (a ``developer`` role, a message ``name``, provider details on a user
message, a tool result's error flag or content blocks, encrypted or redacted reasoning, opaque parts,
the grouping of several tool results in one message, ...) is kept on the IR side: the conversion returns
a ``residue`` (the original IR messages of each PydanticAI message that would not convert back
exactly, keyed by position and guarded by a fingerprint of the PydanticAI message) and a ``lost``
report, one line per affected message. ``from_pydantic_ai(messages, residue)`` gives back the IR
messages exactly; without the residue it gives the best IR reading of the PydanticAI history.

PydanticAI -> IR (``from_pydantic_ai``): parts the IR has no type for (retry prompts, files, builtin
tool calls, ...) become IR parts carrying the original PydanticAI part under
``provider_details["pydantic_ai_part"]`` (or an ``OpaquePart`` of format ``pydantic-ai``), so a history
converted to the IR and back is the same history (timestamps and run ids aside, which the IR does not
keep per message).

Works with PydanticAI 1.x and 2.x (see ``_pydantic_ai_compat``).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from replaykit.core.trace import jsonsafe
from replaykit.core.trace.canonical import dumps_compact
from replaykit.core.trace.ir import (
    LLMResponse,
    MediaPart,
    Message,
    OpaquePart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Usage,
)
from replaykit.engines.pydantic_ai import compat

PAI_FORMAT = "pydantic-ai"
PART_KEY = "pydantic_ai_part"  # IR provider_details key holding a PydanticAI part the IR cannot type
INSTRUCTIONS_KEY = "pydantic_ai_instructions"  # IR system message that came from ModelRequest.instructions
RESPONSE_KEY = "replaykit"  # ModelResponse.provider_details key for IR response fields PydanticAI lacks
VOLATILE_KEYS = frozenset({"timestamp", "run_id", "conversation_id"})

# PydanticAI normalizes finish reasons; the raw provider value is kept next to it.
_FINISH_TO_PAI = {
    "stop": "stop", "end_turn": "stop", "stop_sequence": "stop", "completed": "stop",
    "length": "length", "max_tokens": "length", "incomplete": "length",
    "tool_calls": "tool_call", "function_call": "tool_call", "tool_use": "tool_call", "tool_call": "tool_call",
    "content_filter": "content_filter", "refusal": "content_filter",
    "error": "error",
}


@dataclass
class Residue:
    """The IR messages behind one PydanticAI message that does not convert back exactly."""

    fingerprint: str
    messages: list[Message]
    reasons: list[str]


@dataclass
class PydanticHistory:
    messages: list[Any]  # list[ModelMessage]
    residue: dict[int, Residue] = field(default_factory=dict)
    lost: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------------------- helpers


def _ta() -> Any:
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    return ModelMessagesTypeAdapter


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def comparable(messages: Sequence[Any]) -> list[Any]:
    """A PydanticAI history as plain JSON without per-run fields (timestamps, run ids)."""
    return [_strip(m) for m in _ta().dump_python(list(messages), mode="json")]


def behaviour(messages: Sequence[Any]) -> list[Any]:
    """What a history did (``replaykit.engines.pydantic_ai.behaviour``): equal for two runs that behaved
    the same, whatever timing, ids or fields a PydanticAI version adds."""
    from replaykit.engines.pydantic_ai.behaviour import behaviour_of_dump

    return behaviour_of_dump(_ta().dump_python(list(messages), mode="json"))


def parts_signature(message: Any) -> Any:
    """What a model sees of one PydanticAI message: its kind, instructions and parts (no metadata)."""
    dumped = _strip(_ta().dump_python([message], mode="json")[0])
    return {"kind": dumped.get("kind"), "instructions": dumped.get("instructions"), "parts": dumped.get("parts")}


def fingerprint(message: Any) -> str:
    import hashlib

    return hashlib.sha256(dumps_compact(parts_signature(message)).encode("utf-8", "surrogatepass")).hexdigest()[:24]


def _dump_part(part: Any, kind: str) -> Any:
    """One PydanticAI part as plain JSON (``kind``: the message kind it lives in)."""
    from pydantic_ai.messages import ModelRequest, ModelResponse

    message = ModelRequest(parts=[part]) if kind == "request" else ModelResponse(parts=[part])
    return _strip(_ta().dump_python([message], mode="json")[0]["parts"][0])


def _load_part(data: Any, kind: str) -> Any:
    """Rebuild a PydanticAI part from its JSON dump, inside a message of ``kind``."""
    import warnings

    message = {"kind": kind, "parts": [data]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # legacy retry-prompt parts load with a warning
        return _ta().validate_python([message])[0].parts[0]


def _has(data: Any, key: str) -> bool:
    return isinstance(data, dict) and key in data


def _parse_args(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None


# ------------------------------------------------------------------------------- IR -> PydanticAI


def to_pydantic_ai(messages: Sequence[Message], memo: dict[Any, Any] | None = None) -> PydanticHistory:
    """Convert IR messages to a PydanticAI history, keeping what it cannot hold in ``residue``.

    ``memo`` (a dict the caller keeps across calls): reuse the conversion of a message group converted
    before, at the same position, from the same message objects (and, for tool results, the same tool
    names): a run's requests share their prefix objects (``Run.request_messages``), so converting every
    request of a run is linear in its messages instead of quadratic. The PydanticAI messages are then
    shared between the histories: read them, do not mutate them."""
    compat.require()
    groups: list[tuple[Any, list[Message], list[str], Any]] = []
    pending: list[Message] = []
    call_names: dict[str, str] = {}

    def convert(kind: str, originals: list[Message]) -> None:
        key: Any = None
        if memo is not None:
            names = tuple(call_names.get(part.tool_call_id) for m in originals for part in m.tool_results)
            key = (kind, len(groups), tuple(map(id, originals)), names)
            hit = memo.get(key)
            if hit is not None:
                groups.append(hit[1])
                return
        if kind == "request":
            pai, notes = _request_from_ir(originals, call_names)
        else:
            pai, notes = _response_from_ir(originals[0])
        back = from_pydantic_ai([pai])
        check = None
        if back != originals:
            reasons = notes or ["message layout (how IR messages group into PydanticAI requests)"]
            check = (Residue(fingerprint(pai), [m.model_copy(deep=True) for m in originals], reasons),
                     f"PydanticAI message {len(groups)} ({','.join(m.role for m in originals)}): kept on the IR "
                     f"side: {'; '.join(reasons)}")
        group = (pai, originals, notes, check)
        groups.append(group)
        if memo is not None:
            memo[key] = (originals, group)  # the originals kept alive: their ids stay theirs

    def flush() -> None:
        if not pending:
            return
        convert("request", list(pending))
        pending.clear()

    for message in messages:
        if message.role == "assistant":
            flush()
            convert("response", [message])
            for part in message.tool_calls:
                call_names[part.id] = part.name
        else:
            pending.append(message)
    flush()

    history = PydanticHistory(messages=[g[0] for g in groups])
    for index, (_, _, _, check) in enumerate(groups):
        if check is not None:
            history.residue[index] = check[0]
            history.lost.append(check[1])
    return history


def _request_from_ir(messages: Sequence[Message], call_names: dict[str, str]) -> tuple[Any, list[str]]:
    from pydantic_ai.messages import ModelRequest

    parts: list[Any] = []
    notes: list[str] = []
    instructions: str | None = None
    for message in messages:
        if message.name is not None:
            notes.append(f"{message.role} message name")
        if message.provider_details:
            notes.append(f"{message.role} message provider_details")
        if message.role in ("system", "developer"):
            if message.role == "developer":
                notes.append("developer role (sent as a system prompt)")
            if _is_instructions(message):
                instructions = message.text
                continue
            parts.extend(_system_parts(message, notes))
        elif message.role == "tool":
            for part in message.parts:
                if isinstance(part, ToolResultPart):
                    parts.append(_tool_return(part, call_names, notes))
                else:
                    notes.append(f"{part.type} part in a tool message")
            if len(message.parts) != 1:
                notes.append("tool message with several parts")
        else:  # user
            parts.extend(_user_parts(message, call_names, notes))
    return ModelRequest(parts=parts, instructions=instructions), notes


def _is_instructions(message: Message) -> bool:
    return bool(message.provider_details and message.provider_details.get(INSTRUCTIONS_KEY))


def _system_parts(message: Message, notes: list[str]) -> list[Any]:
    from pydantic_ai.messages import SystemPromptPart

    out: list[Any] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            if part.provider_details and PART_KEY in part.provider_details:
                out.append(_load_part(part.provider_details[PART_KEY], "request"))
                continue
            if part.provider_details:
                notes.append("system text provider_details")
            out.append(SystemPromptPart(content=part.text))
        else:
            notes.append(f"{part.type} part in a system message")
    if len(message.parts) != 1:
        notes.append("system message with several parts")
    return out


def _user_parts(message: Message, call_names: dict[str, str], notes: list[str]) -> list[Any]:
    from pydantic_ai.messages import UserPromptPart

    out: list[Any] = []
    content: list[Any] = []
    for part in message.parts:
        details = part.provider_details or {}
        if PART_KEY in details:
            out.append(_load_part(details[PART_KEY], "request"))
        elif isinstance(part, ToolResultPart):  # Anthropic style: tool results inside a user message
            notes.append("tool result inside a user message")
            out.append(_tool_return(part, call_names, notes))
        elif isinstance(part, TextPart):
            if part.provider_details:
                notes.append("user text provider_details")
            content.append(part.text)
        elif isinstance(part, MediaPart):
            content.append(_media_to_pai(part, notes))
        elif isinstance(part, OpaquePart) and part.format == PAI_FORMAT and _has(part.data, "user_content"):
            content.append(_load_user_content(part.data["user_content"]))
        elif isinstance(part, OpaquePart) and part.format == PAI_FORMAT and _has(part.data, "request_part"):
            out.append(_load_part(part.data["request_part"], "request"))
        else:
            notes.append(f"{part.type} part in a user message")
    if content or not out:
        if len(content) == 1 and isinstance(content[0], str):
            out.append(UserPromptPart(content=content[0]))
        else:
            out.append(UserPromptPart(content=content))
    return out


def _load_user_content(data: Any) -> Any:
    part = _load_part({"part_kind": "user-prompt", "content": [data]}, "request")
    return part.content[0]


def _media_to_pai(part: MediaPart, notes: list[str]) -> Any:
    from pydantic_ai import messages as m

    if part.provider_details:
        notes.append("media provider_details")
    if part.data is not None:
        try:
            raw = base64.b64decode(part.data, validate=True)
        except ValueError:
            notes.append("media data that is not base64")
            return f"[media {part.media_type}: undecodable data]"
        if part.url is not None:
            notes.append("media with both url and data")
        return m.BinaryContent(data=raw, media_type=part.media_type)
    url = part.url or ""
    major = part.media_type.split("/", 1)[0]
    cls = {"image": m.ImageUrl, "audio": m.AudioUrl, "video": m.VideoUrl}.get(major, m.DocumentUrl)
    return cls(url=url, media_type=part.media_type)


def _tool_return(part: ToolResultPart, call_names: dict[str, str], notes: list[str]) -> Any:
    from pydantic_ai.messages import ToolReturnPart

    details = part.provider_details or {}
    if PART_KEY in details:
        return _load_part(details[PART_KEY], "request")
    if part.is_error:
        # Kept as a plain result: PydanticAI 2.x would wrap a failed outcome as {"error": ...} on the wire,
        # which is not what the recorded agent sent.
        notes.append("tool result error flag")
    if part.blocks:
        notes.append("tool result content blocks")
    if part.provider_details:
        notes.append("tool result provider_details")
    name = part.name if part.name is not None else call_names.get(part.tool_call_id, "")
    if part.name is None:
        notes.append("tool result without a tool name")
    return ToolReturnPart(tool_name=name, content=part.content, tool_call_id=part.tool_call_id)


def _response_from_ir(message: Message) -> tuple[Any, list[str]]:
    from pydantic_ai import messages as m

    parts: list[Any] = []
    notes: list[str] = []
    if message.name is not None:
        notes.append("assistant message name")
    if message.provider_details:
        notes.append("assistant message provider_details")
    for part in message.parts:
        details = part.provider_details or {}
        if PART_KEY in details:
            parts.append(_load_part(details[PART_KEY], "response"))
        elif isinstance(part, TextPart):
            parts.append(m.TextPart(content=part.text, provider_details=_copy(part.provider_details)))
        elif isinstance(part, ReasoningPart):
            if part.encrypted is not None:
                notes.append("encrypted reasoning")
            if part.redacted:
                notes.append("redacted reasoning")
            parts.append(m.ThinkingPart(content=part.text, id=part.id, signature=part.signature,
                                        provider_name=part.provider,
                                        provider_details=_copy(part.provider_details)))
        elif isinstance(part, ToolCallPart):
            parts.append(m.ToolCallPart(tool_name=part.name, args=_args_to_pai(part, notes),
                                        tool_call_id=part.id, provider_details=_copy(part.provider_details)))
        elif isinstance(part, OpaquePart) and part.format == PAI_FORMAT and _has(part.data, "response_part"):
            parts.append(_load_part(part.data["response_part"], "response"))
        else:
            notes.append(f"{part.type} part in an assistant message")
    return m.ModelResponse(parts=parts), notes


def _args_to_pai(part: ToolCallPart, notes: list[str]) -> Any:
    if part.raw_arguments is not None:
        if _parse_args(part.raw_arguments) != part.arguments:
            notes.append("tool call arguments that differ from their raw string")
        return part.raw_arguments
    if part.arguments is None or isinstance(part.arguments, dict):
        return None if part.arguments is None else json.loads(json.dumps(part.arguments))
    notes.append("non-object tool call arguments")
    return dumps_compact(part.arguments)


def _copy(value: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if value is None else json.loads(json.dumps(value))


# ------------------------------------------------------------------------------- PydanticAI -> IR


def from_pydantic_ai(messages: Sequence[Any], residue: dict[int, Residue] | None = None) -> list[Message]:
    """Convert a PydanticAI history to IR messages; ``residue`` restores what PydanticAI could not hold
    (only for messages that are unchanged since ``to_pydantic_ai``)."""
    compat.require()
    out: list[Message] = []
    for index, message in enumerate(messages):
        kept = (residue or {}).get(index)
        if kept is not None and kept.fingerprint == fingerprint(message):
            out.extend(m.model_copy(deep=True) for m in kept.messages)
        elif getattr(message, "kind", None) == "response":
            out.append(_ir_from_response(message))
        else:
            out.extend(_ir_from_request(message))
    return out


def _ir_from_request(request: Any) -> list[Message]:
    from pydantic_ai import messages as m

    out: list[Message] = []
    if request.instructions:
        out.append(Message(role="system", parts=[TextPart(text=request.instructions)],
                           provider_details={INSTRUCTIONS_KEY: True}))
    for part in request.parts:
        if isinstance(part, m.SystemPromptPart):
            out.append(Message(role="system", parts=[_text_or_stashed(part, part.content, _plain_system(part))]))
        elif isinstance(part, m.UserPromptPart):
            out.append(Message(role="user", parts=_ir_user_content(part)))
        elif isinstance(part, m.ToolReturnPart):
            out.append(Message(role="tool", parts=[_ir_tool_result(part)]))
        elif isinstance(part, compat.retry_parts()):
            out.append(_ir_retry(part))
        else:  # builtin tool returns and anything newer: kept whole
            out.append(Message(role="user", parts=[OpaquePart(format=PAI_FORMAT, data={"request_part": _dump_part(part, "request")})]))
    return out


def _plain_system(part: Any) -> bool:
    from pydantic_ai.messages import SystemPromptPart

    return _dump_part(part, "request") == _dump_part(SystemPromptPart(content=part.content), "request")


def _text_or_stashed(part: Any, text: str, plain: bool) -> TextPart:
    if plain:
        return TextPart(text=text)
    return TextPart(text=text, provider_details={PART_KEY: _dump_part(part, "request")})


def _ir_user_content(part: Any) -> list[Any]:
    from pydantic_ai import messages as m

    if isinstance(part.content, str):
        return [TextPart(text=part.content)]
    out: list[Any] = []
    for item in part.content:
        if isinstance(item, str):
            out.append(TextPart(text=item))
        elif isinstance(item, m.BinaryContent) and _plain_media(item):
            out.append(MediaPart(media_type=item.media_type, data=base64.b64encode(item.data).decode()))
        elif isinstance(item, m.FileUrl) and _plain_media(item):
            out.append(MediaPart(media_type=item.media_type, url=item.url))
        else:
            out.append(OpaquePart(format=PAI_FORMAT, data={"user_content": _dump_user_item(item)}))
    return out


def _plain_media(item: Any) -> bool:
    """True when the IR MediaPart rebuilds this item exactly (no vendor metadata, identifier, ...)."""
    notes: list[str] = []
    if isinstance(item, _binary_type()):
        binary: Any = item
        rebuilt = _media_to_pai(MediaPart(media_type=binary.media_type,
                                          data=base64.b64encode(binary.data).decode()), notes)
    else:
        rebuilt = _media_to_pai(MediaPart(media_type=item.media_type, url=item.url), notes)
    return type(rebuilt) is type(item) and _dump_user_item(rebuilt) == _dump_user_item(item)


def _binary_type() -> type:
    from pydantic_ai.messages import BinaryContent

    return BinaryContent


def _dump_user_item(item: Any) -> Any:
    from pydantic_ai.messages import UserPromptPart

    return _dump_part(UserPromptPart(content=[item]), "request")["content"][0]


def _ir_tool_result(part: Any) -> ToolResultPart:
    from pydantic_ai.messages import ToolReturnPart

    outcome = getattr(part, "outcome", "success")
    content = part.content
    if isinstance(content, str) and outcome == "success":
        plain = ToolReturnPart(tool_name=part.tool_name, content=content, tool_call_id=part.tool_call_id)
        if _dump_part(plain, "request") == _dump_part(part, "request"):
            return ToolResultPart(tool_call_id=part.tool_call_id, name=part.tool_name, content=content)
    # What the model is shown, plus the whole part for the way back.
    return ToolResultPart(tool_call_id=part.tool_call_id, name=part.tool_name, content=part.model_response_str(),
                          is_error=outcome in ("failed", "retried"),
                          provider_details={PART_KEY: _dump_part(part, "request")})


def _ir_retry(part: Any) -> Message:
    text = part.model_response()
    stash = {PART_KEY: _dump_part(part, "request")}
    if getattr(part, "tool_name", None):
        return Message(role="tool", parts=[ToolResultPart(tool_call_id=part.tool_call_id, name=part.tool_name,
                                                          content=text, is_error=True, provider_details=stash)])
    return Message(role="user", parts=[TextPart(text=text, provider_details=stash)])


def _ir_from_response(response: Any) -> Message:
    from pydantic_ai import messages as m

    parts: list[Any] = []
    for part in response.parts:
        if type(part) is m.TextPart and _dump_part(part, "response") == _dump_part(
                m.TextPart(content=part.content, provider_details=part.provider_details), "response"):
            parts.append(TextPart(text=part.content, provider_details=_copy(part.provider_details)))
        elif type(part) is m.ThinkingPart:
            parts.append(ReasoningPart(text=part.content, id=part.id, signature=part.signature,
                                       provider=part.provider_name, provider_details=_copy(part.provider_details)))
        elif type(part) is m.ToolCallPart and _plain_call(part):
            args = part.args
            parts.append(ToolCallPart(
                id=part.tool_call_id, name=part.tool_name,
                arguments=_parse_args(args) if isinstance(args, str) else _copy(args),
                raw_arguments=args if isinstance(args, str) else None,
                provider_details=_copy(part.provider_details),
            ))
        else:
            parts.append(OpaquePart(format=PAI_FORMAT, data={"response_part": _dump_part(part, "response")}))
    return Message(role="assistant", parts=parts)


def _plain_call(part: Any) -> bool:
    from pydantic_ai.messages import ToolCallPart as PaiCall

    rebuilt = PaiCall(tool_name=part.tool_name, args=part.args, tool_call_id=part.tool_call_id,
                      provider_details=part.provider_details)
    return _dump_part(rebuilt, "response") == _dump_part(part, "response")


# ------------------------------------------------------------------------------------ responses


def usage_to_pai(usage: Usage | None) -> Any:
    """IR usage -> ``RequestUsage`` (the served response carries the recorded usage, never an estimate)."""
    from pydantic_ai.usage import RequestUsage

    if usage is None:
        return RequestUsage()
    details: dict[str, int] = {k: v for k, v in (usage.details or {}).items() if isinstance(v, int)}
    kwargs: dict[str, Any] = {
        "input_tokens": usage.input_tokens or 0,
        "output_tokens": usage.output_tokens or 0,
        "cache_read_tokens": usage.cache_read_tokens or 0,
        "cache_write_tokens": usage.cache_write_tokens or 0,
    }
    if usage.reasoning_tokens is not None:
        if compat.has_field(RequestUsage, "output_reasoning_tokens"):
            kwargs["output_reasoning_tokens"] = usage.reasoning_tokens
        else:
            details.setdefault("reasoning_tokens", usage.reasoning_tokens)
    return RequestUsage(details=details, **kwargs)


def usage_from_pai(usage: Any) -> Usage:
    details = dict(getattr(usage, "details", None) or {})
    reasoning = getattr(usage, "output_reasoning_tokens", 0) or details.pop("reasoning_tokens", None)
    return Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens or None,
        cache_write_tokens=usage.cache_write_tokens or None,
        reasoning_tokens=reasoning or None,
        total_tokens=usage.input_tokens + usage.output_tokens,
        details=details or None,
    )


def response_to_pydantic_ai(response: LLMResponse, *, provider_name: str | None = None) -> Any:
    """An IR response as a ``ModelResponse`` with its recorded usage, model, id and finish reason.

    The IR-only fields (the raw finish reason, the exact IR usage, response provider details, and the
    message itself when its parts do not convert exactly) ride along in
    ``provider_details["replaykit"]``, which PydanticAI never sends to a provider."""
    history = to_pydantic_ai([response.message])
    model_response = history.messages[0]
    extra: dict[str, Any] = {}
    if response.finish_reason is not None:
        extra["finish_reason"] = response.finish_reason
    if response.usage is not None:
        extra["usage"] = jsonsafe.model_data(response.usage, exclude_none=True)
    if response.provider_details is not None:
        extra["provider_details"] = _copy(response.provider_details)
    if history.residue:
        extra["message"] = jsonsafe.model_data(response.message, exclude_none=True)
    model_response.usage = usage_to_pai(response.usage)
    model_response.model_name = response.model
    model_response.provider_response_id = response.response_id
    model_response.provider_name = provider_name
    if response.finish_reason is not None:
        model_response.finish_reason = _FINISH_TO_PAI.get(response.finish_reason)
    model_response.provider_details = {RESPONSE_KEY: extra} if extra else None
    return model_response


def response_from_pydantic_ai(response: Any) -> LLMResponse:
    """A ``ModelResponse`` (served or live) as an IR response."""
    details = dict(response.provider_details or {})
    extra = details.pop(RESPONSE_KEY, None) or {}
    message = (Message.model_validate(extra["message"]) if "message" in extra
               else _ir_from_response(response))
    usage = Usage.model_validate(extra["usage"]) if "usage" in extra else usage_from_pai(response.usage)
    finish = extra.get("finish_reason") or details.get("finish_reason") or response.finish_reason
    provider_details = extra.get("provider_details")
    if provider_details is None and details:
        provider_details = json.loads(json.dumps(details, default=str))
    return LLMResponse(message=message, finish_reason=finish, usage=usage, model=response.model_name,
                       response_id=response.provider_response_id, provider_details=provider_details)
