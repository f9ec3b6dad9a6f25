"""Cross-API translation rules, in one place: an IR history made legal for a target wire API.

A history recorded on one API and sent to another must follow the rules the target enforces (see
docs/codecs.md, "Cross-API translation"). ``conform(messages, tools, api)`` applies them before the
target's codec encodes, and says what changed or could not cross (``Conformed.losses``, one line
each, ``messages[i]...``-located like the codecs' own losses):

- parts that cannot cross are dropped: another provider's reasoning (an Anthropic thinking signature,
  Responses ``encrypted_content``, redacted thinking), another format's opaque blocks, media the target
  cannot take (URLs where only bytes travel; media outside user turns where that is refused), fields
  only the source format knows (``cache_control``, citations, ...), provider-hosted tools;
- system placement: a system or developer message after the conversation started is moved into the
  one top-level system prompt (APIs with ``system="top"``);
- tool calls and results pair up: a result whose call is not in the assistant message before it is
  dropped; a call that got no result gets a placeholder result (every API rejects an unanswered call
  followed by more conversation);
- tool results travel in the user turn right after the calls, results first, parallel results
  together (``results_in_user_turn``); consecutive same-role messages are merged
  (``merge_same_role``); the first non-system message is a user message (``first_user``); empty text
  and empty messages are dropped (``non_empty``);
- tool-call ids are re-mapped consistently (a call and its result get the same new id) to the
  target's pattern and length (``fit_id``): ids already valid are kept as they are.

The codecs of every API use this table (``RULES``) and these functions; none re-implements a rule.
Request parameters cross through ``translate_params`` (a neutral set: max_tokens, temperature, top_p,
top_k, stop, seed, tool_choice; the rest of a foreign API's parameters are dropped and listed).

A same-API play does NOT go through here: the recorded bodies are already legal for their own API,
and are sent byte for byte (``codecs.encode_request``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from replaykit.core.trace.codecs._common import JSONDict, hints, opaque_loss, reasoning_losses
from replaykit.core.trace.ir import (
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

#: the text of a placeholder result for a call the history never answered
NO_RESULT = "[replaykit] no result was recorded for this tool call"
#: the user message put first when a history starts with the assistant (APIs with ``first_user``)
OPENING_USER = "[replaykit] (the recorded conversation continues)"
#: max_tokens sent when the target requires one and the recording set none
DEFAULT_MAX_TOKENS = 4096


@dataclass(frozen=True)
class WireRules:
    """What one wire API enforces on a history (see the module doc)."""

    api: str  # the API name (``LLMRequest.api``)
    fmt: str  # the codec's ``provider_details`` namespace (its own hints)
    label: str
    system: Literal["inline", "top"] = "inline"
    results_in_user_turn: bool = False
    results_first: bool = False  # in that user turn, the results come before any other content
    merge_same_role: bool = False
    first_user: bool = False
    non_empty: bool = False
    id_pattern: str | None = None  # a tool-call id must fullmatch this
    id_max: int | None = None  # ... and be at most this long
    media_url: bool = True  # media by URL accepted (else inline bytes only)
    media_roles: frozenset[str] = frozenset({"user", "tool"})  # roles whose messages may carry media
    required_params: dict[str, Any] = field(default_factory=dict)  # neutral name -> default


_SAFE_ID = r"[A-Za-z0-9_-]+"

RULES: dict[str, WireRules] = {
    "openai-chat": WireRules("openai-chat", "openai-chat", "OpenAI Chat Completions", id_max=40),
    "openai-responses": WireRules("openai-responses", "openai-responses", "OpenAI Responses", id_max=64),
    "anthropic-messages": WireRules(
        "anthropic-messages", "anthropic", "Anthropic Messages", system="top", results_in_user_turn=True,
        results_first=True, merge_same_role=True, first_user=True, non_empty=True, id_pattern=_SAFE_ID,
        required_params={"max_tokens": DEFAULT_MAX_TOKENS}),
    "google-gemini": WireRules(
        "google-gemini", "google-gemini", "Google Gemini", system="top", results_in_user_turn=True,
        results_first=True, merge_same_role=True, first_user=True, non_empty=True, id_pattern=_SAFE_ID,
        id_max=64, media_roles=frozenset({"user", "tool", "assistant"})),
    "bedrock-converse": WireRules(
        "bedrock-converse", "bedrock-converse", "AWS Bedrock Converse", system="top", results_in_user_turn=True,
        results_first=True, merge_same_role=True, first_user=True, non_empty=True, id_pattern=_SAFE_ID,
        id_max=64, media_url=False, media_roles=frozenset({"user", "tool", "assistant"})),
}


def rules_for(api: str) -> WireRules:
    from replaykit.core.errors import CodecError

    rules = RULES.get("anthropic-messages" if api == "anthropic" else api)
    if rules is None:
        raise CodecError(f"no translation rules for API {api!r} (known: {', '.join(RULES)})")
    return rules


@dataclass
class Conformed:
    messages: list[Message]
    tools: list[ToolSpec] | None
    losses: list[str] = field(default_factory=list)
    id_map: dict[str, str] = field(default_factory=dict)  # original id -> id sent


# --------------------------------------------------------------------------------------------- ids


def fit_id(call_id: str, rules: WireRules) -> str:
    """``call_id`` as the target accepts it: unchanged when valid, else its allowed characters (others
    as ``_``) cut to fit, plus a hash of the original, so two ids never map to one and the mapping is
    the same wherever the id appears (a call and its result)."""
    if valid_id(call_id, rules):
        return call_id
    digest = hashlib.sha256(call_id.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    clean = re.sub(r"[^A-Za-z0-9_-]", "_", call_id) if rules.id_pattern else call_id
    limit = rules.id_max or 64
    head = clean[: max(0, limit - len(digest) - 1)]
    return f"{head}_{digest}" if head else f"call_{digest}"[:limit]


def valid_id(call_id: str, rules: WireRules) -> bool:
    if not call_id:
        return False
    if rules.id_max is not None and len(call_id) > rules.id_max:
        return False
    return rules.id_pattern is None or re.fullmatch(rules.id_pattern, call_id) is not None


# ------------------------------------------------------------------------------------------ parts


def _own(part: Any, rules: WireRules) -> bool:
    return bool(hints(part, rules.fmt)) or getattr(part, "provider", None) == rules.fmt


def _foreign_fields(obj: Any, rules: WireRules, where: str, losses: list[str]) -> None:
    """Fields only another format knows (kept in its hints as ``extra``): named as dropped."""
    details = getattr(obj, "provider_details", None)
    if not isinstance(details, dict):
        return
    for fmt, hint in details.items():
        if fmt == rules.fmt or not isinstance(hint, dict):
            continue
        extra = hint.get("extra")
        if isinstance(extra, dict):
            names = sorted(k for k, v in extra.items() if v not in (None, [], {}, ""))
            if names:
                losses.append(f"{where}: {fmt} field{'s' if len(names) > 1 else ''} {', '.join(names)} "
                              f"dropped (no {rules.label} equivalent)")


def _keep_part(part: Part, role: str, rules: WireRules, where: str, losses: list[str]) -> Part | None:
    """The part as it may cross into the target (None: dropped, with the loss named)."""
    if isinstance(part, ReasoningPart):
        if _own(part, rules):
            return part
        if part.text:
            losses.append(f"{where}: reasoning text dropped ({rules.label} only accepts its own reasoning)")
        losses.extend(reasoning_losses(part, where, rules.label))
        return None
    if isinstance(part, OpaquePart):
        if part.format == rules.fmt:
            return part
        losses.append(opaque_loss(part, where, rules.label))
        return None
    _foreign_fields(part, rules, where, losses)
    if isinstance(part, TextPart) and rules.non_empty and not part.text:
        return None
    if isinstance(part, MediaPart):
        if role not in rules.media_roles:
            losses.append(f"{where}: {part.media_type} media in a {role} message dropped ({rules.label} "
                          "takes media only from the user)")
            return None
        if part.data is None and not rules.media_url:
            losses.append(f"{where}: {part.media_type} media by URL dropped ({rules.label} takes inline bytes only)")
            return None
    if isinstance(part, ToolResultPart) and part.blocks:
        blocks = [b for i, b in enumerate(part.blocks)
                  if _keep_part(b, "tool", rules, f"{where}.blocks[{i}]", losses) is not None]
        if len(blocks) != len(part.blocks):
            return part.model_copy(update={"blocks": blocks})
    return part


def _clean_tools(tools: Sequence[ToolSpec] | None, rules: WireRules, losses: list[str]) -> list[ToolSpec] | None:
    if tools is None:
        return None
    out: list[ToolSpec] = []
    for index, spec in enumerate(tools):
        details = spec.provider_details or {}
        foreign_raw = [fmt for fmt, hint in details.items()
                       if fmt != rules.fmt and isinstance(hint, dict) and "raw" in hint]
        if foreign_raw and not hints(spec, rules.fmt):
            losses.append(f"tools[{index}]: provider-hosted tool {spec.name!r} ({foreign_raw[0]}) dropped "
                          f"(no {rules.label} equivalent)")
            continue
        _foreign_fields(spec, rules, f"tools[{index}]", losses)
        out.append(spec)
    return out


# ---------------------------------------------------------------------------------------- history


def conform(messages: Sequence[Message], tools: Sequence[ToolSpec] | None, api: str) -> Conformed:
    """``messages`` and ``tools`` made legal for ``api`` (see the module doc), with every change listed."""
    rules = rules_for(api)
    losses: list[str] = []
    tools_out = _clean_tools(tools, rules, losses)
    # 1. parts that cannot cross; message fields only the source format knows
    work: list[Message] = []
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        _foreign_fields(message, rules, where, losses)
        parts = [kept for n, part in enumerate(message.parts)
                 if (kept := _keep_part(part, message.role, rules, f"{where}.parts[{n}]", losses)) is not None]
        same = len(parts) == len(message.parts) and all(a is b for a, b in zip(parts, message.parts, strict=True))
        # another format's hints on an unchanged message are harmless (each encoder reads only its own);
        # a changed message drops its own too (its content shape no longer holds)
        work.append(message if same else message.model_copy(update={"parts": parts, "provider_details": None}))
    # 2. system placement
    if rules.system == "top":
        work = _systems_first(work, rules, losses)
    # 3. ids, then pairing of calls and results
    id_map: dict[str, str] = {}
    work = _map_ids(work, rules, id_map, losses)
    work = _pair_results(work, losses)
    # 4. turn structure
    if rules.results_in_user_turn:
        work = _results_as_user(work)
    if rules.non_empty:
        nonempty: list[Message] = []
        for message in work:
            if message.parts or message.role == "system":
                nonempty.append(message)
            else:
                losses.append(f"{message.role} message left empty by the translation dropped")
        work = nonempty
    if rules.merge_same_role:
        work = _merge_same_role(work)
    if rules.results_first:
        work = [_results_first(m) for m in work]
    if rules.first_user:
        first = next((i for i, m in enumerate(work) if m.role not in ("system", "developer")), None)
        if first is not None and work[first].role != "user":
            work.insert(first, Message(role="user", parts=[TextPart(text=OPENING_USER)]))
            losses.append(f"a user message was put first ({rules.label} requires the conversation to start "
                          f"with the user): {OPENING_USER!r}")
    return Conformed(work, tools_out, losses, id_map)


def _systems_first(messages: list[Message], rules: WireRules, losses: list[str]) -> list[Message]:
    systems: list[Message] = []
    rest: list[Message] = []
    for index, message in enumerate(messages):
        if message.role in ("system", "developer"):
            if rest:
                losses.append(f"messages[{index}]: {message.role} message moved into the top-level system "
                              f"prompt ({rules.label} has one system prompt, before the conversation)")
            systems.append(message)
        else:
            rest.append(message)
    return [*systems, *rest]


def _map_ids(messages: list[Message], rules: WireRules, id_map: dict[str, str], losses: list[str]) -> list[Message]:
    """Every call and result id fitted to the target; an empty id gets one by position (its results,
    empty too, are matched in order)."""
    out: list[Message] = []
    unnamed: list[str] = []  # generated ids of the last assistant message's id-less calls, not yet answered
    counter = 0
    for message in messages:
        parts: list[Part] = []
        changed = False
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                if not part.id:
                    counter += 1
                    new = f"call_rk{counter}"
                    unnamed.append(new)
                else:
                    new = id_map.get(part.id) or fit_id(part.id, rules)
                if new != part.id:
                    id_map.setdefault(part.id, new)
                    part = part.model_copy(update={"id": new})
                    changed = True
            elif isinstance(part, ToolResultPart):
                if not part.tool_call_id and unnamed:
                    new = unnamed.pop(0)
                else:
                    new = id_map.get(part.tool_call_id) or fit_id(part.tool_call_id, rules)
                if new != part.tool_call_id:
                    part = part.model_copy(update={"tool_call_id": new})
                    changed = True
            parts.append(part)
        out.append(message.model_copy(update={"parts": parts, "provider_details": None}) if changed else message)
    remapped = {k: v for k, v in id_map.items() if k}
    if remapped:
        sample = next(iter(remapped.items()))
        losses.append(f"{len(remapped)} tool-call id{'s' if len(remapped) > 1 else ''} re-mapped to the "
                      f"{rules.label} pattern (e.g. {sample[0][:60]!r} -> {sample[1]!r})")
    if counter:
        losses.append(f"{counter} tool call{'s' if counter > 1 else ''} without an id given one by position")
    return out


def _pair_results(messages: list[Message], losses: list[str]) -> list[Message]:
    """Results answer the calls of the assistant message before them; orphans are dropped, unanswered
    calls get a placeholder result (when the conversation goes on after them)."""
    out: list[Message] = []
    open_calls: dict[str, ToolCallPart] = {}
    answered: set[str] = set()

    def close_open() -> None:
        missing = [c for cid, c in open_calls.items() if cid not in answered]
        if missing:
            results = [ToolResultPart(tool_call_id=c.id, name=c.name, content=NO_RESULT, is_error=True)
                       for c in missing]
            out.append(Message(role="tool", parts=list(results)))
            losses.append(f"{len(missing)} tool call{'s' if len(missing) > 1 else ''} without a recorded result "
                          f"({', '.join(repr(c.name) for c in missing[:3])}) answered with a placeholder")
        open_calls.clear()
        answered.clear()

    for index, message in enumerate(messages):
        results = [p for p in message.parts if isinstance(p, ToolResultPart)]
        if message.role == "assistant":
            if open_calls:
                close_open()
            out.append(message)
            open_calls.update({c.id: c for c in message.tool_calls})
            continue
        if results:
            parts: list[Part] = []
            for part in message.parts:
                if isinstance(part, ToolResultPart):
                    if part.tool_call_id not in open_calls or part.tool_call_id in answered:
                        losses.append(f"messages[{index}]: result of tool call {part.tool_call_id!r} dropped "
                                      "(no matching call in the assistant message before it)")
                        continue
                    answered.add(part.tool_call_id)
                parts.append(part)
            others = [p for p in parts if not isinstance(p, ToolResultPart)]
            missing = [c for cid, c in open_calls.items() if cid not in answered]
            if others and missing:
                # the user goes on in this very message: the calls it left unanswered are answered now,
                # beside its results, before its own content
                parts = [p for p in parts if isinstance(p, ToolResultPart)] + [
                    ToolResultPart(tool_call_id=c.id, name=c.name, content=NO_RESULT, is_error=True)
                    for c in missing] + others
                losses.append(f"{len(missing)} tool call{'s' if len(missing) > 1 else ''} without a recorded "
                              f"result ({', '.join(repr(c.name) for c in missing[:3])}) answered with a placeholder")
            if others:
                open_calls.clear()
                answered.clear()
            if not parts:
                continue
            if parts != message.parts:
                message = message.model_copy(update={"parts": parts, "provider_details": None})
            out.append(message)
            continue
        if open_calls and message.role in ("user", "system", "developer"):
            close_open()
        out.append(message)
    if open_calls and out and out[-1].role != "assistant":
        close_open()
    return out


def _results_as_user(messages: list[Message]) -> list[Message]:
    return [Message(role="user", parts=list(m.parts)) if m.role == "tool" else m for m in messages]


def _merge_same_role(messages: list[Message]) -> list[Message]:
    out: list[Message] = []
    for message in messages:
        if out and out[-1].role == message.role and message.role != "system":
            previous = out[-1]
            out[-1] = Message(role=previous.role, parts=[*previous.parts, *message.parts])
        else:
            out.append(message)
    return out


def _results_first(message: Message) -> Message:
    if message.role != "user":
        return message
    results = [p for p in message.parts if isinstance(p, ToolResultPart)]
    if not results or message.parts[: len(results)] == results:
        return message
    others = [p for p in message.parts if not isinstance(p, ToolResultPart)]
    return Message(role="user", parts=[*results, *others])


# ------------------------------------------------------------------------------------------ params

ToolChoice = Any  # neutral: "auto" | "none" | "required" | {"name": str}


def _chat_choice_in(value: Any) -> ToolChoice:
    if value in ("auto", "none", "required"):
        return value
    if isinstance(value, dict) and isinstance((value.get("function") or {}).get("name"), str):
        return {"name": value["function"]["name"]}
    return None


def _chat_choice_out(choice: ToolChoice) -> Any:
    return {"type": "function", "function": {"name": choice["name"]}} if isinstance(choice, dict) else choice


def _responses_choice_in(value: Any) -> ToolChoice:
    if value in ("auto", "none", "required"):
        return value
    if isinstance(value, dict) and value.get("type") == "function" and isinstance(value.get("name"), str):
        return {"name": value["name"]}
    return None


def _responses_choice_out(choice: ToolChoice) -> Any:
    return {"type": "function", "name": choice["name"]} if isinstance(choice, dict) else choice


_ANTHROPIC_CHOICE = {"auto": "auto", "none": "none", "any": "required"}


def _anthropic_choice_in(value: Any) -> ToolChoice:
    if isinstance(value, dict):
        if value.get("type") == "tool" and isinstance(value.get("name"), str):
            return {"name": value["name"]}
        return _ANTHROPIC_CHOICE.get(str(value.get("type")))
    return None


def _anthropic_choice_out(choice: ToolChoice) -> Any:
    if isinstance(choice, dict):
        return {"type": "tool", "name": choice["name"]}
    return {"type": {"auto": "auto", "none": "none", "required": "any"}[choice]}


def _gemini_choice_in(value: Any) -> ToolChoice:
    if not isinstance(value, dict):
        return None
    mode = str(value.get("mode", "")).upper()
    names = value.get("allowedFunctionNames")
    if mode == "ANY" and isinstance(names, list) and len(names) == 1:
        return {"name": names[0]}
    return {"AUTO": "auto", "NONE": "none", "ANY": "required"}.get(mode)


def _gemini_choice_out(choice: ToolChoice) -> Any:
    if isinstance(choice, dict):
        return {"mode": "ANY", "allowedFunctionNames": [choice["name"]]}
    return {"mode": {"auto": "AUTO", "none": "NONE", "required": "ANY"}[choice]}


def _bedrock_choice_in(value: Any) -> ToolChoice:
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("tool"), dict) and isinstance(value["tool"].get("name"), str):
        return {"name": value["tool"]["name"]}
    return "auto" if "auto" in value else "required" if "any" in value else None


def _bedrock_choice_out(choice: ToolChoice) -> Any:
    if isinstance(choice, dict):
        return {"tool": {"name": choice["name"]}}
    if choice == "none":
        return None  # Converse has no "none": the tools are simply offered; the caller drops toolChoice
    return {"auto": {}} if choice == "auto" else {"any": {}}


@dataclass(frozen=True)
class ParamTable:
    """Where an API keeps each neutral parameter (dotted paths into the body; the first is written)."""

    keys: dict[str, tuple[str, ...]]
    choice_in: Callable[[Any], ToolChoice]
    choice_out: Callable[[ToolChoice], Any]


PARAMS: dict[str, ParamTable] = {
    "openai-chat": ParamTable(
        {"max_tokens": ("max_tokens", "max_completion_tokens"), "temperature": ("temperature",),
         "top_p": ("top_p",), "stop": ("stop",), "seed": ("seed",), "tool_choice": ("tool_choice",),
         "parallel_tool_calls": ("parallel_tool_calls",), "reasoning_effort": ("reasoning_effort",)},
        _chat_choice_in, _chat_choice_out),
    "openai-responses": ParamTable(
        {"max_tokens": ("max_output_tokens",), "temperature": ("temperature",), "top_p": ("top_p",),
         "tool_choice": ("tool_choice",), "parallel_tool_calls": ("parallel_tool_calls",),
         "reasoning_effort": ("reasoning.effort",)},
        _responses_choice_in, _responses_choice_out),
    "anthropic-messages": ParamTable(
        {"max_tokens": ("max_tokens",), "temperature": ("temperature",), "top_p": ("top_p",),
         "top_k": ("top_k",), "stop": ("stop_sequences",), "tool_choice": ("tool_choice",)},
        _anthropic_choice_in, _anthropic_choice_out),
    "google-gemini": ParamTable(
        {"max_tokens": ("generationConfig.maxOutputTokens",), "temperature": ("generationConfig.temperature",),
         "top_p": ("generationConfig.topP",), "top_k": ("generationConfig.topK",),
         "stop": ("generationConfig.stopSequences",), "seed": ("generationConfig.seed",),
         "tool_choice": ("toolConfig.functionCallingConfig",)},
        _gemini_choice_in, _gemini_choice_out),
    "bedrock-converse": ParamTable(
        {"max_tokens": ("inferenceConfig.maxTokens",), "temperature": ("inferenceConfig.temperature",),
         "top_p": ("inferenceConfig.topP",), "stop": ("inferenceConfig.stopSequences",),
         "tool_choice": ("toolConfig.toolChoice",)},
        _bedrock_choice_in, _bedrock_choice_out),
}


def _get(body: JSONDict, path: str) -> tuple[bool, Any]:
    node: Any = body
    for key in path.split("."):
        if not isinstance(node, dict) or key not in node:
            return False, None
        node = node[key]
    return True, node


def _set(body: JSONDict, path: str, value: Any) -> None:
    keys = path.split(".")
    node = body
    for key in keys[:-1]:
        node = node.setdefault(key, {})
    node[keys[-1]] = value


def _leaves(body: JSONDict, nested: set[str], prefix: str = "") -> list[str]:
    """The parameter paths of ``body``, descending into the objects some known path goes into."""
    out: list[str] = []
    for key, value in body.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value and path in nested:
            out.extend(_leaves(value, nested, f"{path}."))
        else:
            out.append(path)
    return out


def translate_params(source: str, target: str, params: JSONDict) -> tuple[JSONDict, list[str]]:
    """``params`` of an API-``source`` request as ``target`` takes them: the neutral parameters moved to
    the target's keys; every other parameter dropped and listed; a parameter the target requires set to
    its default (listed too)."""
    rules = rules_for(target)
    src = PARAMS.get("anthropic-messages" if source == "anthropic" else source)
    dst = PARAMS[rules.api]
    losses: list[str] = []
    neutral: dict[str, Any] = {}
    used: set[str] = set()
    if src is not None:
        for name, paths in src.keys.items():
            for path in paths:
                found, value = _get(params, path)
                if found:
                    used.add(path)
                    if name not in neutral and value is not None:
                        neutral[name] = value
    nested = {p.rsplit(".", 1)[0] for paths in (src.keys.values() if src else ()) for p in paths if "." in p}
    nested |= {p.split(".")[0] for p in nested}
    for path in _leaves(params, nested):
        if path not in used and not any(path.startswith(f"{u}.") for u in used):
            losses.append(f"parameter {path!r} dropped (no {rules.label} equivalent)")
    if "tool_choice" in neutral:
        assert src is not None
        choice = src.choice_in(neutral.pop("tool_choice"))
        if choice is None:
            losses.append(f"tool_choice dropped (not expressible in {rules.label})")
        else:
            neutral["tool_choice"] = choice
    if isinstance(neutral.get("stop"), str):
        neutral["stop"] = [neutral["stop"]]
    out: JSONDict = {}
    for name, value in neutral.items():
        if name not in dst.keys:
            losses.append(f"parameter {name!r} dropped (no {rules.label} equivalent)")
            continue
        if name == "tool_choice":
            value = dst.choice_out(value)
            if value is None:
                losses.append(f"tool_choice 'none' dropped (no {rules.label} equivalent)")
                continue
        _set(out, dst.keys[name][0], value)
    for name, default in rules.required_params.items():
        if name not in neutral:
            _set(out, dst.keys[name][0], default)
            losses.append(f"{name} set to {default} ({rules.label} requires it; the recording set none)")
    return out, losses
