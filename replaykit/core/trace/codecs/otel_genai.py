"""IR messages <-> OpenTelemetry GenAI message attributes, and OpenInference's flattened messages.

GenAI (semantic conventions v1.37.0, the version that introduced ``gen_ai.input.messages``,
``gen_ai.output.messages``, ``gen_ai.system_instructions`` and ``gen_ai.tool.definitions`` as typed
parts; unchanged since in the semantic-conventions-genai repository): a message is
``{"role", "parts": [...], "name"?, "finish_reason"?}`` and a part is ``text`` (content),
``reasoning`` (content), ``tool_call`` (id, name, arguments), ``tool_call_response`` (id, response),
``uri`` / ``blob`` (modality, mime_type, uri / content). Older instrumentations flatten messages into
``gen_ai.prompt.N.role`` / ``.content`` and ``gen_ai.completion.N.*``; OpenInference into
``llm.input_messages.N.message.role`` / ``.content`` / ``.tool_calls.M.tool_call.function.name`` ... Both
are read here. Pure functions over plain values.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from replaykit.core.trace.codecs._common import parse_arguments
from replaykit.core.trace.ir import (
    MediaPart,
    Message,
    OpaquePart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)

FORMAT = "otel-genai"
SEMCONV_VERSION = "1.37.0"
_ROLES = {"system", "developer", "user", "assistant", "tool"}


# ------------------------------------------------------------------------------------------ encoding


def encode_part(part: Any, losses: list[str], where: str) -> dict[str, Any] | None:
    if isinstance(part, TextPart):
        return {"type": "text", "content": part.text}
    if isinstance(part, ReasoningPart):
        if part.signature or part.encrypted or part.redacted:
            losses.append(f"{where}: provider-only reasoning data (signature / encrypted / redacted) not in GenAI")
        return {"type": "reasoning", "content": part.text}
    if isinstance(part, ToolCallPart):
        return {"type": "tool_call", "id": part.id, "name": part.name, "arguments": part.arguments}
    if isinstance(part, ToolResultPart):
        return {"type": "tool_call_response", "id": part.tool_call_id, "response": part.content}
    if isinstance(part, MediaPart):
        modality = part.media_type.split("/")[0] if "/" in part.media_type else "file"
        if part.url is not None:
            return {"type": "uri", "modality": modality, "mime_type": part.media_type, "uri": part.url}
        return {"type": "blob", "modality": modality, "mime_type": part.media_type, "content": part.data or ""}
    if isinstance(part, OpaquePart):
        losses.append(f"{where}: {part.format} block kept only as an opaque GenAI part")
        return {"type": part.format, "content": part.data}
    return None


def encode_message(message: Message, losses: list[str], where: str) -> dict[str, Any]:
    parts = [p for p in (encode_part(part, losses, where) for part in message.parts) if p is not None]
    out: dict[str, Any] = {"role": message.role, "parts": parts}
    if message.name:
        out["name"] = message.name
    return out


def encode_messages(messages: Sequence[Message], losses: list[str], where: str) -> tuple[list[Any], list[Any]]:
    """(system instructions parts, input messages) for ``gen_ai.system_instructions`` / ``gen_ai.input.messages``:
    leading system messages become instructions, everything else an input message."""
    instructions: list[Any] = []
    rest = list(messages)
    while rest and rest[0].role == "system":
        instructions.extend(encode_message(rest.pop(0), losses, where)["parts"])
    return instructions, [encode_message(m, losses, where) for m in rest]


def encode_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    out = []
    for tool in tools:
        item: dict[str, Any] = {"type": "function", "name": tool.name}
        if tool.description is not None:
            item["description"] = tool.description
        if tool.parameters is not None:
            item["parameters"] = tool.parameters
        out.append(item)
    return out


# ------------------------------------------------------------------------------------------ decoding


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def decode_part(part: Any) -> Any:
    if not isinstance(part, Mapping):
        return TextPart(text=_text(part))
    kind = part.get("type")
    if kind == "text":
        return TextPart(text=_text(part.get("content")))
    if kind in ("reasoning", "thinking"):
        return ReasoningPart(text=_text(part.get("content")))
    if kind == "tool_call":
        arguments = part.get("arguments")
        raw = arguments if isinstance(arguments, str) else None
        return ToolCallPart(id=str(part.get("id") or ""), name=str(part.get("name") or ""),
                            arguments=parse_arguments(raw) if raw is not None else arguments, raw_arguments=raw)
    if kind == "tool_call_response":
        return ToolResultPart(tool_call_id=str(part.get("id") or ""), content=_text(part.get("response")))
    if kind == "uri":
        return MediaPart(media_type=str(part.get("mime_type") or "application/octet-stream"),
                         url=str(part.get("uri") or ""))
    if kind == "blob":
        return MediaPart(media_type=str(part.get("mime_type") or "application/octet-stream"),
                         data=_text(part.get("content")))
    return OpaquePart(format=FORMAT, data=dict(part))


def decode_message(value: Any) -> Message:
    if not isinstance(value, Mapping):
        raise ValueError("a GenAI message must be an object")
    role = value.get("role")
    if role not in _ROLES:
        raise ValueError(f"unknown message role {role!r}")
    parts = value.get("parts")
    if parts is None and "content" in value:  # the older flat shape: {"role", "content"}
        parts = [{"type": "text", "content": value["content"]}] if value["content"] not in (None, "") else []
    if not isinstance(parts, list):
        raise ValueError("a GenAI message needs a parts array")
    name = value.get("name")
    return Message(role=role, parts=[decode_part(p) for p in parts], name=name if isinstance(name, str) else None)


def decode_json_attribute(value: Any) -> Any:
    """GenAI structured attributes are JSON strings on spans (or already-structured values)."""
    if isinstance(value, str):
        return json.loads(value)
    return value


def decode_tools(value: Any) -> list[ToolSpec]:
    items = decode_json_attribute(value)
    out = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, Mapping):
            continue
        function: Mapping[str, Any] = item["function"] if isinstance(item.get("function"), Mapping) else item
        name = function.get("name")
        if isinstance(name, str):
            out.append(ToolSpec(name=name, description=function.get("description"),
                                parameters=function.get("parameters")))
    return out


# -------------------------------------------------------------------------------- flattened attributes


def _indexed(attributes: Mapping[str, Any], prefix: str) -> dict[int, dict[str, Any]]:
    """``prefix.N.rest = v`` -> {N: {rest: v}} in index order."""
    pattern = re.compile(re.escape(prefix) + r"\.(\d+)\.(.+)")
    out: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        match = pattern.fullmatch(key)
        if match:
            out.setdefault(int(match.group(1)), {})[match.group(2)] = value
    return dict(sorted(out.items()))


def decode_openinference(attributes: Mapping[str, Any], prefix: str) -> list[Message]:
    """OpenInference ``llm.input_messages`` / ``llm.output_messages`` into IR messages."""
    messages = []
    for fields in _indexed(attributes, prefix).values():
        role = fields.get("message.role")
        if role not in _ROLES:
            continue
        parts: list[Any] = []
        contents = _indexed(fields, "message.contents")
        if contents:
            for item in contents.values():
                if item.get("message_content.type") == "image":
                    parts.append(MediaPart(media_type="image/*", url=str(item.get("message_content.image.image.url"))))
                elif item.get("message_content.text") is not None:
                    parts.append(TextPart(text=str(item["message_content.text"])))
        elif fields.get("message.content") not in (None, ""):
            content = str(fields["message.content"])
            if role == "tool":
                parts.append(ToolResultPart(tool_call_id=str(fields.get("message.tool_call_id") or ""),
                                            name=fields.get("message.name"), content=content))
            else:
                parts.append(TextPart(text=content))
        for call in _indexed(fields, "message.tool_calls").values():
            raw = call.get("tool_call.function.arguments")
            raw_text = raw if isinstance(raw, str) else json.dumps(raw)
            parts.append(ToolCallPart(id=str(call.get("tool_call.id") or ""),
                                      name=str(call.get("tool_call.function.name") or ""),
                                      arguments=parse_arguments(raw_text), raw_arguments=raw_text))
        name = fields.get("message.name") if role != "tool" else None
        messages.append(Message(role=role, parts=parts, name=name if isinstance(name, str) else None))
    return messages


def decode_legacy(attributes: Mapping[str, Any], prefix: str) -> list[Message]:
    """Pre-1.37 flattened ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*`` (OpenLLMetry and others)."""
    messages = []
    for fields in _indexed(attributes, prefix).values():
        role = fields.get("role")
        if role not in _ROLES:
            continue
        parts: list[Any] = []
        if fields.get("content") not in (None, ""):
            if role == "tool":
                parts.append(ToolResultPart(tool_call_id=str(fields.get("tool_call_id") or ""),
                                            content=str(fields["content"])))
            else:
                parts.append(TextPart(text=str(fields["content"])))
        for call in _indexed(fields, "tool_calls").values():
            raw = call.get("arguments")
            raw_text = raw if isinstance(raw, str) else json.dumps(raw)
            parts.append(ToolCallPart(id=str(call.get("id") or ""), name=str(call.get("name") or ""),
                                      arguments=parse_arguments(raw_text), raw_arguments=raw_text))
        messages.append(Message(role=role, parts=parts))
    return messages


def decode_openinference_tools(attributes: Mapping[str, Any]) -> list[ToolSpec]:
    schemas = [fields.get("tool.json_schema") for fields in _indexed(attributes, "llm.tools").values()]
    return decode_tools([json.loads(s) if isinstance(s, str) else s for s in schemas if s is not None])
