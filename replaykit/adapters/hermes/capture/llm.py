"""LLM calls: the ``llm_execution`` middleware's request (captured at once, never mutated), the raw
response or the exception, and ``api_request_error`` for failed attempts (written with their request)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from replaykit.adapters.hermes import fastpath, reissue, wire
from replaykit.adapters.hermes.capture.sessions import SessionRun, Sessions, safe_base_url
from replaykit.adapters.hermes.capture.wire_deltas import CHAT, Prepared, elements
from replaykit.adapters.hermes.response import response_to_ir, was_streamed
from replaykit.core.trace import jsonsafe
from replaykit.core.trace.bridge import BRIDGE_TOOL_NAMES
from replaykit.core.trace.ir import ErrorEvent, ToolSpec

_EMPTY: dict[str, dict[str, Any]] = {"openai-chat": {"messages": []}, "openai-responses": {"input": []},
                                     "anthropic-messages": {"messages": []}}


@dataclass(slots=True)
class LLMAttempt:
    """One ``llm_execution`` call, from entry to its result or exception."""

    state: SessionRun
    api: str
    model: str | None
    pre: Prepared
    tools: list[ToolSpec] | None
    params: dict[str, Any]
    sdk: dict[str, Any]
    t: float
    t0: float
    kw: Mapping[str, Any]
    agent: Any = None  # Hermes's AIAgent when found (its streaming-5xx re-issue marker)
    probe_mark: Any = None  # that marker before the call


@dataclass(slots=True)
class FailedAttempt:
    """An attempt that raised, waiting for ``api_request_error`` (or the next flush) to complete it."""

    attempt: LLMAttempt
    exc_type: str
    exc_message: str
    status_code: Any
    duration: float


class LLMCapture:
    def __init__(self, sessions: Sessions) -> None:
        self.sessions = sessions

    def llm_before(self, kw: Mapping[str, Any]) -> LLMAttempt | None:
        """Capture the request at once (Hermes's live object; never mutated)."""
        request = kw.get("request")
        session_id = kw.get("session_id")
        if not session_id or not (type(request) is dict or isinstance(request, Mapping)):  # (ABC check: slow)
            return None
        api = wire.API_OF_MODE.get(str(kw.get("api_mode") or "chat_completions"), CHAT)
        state = self.sessions.session(session_id, model=kw.get("model"), platform=kw.get("platform"))
        with state.lock:
            self.sessions.flush(state)
            model, raw_tools, params, sdk = wire.split_request(api, request)
            pre = state.requests.prepare(api, elements(api, request))
            tools = self._tools(state, api, raw_tools)
            if isinstance(raw_tools, list) and not raw_tools:
                params["tools"] = []
            if not state.meta_done:
                self._session_meta(state, kw, tools)
        agent = agent_of(state, kw.get("next_call"))
        return LLMAttempt(state, api, model, pre, tools, params, sdk, state.recorder.now(), time.perf_counter(), kw,
                          agent, reissue.mark(agent))

    def llm_after(self, cap: LLMAttempt, result: Any) -> None:
        state, api = cap.state, cap.api
        reissued = self._reissued(cap)
        if was_streamed(api, result) and not reissued:  # cap.params is this attempt's own dict (split_request)
            cap.params["stream"] = True
            if api == CHAT:
                cap.params.setdefault("stream_options", {"include_usage": True})
        response = fastpath.chat_response(result) if api == CHAT and _is_chat(result) else \
            jsonsafe.model_data(response_to_ir(api, result), exclude_none=True)
        rid = cap.kw.get("api_request_id") or ""
        with state.lock:
            attempt = state.attempts.get(rid, 0) + 1
            state.attempts[rid] = attempt
            event_id = self._write_request(state, cap, "llm_call", cap.t, round(time.perf_counter() - cap.t0, 6),
                                           fastpath.corr(cap.kw), {"response": response, "attempt": attempt})
            state.step_of[event_id] = state.steps
            state.steps += 1
            for call_id in fastpath.tool_call_ids(response):
                state.call_origin[call_id] = event_id
            bridged = fastpath.bridge_calls(response)
            if bridged:  # Tool Search: the model's own call, kept beside the underlying tool Hermes runs
                state.bridged.update(bridged)

    def _reissued(self, cap: LLMAttempt) -> bool:
        """Hermes 0.22: a streamed attempt that failed with a 5xx before its first delta is re-sent
        without streaming inside the same call, and no exception or ``api_request_error`` says so. The
        agent's probe marker moved during the call: write the failed streamed attempt (its exact request,
        marked ``observed: false``: its status and body were never seen) before the call that answered."""
        if not reissue.reissued(cap.agent, cap.probe_mark):
            return False
        streamed = {k: v for k, v in cap.params.items() if k not in ("stream", "stream_options")}
        streamed["stream"] = True
        if cap.api == CHAT:
            streamed["stream_options"] = cap.params.get("stream_options") or {"include_usage": True}
        cap.params = {k: v for k, v in cap.params.items() if k not in ("stream", "stream_options")}
        failed = LLMAttempt(cap.state, cap.api, cap.model, cap.pre, cap.tools, streamed, cap.sdk, cap.t, cap.t0, cap.kw)
        rid = cap.kw.get("api_request_id") or ""
        with cap.state.lock:
            number = cap.state.attempts.get(rid, 0) + 1
            cap.state.attempts[rid] = number
            self._write_request(cap.state, failed, "error", cap.t, None, fastpath.corr(cap.kw), {
                "where": "llm", "error_type": "StreamingServerError", "retryable": True, "attempt": number,
                "message": reissue.REISSUED_MESSAGE,
                "provider_details": {"observed": False, "reissued_non_streaming": True}}, keep_raw=True)
        return True

    def llm_failed(self, cap: LLMAttempt, exc: BaseException) -> None:
        """Stash the failed attempt; ``api_request_error`` completes it (or the next flush does)."""
        if self._reissued(cap):  # the re-sent request failed too (e.g. the 4xx the 5xx masked)
            cap.params.pop("stream", None)
            cap.params.pop("stream_options", None)
            rid = cap.kw.get("api_request_id") or ""
            failed = FailedAttempt(cap, type(exc).__name__, str(exc)[:2000], getattr(exc, "status_code", None),
                                   round(time.perf_counter() - cap.t0, 6))
            with cap.state.lock:
                cap.state.pending_errors[rid] = failed
            return
        rid = cap.kw.get("api_request_id") or ""
        cap.params = _wire_params(cap, exc)
        failed = FailedAttempt(cap, type(exc).__name__, str(exc)[:2000], getattr(exc, "status_code", None),
                               round(time.perf_counter() - cap.t0, 6))
        with cap.state.lock:
            cap.state.pending_errors[rid] = failed

    def api_request_error(self, kw: Mapping[str, Any]) -> None:
        session_id = kw.get("session_id")
        if not session_id:
            return
        state = self.sessions.session(session_id)
        with state.lock:
            failed = state.pending_errors.pop(kw.get("api_request_id") or "", None)
            self.emit_error(state, failed, kw)

    def emit_error(self, state: SessionRun, attempt: FailedAttempt | None, kw: Mapping[str, Any] | None) -> None:
        kw = kw or {}
        error: Mapping[str, Any] = kw["error"] if isinstance(kw.get("error"), Mapping) else {}
        rid = (attempt.attempt.kw.get("api_request_id") if attempt else None) or kw.get("api_request_id") or ""
        number = state.attempts.get(rid, 0) + 1
        state.attempts[rid] = number
        details = {k: kw.get(k) for k in ("reason", "retry_count", "max_retries", "api_call_count") if kw.get(k) is not None}
        status = kw.get("status_code")
        message = str(error.get("message") or (attempt.exc_message if attempt else None) or "LLM request failed")
        if attempt is None:
            state.recorder.llm_error(None, message=message, error_type=error.get("type"), status_code=status,
                                     retryable=kw.get("retryable"), attempt=number, corr=self.sessions.corr(kw),
                                     provider_details=details or None)
            return
        fields: dict[str, Any] = {"where": "llm", "error_type": error.get("type") or attempt.exc_type,
                                  "message": message,
                                  "status_code": status if status is not None else attempt.status_code,
                                  "retryable": kw.get("retryable"), "attempt": number,
                                  "provider_details": details or None}
        cap = attempt.attempt
        self._write_request(state, cap, "error", cap.t, attempt.duration, fastpath.corr(cap.kw),
                            {k: v for k, v in fields.items() if v is not None or k == "provider_details"})

    def _write_request(self, state: SessionRun, cap: LLMAttempt, kind: str, t: float, duration: float | None,
                       corr: dict[str, Any], fields: dict[str, Any], keep_raw: bool = False) -> str:
        """Write an llm_call or error event carrying ``cap``'s request (under ``state.lock``)."""
        recorder = state.recorder
        chain = state.requests
        tools_ref = recorder.declare_tools(cap.tools)
        base, keep, append = chain.delta(cap.pre)
        append = recorder.tool_refs.swap(append)  # tool results already written: by reference
        req = fastpath.request(cap.api, cap.model, base, keep, append, tools_ref, cap.params,
                               {"sdk_kwargs": cap.sdk} if cap.sdk else None)
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
        chain.commit(cap.pre, event_id)
        if not keep_raw:
            cap.pre.raw = []  # Hermes's list: not ours to keep once the call is written
        return event_id

    def _tools(self, state: SessionRun, api: str, raw_tools: Any) -> list[ToolSpec] | None:
        if not isinstance(raw_tools, list) or not raw_tools:
            return None
        if raw_tools is not state.raw_tools and raw_tools != state.raw_tools:
            from replaykit.core.trace import codecs

            state.raw_tools = raw_tools
            state.ir_tools = list(codecs.decode_request(api, {"tools": raw_tools, **_EMPTY[api]}).tools or [])
        return state.ir_tools

    def _session_meta(self, state: SessionRun, kw: Mapping[str, Any], tools: list[ToolSpec] | None) -> None:
        state.meta_done = True
        data: dict[str, Any] = {
            "hermes_version": self.sessions.hermes_version, "model": kw.get("model"), "provider": kw.get("provider"),
            "base_url": safe_base_url(kw.get("base_url")), "api_mode": kw.get("api_mode"),
            "platform": kw.get("platform"), "toolsets": _offered_toolsets(state, tools),
        }
        state.recorder.meta({k: v for k, v in data.items() if v is not None}, corr=self.sessions.corr(kw))


def agent_of(state: SessionRun, next_call: Any) -> Any:
    """The session's ``AIAgent`` (looked for once per session: ``reissue.find_agent``)."""
    if state.agent is None:
        state.agent = reissue.find_agent(next_call) or False
    return state.agent or None


def _wire_params(cap: LLMAttempt, exc: BaseException) -> dict[str, Any]:
    """Body params of a failed attempt. The SDK error usually carries the HTTP request it sent: take the
    transport flags (stream, stream_options) from it; else assume Hermes's default (streaming, except on
    its non-streaming cron path)."""
    params = dict(cap.params)
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
    if cap.kw.get("platform") != "cron":
        params["stream"] = True
        if cap.api == CHAT:
            params.setdefault("stream_options", {"include_usage": True})
    return params


def _offered_toolsets(state: SessionRun, tools: list[ToolSpec] | None) -> list[str] | None:
    """The toolsets of the offered tools, and (Tool Search) of the deferred tools the bridge's catalog
    lists; the capture adds those of tools called later (tools.py)."""
    names = [t.name for t in tools or ()]
    for spec in tools or ():
        if spec.name in BRIDGE_TOOL_NAMES and spec.description:
            names.extend(m.group(1) for m in _CATALOG_LINE.finditer(spec.description))
    found = toolsets_of(names)
    if found is not None:
        state.toolsets = list(found)
    return found


_CATALOG_LINE = re.compile(r"(?m)^- ([A-Za-z0-9_.:-]+):")


def toolsets_of(names: list[str]) -> list[str] | None:
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


def _is_chat(result: Any) -> bool:
    """Whether ``response_to_ir`` would read a Chat-mode result as a chat completion (the same test)."""
    if isinstance(result, dict):
        if result.get("choices") is not None:
            return True
        return result.get("output") is None and result.get("stop_reason", "?") == "?"
    if getattr(result, "choices", None) is not None:
        return True
    return getattr(result, "output", None) is None and getattr(result, "stop_reason", "?") == "?"
