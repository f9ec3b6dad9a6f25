"""What a real provider refuses: the scripted server checks each request body against its API's rules
and answers a violation as the provider would (HTTP 400 in its error shape), recording what it found.

Stdlib only. ``violations(api, body, model)`` returns one line per broken rule (empty: the request is
legal). Rules, as the providers document and enforce them (docs/providers.md):

Google Gemini (``gemini``): ``contents`` is a non-empty list of ``user`` / ``model`` turns that starts
with ``user``; no ``system`` role (the system prompt is ``systemInstruction``); each part holds one kind of
data; every model turn with function calls is followed by a user turn with exactly one
``functionResponse`` per call (same names, the call's ``id`` when the call had one); a
``functionResponse.response`` is an object; older models (``gemini-1`` / ``gemini-2``) take no call ids;
Gemini 3 wants a ``thoughtSignature`` on the first call of every model turn with calls; function names
match ``[A-Za-z_][A-Za-z0-9_.-]{0,63}``; no unknown request or generationConfig keys.

AWS Bedrock Converse (``bedrock``): ``messages`` non-empty, starting with ``user``, roles alternating;
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


def violations(api: str, body: Any, model: str = "") -> list[str]:
    """The rules ``body`` breaks for ``api`` (``gemini`` or ``bedrock``; others: not checked here)."""
    if not isinstance(body, Mapping):
        return ["request body is not a JSON object"]
    if api == "gemini":
        return gemini(body, model)
    if api == "bedrock":
        return bedrock(body)
    return []


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
