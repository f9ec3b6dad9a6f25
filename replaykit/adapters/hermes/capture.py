"""The capture engine inside Hermes: one run per Hermes session, fed by hooks and middleware.

Threading: Hermes fires hooks and middleware on its main loop thread, on thread-pool workers (parallel
tools, subagents) and after a parent turn has ended (``subagent_stop``). Each session's state is guarded
by its own lock; the per-run ``Recorder`` serialises event numbering and writes (one ``os.write`` per
event, so every event is on disk as it happens; an fsync at turn end, on a background thread: syncer.py).

Hot path (see docs/hermes.md, "Cost"): LLM calls and tool calls are written as plain dicts in the event's
JSON shape (``fastpath.py``, ``Recorder.emit_dict``); each request is delta-encoded by comparing its raw
wire messages with the previous request's and decoding only the appended tail.

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
from typing import Any, cast

from replaykit import __version__ as replaykit_version
from replaykit.adapters.hermes import fastpath, wire
from replaykit.adapters.hermes.response import response_to_ir, was_streamed
from replaykit.adapters.hermes.syncer import BackgroundSyncer
from replaykit.core import jsonsafe
from replaykit.core.ir import (
    Correlation,
    ErrorEvent,
    Lineage,
    Message,
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
    list again. LLM calls, errors with a request and tool calls are written by ``HermesCapture`` itself
    as plain dicts (``Recorder.emit_dict``), with the message delta computed on the raw wire messages."""

    _tools_obj: Sequence[ToolSpec] | None = None
    _tools_digest: str | None = None

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
    # The last request written: its raw conversation elements (see _commit), the number of IR messages
    # the first i of them decode to (cum[i]), its event id, and a counter of requests written (_delta).
    raw_prev: list[Any] = field(default_factory=list)
    cum: list[int] = field(default_factory=lambda: [0])
    last_request_id: str | None = None
    requests_written: int = 0
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
        # Hermes's own list, not copied: it is compared and its new tail sliced at once; the list itself is
        # only looked at again if another request of the session is written before this one (_delta).
        return msgs if isinstance(msgs, list) else []
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
        self.syncer = BackgroundSyncer()
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
        recorder = _HermesRecorder(header, _maybe_redacting(writer), keep_events=False, start_seq=start_seq, t0=t0)
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

    @staticmethod
    def _prefix(state: SessionRun, api: str, raw: list[Any]) -> dict[str, Any]:
        """Compare a request's raw conversation with the last request's and decode only the new tail.

        Hermes rebuilds the messages list (shallow copies) for every call, so this is one C-level list
        comparison of small dicts whose values are the very same objects (identity short-cuts it); no IR
        message of the unchanged prefix is decoded, compared or copied again."""
        prev = state.raw_prev
        n = len(prev) if state.api == api and state.last_request_id is not None else 0
        if n and len(raw) >= n and (raw == prev if len(raw) == n else raw[:n] == prev):
            keep = n  # the common case: the conversation grew
        else:
            keep = 0  # history was rewritten (compression, a retry that changed a message): find where
            limit = min(len(raw), n)
            while keep < limit and raw[keep] == prev[keep]:
                keep += 1
        tail_raw = raw[keep:]
        tail = [_decode(api, element) for element in tail_raw]
        return {"raw": raw, "keep": keep, "tail_raw": tail_raw, "tail": tail, "api": api,
                "written": state.requests_written}

    def _delta(self, state: SessionRun, pre: dict[str, Any]) -> tuple[str | None, int, list[dict[str, Any]]]:
        """(base event id, messages kept, appended messages) of a prepared request (under ``state.lock``)."""
        if pre["written"] != state.requests_written:  # another request was written since: compare again
            pre.update(self._prefix(state, pre["api"], pre["raw"]))
        keep_ir = state.cum[pre["keep"]] if pre["keep"] else 0
        append = [m for group in pre["tail"] for m in group]
        return (state.last_request_id if keep_ir else None), keep_ir, append

    @staticmethod
    def _commit(state: SessionRun, pre: dict[str, Any], event_id: str) -> None:
        """The request of ``pre`` was written as ``event_id``: later requests are deltas against it."""
        cum = state.cum
        del cum[pre["keep"] + 1:]
        total = cum[-1]
        for group in pre["tail"]:
            total += len(group)
            cum.append(total)
        # raw_prev keeps the elements first seen for each position (equal to this request's by the prefix
        # comparison), so the previous request's copies are not kept alive.
        prev = state.raw_prev
        del prev[pre["keep"]:]
        prev.extend(pre["tail_raw"])
        state.api, state.last_request_id = pre["api"], event_id
        state.requests_written += 1

    def _write_request(self, state: SessionRun, cap: dict[str, Any], kind: str, t: float, duration: float | None,
                       corr: dict[str, Any], fields: dict[str, Any]) -> str:
        """Write an llm_call or error event carrying ``cap``'s request (under ``state.lock``)."""
        recorder = state.recorder
        tools_ref = recorder.declare_tools(cap["tools"])
        base, keep, append = self._delta(state, cap["pre"])
        sdk = cap["sdk"]
        req = fastpath.request(cap["api"], cap["model"], base, keep, append, tools_ref, cap["params"],
                               {"sdk_kwargs": sdk} if sdk else None)
        body = fastpath.envelope(kind, t, duration, corr, fields.pop("provider_details", None))
        if kind == "llm_call":
            body["request"] = req
            body.update(fields)
        else:
            body.update(fields)
            body["request"] = req
            # Errors are rare: let pydantic normalise them (types Hermes may pass loosely, e.g. status codes).
            event = ErrorEvent.model_validate({"seq": 0, "id": "e", **body})
            body = jsonsafe.model_data(event, exclude_none=True, exclude={"seq", "id"})
        event_id = recorder.emit_dict(body)
        self._commit(state, cap["pre"], event_id)
        return event_id

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
            pre = self._prefix(state, api, _elements(api, request))
            tools = self._tools(state, api, raw_tools)
            if isinstance(raw_tools, list) and not raw_tools:
                params["tools"] = []
            if not state.meta_done:
                self._session_meta(state, kw, tools)
        return {"state": state, "api": api, "model": model, "pre": pre, "tools": tools,
                "params": params, "sdk": sdk, "t": state.recorder.now(), "t0": time.perf_counter(), "kw": kw}

    def llm_after(self, cap: dict[str, Any], result: Any) -> None:
        state: SessionRun = cap["state"]
        api = cap["api"]
        params = cap["params"]
        if was_streamed(api, result):
            params = {**params, "stream": True}
            if api == "openai-chat":
                params.setdefault("stream_options", {"include_usage": True})
        response = fastpath.chat_response(result) if api == "openai-chat" and _is_chat(result) else \
            jsonsafe.model_data(response_to_ir(api, result), exclude_none=True)
        kw = cap["kw"]
        rid = kw.get("api_request_id") or ""
        cap["params"] = params
        with state.lock:
            attempt = state.attempts.get(rid, 0) + 1
            state.attempts[rid] = attempt
            event_id = self._write_request(state, cap, "llm_call", cap["t"], round(time.perf_counter() - cap["t0"], 6),
                                           fastpath.corr(kw), {"response": response, "attempt": attempt})
            state.step_of[event_id] = state.steps
            state.steps += 1
            for call_id in fastpath.tool_call_ids(response):
                state.call_origin[call_id] = event_id

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
        fields: dict[str, Any] = {"where": "llm", "error_type": error.get("type") or cap.get("exc_type"),
                                  "message": message,
                                  "status_code": status if status is not None else cap.get("status_code"),
                                  "retryable": kw.get("retryable"), "attempt": attempt,
                                  "provider_details": details or None}
        self._write_request(state, cap, "error", cap["t"], cap.get("duration"), fastpath.corr(cap["kw"]),
                            {k: v for k, v in fields.items() if v is not None or k == "provider_details"})

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
        t = pending["t"] if pending else None
        body = fastpath.envelope("tool_call", state.recorder.now() if t is None else t, duration,
                                 fastpath.corr(kw, call_id), details or None)
        body["call_id"] = call_id
        body["name"] = name
        arguments = _jsonable(args)
        if arguments is not None:
            body["arguments"] = arguments
        if text is not None:
            body["result"] = text
        if blocks is not None:
            body["result_blocks"] = [jsonsafe.model_data(b, exclude_none=True) for b in blocks]
        body["status"] = status if status in ("ok", "error", "blocked") else "error"
        if error is not None:
            body["error"] = error if isinstance(error, str) else str(error)
        origin = state.call_origin.get(call_id)
        if origin is not None:
            body["llm_call_id"] = origin
        state.recorder.emit_dict(body)
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
            state.recorder.turn_end(state.final_answer, status=status, reason=kw.get("reason"), corr=self._corr(kw),
                                    sync=False)
        # The turn-end fsync, without making Hermes wait for the disk (see syncer.py).
        self.syncer.request(state.recorder.writer.path)  # type: ignore[union-attr]

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
        if not (state.pending_errors or state.pending_tools or state.hook_info):
            return  # the usual case, checked before every LLM call
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
            child.recorder.meta({"lineage": jsonsafe.model_data(lineage, exclude_none=True)})

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
                self.syncer.request(parent.recorder.writer.path)  # type: ignore[union-attr]
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


def _decode(api: str, element: Any) -> list[dict[str, Any]]:
    """One raw conversation element -> its IR messages as JSON dicts (fast path for Chat, else codecs)."""
    if api == "openai-chat":
        fast = fastpath.chat_message(element)
        if fast is not None:
            return [fast]
    return [jsonsafe.model_data(m, exclude_none=True) for m in _convert(api, element)]


def _is_chat(result: Any) -> bool:
    """Whether ``response_to_ir`` would read a Chat-mode result as a chat completion (the same test)."""
    get = result.get if isinstance(result, dict) else (lambda name, default=None: getattr(result, name, default))
    if get("choices") is not None:
        return True
    return get("output") is None and get("stop_reason", "?") == "?"


def _maybe_redacting(writer: RunWriter) -> RunWriter:
    """Redact before anything reaches disk when ``$REPLAYKIT_REDACT`` is ``patterns`` or ``ner``.

    Checked here first so an ordinary recording never imports the redaction package (or Presidio).
    """
    if os.environ.get("REPLAYKIT_REDACT", "").strip().lower() in ("", "off", "0", "no", "false"):
        return writer
    from replaykit.core.redaction import maybe_redacting

    return cast(RunWriter, maybe_redacting(writer))
