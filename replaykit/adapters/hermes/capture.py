"""The capture engine inside Hermes: one run per Hermes session, fed by hooks and middleware.

Threading: Hermes fires hooks and middleware on its main loop thread, on thread-pool workers (parallel
tools, subagents) and after a parent turn has ended (``subagent_stop``). Each session's state is guarded
by its own lock; the per-run ``Recorder`` serialises event numbering and writes (one ``os.write`` per
event, so every event is on disk as it happens; fsync at turn end).

Nothing here may break the agent: the plugin wraps every entry point so an exception is logged once and
swallowed (middleware always calls ``next_call`` exactly once and re-raises only downstream errors).
"""

from __future__ import annotations

import atexit
import json
import os
import re
import threading
import time
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replaykit import __version__ as replaykit_version
from replaykit.adapters.hermes import wire
from replaykit.adapters.hermes.response import response_to_ir, was_streamed
from replaykit.core.ir import (
    Correlation,
    Lineage,
    LLMResponse,
    Message,
    MessageDelta,
    RunHeader,
    Source,
    TextPart,
    ToolSpec,
)
from replaykit.core.recorder import Recorder
from replaykit.core.store import RunStore, RunWriter, iter_trace, utc_now_iso

ADAPTER = "replaykit.adapters.hermes"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def run_id_for_session(session_id: str) -> str:
    return ("hermes-" + _UNSAFE.sub("-", session_id))[:128]


def safe_base_url(url: Any) -> str | None:
    """The base URL without credentials (userinfo, query string, fragment)."""
    if not isinstance(url, str) or not url:
        return None
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return None
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))


class _HermesRecorder(Recorder):
    """Recorder tuned for the hot path: tool-set declaration is O(1) when Hermes passes the same tool
    list again, and the message delta reuses the prefix length the adapter already computed (the
    adapter passes the very same ``Message`` objects for the unchanged prefix)."""

    _tools_obj: Sequence[ToolSpec] | None = None
    _tools_digest: str | None = None
    keep_hint: tuple[int, int] | None = None  # (len of the messages list, common prefix length)

    def _delta(self, messages: Sequence[Message]) -> MessageDelta:
        hint, self.keep_hint = self.keep_hint, None
        if hint is None or hint[0] != len(messages) or self._last_request_id is None:
            return super()._delta(messages)
        keep = min(hint[1], len(self._last_messages))
        # Prefixes are shared objects (each request's list is built from the previous one's prefix), so
        # the same object at keep-1 in both lists means the same prefix; otherwise recompute.
        if keep and self._last_messages[keep - 1] is not messages[keep - 1]:
            return super()._delta(messages)
        if keep == 0:
            return MessageDelta(base=None, keep=0, append=list(messages))
        return MessageDelta(base=self._last_request_id, keep=keep, append=list(messages[keep:]))

    def declare_tools(self, tools: Sequence[ToolSpec] | None) -> str | None:
        if tools is not None and tools is self._tools_obj:
            return self._tools_digest
        digest = super().declare_tools(tools)
        self._tools_obj, self._tools_digest = tools, digest
        return digest


@dataclass
class SessionRun:
    """Capture state of one Hermes session (= one replaykit run)."""

    session_id: str
    recorder: _HermesRecorder
    lock: threading.RLock = field(default_factory=threading.RLock)
    api: str | None = None
    raw_prev: list[Any] = field(default_factory=list)
    ir_prev: list[list[Message]] = field(default_factory=list)
    raw_tools: Any = None
    ir_tools: list[ToolSpec] | None = None
    attempts: dict[str, int] = field(default_factory=dict)
    pending_tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    hook_info: dict[str, dict[str, Any]] = field(default_factory=dict)  # post_tool_call seen mid-execution
    emitted_calls: set[str] = field(default_factory=set)
    pending_errors: dict[str, dict[str, Any]] = field(default_factory=dict)
    call_origin: dict[str, str] = field(default_factory=dict)  # tool_call_id -> llm_call event id
    step_of: dict[str, int] = field(default_factory=dict)  # llm_call event id -> step index
    steps: int = 0
    turn: int = 0
    final_answer: str | None = None
    meta_done: bool = False
    skills: list[str] = field(default_factory=list)
    closed: bool = False


_EMPTY: dict[str, dict[str, Any]] = {"openai-chat": {"messages": []}, "openai-responses": {"input": []},
                                     "anthropic-messages": {"messages": []}}


def _elements(api: str, body: Mapping[str, Any]) -> list[Any]:
    """The conversation of a request as a list of comparable raw elements (for delta conversion)."""
    if api == "openai-chat":
        msgs = body.get("messages")
        return list(msgs) if isinstance(msgs, list) else []
    out: list[Any] = []
    head = "instructions" if api == "openai-responses" else "system"
    if head in body:
        out.append((head, body[head]))
    items = body.get("input" if api == "openai-responses" else "messages")
    if isinstance(items, str):
        out.append(("input_str", items))
    elif isinstance(items, list):
        out.extend(items)
    return out


def _convert(api: str, element: Any) -> list[Message]:
    """One raw conversation element -> IR messages, through the shared provider codecs (so every engine
    re-encodes a recorded request the same way)."""
    if api == "openai-chat":
        from replaykit.core.codecs import openai_chat

        return [openai_chat.decode_message(element)]
    from replaykit.core import codecs

    if isinstance(element, tuple):
        kind, value = element
        body: dict[str, Any] = {"input": value} if kind == "input_str" else {kind: value}
        if api == "openai-responses":
            body.setdefault("input", [])
        else:
            body.setdefault("messages", [])
        return list(codecs.decode_request(api, body).messages)
    if api == "openai-responses":
        from replaykit.core.codecs import openai_responses

        return list(openai_responses.decode_items([element]))
    from replaykit.core.codecs import anthropic

    return [anthropic.decode_message(element, "message")]


class HermesCapture:
    """Process-wide capture engine (the plugin makes one)."""

    def __init__(self, store: RunStore, *, hermes_version: str | None = None) -> None:
        self.store = store
        self.hermes_version = hermes_version
        self._sessions: dict[str, SessionRun] = {}
        self._links: dict[str, Lineage] = {}
        self._lock = threading.Lock()
        self._active_tools: set[tuple[str, str]] = set()
        self._local = threading.local()
        atexit.register(self.close_all)

    # ------------------------------------------------------------------ sessions

    def session(self, session_id: str, **info: Any) -> SessionRun:
        state = self._sessions.get(session_id)
        if state is not None and not state.closed:
            return state
        with self._lock:
            state = self._sessions.get(session_id)
            if state is None or state.closed:
                state = self._open(session_id, info)
                self._sessions[session_id] = state
            return state

    def _open(self, session_id: str, info: Mapping[str, Any]) -> SessionRun:
        run_id = run_id_for_session(session_id)
        self.store.ensure()
        path = self.store.path_for(run_id)
        header = RunHeader(
            run_id=run_id, created_at=utc_now_iso(),
            source=Source(framework="hermes", framework_version=self.hermes_version, adapter=ADAPTER,
                          replaykit_version=replaykit_version),
            model=info.get("model") or None, platform=info.get("platform") or None, session_id=session_id,
            lineage=self._links.get(session_id), title=None,
        )
        start_seq, t0 = 0, None
        if path.exists():
            # The session continues in this process (resume): append after what is on disk.
            start_seq, last_t = _tail_state(path)
            t0 = time.monotonic() - last_t
            writer = RunWriter(path, header, exist_ok=True)
        else:
            writer = RunWriter(path, header)
        recorder = _HermesRecorder(header, writer, keep_events=False, start_seq=start_seq, t0=t0)
        return SessionRun(session_id=session_id, recorder=recorder)

    def close_all(self) -> None:
        with self._lock:
            states = list(self._sessions.values())
        for state in states:
            with state.lock:
                if not state.closed:
                    self._flush(state)
                    state.recorder.close()
                    state.closed = True

    # ------------------------------------------------------------------ helpers

    @staticmethod
    def _corr(kw: Mapping[str, Any], tool_call_id: str | None = None) -> Correlation:
        return Correlation(session_id=kw.get("session_id") or None, task_id=kw.get("task_id") or None,
                           turn_id=kw.get("turn_id") or None, api_request_id=kw.get("api_request_id") or None,
                           tool_call_id=tool_call_id)

    def _messages(self, state: SessionRun, api: str, request: Mapping[str, Any]) -> list[Message]:
        raw = _elements(api, request)
        prev_raw, prev_ir = state.raw_prev, state.ir_prev
        n = len(prev_raw) if state.api == api else 0
        if n and len(raw) >= n and raw[:n] == prev_raw:
            keep = n  # the common case (the conversation grew): one C-level list comparison
        else:
            keep = 0
            limit = min(len(raw), n)
            while keep < limit and raw[keep] == prev_raw[keep]:
                keep += 1
        # ir_prev holds one list of messages per raw element (an element may decode to 0..n messages).
        groups = prev_ir[:keep] + [_convert(api, el) for el in raw[keep:]]
        state.raw_prev, state.ir_prev, state.api = raw, groups, api
        messages = [m for group in groups for m in group]
        state.recorder.keep_hint = (len(messages), sum(len(g) for g in groups[:keep]))
        return messages

    def _tools(self, state: SessionRun, api: str, raw_tools: Any) -> list[ToolSpec] | None:
        if not isinstance(raw_tools, list) or not raw_tools:
            return None
        if raw_tools is not state.raw_tools and raw_tools != state.raw_tools:
            from replaykit.core import codecs

            state.raw_tools = raw_tools
            state.ir_tools = list(codecs.decode_request(api, {"tools": raw_tools, **_EMPTY[api]}).tools or [])
        return state.ir_tools

    def _session_meta(self, state: SessionRun, kw: Mapping[str, Any], tools: list[ToolSpec] | None) -> None:
        state.meta_done = True
        data: dict[str, Any] = {
            "hermes_version": self.hermes_version, "model": kw.get("model"), "provider": kw.get("provider"),
            "base_url": safe_base_url(kw.get("base_url")), "api_mode": kw.get("api_mode"),
            "platform": kw.get("platform"), "toolsets": _toolsets_of([t.name for t in tools or ()]),
        }
        state.recorder.meta({k: v for k, v in data.items() if v is not None}, corr=self._corr(kw))

    # ------------------------------------------------------------------ LLM calls

    def llm_before(self, kw: Mapping[str, Any]) -> dict[str, Any] | None:
        """Capture the request at once (Hermes's live object; never mutated)."""
        request = kw.get("request")
        session_id = kw.get("session_id")
        if not isinstance(request, Mapping) or not session_id:
            return None
        api = wire.API_OF_MODE.get(str(kw.get("api_mode") or "chat_completions"), "openai-chat")
        state = self.session(session_id, model=kw.get("model"), platform=kw.get("platform"))
        with state.lock:
            self._flush(state)
            model, raw_tools, params, sdk = wire.split_request(api, request)
            messages = self._messages(state, api, request)
            tools = self._tools(state, api, raw_tools)
            if isinstance(raw_tools, list) and not raw_tools:
                params["tools"] = []
            if not state.meta_done:
                self._session_meta(state, kw, tools)
        return {"state": state, "api": api, "model": model, "messages": messages, "tools": tools,
                "params": params, "sdk": sdk, "t": state.recorder.now(), "t0": time.perf_counter(), "kw": kw}

    def llm_after(self, cap: dict[str, Any], result: Any) -> None:
        state: SessionRun = cap["state"]
        api = cap["api"]
        params = cap["params"]
        if was_streamed(api, result):
            params = {**params, "stream": True}
            if api == "openai-chat":
                params.setdefault("stream_options", {"include_usage": True})
        response: LLMResponse = response_to_ir(api, result)
        kw = cap["kw"]
        rid = kw.get("api_request_id") or ""
        with state.lock:
            attempt = state.attempts.get(rid, 0) + 1
            state.attempts[rid] = attempt
            event = state.recorder.llm_call(
                cap["messages"], response, api=api, model=cap["model"], tools=cap["tools"], params=params,
                t=cap["t"], duration=round(time.perf_counter() - cap["t0"], 6), attempt=attempt,
                corr=self._corr(kw), request_details={"sdk_kwargs": cap["sdk"]} if cap["sdk"] else None,
            )
            state.step_of[event.id] = state.steps
            state.steps += 1
            for call in response.message.tool_calls:
                state.call_origin[call.id] = event.id

    def llm_failed(self, cap: dict[str, Any], exc: BaseException) -> None:
        """Stash the failed attempt; ``api_request_error`` completes it (or the next flush does)."""
        state: SessionRun = cap["state"]
        rid = cap["kw"].get("api_request_id") or ""
        cap["params"] = _wire_params(cap, exc)
        with state.lock:
            state.pending_errors[rid] = {**cap, "exc_type": type(exc).__name__, "exc_message": str(exc)[:2000],
                                         "status_code": getattr(exc, "status_code", None),
                                         "duration": round(time.perf_counter() - cap["t0"], 6)}

    def api_request_error(self, kw: Mapping[str, Any]) -> None:
        session_id = kw.get("session_id")
        if not session_id:
            return
        state = self.session(session_id)
        with state.lock:
            cap = state.pending_errors.pop(kw.get("api_request_id") or "", None)
            self._emit_error(state, cap, kw)

    def _emit_error(self, state: SessionRun, cap: dict[str, Any] | None, kw: Mapping[str, Any] | None) -> None:
        kw = kw or {}
        error: Mapping[str, Any] = kw["error"] if isinstance(kw.get("error"), Mapping) else {}
        rid = (cap or {}).get("kw", {}).get("api_request_id") or kw.get("api_request_id") or ""
        attempt = state.attempts.get(rid, 0) + 1
        state.attempts[rid] = attempt
        details = {k: kw.get(k) for k in ("reason", "retry_count", "max_retries", "api_call_count") if kw.get(k) is not None}
        status = kw.get("status_code")
        message = str(error.get("message") or (cap or {}).get("exc_message") or "LLM request failed")
        if cap is None:
            state.recorder.llm_error(None, message=message, error_type=error.get("type"), status_code=status,
                                     retryable=kw.get("retryable"), attempt=attempt, corr=self._corr(kw),
                                     provider_details=details or None)
            return
        state.recorder.llm_error(
            cap["messages"], message=message, error_type=error.get("type") or cap.get("exc_type"),
            status_code=status if status is not None else cap.get("status_code"), retryable=kw.get("retryable"),
            attempt=attempt, api=cap["api"], model=cap["model"], tools=cap["tools"], params=cap["params"],
            t=cap["t"], duration=cap.get("duration"), corr=self._corr(cap["kw"]), provider_details=details or None,
        )

    # ------------------------------------------------------------------ tools

    def tool_enter(self, kw: Mapping[str, Any]) -> tuple[str, str] | None:
        """Returns a key when this is the outermost entry for the call (None for a nested re-entry)."""
        call_id = kw.get("tool_call_id") or f"{kw.get('tool_name')}@{threading.get_ident()}"
        key = (str(kw.get("session_id") or ""), str(call_id))
        with self._lock:
            if key in self._active_tools:
                return None
            self._active_tools.add(key)
        self._local.tool_call_id = call_id
        return key

    def tool_exit(self, key: tuple[str, str], kw: Mapping[str, Any], t: float, t0: float, result: Any,
                  exc: BaseException | None) -> None:
        with self._lock:
            self._active_tools.discard(key)
        self._local.tool_call_id = None
        session_id = kw.get("session_id")
        if not session_id:
            return
        state = self.session(session_id)
        pending = {
            "name": kw.get("tool_name"), "args": kw.get("args"), "original_args": kw.get("original_args"),
            "result": result, "exc": exc, "t": t, "duration": round(time.perf_counter() - t0, 6), "kw": kw,
        }
        with state.lock:
            hook = state.hook_info.pop(key[1], None)
            if hook is not None:  # thread-pool path: the inner layer's post_tool_call came first
                self._emit_tool(state, key[1], pending, hook)
            else:  # sequential path: post_tool_call follows and completes it
                state.pending_tools[key[1]] = pending

    def post_tool_call(self, kw: Mapping[str, Any]) -> None:
        session_id = kw.get("session_id")
        if not session_id:
            return
        state = self.session(session_id)
        call_id = str(kw.get("tool_call_id") or f"{kw.get('tool_name')}@{threading.get_ident()}")
        with state.lock:
            if call_id in state.emitted_calls:
                return  # the outer layer of a nested chain reports the same call again
            pending = state.pending_tools.pop(call_id, None)
            if pending is None and (session_id, call_id) in self._active_tools:
                state.hook_info[call_id] = dict(kw)  # tool_exit of the outermost layer will emit
                return
            self._emit_tool(state, call_id, pending, kw)

    def _emit_tool(self, state: SessionRun, call_id: str, pending: dict[str, Any] | None,
                   hook: Mapping[str, Any] | None) -> None:
        state.emitted_calls.add(call_id)
        hook = hook or {}
        src: Mapping[str, Any] = pending or hook
        name = str(src.get("name") or hook.get("tool_name") or "")
        args = src.get("args") if pending else hook.get("args")
        result = src.get("result") if pending else hook.get("result")
        status = hook.get("status") or ("error" if pending and pending.get("exc") else "ok")
        error = hook.get("error_message") or (repr(pending["exc"]) if pending and pending.get("exc") else None)
        duration = pending.get("duration") if pending else (
            hook["duration_ms"] / 1000.0 if isinstance(hook.get("duration_ms"), (int, float)) else None)
        text, blocks = _result_text(result)
        details: dict[str, Any] = {}
        if pending and pending.get("original_args") not in (None, args):
            details["original_args"] = _jsonable(pending["original_args"])
        if hook.get("error_type"):
            details["error_type"] = hook["error_type"]
        if pending is None:
            details["reconstructed_from"] = "post_tool_call"
        kw = pending["kw"] if pending else hook
        state.recorder.tool_call(
            call_id, name, _jsonable(args), result=text, status=status if status in ("ok", "error", "blocked") else "error",
            error=error, llm_call_id=state.call_origin.get(call_id), t=pending["t"] if pending else None,
            duration=duration, corr=self._corr(kw, call_id), provider_details=details or None,
            result_blocks=blocks,
        )
        state.steps += 1
        if name == "skill_view" and isinstance(args, Mapping) and args.get("name"):
            skill = str(args["name"])
            if skill not in state.skills:
                state.skills.append(skill)
                state.recorder.meta({"skills_loaded": list(state.skills)})

    # ------------------------------------------------------------------ turns and sessions

    def session_start(self, kw: Mapping[str, Any]) -> None:
        if kw.get("session_id"):
            self.session(kw["session_id"], model=kw.get("model"), platform=kw.get("platform"))

    def turn_start(self, kw: Mapping[str, Any]) -> None:
        session_id = kw.get("session_id")
        if not session_id:
            return
        state = self.session(session_id, model=kw.get("model"), platform=kw.get("platform"))
        message = kw.get("user_message")
        with state.lock:
            state.final_answer = None
            state.recorder.turn_start(
                Message(role="user", parts=[TextPart(text=message if isinstance(message, str) else str(message))]),
                turn=state.turn, corr=self._corr(kw),
                provider_details={"is_first_turn": kw.get("is_first_turn")} if kw.get("is_first_turn") is not None else None)
            state.turn += 1

    def post_llm_call(self, kw: Mapping[str, Any]) -> None:
        session_id = kw.get("session_id")
        if session_id and isinstance(kw.get("assistant_response"), str):
            self.session(session_id).final_answer = kw["assistant_response"]

    def turn_end(self, kw: Mapping[str, Any]) -> None:
        session_id = kw.get("session_id")
        if not session_id:
            return
        state = self.session(session_id)
        with state.lock:
            self._flush(state)
            status = "interrupted" if kw.get("interrupted") else ("completed" if kw.get("completed", True) else "failed")
            state.recorder.turn_end(state.final_answer, status=status, reason=kw.get("reason"), corr=self._corr(kw))

    def session_close(self, kw: Mapping[str, Any], status: str = "completed") -> None:
        session_id = kw.get("old_session_id") or kw.get("session_id")
        if not session_id or session_id not in self._sessions:
            return
        state = self._sessions[session_id]
        with state.lock:
            if state.closed:
                return
            self._flush(state)
            state.recorder.run_end(state.final_answer, status=status, reason=kw.get("reason"),  # type: ignore[arg-type]
                                   corr=self._corr(kw))
            state.recorder.close()
            state.closed = True

    def _flush(self, state: SessionRun) -> None:
        """Emit what never got its completing hook (call under ``state.lock``)."""
        for cap in list(state.pending_errors.values()):
            self._emit_error(state, cap, None)
        state.pending_errors.clear()
        for call_id, pending in list(state.pending_tools.items()):
            self._emit_tool(state, call_id, pending, None)
        state.pending_tools.clear()
        for call_id, hook in list(state.hook_info.items()):
            if call_id not in state.emitted_calls:
                self._emit_tool(state, call_id, None, hook)
        state.hook_info.clear()

    # ------------------------------------------------------------------ subagents

    def subagent_start(self, kw: Mapping[str, Any]) -> None:
        parent_sid, child_sid = kw.get("parent_session_id"), kw.get("child_session_id")
        if not parent_sid or not child_sid:
            return
        parent = self.session(parent_sid)
        call_id = getattr(self._local, "tool_call_id", None)
        with parent.lock:
            origin = parent.call_origin.get(call_id) if call_id else None
            event = parent.recorder.subagent(
                "start", child_run_id=run_id_for_session(child_sid), child_session_id=child_sid,
                role=kw.get("child_role"), goal=kw.get("child_goal"), launched_by=call_id,
                corr=Correlation(session_id=parent_sid, turn_id=kw.get("parent_turn_id"), tool_call_id=call_id,
                                 extra={"child_subagent_id": kw.get("child_subagent_id")}))
            lineage = Lineage(relation="subagent", parent_run_id=parent.recorder.run_id,
                              parent_step=parent.step_of.get(origin) if origin else None, parent_event_id=event.id,
                              details={k: v for k, v in {"tool_call_id": call_id, "parent_session_id": parent_sid,
                                                         "parent_turn_id": kw.get("parent_turn_id"),
                                                         "child_subagent_id": kw.get("child_subagent_id"),
                                                         "launching_llm_call": origin}.items() if v is not None})
        with self._lock:
            self._links[child_sid] = lineage
            child = self._sessions.get(child_sid)
        if child is not None:  # the child started before we heard of it: link it from inside
            child.recorder.meta({"lineage": lineage.model_dump(mode="json", exclude_none=True)})

    def subagent_stop(self, kw: Mapping[str, Any]) -> None:
        parent_sid, child_sid = kw.get("parent_session_id"), kw.get("child_session_id")
        if parent_sid:
            parent = self.session(parent_sid)
            with parent.lock:
                parent.recorder.subagent(
                    "stop", child_run_id=run_id_for_session(child_sid) if child_sid else None,
                    child_session_id=child_sid, role=kw.get("child_role"), status=kw.get("child_status"),
                    summary=kw.get("child_summary"),
                    duration=kw["duration_ms"] / 1000.0 if isinstance(kw.get("duration_ms"), (int, float)) else None,
                    corr=Correlation(session_id=parent_sid, turn_id=kw.get("parent_turn_id")))
                parent.recorder.sync()
        if child_sid:
            status = str(kw.get("child_status") or "completed")
            self.session_close({"session_id": child_sid, "reason": "subagent_stop"},
                               status=status if status in ("completed", "interrupted", "failed") else "failed")


def _wire_params(cap: dict[str, Any], exc: BaseException) -> dict[str, Any]:
    """Body params of a failed attempt. The SDK error usually carries the HTTP request it sent: take the
    transport flags (stream, stream_options) from it; else assume Hermes's default (streaming, except on
    its non-streaming cron path)."""
    params = dict(cap["params"])
    body = None
    request = getattr(exc, "request", None)
    try:
        content = request.content if request is not None else None
        body = json.loads(content) if content else None
    except Exception:
        body = None
    if isinstance(body, dict):
        for key in ("stream", "stream_options"):
            if key in body:
                params[key] = body[key]
        return params
    if cap["kw"].get("platform") != "cron":
        params["stream"] = True
        if cap["api"] == "openai-chat":
            params.setdefault("stream_options", {"include_usage": True})
    return params


def _tail_state(path: Path) -> tuple[int, float]:
    """Next seq and last time offset of an existing run file; a torn tail is cut off first."""
    with open(path, "rb") as fh:
        data = fh.read()
    if data and not data.endswith(b"\n"):
        os.truncate(path, data.rfind(b"\n") + 1)
    seq, t = 0, 0.0
    for item in iter_trace(path):
        if getattr(item, "kind", "run") != "run":
            seq = max(seq, item.seq + 1)  # type: ignore[union-attr]
            t = max(t, item.t)  # type: ignore[union-attr]
    return seq, t


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return repr(value)


def _result_text(result: Any) -> tuple[str | None, Any]:
    if result is None or isinstance(result, str):
        return result, None
    from replaykit.core.ir import OpaquePart

    # Multimodal tool output ({"_multimodal": True, "content": [...]}) keeps its blocks.
    text = ""
    if isinstance(result, Mapping) and isinstance(result.get("content"), list):
        text = "".join(str(b.get("text", "")) for b in result["content"] if isinstance(b, Mapping))
    return text, [OpaquePart(format="hermes", data=_jsonable(result))]


def _toolsets_of(names: list[str]) -> list[str] | None:
    """Which Hermes toolsets the offered tools belong to (read from Hermes's tool registry)."""
    try:
        from tools.registry import registry
    except Exception:
        return None
    found: list[str] = []
    for name in names:
        try:
            toolset = registry.get_toolset_for_tool(name)
        except Exception:
            toolset = None
        if toolset and toolset not in found:
            found.append(str(toolset))
    return found
