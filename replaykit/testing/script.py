"""What a scripted LLM server answers: replies, faults, and policies that pick a reply per request.

Stdlib only. A policy sees a provider-neutral summary of the request (:class:`ScriptRequest`) so one script
drives an agent over OpenAI Chat Completions, OpenAI Responses or Anthropic Messages alike.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Api = Literal["chat", "responses", "anthropic", "gemini", "bedrock"]
FaultKind = Literal["429", "500", "503", "401", "529", "stall", "length", "malformed", "stream_error"]
FAULT_KINDS: tuple[str, ...] = ("429", "500", "503", "401", "529", "stall", "length", "malformed", "stream_error")


@dataclass(frozen=True)
class ToolCall:
    """One tool call the scripted model makes. ``arguments`` may be a dict or a raw JSON string."""

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(dict(self.arguments), ensure_ascii=False)


@dataclass(frozen=True)
class Reply:
    """One scripted answer, or a fault to inject instead of (or part way through) it.

    ``fault``: "429" (with ``retry_after`` seconds), "500", "503", "401", "529" (Anthropic's overloaded;
    HTTP errors before any body: for Gemini RESOURCE_EXHAUSTED / INTERNAL / UNAVAILABLE, for Bedrock
    ThrottlingException / InternalServerException / ServiceUnavailableException), "stream_error" (a 200
    stream that sends ``stall_after_chunks`` frames, then the API's in-stream error: Anthropic
    ``overloaded_error``, a Chat ``error`` chunk, a Responses ``error`` event, a Gemini ``{"error": ...}``
    chunk, a Bedrock ``modelStreamErrorException`` frame),
    "stall" (headers and ``stall_after_chunks`` stream chunks, then ``stall_seconds`` of silence, then the
    connection is closed), "length" (the answer is cut and finish_reason is "length"), "malformed"
    (a body that is not valid JSON). ``frame_gap``: seconds between the frames of a streamed answer
    (what a real provider's token pacing looks like to a recorder).
    """

    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning: str | None = None
    fault: FaultKind | None = None
    retry_after: float = 1.0
    stall_seconds: float = 30.0
    stall_after_chunks: int = 2
    usage: Mapping[str, int] | None = None
    frame_gap: float = 0.0

    def __post_init__(self) -> None:
        if self.fault is not None and self.fault not in FAULT_KINDS:
            raise ValueError(f"unknown fault {self.fault!r}; expected one of {', '.join(FAULT_KINDS)}")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Reply:
        """Build a reply from its JSON form (used by the command line's ``--script`` file)."""
        if not isinstance(data, Mapping):
            raise ValueError(f"a scripted reply must be a JSON object, got {type(data).__name__}")
        calls = tuple(
            ToolCall(name=str(c["name"]), arguments=c.get("arguments", {}), id=c.get("id"))
            for c in data.get("tool_calls") or ()
        )
        known = {"text", "reasoning", "fault", "retry_after", "stall_seconds", "stall_after_chunks", "usage",
                 "frame_gap"}
        unknown = set(data) - known - {"tool_calls"}
        if unknown:
            raise ValueError(f"unknown reply keys: {', '.join(sorted(unknown))}")
        return cls(tool_calls=calls, **{k: data[k] for k in known if k in data})


def text(content: str) -> Reply:
    return Reply(text=content)


def call(name: str, arguments: Mapping[str, Any] | str | None = None, id: str | None = None) -> Reply:
    """A reply that makes one tool call."""
    return Reply(tool_calls=(ToolCall(name, arguments if arguments is not None else {}, id),))


def calls(*tool_calls: ToolCall | tuple[str, Mapping[str, Any]]) -> Reply:
    """A reply with several tool calls in one assistant message (parallel tool calls)."""
    built = tuple(c if isinstance(c, ToolCall) else ToolCall(c[0], c[1]) for c in tool_calls)
    return Reply(tool_calls=built)


def fault(kind: FaultKind, **options: Any) -> Reply:
    return Reply(fault=kind, **options)


@dataclass(frozen=True)
class ScriptRequest:
    """A provider-neutral view of one LLM request, for policies to decide on."""

    api: Api
    body: Mapping[str, Any]
    index: int  # 0-based position among the LLM requests this server received
    model: str
    stream: bool
    tool_names: tuple[str, ...]
    user_texts: tuple[str, ...]  # every real user message's text, in order
    tool_results_since_user: int  # tool results after the last real user message
    tool_results_total: int
    system_text: str
    tool_descriptions: str = ""  # every offered tool's description (Hermes's Tool Search lists deferred tools there)

    @property
    def has_tools(self) -> bool:
        return bool(self.tool_names)

    @property
    def first_user_text(self) -> str:
        return self.user_texts[0] if self.user_texts else ""

    @property
    def last_user_text(self) -> str:
        return self.user_texts[-1] if self.user_texts else ""


Policy = Callable[[ScriptRequest], Reply]
Script = Sequence[Reply] | Policy


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(parts)
    return ""


def summarize(api: Api, body: Mapping[str, Any], index: int) -> ScriptRequest:
    """Reduce a request body of any of the three APIs to a :class:`ScriptRequest`."""
    users: list[str] = []
    since = total = 0
    system = ""
    specs = _tool_specs(api, body)
    tools = [n for n in (spec.get("name") for spec in specs) if isinstance(n, str)]
    descriptions = [d for d in (spec.get("description") for spec in specs) if isinstance(d, str)]
    if api in ("gemini", "bedrock"):
        system, users, since, total = _summarize_native(api, body)
    elif api == "chat":
        for msg in body.get("messages") or ():
            role = msg.get("role") if isinstance(msg, Mapping) else None
            if role == "user":
                users.append(_text_of(msg.get("content")))
                since = 0
            elif role == "tool":
                since += 1
                total += 1
            elif role in ("system", "developer") and not system:
                system = _text_of(msg.get("content"))
    elif api == "responses":
        system = _text_of(body.get("instructions"))
        items = body.get("input")
        if isinstance(items, str):
            items = [{"role": "user", "content": items}]
        for item in items or ():
            if not isinstance(item, Mapping):
                continue
            if item.get("type") == "function_call_output":
                since += 1
                total += 1
            elif item.get("role") == "user":
                users.append(_text_of(item.get("content")))
                since = 0
            elif item.get("role") in ("system", "developer") and not system:
                system = _text_of(item.get("content"))
    else:
        system = _text_of(body.get("system"))
        for msg in body.get("messages") or ():
            if not isinstance(msg, Mapping) or msg.get("role") != "user":
                continue
            content = msg.get("content")
            results = [p for p in content if isinstance(p, Mapping) and p.get("type") == "tool_result"] if isinstance(content, list) else []
            if results:
                since += len(results)
                total += len(results)
            else:
                users.append(_text_of(content))
                since = 0
    return ScriptRequest(
        api=api,
        body=body,
        index=index,
        model=str(body.get("model") or "scripted-model"),
        stream=bool(body.get("stream")),
        tool_names=tuple(tools),
        user_texts=tuple(users),
        tool_results_since_user=since,
        tool_results_total=total,
        system_text=system,
        tool_descriptions="\n".join(descriptions),
    )


def _tool_specs(api: Api, body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The offered tools' declarations (name, description) in any API's body shape."""
    specs: list[Any] = []
    if api == "gemini":
        for tool in body.get("tools") or ():
            if isinstance(tool, Mapping):
                specs += list(tool.get("functionDeclarations") or ())
    elif api == "bedrock":
        config = body.get("toolConfig")
        for tool in (config.get("tools") if isinstance(config, Mapping) else None) or ():
            specs.append(tool.get("toolSpec") if isinstance(tool, Mapping) else None)
    else:
        for tool in body.get("tools") or ():
            if isinstance(tool, Mapping):
                fn = tool.get("function")
                specs.append(fn if isinstance(fn, Mapping) else tool)
    return [spec for spec in specs if isinstance(spec, Mapping)]


def _summarize_native(api: Api, body: Mapping[str, Any]) -> tuple[str, list[str], int, int]:
    """(system text, user texts, tool results since the last user text, all tool results) of a Gemini
    or Bedrock body: their tool results travel in user turns, as parts / blocks."""
    if api == "gemini":
        system_value = body.get("systemInstruction")
        parts = system_value.get("parts") if isinstance(system_value, Mapping) else None
        system = _text_of(parts) if parts is not None else _text_of(system_value)
        turns, key, result_key = body.get("contents") or (), "parts", "functionResponse"
    else:
        system = _text_of(body.get("system"))
        turns, key, result_key = body.get("messages") or (), "content", "toolResult"
    users: list[str] = []
    since = total = 0
    for turn in turns:
        if not isinstance(turn, Mapping) or turn.get("role") != "user":
            continue
        items = [p for p in turn.get(key) or () if isinstance(p, Mapping)]
        results = [p for p in items if result_key in p]
        if results:
            since += len(results)
            total += len(results)
        else:
            users.append(_text_of(items))
            since = 0
    return system, users, since, total


class ReplyList:
    """Replies consumed in order, one per LLM request; after the last one, ``then`` decides (default: text).

    ``loop``: after the last reply start again from the first, so the same agent run can be made again
    and again against one server. ``on_exhausted`` is called once when the replies run out (without
    ``loop``): the command line says so on stderr instead of switching policy silently."""

    def __init__(self, replies: Iterable[Reply], then: Policy | None = None, *, loop: bool = False,
                 on_exhausted: Callable[[int], None] | None = None) -> None:
        self._replies = list(replies)
        self._then = then
        self._loop = loop and bool(self._replies)
        self._on_exhausted = on_exhausted
        self._lock = threading.Lock()
        self._next = 0
        self.rounds = 0  # how many times the whole list was given (``loop``)

    def __call__(self, request: ScriptRequest) -> Reply:
        with self._lock:
            if self._loop and self._next == len(self._replies):
                self._next = 0
                self.rounds += 1
            if self._next < len(self._replies):
                reply = self._replies[self._next]
                self._next += 1
                return reply
            first_time = self._next == len(self._replies)
            self._next += 1
        if first_time and self._on_exhausted is not None:
            self._on_exhausted(len(self._replies))
        if self._then is not None:
            return self._then(request)
        return Reply(text="(script exhausted)")


def per_turn_policy(replies: Sequence[Reply], then: Policy | None = None) -> Policy:
    """Stateless replies: every user turn gets the list from its start, the reply picked by how many
    tool results follow the last user message (a reply with n tool calls takes n results to pass, a
    text reply one). Concurrent agents, retries and a new run of the same agent all see the script
    from the top; past its end, ``then`` answers (default: a text saying so)."""
    replies = list(replies)

    def policy(req: ScriptRequest) -> Reply:
        seen = 0
        for reply in replies:
            if req.tool_results_since_user <= seen:
                return reply
            seen += max(1, len(reply.tool_calls))
        return then(req) if then is not None else Reply(text="(script exhausted)")

    return policy


Step = Reply | ToolCall | Sequence[ToolCall]


def _as_reply(step: Step) -> Reply:
    if isinstance(step, Reply):
        return step
    if isinstance(step, ToolCall):
        return Reply(tool_calls=(step,))
    return Reply(tool_calls=tuple(step))


def sequence_policy(steps: Sequence[Step], final_text: str = "Done.") -> Policy:
    """Stateless: the reply depends only on how many tool results follow the last user message.

    With k tool-result *messages* since the user spoke, the model answers with the step whose tool calls
    bring the count past k (a parallel step of n calls counts n), then ``final_text``. A request that
    offers no tools gets plain text. Because it is stateless, retries, auxiliary calls and new turns
    cannot desynchronise it.
    """
    replies = [_as_reply(s) for s in steps]

    def policy(req: ScriptRequest) -> Reply:
        if not req.has_tools:
            return Reply(text=final_text)
        seen = 0
        for reply in replies:
            if req.tool_results_since_user <= seen:
                offered = [offered_call(c, req.tool_names, req.tool_descriptions) for c in reply.tool_calls]
                missing = [c.name for c, o in zip(reply.tool_calls, offered, strict=True) if o is None]
                if missing:
                    return Reply(text=f"(tool {missing[0]} not offered) {final_text}")
                if offered == list(reply.tool_calls):
                    return reply
                return Reply(text=reply.text, tool_calls=tuple(c for c in offered if c is not None),
                             reasoning=reply.reasoning, usage=reply.usage, frame_gap=reply.frame_gap)
            seen += max(1, len(reply.tool_calls))
        return Reply(text=final_text)

    return policy


#: Hermes tools renamed between releases (0.19 -> 0.22): a scripted model calls whichever name is offered.
TOOL_RENAMES: dict[str, str] = {"todo": "todo_list", "todo_list": "todo"}
#: Hermes 0.22's Tool Search bridge: deferred tools are invoked as ``tool_call({"calls": [{name, arguments}]})``.
BRIDGE_TOOL = "tool_call"


def offered_call(call: ToolCall, offered: Sequence[str], catalog: str = "") -> ToolCall | None:
    """``call`` as a model that sees ``offered`` makes it: by its name, by the name it was renamed to, or
    through Hermes's ``tool_call`` bridge when the tool is deferred (Tool Search: the deferred tools are
    listed in the offered tools' descriptions, ``catalog``); None when none fits."""
    if call.name in offered:
        return call
    renamed = TOOL_RENAMES.get(call.name)
    if renamed is not None and renamed in offered:
        return ToolCall(renamed, call.arguments, call.id)
    if BRIDGE_TOOL in offered:
        for name in (call.name, renamed):
            if name and re.search(rf"(?m)^- {re.escape(name)}:", catalog):
                arguments = json.loads(call.arguments) if isinstance(call.arguments, str) else dict(call.arguments)
                return ToolCall(BRIDGE_TOOL, {"calls": [{"name": name, "arguments": arguments}]}, call.id)
    return None


def routed_policy(routes: Sequence[tuple[str, Policy]], default: Policy) -> Policy:
    """Pick a policy by a substring of the first user message (e.g. a subagent's goal)."""

    def policy(req: ScriptRequest) -> Reply:
        for needle, chosen in routes:
            if needle in req.first_user_text:
                return chosen(req)
        return default(req)

    return policy


def fail_first(n: int, then: Policy, kind: FaultKind = "500", **options: Any) -> Policy:
    """Inject ``kind`` on the first ``n`` LLM requests, then follow ``then``."""
    bad = Reply(fault=kind, **options)

    def policy(req: ScriptRequest) -> Reply:
        return bad if req.index < n else then(req)

    return policy


def hermes_default_policy(final_text: str = "All done: HELLO REPLAYKIT.") -> Policy:
    """A policy useful for Hermes runs with the ``todo`` toolset (and ``harness_echo`` when offered).

    0 tool results -> call ``harness_echo`` if offered, else ``todo``; next -> ``todo``; then final text.
    """
    echo = ToolCall("harness_echo", {"text": "hello replaykit"})
    todo = ToolCall("todo", {"todos": [{"id": "1", "content": "record the run", "status": "completed"}]})
    with_echo = sequence_policy([echo, todo], final_text)
    todo_only = sequence_policy([todo], final_text)

    def policy(req: ScriptRequest) -> Reply:
        # harness_echo is offered directly, or (Hermes 0.22 Tool Search) reachable through the bridge
        return with_echo(req) if offered_call(echo, req.tool_names, req.tool_descriptions) else todo_only(req)

    return policy


def as_policy(script: Script | None) -> Policy:
    if script is None:
        return hermes_default_policy()
    if callable(script):
        return script
    return ReplyList(script)
