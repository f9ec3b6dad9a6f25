"""Sessions: one replaykit run per Hermes session, its per-session state, user turns and the end.

Threading: Hermes fires hooks and middleware on its loop thread, on thread-pool workers (parallel tools,
subagents) and after a parent turn has ended (``subagent_stop``). Each session's state has its own
lock; the per-run ``Recorder`` serialises numbering and writes (one ``os.write`` per event: on disk as
it happens). The turn-end fsync runs on a background thread (syncer.py).
"""

from __future__ import annotations

import atexit
import os
import re
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from replaykit import __version__ as replaykit_version
from replaykit.adapters.hermes import fastpath
from replaykit.adapters.hermes.capture.pending import PendingCall
from replaykit.adapters.hermes.capture.wire_deltas import RequestChain
from replaykit.adapters.hermes.syncer import BackgroundSyncer
from replaykit.core.trace.ir import Correlation, Lineage, RunHeader, Source, ToolSpec
from replaykit.core.trace.reader import iter_trace
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.store import RunStore, RunWriter, utc_now_iso

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


class HermesRecorder(Recorder):
    """The session's recorder. LLM calls, errors with a request and tool calls are written by the capture
    itself as plain dicts (``Recorder.emit_dict``), with the message delta decided by ``wire_deltas``."""


@dataclass(slots=True)
class SessionRun:
    """Capture state of one Hermes session (= one replaykit run). Per-turn maps are cleared at turn end,
    so what it holds does not grow with the conversation beyond its own copy of the last
    request's containers (``requests``)."""

    session_id: str
    recorder: HermesRecorder
    lock: threading.RLock = field(default_factory=threading.RLock)
    requests: RequestChain = field(default_factory=RequestChain)
    raw_tools: Any = None
    ir_tools: list[ToolSpec] | None = None
    attempts: dict[str, int] = field(default_factory=dict)  # api_request_id -> attempts written (this turn)
    pending_tools: dict[str, PendingCall] = field(default_factory=dict)  # ran, waiting for post_tool_call
    hook_info: dict[str, dict[str, Any]] = field(default_factory=dict)  # post_tool_call seen mid-execution
    emitted_calls: set[str] = field(default_factory=set)  # tool calls written this turn
    pending_errors: dict[str, Any] = field(default_factory=dict)  # api_request_id -> llm.FailedAttempt
    call_origin: dict[str, str] = field(default_factory=dict)  # tool_call_id -> llm_call event id (this turn)
    bridged: dict[str, Any] = field(default_factory=dict)  # tool_call_id -> the model's tool_call arguments (this turn)
    toolsets: list[str] = field(default_factory=list)  # toolsets offered or called so far (meta "toolsets")
    agent: Any = None  # Hermes's AIAgent once found (llm.agent_of); False: looked, not found
    step_of: dict[str, int] = field(default_factory=dict)  # llm_call event id -> step index (this turn)
    steps: int = 0
    turn: int = 0
    final_answer: str | None = None
    meta_done: bool = False
    skills: list[str] = field(default_factory=list)
    closed: bool = False

    def end_turn(self) -> None:
        """Forget what only matters within a turn (memory stays O(1) per message)."""
        self.attempts.clear()
        self.emitted_calls.clear()
        self.call_origin.clear()
        self.bridged.clear()
        self.step_of.clear()


ErrorEmitter = Callable[["SessionRun", Any, "Mapping[str, Any] | None"], None]
ToolEmitter = Callable[["SessionRun", str, Any, "Mapping[str, Any] | None"], None]


def _unwired(*_args: Any) -> None:
    raise RuntimeError("Sessions.emit_error / emit_tool are wired by HermesCapture")


class Sessions:
    """The sessions, turns and run ends: one run per Hermes session and its per-session state. The LLM,
    tool and subagent captures (llm.py, tools.py, subagents.py) are each handed this object;
    ``HermesCapture`` wires the two emitters a flush needs (``emit_error``: a failed attempt that never
    got its ``api_request_error``; ``emit_tool``: a tool call that never got its completing hook)."""

    def __init__(self, store: RunStore, *, hermes_version: str | None = None) -> None:
        self.emit_error: ErrorEmitter = _unwired
        self.emit_tool: ToolEmitter = _unwired
        self.store = store
        self.hermes_version = hermes_version
        self.runs: dict[str, SessionRun] = {}
        self.links: dict[str, Lineage] = {}
        self.lock = threading.Lock()
        self.active_tools: set[tuple[str, str]] = set()
        self.local = threading.local()
        self.last_session: str | None = None  # the session whose turn started last (auxiliary calls' default)
        self.on_turn_end: Callable[[str], None] | None = None  # HermesCapture: write what waited too long
        self.on_exit: Callable[[str], None] | None = None  # HermesCapture: write what is still pending
        self.syncer = BackgroundSyncer()
        atexit.register(self.close_all)

    # ------------------------------------------------------------------ sessions

    def session(self, session_id: str, **info: Any) -> SessionRun:
        state = self.runs.get(session_id)
        if state is not None and not state.closed:
            return state
        with self.lock:
            state = self.runs.get(session_id)
            if state is None or state.closed:
                state = self._open(session_id, info)
                self.runs[session_id] = state
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
            lineage=self.links.get(session_id), title=None,
        )
        start_seq, t0 = 0, None
        if path.exists():
            # The session continues in this process (resume): append after what is on disk.
            start_seq, last_t = _tail_state(path)
            t0 = time.monotonic() - last_t
            writer = RunWriter(path, header, exist_ok=True)
        else:
            writer = RunWriter(path, header)
        recorder = HermesRecorder(header, _maybe_redacting(writer), keep_events=False, start_seq=start_seq, t0=t0)
        return SessionRun(session_id=session_id, recorder=recorder)

    def close_all(self) -> None:
        with self.lock:
            states = list(self.runs.values())
        for state in states:
            with state.lock:
                if not state.closed:
                    # At exit no completing hook can come any more: what a turn left pending (an auxiliary
                    # call still in flight on Hermes's daemon thread, e.g. the session title) is written now,
                    # marked, rather than lost with the process.
                    if self.on_exit is not None:
                        self.on_exit(state.session_id)
                    self.flush(state)
                    state.recorder.close()
                    state.closed = True

    @staticmethod
    def corr(kw: Mapping[str, Any], tool_call_id: str | None = None) -> Correlation:
        return Correlation(session_id=kw.get("session_id") or None, task_id=kw.get("task_id") or None,
                           turn_id=kw.get("turn_id") or None, api_request_id=kw.get("api_request_id") or None,
                           tool_call_id=tool_call_id)

    # ------------------------------------------------------------------ turns

    def session_start(self, kw: Mapping[str, Any]) -> None:
        if kw.get("session_id"):
            self.session(kw["session_id"], model=kw.get("model"), platform=kw.get("platform"))

    def turn_start(self, kw: Mapping[str, Any]) -> None:
        session_id = kw.get("session_id")
        if not session_id:
            return
        state = self.session(session_id, model=kw.get("model"), platform=kw.get("platform"))
        if kw.get("platform") != "subagent":
            self.last_session = session_id
        message = kw.get("user_message")
        first = kw.get("is_first_turn")
        # Written as the event's JSON dict (Recorder.emit_dict: no pydantic model on Hermes's thread).
        body = fastpath.envelope("turn_start", state.recorder.now(), None, fastpath.corr(kw),
                                 {"is_first_turn": first} if isinstance(first, bool) else None)
        body["message"] = {"role": "user", "parts": [
            {"type": "text", "text": message if isinstance(message, str) else str(message)}]}
        with state.lock:
            state.final_answer = None
            body["turn"] = state.turn
            state.recorder.emit_dict(body)
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
        if self.on_turn_end is not None:
            self.on_turn_end(session_id)
        status = "interrupted" if kw.get("interrupted") else ("completed" if kw.get("completed", True) else "failed")
        if kw.get("failed") is True and status == "completed":  # Hermes 0.22 says so explicitly
            status = "failed"
        reason = kw.get("reason") or kw.get("turn_exit_reason")
        with state.lock:
            self.flush(state)
            body = fastpath.envelope("turn_end", state.recorder.now(), None, fastpath.corr(kw), None)
            if state.final_answer is not None:
                body["final_answer"] = state.final_answer
            body["status"] = status
            if reason is not None:
                body["reason"] = reason if isinstance(reason, str) else str(reason)
            state.recorder.emit_dict(body)
            state.end_turn()
        # The turn-end fsync, without making Hermes wait for the disk (see syncer.py).
        self.syncer.request(state.recorder.writer.path)  # type: ignore[union-attr]

    def session_close(self, kw: Mapping[str, Any], status: str = "completed") -> None:
        session_id = kw.get("old_session_id") or kw.get("session_id")
        if not session_id or session_id not in self.runs:
            return
        state = self.runs[session_id]
        with state.lock:
            if state.closed:
                return
            self.flush(state)
            state.recorder.run_end(state.final_answer, status=status, reason=kw.get("reason"),  # type: ignore[arg-type]
                                   corr=self.corr(kw))
            state.recorder.close()
            state.closed = True

    def flush(self, state: SessionRun) -> None:
        """Emit what never got its completing hook (call under ``state.lock``)."""
        if not (state.pending_errors or state.pending_tools or state.hook_info):
            return  # the usual case, checked before every LLM call
        for attempt in list(state.pending_errors.values()):
            self.emit_error(state, attempt, None)
        state.pending_errors.clear()
        for call_id, pending in list(state.pending_tools.items()):
            self.emit_tool(state, call_id, pending, None)
        state.pending_tools.clear()
        for call_id, hook in list(state.hook_info.items()):
            if call_id not in state.emitted_calls:
                self.emit_tool(state, call_id, None, hook)
        state.hook_info.clear()


def _tail_state(path: Path) -> tuple[int, float]:
    """Next seq and last time offset of an existing run file; a torn tail is cut off first (a compacted
    run is expanded back to plain lines: the session appends to it)."""
    from replaykit.core.trace.compact import expand_run

    expand_run(path)
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


def _maybe_redacting(writer: RunWriter) -> RunWriter:
    """Redact before anything reaches disk when ``$REPLAYKIT_REDACT`` is ``patterns`` or ``ner``.

    Checked here first so an ordinary recording never imports the redaction package (or Presidio).
    """
    if os.environ.get("REPLAYKIT_REDACT", "").strip().lower() in ("", "off", "0", "no", "false"):
        return writer
    from replaykit.core.redaction import maybe_redacting

    return cast(RunWriter, maybe_redacting(writer))
