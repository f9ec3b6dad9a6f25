"""Tool calls: the ``tool_execution`` middleware (entered once, or twice nested on Hermes's thread-pool
path: de-duplicated by tool call id) and the ``post_tool_call`` hook (status, error details), in either
order.

A call that entered is always written: every step between entry and exit that could fail is guarded on
its own (``_step``), and the exit falls back to writing the call at once if completing it through the
session fails. ``post_tool_call`` alone (entry failed entirely) still writes it, marked
``reconstructed_from``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from replaykit.adapters.hermes import fastpath
from replaykit.adapters.hermes.capture.pending import PendingCall
from replaykit.adapters.hermes.capture.sessions import SessionRun, Sessions
from replaykit.adapters.hermes.guarded import log_once
from replaykit.core.trace import jsonsafe
from replaykit.core.trace.bridge import BRIDGE_TOOL_NAME


class ToolCapture:
    def __init__(self, sessions: Sessions) -> None:
        self.sessions = sessions

    def tool_enter(self, kw: Mapping[str, Any]) -> PendingCall | None:
        """The pending call when this is the outermost entry for it (None for a nested re-entry)."""
        call_id = str(kw.get("tool_call_id") or f"{kw.get('tool_name')}@{threading.get_ident()}")
        key = (str(kw.get("session_id") or ""), call_id)
        with self.sessions.lock:
            if key in self.sessions.active_tools:
                return None
            self.sessions.active_tools.add(key)
        pending = PendingCall(key, call_id, kw.get("tool_name"), kw.get("args"), kw.get("original_args"), kw,
                              time.perf_counter())
        # From here on the call is ours: a failing step must not lose it.
        _step("tool_execution.stamp", self._stamp, pending)
        _step("tool_execution.current", self._mark_current, pending)
        return pending

    def _stamp(self, pending: PendingCall) -> None:
        if pending.session_id:
            pending.t = self.sessions.session(pending.session_id).recorder.now()

    def _mark_current(self, pending: PendingCall) -> None:
        self.sessions.local.tool_call_id = pending.call_id  # subagent_start links the child to this call

    def tool_exit(self, pending: PendingCall, result: Any, exc: BaseException | None) -> None:
        pending.duration = round(time.perf_counter() - pending.t0, 6)
        pending.result, pending.exc = result, exc
        try:
            with self.sessions.lock:
                self.sessions.active_tools.discard(pending.key)
            self.sessions.local.tool_call_id = None
        finally:
            if pending.session_id:
                state = self.sessions.session(pending.session_id)
                try:
                    self._complete(state, pending)
                except Exception as error:
                    log_once("tool_execution.complete", error)
                    with state.lock:
                        if pending.call_id not in state.emitted_calls:
                            state.pending_tools.pop(pending.call_id, None)
                            self.emit_tool(state, pending.call_id, pending, state.hook_info.pop(pending.call_id, None))

    def _complete(self, state: SessionRun, pending: PendingCall) -> None:
        with state.lock:
            hook = state.hook_info.pop(pending.call_id, None)
            if hook is not None:  # thread-pool path: the inner layer's post_tool_call came first
                self.emit_tool(state, pending.call_id, pending, hook)
            else:  # sequential path: post_tool_call follows and completes it
                self._stash(state, pending)

    @staticmethod
    def _stash(state: SessionRun, pending: PendingCall) -> None:
        state.pending_tools[pending.call_id] = pending

    def post_tool_call(self, kw: Mapping[str, Any]) -> None:
        session_id = kw.get("session_id")
        if not session_id:
            return
        state = self.sessions.session(session_id)
        call_id = str(kw.get("tool_call_id") or f"{kw.get('tool_name')}@{threading.get_ident()}")
        with state.lock:
            if call_id in state.emitted_calls:
                return  # the outer layer of a nested chain reports the same call again
            pending = state.pending_tools.pop(call_id, None)
            if pending is None and (session_id, call_id) in self.sessions.active_tools:
                state.hook_info[call_id] = dict(kw)  # tool_exit of the outermost layer will emit
                return
            self.emit_tool(state, call_id, pending, kw)

    def emit_tool(self, state: SessionRun, call_id: str, pending: PendingCall | None,
                   hook: Mapping[str, Any] | None) -> None:
        state.emitted_calls.add(call_id)
        hook = hook or {}
        if pending is not None:
            name, args, result = pending.name or hook.get("tool_name"), pending.args, pending.result
            status = hook.get("status") or ("error" if pending.exc is not None else "ok")
            error = hook.get("error_message") or (repr(pending.exc) if pending.exc is not None else None)
            duration = pending.duration
            kw, t = pending.kw, pending.t
        else:
            name, args, result = hook.get("tool_name"), hook.get("args"), hook.get("result")
            status, error = hook.get("status") or "ok", hook.get("error_message")
            duration = hook["duration_ms"] / 1000.0 if isinstance(hook.get("duration_ms"), (int, float)) else None
            kw, t = hook, None
        text, blocks = _result_text(result)
        details: dict[str, Any] = {}
        if pending is not None and pending.original_args not in (None, args):
            details["original_args"] = _jsonable(pending.original_args)
        if hook.get("error_type"):
            details["error_type"] = hook["error_type"]
        if pending is None:
            details["reconstructed_from"] = "post_tool_call"
        body = fastpath.envelope("tool_call", state.recorder.now() if t is None else t, duration,
                                 fastpath.corr(kw, call_id), details or None)
        body["call_id"] = call_id
        arguments = _jsonable(args)
        bridge = state.bridged.get(call_id, _NOT_BRIDGED)
        if bridge is not _NOT_BRIDGED and name != BRIDGE_TOOL_NAME:
            # Tool Search: the model called the bridge; Hermes ran (and its hooks saw) the underlying tool.
            body["name"] = BRIDGE_TOOL_NAME
            if bridge is not None:
                body["arguments"] = bridge
            underlying: dict[str, Any] = {"name": str(name or "")}
            if arguments is not None:
                underlying["arguments"] = arguments
        else:
            underlying = {}
            body["name"] = str(name or "")
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
        if underlying:
            body["underlying"] = underlying
        event_id = state.recorder.emit_dict(body)
        # The next request repeats this result as a tool message: written as a reference when equal.
        state.recorder.tool_refs.note_json(event_id, body)
        state.steps += 1
        _note_toolset(state, str(name or ""))
        if str(name or "") == "skill_view" and isinstance(args, Mapping) and args.get("name"):
            skill = str(args["name"])
            if skill not in state.skills:
                state.skills.append(skill)
                state.recorder.meta({"skills_loaded": list(state.skills)})


_NOT_BRIDGED = object()


def _note_toolset(state: SessionRun, tool: str) -> None:
    """A called tool whose toolset the offered list did not show (a deferred tool run through the
    Tool Search bridge) adds that toolset to the run's meta: a play must enable it."""
    if not state.meta_done or not tool:
        return
    from replaykit.adapters.hermes.capture.llm import toolsets_of

    found = toolsets_of([tool]) or []
    new = [t for t in found if t not in state.toolsets]
    if new:
        state.toolsets.extend(new)
        state.recorder.meta({"toolsets": list(state.toolsets)})


def _step(where: str, fn: Callable[[PendingCall], None], pending: PendingCall) -> None:
    try:
        fn(pending)
    except Exception as exc:
        log_once(where, exc)


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
    from replaykit.core.trace.ir import OpaquePart

    # Multimodal tool output ({"_multimodal": True, "content": [...]}) keeps its blocks.
    text = ""
    if isinstance(result, Mapping) and isinstance(result.get("content"), list):
        text = "".join(str(b.get("text", "")) for b in result["content"] if isinstance(b, Mapping))
    return text, [OpaquePart(format="hermes", data=_jsonable(result))]
