"""What each provider API refuses, checked on a request body the way the provider checks it.

Stdlib only. ``check_request(api, body)`` lists the rules a body breaks (empty: the provider would take
it); the scripted server records the list on every request (``RecordedRequest.violations``) and, when
``strict``, answers 400 with it, as the provider would. The rules are the ones the providers document
and enforce (docs/codecs.md, "Cross-API translation"; the sources are in the guide of the project):

- OpenAI Chat: tool-call ids at most 40 characters, every call answered by a ``tool`` message before the
  conversation goes on, every ``tool`` message answering a call of the assistant message before it.
- OpenAI Responses: every ``function_call_output`` answers an earlier ``function_call`` (without
  ``previous_response_id``), every ``function_call`` followed by its output before the next message,
  a ``reasoning`` item followed by the item it came with.
- Anthropic Messages: ``max_tokens`` set; only user and assistant roles, alternating, the first a user;
  no empty content and no empty text block; tool ids ``^[a-zA-Z0-9_-]+$``; each ``tool_use`` answered
  by a ``tool_result`` in the very next (user) message, results first in it, each result answering a
  ``tool_use`` of the assistant message before; thinking blocks carry a signature; images as base64
  (png, jpeg, gif, webp) or URL.
- Google Gemini (``gemini``): ``contents`` is a non-empty list of ``user`` / ``model`` turns that starts
with ``user``; no ``system`` role (the system prompt is ``systemInstruction``); each part holds one kind of
data; every model turn with function calls is followed by a user turn with exactly one
``functionResponse`` per call (same names, the call's ``id`` when the call had one); a
``functionResponse.response`` is an object; older models (``gemini-1`` / ``gemini-2``) take no call ids;
Gemini 3 wants a ``thoughtSignature`` on the first call of every model turn with calls; function names
match ``[A-Za-z_][A-Za-z0-9_.-]{0,63}``; no unknown request or generationConfig keys.
- AWS Bedrock Converse (``bedrock``): ``messages`` non-empty, starting with ``user``, roles alternating;
every content block holds one kind; text not blank; ``toolUseId`` 1-64 of ``[A-Za-z0-9_-]``; each
``toolResult`` answers a ``toolUse`` of the assistant message right before it, once; every
``toolUse`` followed by more conversation is answered in the next message; ``toolConfig`` present when
any message holds tool blocks; images png/jpeg/gif/webp as bytes; ``reasoningContent`` only from the
assistant; no unknown request or inferenceConfig keys.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_ANTHROPIC_ID = re.compile(r"[a-zA-Z0-9_-]+")
_ANTHROPIC_IMAGES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
CHAT_ID_MAX = 40
_GEMINI_TOP = {"contents", "systemInstruction", "tools", "toolConfig", "safetySettings", "generationConfig",
               "cachedContent", "labels", "model"}
_GEMINI_GENERATION = {"temperature", "topP", "topK", "candidateCount", "maxOutputTokens", "stopSequences",
                      "presencePenalty", "frequencyPenalty", "seed", "responseMimeType", "responseSchema",
                      "responseJsonSchema", "thinkingConfig", "responseModalities", "responseLogprobs",
                      "logprobs", "mediaResolution", "speechConfig", "enableEnhancedCivicAnswers", "imageConfig",
                      "routingConfig", "audioTimestamp"}
_GEMINI_DATA = {"text", "inlineData", "fileData", "functionCall", "functionResponse", "executableCode",
                "codeExecutionResult", "toolCall", "toolResponse"}
_GEMINI_PART_META = {"thought", "thoughtSignature", "videoMetadata", "partMetadata", "mediaResolution"}
_GEMINI_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")
_OLD_GEMINI = re.compile(r"(?:^|/)gemini-(?:1|2)(?:\.|-|$)")

_BEDROCK_TOP = {"messages", "system", "inferenceConfig", "toolConfig", "guardrailConfig",
                "additionalModelRequestFields", "promptVariables", "additionalModelResponseFieldPaths",
                "requestMetadata", "performanceConfig", "serviceTier", "outputConfig"}
_BEDROCK_INFERENCE = {"maxTokens", "temperature", "topP", "stopSequences"}
_BEDROCK_BLOCKS = {"text", "image", "document", "video", "toolUse", "toolResult", "guardContent", "cachePoint",
                   "reasoningContent", "citationsContent", "searchResult", "audio"}
_BEDROCK_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_IMAGE_FORMATS = {"png", "jpeg", "gif", "webp"}


def check_request(api: str, body: Any, model: str = "") -> list[str]:
    """The rules ``body`` breaks for ``api`` ("chat", "responses", "anthropic", "gemini", "bedrock", or the
    wire API names). ``model``: Gemini's rules differ by model generation (the model is in the URL)."""
    if not isinstance(body, Mapping):
        return ["the body is not a JSON object"]
    name = {"openai-chat": "chat", "openai-responses": "responses", "anthropic-messages": "anthropic",
            "google-gemini": "gemini", "bedrock-converse": "bedrock"}.get(api, api)
    if name == "gemini":
        return gemini(body, model)
    checker = _CHECKERS.get(name)
    return checker(body) if checker is not None else []


def _chat(body: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return ["messages: must be a non-empty list"]
    open_calls: set[str] = set()
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            out.append(f"messages[{i}]: not an object")
            continue
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in open_calls:
                out.append(f"messages[{i}]: tool message {call_id!r} does not answer a tool call of the preceding "
                           "assistant message")
            open_calls.discard(call_id)  # type: ignore[arg-type]
            continue
        if open_calls:
            out.append(f"messages[{i}]: tool calls {sorted(open_calls)} were not answered by tool messages")
            open_calls = set()
        if role == "assistant":
            for n, call in enumerate(message.get("tool_calls") or []):
                call_id = call.get("id") if isinstance(call, Mapping) else None
                if not isinstance(call_id, str) or not call_id:
                    out.append(f"messages[{i}].tool_calls[{n}]: id missing")
                    continue
                if len(call_id) > CHAT_ID_MAX:
                    out.append(f"messages[{i}].tool_calls[{n}].id: longer than {CHAT_ID_MAX} characters")
                open_calls.add(call_id)
        elif role not in ("system", "developer", "user"):
            out.append(f"messages[{i}]: unknown role {role!r}")
    return out


def _responses(body: Mapping[str, Any]) -> list[str]:
    items = body.get("input")
    if isinstance(items, str):
        return []
    if not isinstance(items, list):
        return ["input: must be a string or a list of items"]
    out: list[str] = []
    chained = body.get("previous_response_id") is not None
    calls: set[str] = set()
    open_calls: set[str] = set()
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            out.append(f"input[{i}]: not an object")
            continue
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "function_call":
            call_id = item.get("call_id")
            if not isinstance(call_id, str) or not call_id:
                out.append(f"input[{i}]: function_call without a call_id")
            else:
                calls.add(call_id)
                open_calls.add(call_id)
        elif kind == "function_call_output":
            call_id = item.get("call_id")
            if call_id not in calls and not chained:
                out.append(f"input[{i}]: no function_call found for call_id {call_id!r}")
            open_calls.discard(call_id)  # type: ignore[arg-type]
        elif kind == "reasoning":
            if i == len(items) - 1:
                out.append(f"input[{i}]: reasoning item without the item that followed it")
        elif kind == "message":
            if open_calls and item.get("role") != "assistant":
                out.append(f"input[{i}]: no tool output found for function calls {sorted(open_calls)}")
                open_calls = set()
    return out


def _blocks(content: Any) -> list[Mapping[str, Any]]:
    if isinstance(content, list):
        return [b for b in content if isinstance(b, Mapping)]
    return []


def _anthropic(body: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    if not isinstance(body.get("max_tokens"), int):
        out.append("max_tokens: required")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return [*out, "messages: must be a non-empty list"]
    previous_role: str | None = None
    pending: set[str] = set()  # tool_use ids of the previous assistant message
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            out.append(f"messages[{i}]: not an object")
            continue
        role = message.get("role")
        content = message.get("content")
        if role not in ("user", "assistant"):
            out.append(f"messages[{i}]: role must be user or assistant, got {role!r}")
        if i == 0 and role != "user":
            out.append("messages[0]: the first message must use the user role")
        if role == previous_role:
            out.append(f"messages[{i}]: roles must alternate (two {role} messages in a row)")
        if content in ("", []) or content is None:
            out.append(f"messages[{i}]: all messages must have non-empty content")
        blocks = _blocks(content)
        for n, block in enumerate(blocks):
            kind = block.get("type")
            where = f"messages[{i}].content[{n}]"
            if kind == "text" and not block.get("text"):
                out.append(f"{where}: text content blocks must be non-empty")
            elif kind == "tool_use":
                if role != "assistant":
                    out.append(f"{where}: tool_use outside an assistant message")
                if not isinstance(block.get("id"), str) or not _ANTHROPIC_ID.fullmatch(block["id"]):
                    out.append(f"{where}.id: String should match pattern '^[a-zA-Z0-9_-]+$'")
            elif kind == "thinking" and not block.get("signature"):
                out.append(f"{where}: thinking block without a signature")
            elif kind == "image":
                source: Mapping[str, Any] = block["source"] if isinstance(block.get("source"), Mapping) else {}
                if source.get("type") == "base64" and source.get("media_type") not in _ANTHROPIC_IMAGES:
                    out.append(f"{where}: image media_type {source.get('media_type')!r} is not supported")
        results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
        if pending:
            missing = pending - set(results)
            if missing:
                out.append(f"messages[{i}]: tool_use ids were found without tool_result blocks immediately after: "
                           f"{', '.join(sorted(missing))}")
        for call_id in results:
            if call_id not in pending:
                out.append(f"messages[{i}]: unexpected tool_use_id {call_id!r} in tool_result blocks: each "
                           "tool_result must answer a tool_use in the previous message")
        if results:
            kinds = [b.get("type") for b in blocks]
            if kinds[: len(results)] != ["tool_result"] * len(results):
                out.append(f"messages[{i}]: tool_result blocks must come first in the message content")
        pending = {b["id"] for b in blocks if b.get("type") == "tool_use" and isinstance(b.get("id"), str)} \
            if role == "assistant" else set()
        previous_role = role if isinstance(role, str) else None
    system = body.get("system")
    if system is not None and not isinstance(system, str | list):
        out.append("system: must be a string or a list of text blocks")
    return out


# ------------------------------------------------------------------------------------------- Gemini


def gemini(body: Mapping[str, Any], model: str) -> list[str]:
    out: list[str] = [f"unknown request field {k!r}" for k in body if k not in _GEMINI_TOP]
    config = body.get("generationConfig")
    if isinstance(config, Mapping):
        out += [f"unknown generationConfig field {k!r}" for k in config if k not in _GEMINI_GENERATION]
    system = body.get("systemInstruction")
    if system is not None and not (isinstance(system, str) or (isinstance(system, Mapping) and
                                                               isinstance(system.get("parts"), list))):
        out.append("systemInstruction must be a Content with parts")
    out += _gemini_tools(body.get("tools"))
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        return [*out, "contents must be a non-empty list"]
    old = bool(_OLD_GEMINI.search(model))
    for index, content in enumerate(contents):
        where = f"contents[{index}]"
        if not isinstance(content, Mapping):
            out.append(f"{where}: not an object")
            continue
        role = content.get("role")
        if role not in ("user", "model"):
            out.append(f"{where}: role {role!r} (Gemini takes user and model; the system prompt is "
                       "systemInstruction)")
        parts = content.get("parts")
        if not isinstance(parts, list) or not parts:
            out.append(f"{where}: parts must be a non-empty list")
            continue
        for n, part in enumerate(parts):
            out += _gemini_part(part, f"{where}.parts[{n}]", role, old)
        calls = [p["functionCall"] for p in parts if isinstance(p, Mapping) and isinstance(p.get("functionCall"), Mapping)]
        if role == "model" and calls:
            first = next(p for p in parts if isinstance(p, Mapping) and "functionCall" in p)
            if not old and not isinstance(first.get("thoughtSignature"), str):
                out.append(f"{where}: the first functionCall of the turn has no thoughtSignature (Gemini 3 "
                           "requires one; send the skip value for a history from another model)")
            following = contents[index + 1] if index + 1 < len(contents) else None
            if following is not None:
                out += _gemini_answers(calls, following, f"contents[{index + 1}]")
    first_role = contents[0].get("role") if isinstance(contents[0], Mapping) else None
    if first_role != "user":
        out.append("contents[0]: the conversation must start with a user turn")
    return out


def _gemini_part(part: Any, where: str, role: Any, old: bool) -> list[str]:
    if not isinstance(part, Mapping):
        return [f"{where}: not an object"]
    out: list[str] = []
    data = [k for k in part if k in _GEMINI_DATA]
    unknown = [k for k in part if k not in _GEMINI_DATA and k not in _GEMINI_PART_META]
    if len(data) != 1:
        out.append(f"{where}: a part holds exactly one kind of data (found {sorted(data) or 'none'})")
    if unknown:
        out.append(f"{where}: unknown part field(s) {', '.join(sorted(unknown))}")
    call = part.get("functionCall")
    if isinstance(call, Mapping):
        if role != "model":
            out.append(f"{where}: functionCall in a {role} turn")
        if not isinstance(call.get("name"), str) or not _GEMINI_NAME.fullmatch(call["name"]):
            out.append(f"{where}: functionCall name {call.get('name')!r} is not a valid function name")
        if "args" in call and not isinstance(call["args"], Mapping):
            out.append(f"{where}: functionCall args must be an object")
        if old and "id" in call:
            out.append(f"{where}: functionCall.id sent to an older Gemini model (they pair calls by name and order)")
    result = part.get("functionResponse")
    if isinstance(result, Mapping):
        if role != "user":
            out.append(f"{where}: functionResponse in a {role} turn")
        if not isinstance(result.get("name"), str):
            out.append(f"{where}: functionResponse without a name")
        if not isinstance(result.get("response"), Mapping):
            out.append(f"{where}: functionResponse.response must be an object")
        if old and "id" in result:
            out.append(f"{where}: functionResponse.id sent to an older Gemini model")
    if "text" in part and not isinstance(part["text"], str):
        out.append(f"{where}: text must be a string")
    return out


def _gemini_answers(calls: list[Mapping[str, Any]], following: Any, where: str) -> list[str]:
    if not isinstance(following, Mapping) or following.get("role") != "user":
        return [f"{where}: function calls must be answered by the next (user) turn"]
    results = [p["functionResponse"] for p in following.get("parts") or []
               if isinstance(p, Mapping) and isinstance(p.get("functionResponse"), Mapping)]
    if len(results) != len(calls):
        return [f"{where}: {len(results)} functionResponse part(s) for {len(calls)} function call(s) "
                "(one per call)"]
    out: list[str] = []
    if sorted(str(c.get("name")) for c in calls) != sorted(str(r.get("name")) for r in results):
        out.append(f"{where}: functionResponse names do not match the calls")
    ids = [c.get("id") for c in calls if "id" in c]
    if ids and sorted(map(str, ids)) != sorted(str(r.get("id")) for r in results):
        out.append(f"{where}: functionResponse ids do not match the call ids")
    return out


def _gemini_tools(tools: Any) -> list[str]:
    if tools is None:
        return []
    if not isinstance(tools, list):
        return ["tools must be a list"]
    out: list[str] = []
    for index, tool in enumerate(tools):
        declarations = tool.get("functionDeclarations") if isinstance(tool, Mapping) else None
        for n, decl in enumerate(declarations or []):
            where = f"tools[{index}].functionDeclarations[{n}]"
            name = decl.get("name") if isinstance(decl, Mapping) else None
            if not isinstance(name, str) or not _GEMINI_NAME.fullmatch(name):
                out.append(f"{where}: invalid function name {name!r}")
            if isinstance(decl, Mapping) and "parameters" in decl and "parametersJsonSchema" in decl:
                out.append(f"{where}: parameters and parametersJsonSchema are exclusive")
    return out


# ------------------------------------------------------------------------------------------ Bedrock


def bedrock(body: Mapping[str, Any]) -> list[str]:
    out: list[str] = [f"unknown request field {k!r}" for k in body if k not in _BEDROCK_TOP]
    inference = body.get("inferenceConfig")
    if isinstance(inference, Mapping):
        out += [f"unknown inferenceConfig field {k!r}" for k in inference if k not in _BEDROCK_INFERENCE]
    for index, block in enumerate(body.get("system") or []):
        if not isinstance(block, Mapping) or len(block) != 1 or next(iter(block)) not in ("text", "cachePoint",
                                                                                          "guardContent"):
            out.append(f"system[{index}]: not a text, cachePoint or guardContent block")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return [*out, "messages must be a non-empty list"]
    uses_tools = False
    previous_calls: dict[str, bool] = {}
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        if not isinstance(message, Mapping):
            out.append(f"{where}: not an object")
            continue
        role = message.get("role")
        if role not in ("user", "assistant"):
            out.append(f"{where}: role {role!r}")
        if index == 0 and role != "user":
            out.append(f"{where}: the conversation must start with a user message")
        if index > 0 and isinstance(messages[index - 1], Mapping) and messages[index - 1].get("role") == role:
            out.append(f"{where}: two {role} messages in a row (Converse wants alternating roles)")
        content = message.get("content")
        if not isinstance(content, list) or not content:
            out.append(f"{where}: content must be a non-empty list")
            continue
        calls: dict[str, bool] = {}
        for n, block in enumerate(content):
            out += _bedrock_block(block, f"{where}.content[{n}]", role)
            if not isinstance(block, Mapping):
                continue
            use = block.get("toolUse")
            if isinstance(use, Mapping):
                uses_tools = True
                calls[str(use.get("toolUseId"))] = False
            result = block.get("toolResult")
            if isinstance(result, Mapping):
                uses_tools = True
                tool_id = str(result.get("toolUseId"))
                if tool_id not in previous_calls:
                    out.append(f"{where}.content[{n}]: toolResult {tool_id!r} answers no toolUse of the "
                               "message before it")
                elif previous_calls[tool_id]:
                    out.append(f"{where}.content[{n}]: a second toolResult for {tool_id!r}")
                else:
                    previous_calls[tool_id] = True
        unanswered = [k for k, done in previous_calls.items() if not done]
        if unanswered and index > 0:
            out.append(f"{where}: toolUse {unanswered[0]!r} of the message before is not answered here")
        previous_calls = calls
    if uses_tools and not isinstance(body.get("toolConfig"), Mapping):
        out.append("toolConfig must be given when messages hold toolUse or toolResult blocks")
    out += _bedrock_tools(body.get("toolConfig"))
    return out


def _bedrock_block(block: Any, where: str, role: Any) -> list[str]:
    if not isinstance(block, Mapping) or len(block) != 1:
        return [f"{where}: a content block holds exactly one kind"]
    kind, value = next(iter(block.items()))
    if kind not in _BEDROCK_BLOCKS:
        return [f"{where}: unknown content block {kind!r}"]
    out: list[str] = []
    if kind == "text" and (not isinstance(value, str) or not value.strip()):
        out.append(f"{where}: text blocks must not be blank")
    if kind == "toolUse":
        tool_id = value.get("toolUseId") if isinstance(value, Mapping) else None
        if role != "assistant":
            out.append(f"{where}: toolUse in a {role} message")
        if not isinstance(tool_id, str) or not _BEDROCK_ID.fullmatch(tool_id):
            out.append(f"{where}: toolUseId {tool_id!r} is not 1-64 of [a-zA-Z0-9_-]")
        if not isinstance(value, Mapping) or not isinstance(value.get("input"), Mapping):
            out.append(f"{where}: toolUse input must be an object")
    if kind == "toolResult":
        if role != "user":
            out.append(f"{where}: toolResult in a {role} message")
        tool_id = value.get("toolUseId") if isinstance(value, Mapping) else None
        if not isinstance(tool_id, str) or not _BEDROCK_ID.fullmatch(tool_id):
            out.append(f"{where}: toolUseId {tool_id!r} is not 1-64 of [a-zA-Z0-9_-]")
        content = value.get("content") if isinstance(value, Mapping) else None
        if not isinstance(content, list) or not content:
            out.append(f"{where}: toolResult content must be a non-empty list")
        if isinstance(value, Mapping) and value.get("status") not in (None, "success", "error"):
            out.append(f"{where}: toolResult status must be success or error")
    if kind == "image":
        source = value.get("source") if isinstance(value, Mapping) else None
        if not isinstance(value, Mapping) or value.get("format") not in _IMAGE_FORMATS:
            out.append(f"{where}: image format must be png, jpeg, gif or webp")
        if not isinstance(source, Mapping) or not isinstance(source.get("bytes"), str):
            out.append(f"{where}: image source must be bytes")
    if kind == "reasoningContent" and role != "assistant":
        out.append(f"{where}: reasoningContent in a {role} message")
    return out


def _bedrock_tools(config: Any) -> list[str]:
    if not isinstance(config, Mapping):
        return []
    tools = config.get("tools")
    if not isinstance(tools, list) or not tools:
        return ["toolConfig.tools must be a non-empty list"]
    out: list[str] = []
    for index, tool in enumerate(tools):
        spec = tool.get("toolSpec") if isinstance(tool, Mapping) else None
        if spec is None:
            if not (isinstance(tool, Mapping) and ("cachePoint" in tool or "systemTool" in tool)):
                out.append(f"toolConfig.tools[{index}]: neither a toolSpec nor a cachePoint")
            continue
        name = spec.get("name") if isinstance(spec, Mapping) else None
        if not isinstance(name, str) or not re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", name):
            out.append(f"toolConfig.tools[{index}]: tool name {name!r} is not 1-64 of [a-zA-Z0-9_-]")
        schema = spec.get("inputSchema") if isinstance(spec, Mapping) else None
        if not isinstance(schema, Mapping) or not isinstance(schema.get("json"), Mapping):
            out.append(f"toolConfig.tools[{index}]: inputSchema.json must be an object")
    return out


_CHECKERS = {"chat": _chat, "responses": _responses, "anthropic": _anthropic, "bedrock": bedrock}

__all__ = ["check_request"]
