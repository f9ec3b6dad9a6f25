"""Auxiliary LLM calls (Hermes 0.22+): title generation, context compression, vision descriptions, MoA
advisors... reach the provider outside the agent loop (no ``llm_execution``), seen only by the
``pre_auxiliary_call`` / ``post_auxiliary_call`` hooks, which run on a fresh thread each.

Each becomes one ``opaque`` event ``hermes/auxiliary_call`` in the session's run (the session of the turn it
ran under, else the session that spoke last): not a step, so never counted as an agent step nor sent to a
candidate by eval, but kept (``inspect`` and the viewer show it as ``auxiliary <task>``). Its ``data``:
``task`` (Hermes's ``aux_task``), ``request`` (the ``{"method", "body"}`` Hermes hands the hook: sanitised
by Hermes, long strings cut, credentials redacted; ``request_exact`` says whether nothing was cut),
``response`` (Hermes's summary of the answer), ``usage``, ``error``, ``streaming`` and the ids.

Each call is written once, when its ``post`` comes. A call is often still in flight when its turn ends
(0.22 titles a session on a self-hosted endpoint only once the turn settles), so a turn end writes only a
``pre`` that has waited longer than ``STALE_AFTER_S`` for its ``post`` (Hermes skips a callback that ran past
its 30 s cap, so that ``post`` may never come); at process exit every call still pending is written. Both
are marked ``"outcome": "unknown"``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

from replaykit.adapters.hermes.capture.sessions import Sessions
from replaykit.adapters.hermes.capture.tools import _jsonable

SOURCE, NAME = "hermes", "auxiliary_call"
_IDS = ("aux_task", "api_request_id", "started_at")
#: seconds a ``pre`` waits for its ``post`` before a turn end writes it as of unknown outcome
STALE_AFTER_S = 300.0


def _key(kw: Mapping[str, Any]) -> tuple[Any, ...]:
    return tuple(kw.get(k) for k in _IDS)


def _exact(value: Any) -> bool:
    """False when Hermes's hook sanitiser cut something (``_truncated`` or a string at its 8000 cap)."""
    if isinstance(value, Mapping):
        return "_truncated" not in value and all(_exact(v) for v in value.values())
    if isinstance(value, list):
        return len(value) < 200 and all(_exact(v) for v in value)
    if isinstance(value, str):
        return len(value) < 8000
    return True


class AuxiliaryCapture:
    def __init__(self, sessions: Sessions) -> None:
        self.sessions = sessions
        self.lock = threading.Lock()
        self.pending: dict[tuple[Any, ...], dict[str, Any]] = {}
        self.since: dict[tuple[Any, ...], float] = {}  # when each pending call's pre came (monotonic)

    def pre(self, kw: Mapping[str, Any]) -> None:
        request = kw.get("request")
        data: dict[str, Any] = {"task": kw.get("aux_task"), "request": _jsonable(request),
                                "request_exact": _exact(request), "streaming": kw.get("streaming"),
                                "model": kw.get("model"), "provider": kw.get("provider"),
                                "api_mode": kw.get("api_mode"), "api_request_id": kw.get("api_request_id") or None,
                                "retry_count": kw.get("retry_count"), "session_id": kw.get("session_id") or None,
                                "turn_id": kw.get("turn_id") or None}
        with self.lock:
            self.pending[_key(kw)] = {k: v for k, v in data.items() if v is not None}
            self.since[_key(kw)] = time.monotonic()

    def post(self, kw: Mapping[str, Any]) -> None:
        with self.lock:
            data = self.pending.pop(_key(kw), None)
            self.since.pop(_key(kw), None)
        if data is None:  # pre was not seen (registered late, or its callback timed out)
            data = {k: v for k, v in {
                "task": kw.get("aux_task"), "request": None, "request_exact": False, "model": kw.get("model"),
                "provider": kw.get("provider"), "api_mode": kw.get("api_mode"),
                "api_request_id": kw.get("api_request_id") or None, "session_id": kw.get("session_id") or None,
                "turn_id": kw.get("turn_id") or None}.items() if v is not None}
        data.update({k: v for k, v in {
            "response": _jsonable(kw.get("response")), "usage": _jsonable(kw.get("usage")),
            "finish_reason": kw.get("finish_reason"), "error": kw.get("error"), "error_type": kw.get("error_type"),
            "duration": kw.get("api_duration"), "outcome": "error" if kw.get("error") else "ok"}.items()
            if v is not None})
        self._write(kw.get("session_id") or data.get("session_id"), data)

    def flush_stale(self, session_id: str) -> None:
        """At a turn end: write the calls of ``session_id`` that have waited too long for their ``post``."""
        self.flush(session_id, older_than=STALE_AFTER_S)

    def flush(self, session_id: str, older_than: float = 0.0) -> None:
        """Write the calls of ``session_id`` still pending (at exit: every one), marked unknown."""
        now = time.monotonic()
        with self.lock:
            keys = [k for k, d in self.pending.items()
                    if (d.get("session_id") or self.sessions.last_session) == session_id
                    and now - self.since.get(k, now) >= older_than]
            stale = [self.pending.pop(k) for k in keys]
            for k in keys:
                self.since.pop(k, None)
        for data in stale:
            self._write(session_id, {**data, "outcome": "unknown"})

    def _write(self, session_id: Any, data: dict[str, Any]) -> None:
        session_id = session_id or self.sessions.last_session
        if not session_id:
            return
        state = self.sessions.session(str(session_id))
        with state.lock:
            state.recorder.opaque(SOURCE, NAME, data)
