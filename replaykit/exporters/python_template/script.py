"""Template of the standalone replay script written by ``replaykit export --format python``.

The generator (``replaykit.exporters.python_script``) writes, in this order: a shebang and a header
docstring, ``from __future__ import annotations``, then this file from the ``script body`` marker on,
with ``@@METADATA@@`` replaced by named metadata constants, ``@@ENGINE@@`` by the source of
``replaykit.core.replay.replay_doc`` (the same pure function ``replaykit replay --json`` uses, so both print
the same document) and what it builds on, and ``@@TRACE@@`` by the recorded run: its trace as ONE JSON
document, zlib-compressed, in a base64 string literal.
Blocks between ``<template-only>`` markers exist only so this file type-checks and can be imported
by tests; the generator drops them.

The script must stay standard-library only and must never turn trace content into code: trace data is
only ever decoded (base64, zlib) and read with ``json.loads`` from ``TRACE_ZLIB_BASE64`` (or, for
``--diff``, from another script's ``TRACE_ZLIB_BASE64``, or the ``TRACE_JSON`` of scripts exported by
earlier versions, found with ``ast``, never by importing or executing it).
"""

from __future__ import annotations

# --- script body ---
import binascii
import gc
import json
import os
import sys
import time
import zlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

# <template-only>
from replaykit.core.replay.replay_doc import RangeError, build_replay_document, step_summary
from replaykit.core.replay.tool_ladder import (
    UNAVAILABLE_STATUS,
    Found,
    climb,
    implementation_for,
    load_tools_file,
    unavailable_text,
)
from replaykit.core.trace.canonical import arguments_key, parsed_arguments
from replaykit.core.trace.deltas import resolve_delta_chain
from replaykit.core.trace.same_marks import SameFiller

RUN_ID: str | None = None
# </template-only>

# ================================================================================= the replay engine
# replaykit.core.trace.canonical and deltas, replaykit.core.replay.serve and replay_doc, verbatim: the request
# fingerprint, the delta resolver, the serve decision and the pure function behind `replaykit replay --json`.
# build_replay_document() walks the events in recorded order and serves every step from the record.
# Then replaykit.core.trace.same_marks' SameFiller, verbatim: how every reader fills in what a trace line
# marked "same" leaves out (the ids and request fields equal to the previous event's).
# @@ENGINE@@

# ======================================================================================= the script
# Reading guide: main() (at the end) picks a mode. replay() serves the steps through
# build_replay_document() above, and play_steps() walks them (progress on stderr, --timed waits);
# apply_edit() is --edit, live_replay() is --live, diff_scripts() is --diff, write_html() is --html.
SCRIPT_FORMAT = "replaykit.python-script"
SCRIPT_FORMAT_VERSION = 1
# Tools this script may execute in --live mode when no recorded call matches: name -> function called
# with the call's arguments as keyword arguments, returning the result (text, or anything JSON-able).
# The one tool convention of replaykit: the functions of a `play --tools-module` file or of a port's
# agent_tools.py work here unchanged (or pass that file with --tools-module). Empty on purpose: a
# standalone replay runs no tools. Add your own here; destructive ones still need --allow-destructive.
RUNNABLE_TOOLS: dict[str, Any] = {}
# Tool names treated as destructive (writes, deletes, shell, messages, payments): replaykit's
# conservative name rule (replaykit.core.replay.tool_gate).
DESTRUCTIVE_NAME = (r"(write|delete|remove|rm|move|rename|patch|edit|create|exec|shell|terminal|command|run|send|"
                    r"post|email|message|pay|purchase|transfer|deploy|push|commit|install|kill|drop|update|upload)")


class ScriptError(Exception):
    """A usage or input problem: printed as one line, exit code 2."""


def one_line(text: object) -> str:
    return " ".join(str(text).split())


def progress(message: str, quiet: bool) -> None:
    if not quiet:
        print(message, file=sys.stderr, flush=True)


def decode_trace(packed: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The embedded run, decoded as data (never as code): base64, then zlib, then ``json.loads`` of the
    trace as one document, ``{"header": {...}, "events": [...]}`` (each event exactly as its trace line),
    then the ``same`` marks filled in as every replaykit reader does."""
    try:
        text = zlib.decompress(binascii.a2b_base64(packed))
    except (ValueError, zlib.error) as exc:  # binascii.Error is a ValueError
        raise ScriptError(f"embedded trace is damaged: {one_line(exc)}") from exc
    header, events = decode_trace_json(text)
    fill = SameFiller(raw=True, share=True)  # the script never changes a recorded event in place
    for event in events:
        fill(event)
    return header, events


def decode_trace_json(text: str | bytes) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``{"header": {...}, "events": [...]}`` as JSON text (UTF-8 bytes or str), checked to be that shape."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ScriptError(f"embedded trace is not valid JSON: {exc}") from exc
    if (not isinstance(data, dict) or not isinstance(data.get("header"), dict)
            or not isinstance(data.get("events"), list) or not all(isinstance(e, dict) for e in data["events"])):
        raise ScriptError("embedded data is not a replaykit trace document")
    return data["header"], data["events"]


def step_positions(events: list[dict[str, Any]]) -> list[int]:
    """Index in ``events`` of every step (LLM call or tool call), in recorded order."""
    return [i for i, e in enumerate(events) if e.get("kind") in ("llm_call", "tool_call")]


def requests_before(events: list[dict[str, Any]], end: int) -> dict[str, dict[str, Any]]:
    """The requests and tool calls before position ``end`` by id: what a request's delta chain and its
    tool message references (``{"ref": <tool call event id>}``) may name."""
    return {e["id"]: e for e in events[:end]
            if (e.get("kind") in ("llm_call", "error") and e.get("request")) or e.get("kind") == "tool_call"}


# ----------------------------------------------------------------------------------------- edits
def parse_edit(step_text: str, value_text: str) -> tuple[int, str, Any]:
    """``--edit N JSON``: JSON is {"args": ...}, {"result": ...} or {"response": ...}."""
    try:
        step = int(step_text)
    except ValueError as exc:
        raise ScriptError(f"--edit: step must be an integer, got {step_text!r}") from exc
    try:
        value = json.loads(value_text)
    except ValueError as exc:
        raise ScriptError(f"--edit: not valid JSON: {exc}") from exc
    if not isinstance(value, dict) or len(value) != 1 or next(iter(value)) not in ("args", "result", "response"):
        raise ScriptError('--edit: JSON must be one of {"args": ...}, {"result": ...}, {"response": ...}')
    target, new = next(iter(value.items()))
    if target == "response":
        new = edited_response(new)
    return step, target, new


def edited_response(value: Any) -> dict[str, Any]:
    """A new model answer: "text", a list of tool calls ({"name", "arguments", "id"?}, or OpenAI's
    {"function": {...}} items), or {"content": "text", "tool_calls": [...]}."""
    content, calls = (value, []) if isinstance(value, str) else (None, value)
    if isinstance(value, dict):
        content, calls = value.get("content"), value.get("tool_calls") or []
    if not isinstance(calls, list) or not (content is None or isinstance(content, str)):
        raise ScriptError('--edit: {"response": ...} takes "text", a list of tool calls, '
                          'or {"content": "text", "tool_calls": [...]}')
    parts: list[dict[str, Any]] = [{"type": "text", "text": content}] if content else []
    for index, call in enumerate(calls):
        function = call.get("function", call) if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise ScriptError("--edit: every tool call needs a string \"name\"")
        arguments = function.get("arguments", {})
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError as exc:
                raise ScriptError(f"--edit: tool call arguments are not JSON: {exc}") from exc
        parts.append({"type": "tool_call", "id": str(call.get("id") or f"edit_call_{index}"),
                      "name": function["name"], "arguments": arguments})
    return {"role": "assistant", "parts": parts}


def args_key(name: str, arguments: Any) -> str:
    """Two tool calls are the same call when their names and parsed arguments are equal (canonical's
    ``arguments_key``, embedded above: the rule every replaykit comparison uses)."""
    return json.dumps([name, arguments_key(arguments)], separators=(",", ":"))


def call_arguments(call: dict[str, Any]) -> Any:
    """A recorded call's (or call part's) arguments as data (canonical's ``parsed_arguments``)."""
    return parsed_arguments(call.get("arguments"), call.get("raw_arguments"))


def apply_edit(events: list[dict[str, Any]], step: int, target: str, value: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A copy of ``events`` with the one edit applied at ``step``, and a description of it.

    Later steps are *invalidated* when their recorded content could depend on the edit: every step from
    the next LLM call on (sibling tool calls of the same model response do not see an edited result).
    """
    positions = step_positions(events)
    if not 0 <= step < len(positions):
        raise ScriptError(f"--edit: step {step} out of range: the run has steps 0..{len(positions) - 1}")
    pos = positions[step]
    events = list(events)
    event = json.loads(json.dumps(events[pos]))  # private copy: the record itself is never changed
    kind = event["kind"]
    info: dict[str, Any] = {"step": step, "target": target, "value": value}
    if target == "response":
        if kind != "llm_call":
            raise ScriptError(f"--edit: step {step} is a tool call; use {{\"args\": ...}} or {{\"result\": ...}}")
        event["response"]["message"] = value
        has_calls = any(p["type"] == "tool_call" for p in value["parts"])
        event["response"]["finish_reason"] = "tool_calls" if has_calls else "stop"
    else:
        if kind != "tool_call":
            raise ScriptError(f"--edit: step {step} is an LLM call; use {{\"response\": \"text\"}}")
        info["tool_call_id"] = event.get("call_id")
        if target == "result":
            event["result"] = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            event["status"] = "ok"
            for key in ("error", "result_blocks"):
                event.pop(key, None)
        else:
            _edit_args(events, event, value, info)
    event["provenance"] = "edited"
    events[pos] = event
    info["invalidated_steps"] = _invalidated(events, positions, step)
    return events, info


def _edit_args(events: list[dict[str, Any]], event: dict[str, Any], value: Any, info: dict[str, Any]) -> None:
    """New arguments for a tool call: the model's request and the call change; the result is served only
    if the record holds a call of the same tool with exactly these arguments."""
    event["arguments"] = value
    event.pop("raw_arguments", None)
    for i, other in enumerate(events):  # the model response that asked for this call
        if other.get("id") == event.get("llm_call_id") and other.get("kind") == "llm_call":
            other = json.loads(json.dumps(other))
            for part in other["response"]["message"].get("parts", []):
                if part.get("type") == "tool_call" and part.get("id") == event.get("call_id"):
                    part["arguments"] = value
                    part.pop("raw_arguments", None)
            events[i] = other
    wanted = args_key(event["name"], value)
    match = next((e for e in events if e.get("kind") == "tool_call" and e is not event
                  and args_key(e["name"], call_arguments(e)) == wanted and e.get("result") is not None), None)
    for key in ("error", "result_blocks"):
        event.pop(key, None)
    if match is not None:
        event["result"], event["status"] = match["result"], match.get("status", "ok")
        info["result"] = "served from a recorded call with the same arguments"
    else:
        event["result"], event["status"] = unavailable_text(event["name"]), UNAVAILABLE_STATUS
        info["result"] = "not available (the script runs no tools)"


def _invalidated(events: list[dict[str, Any]], positions: list[int], step: int) -> list[int]:
    edited = events[positions[step]]
    out: list[int] = []
    seen_llm = edited["kind"] == "llm_call"
    for later in range(step + 1, len(positions)):
        event = events[positions[later]]
        if event["kind"] == "llm_call":
            seen_llm = True
        sibling = event["kind"] == "tool_call" and event.get("llm_call_id") == edited.get("llm_call_id")
        if seen_llm or not sibling:
            out.append(later)
    return out


# ---------------------------------------------------------------------------------------- replay
def replay(header: dict[str, Any], events: list[dict[str, Any]], opts: argparse.Namespace) -> dict[str, Any]:
    """Deterministic replay: every step is served from the record. 0 network, 0 tools."""
    edit_info = None
    if opts.edit is not None:
        events, edit_info = apply_edit(events, *parse_edit(*opts.edit))
        # Later recorded requests predate the edit (hence invalidated); this is what a live continuation
        # (--live) would start from.
        edit_info["conversation_after_edit"] = conversation_at(events, edit_info["step"] + 1)[0]
    positions = step_positions(events)
    played = events
    if opts.stop_at is not None:
        if opts.stop is not None:
            raise ScriptError("use --to N or --stop-at N, not both")
        if not 0 <= opts.stop_at < len(positions):
            raise ScriptError(f"--stop-at {opts.stop_at} out of range: the run has steps 0..{len(positions) - 1}")
        if opts.start is not None and opts.start >= opts.stop_at:
            raise ScriptError(f"--from {opts.start} must be before --stop-at {opts.stop_at}")
        played = events[: positions[opts.stop_at]]
    document = build_replay_document(header, played, start=opts.start, stop=opts.stop)
    if opts.stop_at is not None:
        document["step_count"] = len(positions)
        document["stopped_at"] = pending_step(events, positions, opts.stop_at)
    if edit_info is not None:
        mark_edit(document, edit_info)
    play_steps(document, timed=opts.timed, quiet=opts.quiet)
    return document


def pending_step(events: list[dict[str, Any]], positions: list[int], step: int) -> dict[str, Any]:
    """What the agent was about to do at ``step`` (shown by --stop-at; not served)."""
    event = events[positions[step]]
    out: dict[str, Any] = {"step": step, "kind": "llm" if event["kind"] == "llm_call" else "tool",
                           "summary": step_summary(event)}
    if event["kind"] == "llm_call":
        out["request_messages"] = resolve_delta_chain(event, requests_before(events, positions[step]))
    else:
        out.update(name=event.get("name"), tool_call_id=event.get("call_id"), arguments=call_arguments(event))
    return out


def mark_edit(document: dict[str, Any], info: dict[str, Any]) -> None:
    invalid = set(info["invalidated_steps"])
    for row in document["steps"]:
        if row["step"] == info["step"]:
            row["provenance"] = "edited"
        if row["step"] in invalid:
            row["invalidated"] = True
    document["mode"] = "replay-edit"
    document["edit"] = info
    document["invalidated_steps"] = info["invalidated_steps"]


def play_steps(document: dict[str, Any], *, timed: bool, quiet: bool) -> None:
    """The replay loop a person reads: walk the steps in order, say what each one did, and with
    --timed wait until each step's original time offset (reporting how far off the replay was)."""
    steps = document["steps"]
    begin = steps[0]["t_original"] if steps and document["range"]["from"] > 0 else 0.0
    started = time.perf_counter()
    deltas = []
    lines: list[str] = []  # without --timed, the progress lines go out at once (one write, not one per step)
    for row in steps:
        if timed:
            target = row["t_original"] - begin
            wait = target - (time.perf_counter() - started)
            if wait > 0:
                time.sleep(wait)
            row["t_replay"] = round(time.perf_counter() - started, 6)
            row["delta"] = round(row["t_replay"] - target, 6)
            deltas.append(abs(row["delta"]))
        if quiet:
            continue
        mark = " INVALIDATED" if row.get("invalidated") else ""
        line = f"step {row['step']:>4} {row['kind']:<4} {row['provenance']:<8} {row['summary']}{mark}"
        if timed:
            progress(line, quiet)
        else:
            lines.append(line)
    if lines:
        progress("\n".join(lines), quiet)
    if timed:
        by_step = {row["step"]: row for row in steps}
        for entry in document["timing"]:
            entry["t_replay"] = by_step[entry["step"]]["t_replay"]
            entry["delta"] = by_step[entry["step"]]["delta"]
        document["replay_duration"] = round(time.perf_counter() - started, 6)
        document["timed"] = {"max_abs_delta": round(max(deltas, default=0.0), 6),
                             "mean_abs_delta": round(sum(deltas) / len(deltas), 6) if deltas else 0.0}
    progress(f"replayed {len(steps)} steps of run {document['run_id']}: "
             f"{document['counters']['provider_calls']} provider calls, "
             f"{document['counters']['tool_executions']} tool executions", quiet)


# ------------------------------------------------------------------------------------- live mode
class Live:
    """An OpenAI-compatible Chat Completions client over urllib, with retries and jittered backoff."""

    def __init__(self, opts: argparse.Namespace) -> None:
        self.base_url = opts.base_url.rstrip("/")
        self.model = opts.model
        self.timeout = opts.timeout
        self.max_attempts = max(1, opts.max_attempts)
        self.backoff = opts.backoff
        self.key = None
        if opts.api_key_env:
            self.key = os.environ.get(opts.api_key_env)
            if not self.key:
                raise ScriptError(f"environment variable {opts.api_key_env} (from --api-key-env) is not set")
        self.attempts = 0
        self.errors: list[dict[str, Any]] = []

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        import random
        import urllib.error
        import urllib.request

        body: dict[str, Any] = {"model": self.model, "messages": to_openai(messages)}
        if tools:
            body["tools"] = tools
        data = json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.key:
            headers["Authorization"] = "Bearer " + self.key
        url = self.base_url + "/chat/completions"
        if not url.startswith(("http://", "https://")):
            raise ScriptError(f"--base-url must be an http(s) URL, got {self.base_url!r}")
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}) if _loopback(url) else
                                             urllib.request.ProxyHandler())
        last = ""
        for attempt in range(1, self.max_attempts + 1):
            self.attempts += 1
            retry_after: float | None = None
            try:
                request = urllib.request.Request(url, data=data, headers=headers, method="POST")  # noqa: S310
                with opener.open(request, timeout=self.timeout) as response:
                    payload = json.loads(response.read().decode("utf-8"))
                if not isinstance(payload, dict) or not payload.get("choices"):
                    raise ValueError("response has no choices")
                return payload
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code}"
                if exc.code != 429 and exc.code < 500:
                    raise ScriptError(f"provider refused the request: HTTP {exc.code} {one_line(exc.reason)}") from exc
                retry_after = _retry_after(exc.headers.get("Retry-After"))
            except (urllib.error.URLError, OSError, ValueError) as exc:  # timeouts, resets, bad JSON
                last = one_line(f"{type(exc).__name__}: {exc}")
            self.errors.append({"attempt": attempt, "error": last})
            if attempt < self.max_attempts:
                delay = self.backoff * (2 ** (attempt - 1))
                delay = random.uniform(delay / 2, delay)  # noqa: S311 - jitter, not security
                if retry_after is not None:
                    delay = max(delay, min(retry_after, 60.0))
                print(f"live: attempt {attempt} failed ({last}); retrying in {delay:.2f}s", file=sys.stderr)
                time.sleep(delay)
        raise ScriptError(f"provider failed after {self.max_attempts} attempts: {last}")


def _loopback(url: str) -> bool:
    from urllib.parse import urlsplit

    return (urlsplit(url).hostname or "") in ("127.0.0.1", "localhost", "::1")


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def public_url(url: str) -> str:
    """A base URL without any user:password part (never echo credentials)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def to_openai(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """IR messages (role + parts) as Chat Completions messages. Reasoning is not sent."""
    out: list[dict[str, Any]] = []
    for message in messages:
        parts = message.get("parts", [])
        role = message.get("role")
        if role == "tool" or any(p.get("type") == "tool_result" for p in parts):
            for p in parts:
                if p.get("type") == "tool_result":
                    out.append({"role": "tool", "tool_call_id": p["tool_call_id"], "content": p.get("content", "")})
            continue
        text = "".join(p.get("text", "") for p in parts if p.get("type") == "text")
        media = [p for p in parts if p.get("type") == "media" and (p.get("url") or p.get("data"))]
        item: dict[str, Any] = {"role": "system" if role == "developer" else role}
        if media and role == "user":
            blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
            for p in media:
                url = p.get("url") or f"data:{p.get('media_type')};base64,{p.get('data')}"
                blocks.append({"type": "image_url", "image_url": {"url": url}})
            item["content"] = blocks
        else:
            item["content"] = text
        calls = [p for p in parts if p.get("type") == "tool_call"]
        if calls:
            item["content"] = text or None
            item["tool_calls"] = [{"id": c["id"], "type": "function", "function": {
                "name": c["name"],
                "arguments": c.get("raw_arguments") if c.get("raw_arguments") is not None
                else json.dumps(c.get("arguments") if c.get("arguments") is not None else {})}} for c in calls]
        if message.get("name"):
            item["name"] = message["name"]
        out.append(item)
    return out


def from_openai(payload: dict[str, Any]) -> tuple[dict[str, Any], str | None, dict[str, int]]:
    """A Chat Completions response as (IR assistant message, finish reason, IR usage)."""
    choice = payload["choices"][0]
    message = choice.get("message") or {}
    parts: list[dict[str, Any]] = []
    if message.get("content"):
        parts.append({"type": "text", "text": str(message["content"])})
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        raw = function.get("arguments") or "{}"
        try:
            arguments = json.loads(raw)
        except ValueError:
            arguments = None
        parts.append({"type": "tool_call", "id": str(call.get("id") or f"call_{len(parts)}"),
                      "name": str(function.get("name")), "arguments": arguments, "raw_arguments": raw})
    raw_usage = payload.get("usage") or {}
    usage = {ir: raw_usage[oa] for oa, ir in (("prompt_tokens", "input_tokens"), ("completion_tokens", "output_tokens"),
                                               ("total_tokens", "total_tokens")) if isinstance(raw_usage.get(oa), int)}
    return {"role": "assistant", "parts": parts}, choice.get("finish_reason"), usage


def is_destructive(name: str) -> bool:
    import re

    return re.search(DESTRUCTIVE_NAME, name or "", re.IGNORECASE) is not None


class ToolServer:
    """Serves tool calls from the record when the call matches (same tool, same arguments)."""

    def __init__(self, events: list[dict[str, Any]], allow_destructive: bool,
                 implementations: dict[str, Any] | None = None) -> None:
        self.implementations = {**(implementations or {}), **RUNNABLE_TOOLS}
        self.recorded: dict[str, list[dict[str, Any]]] = {}
        for event in events:
            if event.get("kind") == "tool_call" and event.get("result") is not None:
                key = args_key(event["name"], call_arguments(event))
                self.recorded.setdefault(key, []).append(event)
        self.used: dict[str, int] = {}
        self.allow_destructive = allow_destructive
        self.executions = 0
        self.served = 0
        self.synthetic = 0

    def call(self, name: str, arguments: Any) -> tuple[str, str, str]:
        """(result text, status, provenance) for one tool call of the live model: replaykit's one live-tool
        ladder (``tool_ladder``, embedded above): served, guard, RUNNABLE_TOOLS, "not available"."""

        def served() -> Found | None:
            key = args_key(name, arguments)
            matches = self.recorded.get(key)
            if not matches:
                return None
            index = self.used.get(key, 0)
            self.used[key] = index + 1
            event = matches[min(index, len(matches) - 1)]  # repeated calls reuse the last recorded answer
            return Found(event["result"], event.get("status", "ok"), event.get("error"))

        def guard(tool: str, _arguments: Any) -> tuple[str, str] | None:
            if is_destructive(tool) and not self.allow_destructive:
                return (f"[replaykit dry-run] The tool call {tool!r} was NOT executed: it looks destructive. "
                        "Nothing was changed. Re-run with --allow-destructive to execute it.", "dry_run")
            return None

        # The ladder calls it (keyword arguments from the parsed arguments), as every replaykit engine does.
        implementation = implementation_for(self.implementations, name)
        answer = climb(name, arguments, served=served, guard=guard, implementation=implementation)
        if answer.rung == "served":
            self.served += 1
        elif answer.executed:
            self.executions += 1
        elif answer.provenance == "synthetic":
            self.synthetic += 1
        return answer.content, answer.status, answer.provenance


def conversation_at(events: list[dict[str, Any]], cut: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    """The agent's conversation just before step ``cut`` and the tools it offered the model."""
    positions = step_positions(events)
    end = positions[cut] if cut < len(positions) else len(events)
    prefix = events[:end]
    llm = [e for e in prefix if e.get("kind") == "llm_call"]
    anchor = llm[-1] if llm else next((e for e in events if e.get("kind") == "llm_call"), None)
    if llm:
        messages = build_replay_document({}, prefix)["messages"]
    elif anchor is not None:  # cut before the first call: what the first call was sent
        messages = resolve_delta_chain(anchor, requests_before(events, events.index(anchor) + 1))
    else:
        messages = [e["message"] for e in prefix if e.get("kind") == "turn_start"]
    tools = None
    ref = anchor["request"].get("tools_ref") if anchor is not None else None
    for event in events:
        if event.get("kind") == "tools" and event.get("hash") == ref:
            tools = [{"type": "function", "function": {k: v for k, v in (("name", t["name"]),
                      ("description", t.get("description")), ("parameters", t.get("parameters"))) if v is not None}}
                     for t in event["tools"]]
    return messages, tools


def live_replay(header: dict[str, Any], events: list[dict[str, Any]], opts: argparse.Namespace) -> dict[str, Any]:
    """Serve the record up to the cut, then run a real agent loop against --base-url from there."""
    if not opts.base_url or not opts.model:
        raise ScriptError("--live needs --base-url URL and --model NAME")
    if opts.stop is not None or opts.stop_at is not None:
        raise ScriptError("--live runs to the end of the conversation; --to/--stop-at do not apply")
    record = events
    edit_info = None
    cut = opts.start or 0
    if opts.edit is not None:
        events, edit_info = apply_edit(events, *parse_edit(*opts.edit))
        cut = edit_info["step"] + 1
    positions = step_positions(events)
    if not 0 <= cut <= len(positions):
        raise ScriptError(f"--from {cut} out of range: the run has steps 0..{len(positions) - 1}")
    client = Live(opts)
    try:
        implementations = load_tools_file(opts.tools_module) if opts.tools_module else {}
    except ValueError as exc:
        raise ScriptError(str(exc)) from None
    tools_server = ToolServer(record, opts.allow_destructive, implementations)
    started = time.perf_counter()
    prefix = events[: positions[cut]] if cut < len(positions) else events
    document = build_replay_document(header, prefix)
    if edit_info is not None:
        mark_edit(document, edit_info)
    document["mode"] = "live"
    document["step_count"] = len(positions)
    play_steps(document, timed=False, quiet=opts.quiet)
    messages, tools = conversation_at(events, cut)
    # Later user turns of the recording are sent in order, each once the previous turn is answered.
    cut_pos = positions[cut] if cut < len(positions) else len(events)
    upcoming = [e["message"] for e in events[cut_pos:] if e.get("kind") == "turn_start"]
    step_no = cut
    final = None
    llm_calls = 0
    while True:
        pending = _pending_calls(messages)
        for part in pending:
            arguments = call_arguments(part)
            result, status, provenance = tools_server.call(part["name"], arguments)
            messages.append({"role": "tool", "parts": [{"type": "tool_result", "tool_call_id": part["id"],
                             "name": part["name"], "content": result, "is_error": status == "error"}]})
            event = {"kind": "tool_call", "name": part["name"], "arguments": arguments, "result": result,
                     "status": status}
            _live_row(document, step_no, event, provenance, started, opts.quiet, part["id"])
            if provenance == "synthetic":
                document["notes"].append({"seq": None, "kind": "synthetic", "step": step_no,
                                          "reason": f"{part['name']}: {status} (no recorded call matched these arguments)"})
            step_no += 1
        if not pending and messages and messages[-1].get("role") == "assistant":  # the turn is answered
            final = "".join(p.get("text", "") for p in messages[-1].get("parts", []) if p.get("type") == "text")
            if not upcoming:
                break
            messages.append(upcoming.pop(0))
            progress("live: next user turn of the recording", opts.quiet)
        if llm_calls >= opts.max_turns:
            document["notes"].append({"seq": None, "kind": "stopped", "step": step_no,
                                      "reason": f"--max-turns {opts.max_turns} reached"})
            break
        payload = client.complete(messages, tools)
        llm_calls += 1
        message, finish, usage = from_openai(payload)
        messages.append(message)
        for key, value in usage.items():
            document["usage"][key] = document["usage"].get(key, 0) + value
        event = {"kind": "llm_call", "response": {"message": message, "finish_reason": finish}}
        _live_row(document, step_no, event, "live", started, opts.quiet, None, status=finish or "ok",
                  name=payload.get("model") or opts.model)
        step_no += 1
    document["counters"]["provider_calls"] = client.attempts
    document["counters"]["tool_executions"] = tools_server.executions
    document["counters"]["served_tool_steps"] += tools_server.served
    document["counters"]["live_llm_steps"] = llm_calls
    document["counters"]["live_tool_steps"] = tools_server.executions
    document["counters"]["synthetic_steps"] = tools_server.synthetic
    document["live"] = {"base_url": public_url(client.base_url), "model": opts.model, "cut": cut,
                        "retries": client.errors, "api_key_env": opts.api_key_env}
    document["messages"] = messages
    document["message_count"] = len(messages)
    document["final_answer"] = final
    document["replay_duration"] = round(time.perf_counter() - started, 6)
    return document


def _pending_calls(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool calls of the last assistant message that no later tool result answers yet."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") == "assistant":
            answered = {p.get("tool_call_id") for m in messages[index + 1:] for p in m.get("parts", [])
                        if p.get("type") == "tool_result"}
            return [p for p in messages[index].get("parts", [])
                    if p.get("type") == "tool_call" and p.get("id") not in answered]
    return []


def _live_row(document: dict[str, Any], step: int, event: dict[str, Any], provenance: str, started: float,
              quiet: bool, call_id: str | None, *, status: str | None = None, name: str | None = None) -> None:
    t_replay = round(time.perf_counter() - started, 6)
    row = {"step": step, "kind": "llm" if event["kind"] == "llm_call" else "tool", "provenance": provenance,
           "recorded_provenance": None, "name": name or event.get("name"), "tool_call_id": call_id,
           "status": status or event.get("status", "ok"), "t_original": None, "duration_original": None,
           "t_replay": t_replay, "summary": step_summary(event)}
    document["steps"].append(row)
    document["timing"].append({"step": step, "t_original": None, "duration_original": None, "t_replay": t_replay})
    progress(f"step {step:>4} {row['kind']:<4} {provenance:<8} {row['summary']}", quiet)


# ------------------------------------------------------------------------------------------ diff
def read_script_trace(path: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Another exported script's embedded run, read with ``ast`` (the file is never executed)."""
    import ast

    try:
        with open(path, encoding="utf-8") as handle:
            source = handle.read()
        tree = ast.parse(source, filename=path)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ScriptError(f"cannot read {path}: {one_line(exc)}") from exc
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id in ("TRACE_ZLIB_BASE64", "TRACE_JSON") and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)):
            if node.targets[0].id == "TRACE_JSON":  # a script exported by an earlier replaykit: plain JSON
                return decode_trace_json(node.value.value)
            return decode_trace(node.value.value)
    raise ScriptError(f"{path} is not a replaykit replay script (no TRACE_ZLIB_BASE64 string)")


def comparable_steps(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each step's content (ids, times and provenance left out: they differ between any two runs)."""
    out: list[dict[str, Any]] = []
    for event in events:
        if event.get("kind") == "llm_call":
            message = event["response"]["message"]
            out.append({"kind": "llm",
                        "text": "".join(p.get("text", "") for p in message.get("parts", []) if p.get("type") == "text"),
                        "tool_calls": [[p.get("name"), call_arguments(p)] for p in message.get("parts", [])
                                       if p.get("type") == "tool_call"],
                        "finish_reason": event["response"].get("finish_reason")})
        elif event.get("kind") == "tool_call":
            out.append({"kind": "tool", "name": event.get("name"), "arguments": call_arguments(event),
                        "result": event.get("result"), "status": event.get("status", "ok"),
                        "error": event.get("error")})
    return out


def diff_scripts(header: dict[str, Any], events: list[dict[str, Any]], other: str) -> dict[str, Any]:
    other_header, other_events = read_script_trace(other)
    a, b = comparable_steps(events), comparable_steps(other_events)
    differences: list[dict[str, Any]] = []
    for index in range(max(len(a), len(b))):
        if index >= len(a) or index >= len(b):
            side = "a" if index >= len(a) else "b"
            differences.append({"step": index, "field": "step", "a": _clip_value(a[index]) if index < len(a) else None,
                                "b": _clip_value(b[index]) if index < len(b) else None,
                                "reason": f"step missing in {side}"})
            continue
        for field in sorted(set(a[index]) | set(b[index])):
            if a[index].get(field) != b[index].get(field):
                differences.append({"step": index, "field": field, "a": _clip_value(a[index].get(field)),
                                    "b": _clip_value(b[index].get(field)),
                                    "reason": "different kind of step" if field == "kind" else "content differs"})
    answers = [build_replay_document(h, e)["final_answer"] for h, e in ((header, events), (other_header, other_events))]
    if answers[0] != answers[1]:
        differences.append({"step": None, "field": "final_answer", "a": _clip_value(answers[0]),
                            "b": _clip_value(answers[1]), "reason": "content differs"})
    return {"document": "replaykit.script-diff", "document_version": 1, "equal": not differences,
            "a": {"run_id": header.get("run_id"), "steps": len(a)},
            "b": {"run_id": other_header.get("run_id"), "steps": len(b), "path": other},
            "first_divergence": differences[0] if differences else None,
            "difference_count": len(differences), "differences": differences[:100]}


def _clip_value(value: Any, limit: int = 300) -> Any:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ------------------------------------------------------------------------------------------ html
def write_html(path: str, document: dict[str, Any]) -> None:
    """A self-contained report: every value escaped, nothing loaded from the network."""
    from html import escape

    def cell(value: Any) -> str:
        return "<td>" + escape("" if value is None else str(value), quote=True) + "</td>"

    rows = "".join("<tr>" + "".join(cell(s.get(k)) for k in ("step", "kind", "provenance", "status", "t_original",
                                                               "summary")) + "</tr>\n" for s in document["steps"])
    notes = "".join(f"<li>{escape(str(n.get('kind')))} at step {escape(str(n.get('step')))}: "
                    f"{escape(str(n.get('reason')))}</li>" for n in document.get("notes", []))
    body = (
        "<!doctype html><html><head><meta charset=\"utf-8\">"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>replay {escape(str(document.get('run_id')))}</title>"
        "<style>body{font:14px sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top;white-space:pre-wrap}</style></head><body>"
        f"<h1>Replay of run {escape(str(document.get('run_id')))}</h1>"
        f"<p>model {escape(str(document.get('model')))} &middot; provider {escape(str(document.get('provider')))}"
        f" &middot; mode {escape(str(document.get('mode')))} &middot; {len(document['steps'])} steps"
        f" &middot; original {escape(str(document.get('original_duration')))} s</p>"
        "<table><tr><th>step</th><th>kind</th><th>provenance</th><th>status</th><th>t (s)</th><th>what</th></tr>\n"
        f"{rows}</table><ul>{notes}</ul>"
        f"<h2>Final answer</h2><pre>{escape(str(document.get('final_answer') or ''))}</pre></body></html>\n"
    )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8", errors="surrogatepass") as handle:
        handle.write(body.encode("utf-8", "surrogatepass").decode("utf-8", "replace"))


# ------------------------------------------------------------------------------------------ main
def emit(document: Any) -> None:
    """Exactly one JSON document on stdout (UTF-8; \\u-escaped only if the text holds lone surrogates)."""
    try:
        pieces = [piece.encode("utf-8") for piece in readable_json(document, ascii_only=False)]
    except UnicodeEncodeError:
        pieces = [piece.encode("ascii") for piece in readable_json(document, ascii_only=True)]
    pieces.append(b"\n")
    # Written piece by piece: one 2.6 MB string of the whole document, copied into bytes and again into a
    # larger buffer, cost a long replay more in fresh memory (page faults) than the encoding itself.
    sys.stdout.buffer.writelines(pieces)
    sys.stdout.flush()


def readable_json(document: Any, *, ascii_only: bool) -> list[str]:
    """The document as text pieces, with one top-level field per line and one list item (a step, a
    message) per line. Each piece goes through json's C encoder: ``indent=`` would switch json to its
    pure-Python encoder, which took most of a 1000-step replay's time."""
    dump = json_encoder(ascii_only)
    if not isinstance(document, dict):
        return [dump(document)]
    if not document:
        return ["{}"]
    out = ["{\n"]
    for index, (key, value) in enumerate(document.items()):
        out.append(f",\n  {dump(key)}: " if index else f"  {dump(key)}: ")
        if isinstance(value, list) and value:
            # in pieces of at most 64 items: never one multi-megabyte string for a long list
            items = list(map(dump, value))
            out.append("[\n    ")
            out.extend(",\n    ".join(items[i:i + 64]) if i == 0 else ",\n    " + ",\n    ".join(items[i:i + 64])
                       for i in range(0, len(items), 64))
            out.append("\n  ]")
        else:
            out.append(dump(value))
    out.append("\n}")
    return out


def json_encoder(ascii_only: bool) -> Any:
    """``value -> JSON text`` with json's defaults (separators, NaN as ``NaN``, ``default=str``): json's C
    encoder made once, called per value (``JSONEncoder.encode`` makes a new one on every call: a third of
    the time of a long replay's output), or ``JSONEncoder.encode`` where that is not available."""
    plain = json.JSONEncoder(ensure_ascii=ascii_only, default=str).encode
    from json import encoder as json_encoder_module

    make = getattr(json_encoder_module, "c_make_encoder", None)
    escape = getattr(json_encoder_module, "c_encode_basestring_ascii" if ascii_only else "c_encode_basestring", None)
    if make is None or escape is None:
        return plain
    try:
        encode = make({}, str, escape, None, ": ", ", ", False, False, True)

        def fast(value: Any) -> str:
            if isinstance(value, str):
                return escape(value)
            return "".join(encode(value, 0))

        probe = {"a": [1, 2.5, None, True, "x\u2028\"\\\ud800"], "b": {"c": float("nan")}, "d": object}
        if fast(probe) == plain(probe):
            return fast
    except Exception:  # noqa: S110 - a json module of another shape: the public encoder below
        pass
    return plain


#: The script's options: (flag, argparse keywords). Defaults are argparse's (None; False for a switch).
OPTIONS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("--from", {"dest": "start", "type": int, "metavar": "N", "help": "first step (earlier ones stay as context)"}),
    ("--to", {"dest": "stop", "type": int, "metavar": "N", "help": "last step (inclusive)"}),
    ("--stop-at", {"type": int, "metavar": "N", "help": "stop before step N and show what it would do"}),
    ("--timed", {"action": "store_true", "help": "wait to the original timeline; report the deltas"}),
    ("--edit", {"nargs": 2, "metavar": ("N", "JSON"),
                "help": 'change step N: {"args": ...}, {"result": ...} or {"response": "text"}'}),
    ("--live", {"action": "store_true", "help": "call a real OpenAI-compatible endpoint from the cut"}),
    ("--base-url", {"metavar": "URL", "help": "--live: endpoint, e.g. http://127.0.0.1:8000/v1"}),
    ("--model", {"metavar": "NAME", "help": "--live: model name"}),
    ("--api-key-env", {"metavar": "VAR", "help": "--live: environment variable holding the API key"}),
    ("--allow-destructive", {"action": "store_true", "help": "--live: let runnable tools change state"}),
    ("--tools-module", {"metavar": "PATH", "help": "--live: tool implementations (keyword arguments), "
                                                  "as for replaykit play --tools-module"}),
    ("--timeout", {"type": float, "default": 60.0, "help": "--live: seconds per HTTP request"}),
    ("--max-attempts", {"type": int, "default": 5, "help": "--live: attempts per model call"}),
    ("--backoff", {"type": float, "default": 0.5, "help": "--live: first retry delay in seconds"}),
    ("--max-turns", {"type": int, "default": 50, "help": "--live: at most this many model calls"}),
    ("--diff", {"metavar": "OTHER.py", "help": "compare with another exported script; exit 1 if differ"}),
    ("--html", {"metavar": "PATH", "help": "also write a self-contained HTML report"}),
    ("--dump-trace", {"action": "store_true", "help": "print the embedded trace (header + events)"}),
    ("--quiet", {"action": "store_true", "help": "no progress on stderr"}),
)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    args = sys.argv[1:] if argv is None else argv
    if not args:  # the plain replay: OPTIONS' defaults, without argparse (importing it and building the
        # parser cost a tenth of a long replay)
        from types import SimpleNamespace

        return SimpleNamespace(**{kw.get("dest", flag[2:].replace("-", "_")):  # type: ignore[return-value]
                                  kw.get("default", False if kw.get("action") == "store_true" else None)
                                  for flag, kw in OPTIONS})
    import argparse

    parser = argparse.ArgumentParser(description=f"Replay the recorded run {RUN_ID} (stdlib only).")
    for flag, keywords in OPTIONS:
        parser.add_argument(flag, **keywords)
    return parser.parse_args(args)


def main(argv: list[str] | None = None) -> int:
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)  # the trace may hold integers of any size
    opts = parse_args(argv)
    prog = os.path.basename(sys.argv[0]) or "replay"
    # The decoded trace is many long-lived, acyclic objects: with the cyclic collector running, every
    # allocation of the replay would make it walk them again and again (a third of a long replay's time).
    # Paused for the run; a --live session (minutes of HTTP, retries: cyclic garbage) collects again.
    collecting = gc.isenabled()
    gc.disable()
    try:
        header, events = decode_trace(TRACE_ZLIB_BASE64)
        if opts.live and collecting:
            gc.enable()
        if opts.diff:
            result = diff_scripts(header, events, opts.diff)
            emit(result)
            return 0 if result["equal"] else 1
        if opts.dump_trace:
            emit({"header": header, "events": events})
            return 0
        document = live_replay(header, events, opts) if opts.live else replay(header, events, opts)
        if opts.html:
            write_html(opts.html, document)
        emit(document)
        return 0
    except (ScriptError, RangeError) as exc:
        print(f"{prog}: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except (KeyError, TypeError, ValueError, IndexError) as exc:  # a structurally broken embedded trace
        print(f"{prog}: error: cannot replay the embedded trace: {type(exc).__name__}: {one_line(exc)}",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `python run.py | head`: the reader left; not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        if collecting:
            gc.enable()


# <template-only>
TRACE_ZLIB_BASE64 = "eNqrVspITUxJLVKyUqhWKirNi89MATKVSlJzC3ISS1KVdBSUkotSgayU+MQSkIyhpbmBroEhEIUYGFiBUZRSLVBZallqXkkxUEl0bC0Af2AZVw=="
# </template-only>
# Every constant that depends on the run comes last, after the code: the code's own constants then keep
# the same indices (and the same bytecode) in every export, whatever values the run holds.
# @@METADATA@@
# @@TRACE@@
