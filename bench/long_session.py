"""The long-session workload: one Hermes session of N steps, shaped like real Hermes use.

Every benchmark with a session-size axis uses this module (docs/performance.md). It is deterministic:
the same ``n_steps`` (and ``seed``) give the same messages, tool results, ids and run file content
(except the recorder's event ids and time offsets).

Shape (issue 27; product.md "Speed and memory targets"):

- ``n_steps`` **tool-using steps** (an LLM call that asks for a tool plus that tool call), **10 per user
  turn**, so N = 1000 is 100 turns; all history kept (no compression).
- Each turn: the user message, then 11 API calls: calls 1-10 ask for one tool each, call 11 gives the
  final text. N = 1000 is 1,100 LLM calls and 1,000 tool calls (2,100 steps as ``replaykit inspect``
  counts them), about 1.2 MB of unique content.
- ``shape="issue13"`` keeps the older, half-size shape (N counted LLM calls and tool calls together:
  per turn 5 API calls, the first three asking for one tool each, the fourth for two tools in one
  assistant message, the fifth giving the final text; N = 1000 is 500 + 500), for benches or tests that
  need two tool calls in one message.
- A 6 KB system prompt, sent only in the request messages (Hermes keeps it out of its message list).
- 8 tool schemas in Hermes's wire form (``{"type": "function", "function": {...}}``).
- Tool results of 250 to 2,000 characters (mean about 1,100): code listings, prose and git-log lines
  with author emails, each unique.
- Hermes 0.19.0's firing order (agent/conversation_loop.py, turn_context.py, turn_finalizer.py,
  model_tools.py): ``on_session_start`` on the first turn; ``pre_llm_call`` once per turn; per API call
  the ``llm_request`` middleware point, ``pre_api_request``, the ``llm_execution`` chain and
  ``post_api_request``; per tool ``tool_request``, ``pre_tool_call``, the ``tool_execution`` chain,
  ``post_tool_call`` and ``transform_tool_result`` (not for the agent-loop tool ``todo``); per turn
  ``transform_llm_output``, ``post_llm_call`` and ``on_session_end``; ``on_session_finalize`` at the end.
- Every API call gets a fresh list of fresh shallow copies of every message, built the way Hermes builds
  them (``api_msg = msg.copy()``, internal keys stripped, tool calls rebuilt with compact sorted-key
  arguments, tool messages copied again without ``tool_name``), with the system prompt in front.
- Hook payloads as Hermes sends them, built only when a listener is registered (Hermes's ``has_hook``
  guards): ``pre_api_request.request`` / ``post_api_request.response`` sanitised (strings cut at 8,000
  characters, sequences at 200 items) and capped at 50,000 characters; ``conversation_history`` a
  ``list(messages)`` copy. Middleware dispatch follows ``hermes_cli/middleware.py`` (the onion chain,
  ``llm_request``/``tool_request`` deep-copy only when someone registered them).

API:

- ``HermesBus``: stands in for Hermes's plugin manager; pass it to a plugin's ``register(ctx)``.
- ``drive(n_steps, bus=None)``: fire one session through ``bus`` (``None``: no plugin, the baseline);
  returns a ``DriveStats`` (CPU seconds, Hermes events fired, callbacks the plugin received).
- ``write_long_session_run(path, n_steps)``: record the session with replaykit's real Hermes plugin and
  write the run file (JSONL) at ``path``: a Hermes recording of exactly ``n_steps`` steps that every other
  benchmark (script export, LangGraph, inspect, import) can load with ``Run.load``.
- ``openai_chat_conversation(n_steps)``: the same session as one ``openai-chat`` import document.
- ``tool_result(i)``, ``SYSTEM_PROMPT``, ``TOOLS``: the content itself.

    PYTHONPATH=$PWD python bench/long_session.py --steps 1000 -o /tmp/long.jsonl
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

STEPS_PER_TURN = 10
# Tools asked for by each API call of a turn (0: the final answer). "tool-steps" (the default): N counts
# tool-using steps; "issue13": N counted LLM calls and tool calls together (the older, half-size session).
SHAPES: dict[str, tuple[int, ...]] = {"tool-steps": (1,) * 10 + (0,), "issue13": (1, 1, 1, 2, 0)}
DEFAULT_SHAPE = "tool-steps"
MODEL = "long-session-model"
SESSION_ID = "20260101_090000_a1b2c3"
TASK_ID = "long-session-task"
PLATFORM = "cli"
BASE_URL = "http://127.0.0.1:8/v1"
PAYLOAD_MAX_CHARS = 50_000  # HERMES_PLUGIN_PAYLOAD_MAX_CHARS default

# ------------------------------------------------------------------------------------- content

_WORDS = ("agent", "replay", "request", "buffer", "session", "module", "context", "handler", "trace", "vector",
          "commit", "branch", "result", "schema", "parser", "thread", "socket", "budget", "cursor", "token",
          "the", "of", "and", "to", "in", "is", "that", "for", "with", "as", "on", "by", "this", "from")
_AUTHORS = (("Ada Lovelace", "ada@analytical.example"), ("Grace Hopper", "grace.hopper@navy.example"),
            ("Linus Torvalds", "torvalds@linux-foundation.example"), ("Margaret Hamilton", "mh@apollo.example"),
            ("Ken Thompson", "ken@bell-labs.example"), ("Barbara Liskov", "liskov@mit.example"))


def _system_prompt() -> str:
    rng = random.Random(6144)
    lines = ["You are Hermes, an autonomous coding agent running inside a developer's terminal.",
             "Host: Linux 6.8.0 x86_64; cwd: /home/dev/project; HERMES_HOME: /home/dev/.hermes",
             "Conversation started: Thursday, January 01, 2026"]
    while sum(len(x) + 1 for x in lines) < 6144:
        lines.append("- " + " ".join(rng.choice(_WORDS) for _ in range(rng.randint(8, 16))).capitalize() + ".")
    return "\n".join(lines)[:6144]


SYSTEM_PROMPT = _system_prompt()  # exactly 6,144 characters


def _tool(name: str, description: str, **props: str) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": {k: {"type": "string", "description": v}
                                                        for k, v in props.items()},
                       "required": list(props)[:1]}}}


TOOLS: list[dict[str, Any]] = [
    _tool("read_file", "Read a text file with line numbers. Use offset and limit for large files.",
          path="Path of the file to read", offset="First line (1-based)", limit="How many lines"),
    _tool("search_files", "Search file contents with a regular expression (ripgrep semantics).",
          pattern="Regular expression", path="Directory to search", glob="File name filter"),
    _tool("terminal", "Run a shell command in the project directory and return its output.",
          command="The command line", timeout="Seconds before the command is killed"),
    _tool("git_log", "Show recent commits of the repository with authors and messages.",
          path="Restrict to a path", max_count="How many commits"),
    _tool("write_file", "Write a whole file, creating parent directories. Overwrites.",
          path="Path of the file", content="The new content"),
    _tool("patch", "Apply a unified diff to the working tree.", diff="The unified diff", path="File to patch"),
    _tool("web_search", "Search the web and return titles, urls and snippets.", query="What to search for"),
    _tool("todo", "Keep a todo list for the current task.", todos="JSON list of todo items", merge="Merge or replace"),
]
_TOOL_CYCLE = ("read_file", "search_files", "git_log", "terminal", "read_file", "patch", "todo", "web_search")


def _code(rng: random.Random, size: int) -> str:
    out: list[str] = []
    n = rng.randint(1, 400)
    while sum(map(len, out)) < size:
        name = rng.choice(_WORDS[:20])
        out.append(f"{n:>5}\tdef {name}_{n}(self, {rng.choice(_WORDS[:20])}: int) -> str:\n")
        out.append(f"{n + 1:>5}\t    return self.{name}.get({rng.randint(0, 999)!r}, '{rng.choice(_WORDS)}')\n")
        n += 2
    return "".join(out)


def _prose(rng: random.Random, size: int) -> str:
    out: list[str] = []
    while sum(map(len, out)) < size:
        out.append(" ".join(rng.choice(_WORDS) for _ in range(rng.randint(6, 18))).capitalize() + ". ")
    return "".join(out)


def _git_log(rng: random.Random, size: int) -> str:
    out: list[str] = []
    while sum(map(len, out)) < size:
        name, email = rng.choice(_AUTHORS)
        sha = "".join(rng.choice("0123456789abcdef") for _ in range(40))
        out.append(f"commit {sha}\nAuthor: {name} <{email}>\nDate:   Thu Jan {rng.randint(1, 28)} "
                   f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00 2026 +0000\n\n    "
                   + " ".join(rng.choice(_WORDS) for _ in range(rng.randint(4, 10))) + "\n\n")
    return "".join(out)


def tool_result(i: int, seed: int = 0) -> str:
    """The result text of the session's i-th tool call: 250 to 1,950 characters (mean 1,100), unique."""
    rng = random.Random(seed * 1_000_003 + i)
    size = rng.randint(250, 1950)
    kind = (_code, _prose, _git_log)[i % 3]
    return f"[{i}] " + kind(rng, size)[: size - len(f"[{i}] ")]


def _arguments(name: str, i: int) -> str:
    args = {"read_file": {"path": f"src/module_{i % 97}.py", "offset": str(i % 50 + 1)},
            "search_files": {"pattern": f"def .*_{i % 41}", "path": "src"},
            "git_log": {"path": f"src/module_{i % 97}.py", "max_count": "10"},
            "terminal": {"command": f"python -m pytest -q tests/test_{i % 23}.py"},
            "patch": {"path": f"src/module_{i % 97}.py", "diff": f"@@ -{i},1 +{i},1 @@\n-old_{i}\n+new_{i}\n"},
            "todo": {"todos": json.dumps([{"id": str(i), "content": f"check step {i}", "status": "pending"}])},
            "web_search": {"query": f"python {_WORDS[i % len(_WORDS)]} best practice {i}"}}[name]
    return json.dumps(args)  # the provider's spaced form; Hermes re-serialises it compactly on the wire


def user_message(turn: int) -> str:
    return f"Turn {turn}: " + _prose(random.Random(90_000 + turn), 160)[:160]


def final_answer(turn: int) -> str:
    return f"Done with turn {turn}: " + _prose(random.Random(70_000 + turn), 240)[:240]


# ----------------------------------------------------------------------------- the session plan


@dataclass(frozen=True, slots=True)
class Call:
    """One API call of the plan: the tool calls its response asks for (empty: the final text)."""

    turn: int
    index: int  # api_call_count within the turn, from 1
    tools: tuple[tuple[str, str, str], ...]  # (tool_call_id, name, arguments) per requested tool


def plan(n_steps: int, shape: str = DEFAULT_SHAPE) -> Iterator[tuple[int, list[Call]]]:
    """(turn, its API calls) for a session of ``n_steps`` steps (10 per turn) of the given shape."""
    if n_steps < STEPS_PER_TURN or n_steps % STEPS_PER_TURN:
        raise ValueError(f"n_steps must be a positive multiple of {STEPS_PER_TURN}, got {n_steps}")
    widths = shape_of(shape)
    k = 0
    for turn in range(n_steps // STEPS_PER_TURN):
        calls = []
        for index, width in enumerate(widths, start=1):
            tools = []
            for _ in range(width):
                name = _TOOL_CYCLE[k % len(_TOOL_CYCLE)]
                tools.append((f"call_{k:06d}", name, _arguments(name, k)))
                k += 1
            calls.append(Call(turn, index, tuple(tools)))
        yield turn, calls


def shape_of(shape: str) -> tuple[int, ...]:
    if shape not in SHAPES:
        raise ValueError(f"unknown session shape {shape!r}: {', '.join(SHAPES)}")
    return SHAPES[shape]


def messages_of(n_steps: int, shape: str = DEFAULT_SHAPE) -> int:
    """Messages of the whole conversation (system prompt included): per turn the user message, one
    assistant message per API call and one tool message per tool call."""
    widths = shape_of(shape)
    return n_steps // STEPS_PER_TURN * (1 + len(widths) + sum(widths)) + 1


# ----------------------------------------------------------------------- Hermes's plugin manager


class HermesBus:
    """Stands in for Hermes 0.19.0's ``PluginManager`` + ``PluginContext``: ``register(ctx)`` of a plugin
    registers here; ``drive`` dispatches the way ``invoke_hook`` / ``_run_execution_chain`` do."""

    def __init__(self) -> None:
        self._hooks: dict[str, list[Callable[..., Any]]] = {}
        self._middleware: dict[str, list[Callable[..., Any]]] = {}
        self.fired = 0  # Hermes events (hook and middleware points), listened to or not
        self.received = 0  # callbacks invoked

    # PluginContext surface used by replaykit's plugin
    def register_hook(self, name: str, cb: Callable[..., Any]) -> None:
        self._hooks.setdefault(name, []).append(cb)

    def register_middleware(self, kind: str, cb: Callable[..., Any]) -> None:
        self._middleware.setdefault(kind, []).append(cb)

    def register_command(self, *args: Any, **kwargs: Any) -> None:
        return None

    def has_hook(self, name: str) -> bool:
        return bool(self._hooks.get(name))

    def invoke_hook(self, name: str, **kwargs: Any) -> list[Any]:
        self.fired += 1
        kwargs.setdefault("telemetry_schema_version", "hermes.observer.v1")
        results = []
        for cb in self._hooks.get(name, ()):
            self.received += 1
            try:
                ret = cb(**kwargs)
                if ret is not None:
                    results.append(ret)
            except Exception:  # Hermes logs a warning and carries on
                pass
        return results

    def apply_request_middleware(self, kind: str, payload: Any, key: str, **context: Any) -> Any:
        """``llm_request`` / ``tool_request``: deep copies only when someone registered for it."""
        self.fired += 1
        callbacks = self._middleware.get(kind)
        if not callbacks:
            return payload
        original, current = copy.deepcopy(payload), copy.deepcopy(payload)
        for cb in callbacks:
            self.received += 1
            try:
                ret = cb(**{key: current, f"original_{key}": original, **context,
                            "telemetry_schema_version": "hermes.observer.v1",
                            "middleware_schema_version": "hermes.middleware.v1"})
            except Exception:
                continue
            if isinstance(ret, dict) and isinstance(ret.get(key), dict):
                current = copy.deepcopy(ret[key])
        return current

    def run_execution(self, kind: str, payload: Any, terminal: Callable[[Any], Any], **kwargs: Any) -> Any:
        """``llm_execution`` / ``tool_execution``: Hermes's onion chain (``_run_execution_chain``)."""
        self.fired += 1
        callbacks = self._middleware.get(kind)
        if not callbacks:
            return terminal(payload)
        key = "request" if kind == "llm_execution" else "args"
        original = kwargs.pop(f"original_{key}", payload)

        class Downstream(Exception):
            def __init__(self, original: BaseException) -> None:
                self.original = original

        def call_at(index: int, current: Any) -> Any:
            if index >= len(callbacks):
                return terminal(current)
            state = {"called": False, "ok": False, "result": None}

            def next_call(next_payload: Any = None) -> Any:
                if state["called"]:
                    raise RuntimeError("next_call() called more than once")
                state["called"] = True
                try:
                    state["result"] = call_at(index + 1, current if next_payload is None else next_payload)
                    state["ok"] = True
                    return state["result"]
                except Exception as exc:
                    raise Downstream(exc) from exc

            self.received += 1
            try:
                return callbacks[index](**{**kwargs, key: current, f"original_{key}": original, "next_call": next_call,
                                           "telemetry_schema_version": "hermes.observer.v1",
                                           "middleware_schema_version": "hermes.middleware.v1"})
            except Downstream as exc:
                raise exc.original from None
            except Exception:
                if state["ok"]:
                    return state["result"]
                if state["called"]:
                    raise
                return call_at(index + 1, current)

        return call_at(0, payload)


# ------------------------------------------------------------------------- Hermes-side builders


def _jsonable(value: Any, depth: int = 0, max_string: int = 8000, max_sequence: int = 200) -> Any:
    """``AIAgent._hook_jsonable``: JSON-ified, strings and sequences cut, depth limited to 8."""
    if depth > 8:
        return str(value)[:max_string]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return value[:max_string]
    if isinstance(value, dict):
        return {str(k): ("<redacted>" if str(k).lower() in ("api_key", "authorization", "cookie") else
                         _jsonable(v, depth + 1, max_string, max_sequence)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, depth + 1, max_string, max_sequence) for v in list(value)[:max_sequence]]
    if hasattr(value, "__dict__"):
        return _jsonable(vars(value), depth + 1, max_string, max_sequence)
    return str(value)[:max_string]


def sanitize_hook_payload(value: Any) -> Any:
    """``AIAgent._sanitize_hook_payload``: capped at 50,000 characters (then a truncated preview)."""
    payload = _jsonable(value)
    if len(json.dumps(payload, ensure_ascii=False, default=str)) <= PAYLOAD_MAX_CHARS:
        return payload
    payload = _jsonable(value, max_string=1000, max_sequence=50)
    encoded = json.dumps(payload, ensure_ascii=False, default=str)
    if len(encoded) <= PAYLOAD_MAX_CHARS:
        return payload
    return {"_truncated": True, "original_type": type(value).__name__, "preview": encoded[:PAYLOAD_MAX_CHARS]}


def build_api_messages(messages: list[dict[str, Any]], system_prompt: str) -> list[dict[str, Any]]:
    """What Hermes 0.19.0 sends for its internal ``messages`` (conversation_loop.py + the chat transport):
    a fresh list of fresh shallow copies, every call."""
    return [{"role": "system", "content": system_prompt.strip()}, *map(wire_message, messages)]


def wire_message(msg: dict[str, Any]) -> dict[str, Any]:
    """One internal message as Hermes puts it on the wire: ``api_msg = msg.copy()``, bookkeeping keys
    popped, tool calls rebuilt without Codex ids and with compact sorted-key arguments, content stripped,
    and a second copy without ``tool_name`` (ChatCompletionsTransport.convert_messages)."""
    api_msg = msg.copy()
    api_msg.pop("api_content", None)
    if msg.get("role") == "assistant" and msg.get("reasoning"):
        api_msg["reasoning_content"] = msg["reasoning"]
    api_msg.pop("reasoning", None)
    api_msg.pop("finish_reason", None)
    api_msg.pop("_thinking_prefill", None)
    if isinstance(api_msg.get("tool_calls"), list):  # _sanitize_tool_calls_for_strict_api
        api_msg["tool_calls"] = [{k: v for k, v in tc.items() if k not in ("call_id", "response_item_id")}
                                 for tc in api_msg["tool_calls"]]
    if isinstance(api_msg.get("content"), str):
        api_msg["content"] = api_msg["content"].strip()
    tcs = api_msg.get("tool_calls")
    if tcs:  # compact, sorted-key arguments for prefix-cache stability
        api_msg["tool_calls"] = [{**tc, "function": {**tc["function"], "arguments": json.dumps(
            json.loads(tc["function"]["arguments"]), separators=(",", ":"), sort_keys=True)}} for tc in tcs]
    if "tool_name" in api_msg:
        api_msg = dict(api_msg)
        api_msg.pop("tool_name")
    return api_msg


def _response(call: Call, call_no: int) -> SimpleNamespace:
    """What ``llm_execution``'s ``next_call`` returns in Hermes's streaming path."""
    tool_calls = [SimpleNamespace(id=cid, type="function", function=SimpleNamespace(name=name, arguments=args))
                  for cid, name, args in call.tools] or None
    message = SimpleNamespace(role="assistant", content="" if tool_calls else final_answer(call.turn),
                              tool_calls=tool_calls, reasoning_content=None)
    return SimpleNamespace(
        id=f"stream-{call_no:08x}-0000-4000-8000-{call.turn:012x}", model=MODEL, object="chat.completion",
        choices=[SimpleNamespace(index=0, message=message, finish_reason="tool_calls" if tool_calls else "stop")],
        usage=SimpleNamespace(prompt_tokens=1500 + 280 * call_no, completion_tokens=40, total_tokens=1540 + 280 * call_no,
                              prompt_tokens_details=None, completion_tokens_details=None))


@dataclass(slots=True)
class DriveStats:
    seconds: float  # CPU seconds (process time) of the whole session
    events: int  # Hermes events fired (hooks and middleware points)
    received: int  # plugin callbacks invoked
    llm_calls: int
    tool_calls: int


def drive(n_steps: int, bus: HermesBus | None = None, *, session_id: str = SESSION_ID, seed: int = 0,
          finalize: bool = True, clock: Callable[[], float] = time.process_time,
          fresh_copies: bool = True, shape: str = DEFAULT_SHAPE) -> DriveStats:
    """Fire one long session in Hermes 0.19.0's order through ``bus`` (``None``: no plugin, the baseline).
    ``clock``: ``time.process_time`` (every thread of the process, the default) or ``time.thread_time``
    (Hermes's thread only). ``fresh_copies=False`` reuses each message's wire copy across calls (a fresh
    list still): the same requests, minus Hermes's O(conversation) copying per call; only for making
    large run files quickly, never for measuring."""
    bus = bus or HermesBus()
    messages: list[dict[str, Any]] = []  # Hermes's internal list (the system prompt is not in it)
    turn_ids = f"{session_id}:{TASK_ID}"
    llm_calls = tool_calls = tool_no = 0
    wire_cache: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}]
    started = clock()
    for turn, calls in plan(n_steps, shape):
        turn_id = f"{turn_ids}:{turn:08x}"
        text = user_message(turn)
        if turn == 0:
            bus.invoke_hook("on_session_start", session_id=session_id, model=MODEL, platform=PLATFORM)
        messages.append({"role": "user", "content": text})
        bus.invoke_hook("pre_llm_call", session_id=session_id, task_id=TASK_ID, turn_id=turn_id, user_message=text,
                        conversation_history=list(messages), is_first_turn=turn == 0, model=MODEL,
                        platform=PLATFORM, sender_id="")
        for call in calls:
            llm_calls += 1
            rid = f"{turn_id}:api:{call.index}"
            ids = {"task_id": TASK_ID, "turn_id": turn_id, "api_request_id": rid, "session_id": session_id,
                   "platform": PLATFORM, "model": MODEL, "provider": "custom", "base_url": BASE_URL,
                   "api_mode": "chat_completions", "api_call_count": call.index}
            if fresh_copies:
                wire = build_api_messages(messages, SYSTEM_PROMPT)
            else:
                wire_cache.extend(map(wire_message, messages[len(wire_cache) - 1:]))
                wire = list(wire_cache)
            api_kwargs = {"model": MODEL, "messages": wire, "tools": TOOLS,
                          "max_tokens": 65536, "timeout": 1800.0}
            api_kwargs = bus.apply_request_middleware("llm_request", api_kwargs, "request", **ids)
            started_at = time.time()
            if bus.has_hook("pre_api_request"):
                body = {k: v for k, v in api_kwargs.items() if k not in ("timeout", "http_client")}
                bus.invoke_hook("pre_api_request", **ids, user_message=text, conversation_history=list(messages),
                                request_messages=list(api_kwargs["messages"]), message_count=len(api_kwargs["messages"]),
                                tool_count=len(TOOLS), approx_input_tokens=0, request_char_count=0, max_tokens=65536,
                                started_at=started_at, middleware_trace=[],
                                request=sanitize_hook_payload({"method": "POST", "body": body}))
            else:
                bus.fired += 1
            response = bus.run_execution("llm_execution", api_kwargs, lambda _req, c=call, n=llm_calls: _response(c, n),
                                         original_request=api_kwargs, middleware_trace=[], **ids)
            message = response.choices[0].message
            finish = response.choices[0].finish_reason
            if bus.has_hook("post_api_request"):
                usage = {"input_tokens": response.usage.prompt_tokens, "output_tokens": response.usage.completion_tokens}
                bus.invoke_hook("post_api_request", **ids, api_duration=0.001, started_at=started_at,
                                ended_at=started_at + 0.001, finish_reason=finish,
                                message_count=len(api_kwargs["messages"]), response_model=MODEL,
                                response=sanitize_hook_payload({"model": MODEL, "finish_reason": finish,
                                                                "assistant_message": {"role": "assistant",
                                                                                      "content": message.content,
                                                                                      "tool_calls": message.tool_calls or []},
                                                                "usage": usage}),
                                usage=usage, assistant_message=message,
                                assistant_content_chars=len(message.content or ""),
                                assistant_tool_call_count=len(message.tool_calls or []))
            else:
                bus.fired += 1
            if not call.tools:
                messages.append({"role": "assistant", "content": message.content, "reasoning": None,
                                 "finish_reason": finish})
                break
            messages.append({"role": "assistant", "content": "", "reasoning": None, "finish_reason": finish,
                             "tool_calls": [{"id": cid, "call_id": cid, "response_item_id": f"fc_{cid}",
                                             "type": "function", "function": {"name": name, "arguments": args}}
                                            for cid, name, args in call.tools]})
            for cid, name, raw_args in call.tools:
                tool_calls += 1
                args = json.loads(raw_args)
                tids = {"task_id": TASK_ID, "session_id": session_id, "tool_call_id": cid, "turn_id": turn_id,
                        "api_request_id": rid}
                args = bus.apply_request_middleware("tool_request", args, "args", tool_name=name, **tids)
                bus.invoke_hook("pre_tool_call", tool_name=name, args=args, middleware_trace=[], **tids)
                result = bus.run_execution("tool_execution", args,
                                           lambda _a, i=tool_no: tool_result(i, seed), tool_name=name,
                                           original_args=args, **tids)
                tool_no += 1
                bus.invoke_hook("post_tool_call", tool_name=name, args=args, result=result, duration_ms=1,
                                status="ok", error_type=None, error_message=None, middleware_trace=[], **tids)
                if name != "todo":  # agent-loop tools skip transform_tool_result
                    bus.invoke_hook("transform_tool_result", tool_name=name, args=args, result=result,
                                    duration_ms=1, status="ok", error_type=None, error_message=None, **tids)
                messages.append({"role": "tool", "name": name, "tool_name": name, "content": result,
                                 "tool_call_id": cid})
        answer = final_answer(turn)
        bus.invoke_hook("transform_llm_output", response_text=answer, session_id=session_id, model=MODEL,
                        platform=PLATFORM)
        bus.invoke_hook("post_llm_call", session_id=session_id, task_id=TASK_ID, turn_id=turn_id, user_message=text,
                        assistant_response=answer, conversation_history=list(messages), model=MODEL, platform=PLATFORM)
        bus.invoke_hook("on_session_end", session_id=session_id, task_id=TASK_ID, turn_id=turn_id, completed=True,
                        interrupted=False, model=MODEL, platform=PLATFORM)
    if finalize:
        bus.invoke_hook("on_session_finalize", session_id=session_id, platform=PLATFORM, reason="shutdown")
    return DriveStats(clock() - started, bus.fired, bus.received, llm_calls, tool_calls)


# --------------------------------------------------------------------------------- run files


def record(n_steps: int, store: Path, *, seed: int = 0, fresh_copies: bool = True,
           shape: str = DEFAULT_SHAPE) -> tuple[Path, DriveStats]:
    """Drive the session through replaykit's real Hermes plugin recording into ``store``; return the run
    file and the drive figures."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from replaykit.adapters.hermes import plugin

    previous = plugin._capture
    plugin._capture = capture = plugin.build_capture(store)
    try:
        bus = HermesBus()
        plugin.register(bus)
        stats = drive(n_steps, bus, seed=seed, fresh_copies=fresh_copies, shape=shape)
        capture.close_all()
    finally:
        plugin._capture = previous
    files = sorted(store.glob("*.jsonl"))
    if len(files) != 1:
        raise RuntimeError(f"expected one recorded run in {store}, found {len(files)}")
    return files[0], stats


def write_long_session_run(path: str | Path, n_steps: int, *, seed: int = 0, shape: str = DEFAULT_SHAPE) -> Path:
    """Record the long session of ``n_steps`` steps (a multiple of 10) and write its run file at ``path``.

    The file is a real replaykit Hermes recording (JSONL, header + events), made by the real plugin
    driven in Hermes 0.19.0's order; ``Run.load(path)`` gives ``n_steps`` tool steps and ``1.1 * n_steps``
    LLM steps (``shape="issue13"``: ``n_steps`` steps, half of each). Deterministic content for a given
    ``n_steps``, ``seed`` and ``shape``."""
    target = Path(path)
    with tempfile.TemporaryDirectory(prefix="rk-long-") as tmp:
        recorded, _ = record(n_steps, Path(tmp), seed=seed, fresh_copies=n_steps <= 2000, shape=shape)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(recorded, target)
    return target


def openai_chat_conversation(n_steps: int, *, seed: int = 0, shape: str = DEFAULT_SHAPE) -> dict[str, Any]:
    """The whole session as one ``openai-chat`` import document (the last request's body plus the final
    answer): the input of ``replaykit import --format openai-chat`` at real size."""
    bus = _LastRequest()
    drive(n_steps, bus, seed=seed, finalize=False, fresh_copies=False, shape=shape)
    body = {k: v for k, v in bus.last.items() if k not in ("timeout",)}
    body["messages"] = [*body["messages"], {"role": "assistant", "content": final_answer(n_steps // STEPS_PER_TURN - 1)}]
    return body


class _LastRequest(HermesBus):
    """A bus whose only listener keeps the last LLM request (for ``openai_chat_conversation``)."""

    def __init__(self) -> None:
        super().__init__()
        self.last: dict[str, Any] = {}

        def keep(**kw: Any) -> Any:
            self.last = kw["request"]
            return kw["next_call"]()

        self.register_middleware("llm_execution", keep)


def unique_content_bytes(n_steps: int, *, seed: int = 0, shape: str = DEFAULT_SHAPE) -> int:
    """UTF-8 bytes of the session's unique content: the system prompt once, each message once (user,
    assistant text and tool-call arguments, tool results), the tool schema set once."""
    total = len(SYSTEM_PROMPT.encode()) + len(json.dumps(TOOLS, separators=(",", ":")).encode())
    tool_no = 0
    for turn, calls in plan(n_steps, shape):
        total += len(user_message(turn).encode()) + len(final_answer(turn).encode())
        for call in calls:
            for cid, name, args in call.tools:
                total += len(cid) + len(name) + len(args.encode())
                total += len(tool_result(tool_no, seed).encode())
                tool_no += 1
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--shape", choices=sorted(SHAPES), default=DEFAULT_SHAPE)
    parser.add_argument("-o", "--output", type=Path, help="write the recorded run file here")
    args = parser.parse_args()
    if args.output:
        path = write_long_session_run(args.output, args.steps, shape=args.shape)
        print(f"{path}: {path.stat().st_size:,} bytes, {args.steps} steps")
    base = drive(args.steps, shape=args.shape)
    print(json.dumps({"steps": args.steps, "hermes_events": base.events, "llm_calls": base.llm_calls,
                      "tool_calls": base.tool_calls, "baseline_cpu_s": round(base.seconds, 4),
                      "unique_content_bytes": unique_content_bytes(args.steps, shape=args.shape)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
