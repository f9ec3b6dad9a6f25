"""The capture engine inside Hermes: one run per Hermes session, fed by hooks and middleware.

Split by concern (see docs/hermes.md, "Capture design"):

- ``sessions.py``: a run per session, per-session state (``SessionRun``), user turns, run ends (``Sessions``);
- ``wire_deltas.py``: each request as a delta against the previous one, decided in O(1) on Hermes's
  thread, the rest verified on a background thread;
- ``llm.py``: ``llm_execution`` attempts, responses and failed attempts;
- ``tools.py``: ``tool_execution`` and ``post_tool_call`` (``PendingCall``: a call that entered is
  always written);
- ``subagents.py``: child runs linked to the parent's launching step.

Nothing here may break the agent: the plugin wraps every entry point so an exception is logged once and
swallowed (middleware always calls ``next_call`` exactly once and re-raises only downstream errors).
"""

from __future__ import annotations

from replaykit.adapters.hermes.capture.auxiliary import AuxiliaryCapture
from replaykit.adapters.hermes.capture.llm import FailedAttempt, LLMAttempt, LLMCapture
from replaykit.adapters.hermes.capture.pending import PendingCall
from replaykit.adapters.hermes.capture.sessions import (
    ADAPTER,
    SessionRun,
    Sessions,
    run_id_for_session,
    safe_base_url,
)
from replaykit.adapters.hermes.capture.subagents import SubagentCapture
from replaykit.adapters.hermes.capture.tools import ToolCapture
from replaykit.core.trace.store import RunStore


class HermesCapture:
    """Process-wide capture engine (the plugin makes one): the four concerns composed over one
    ``Sessions``, and the entry points Hermes's hooks and middleware call (bound once here, so a hook
    costs one call, not a delegation)."""

    def __init__(self, store: RunStore, *, hermes_version: str | None = None) -> None:
        self.sessions = sessions = Sessions(store, hermes_version=hermes_version)
        self.llm = llm = LLMCapture(sessions)
        self.tools = tools = ToolCapture(sessions)
        self.subagents = subagents = SubagentCapture(sessions)
        self.auxiliary = auxiliary = AuxiliaryCapture(sessions)
        sessions.on_turn_end = auxiliary.flush_stale
        sessions.on_exit = auxiliary.flush
        sessions.emit_error = llm.emit_error
        sessions.emit_tool = tools.emit_tool
        self.store, self.syncer = store, sessions.syncer
        # sessions and turns
        self.session_start = sessions.session_start
        self.turn_start = sessions.turn_start
        self.post_llm_call = sessions.post_llm_call
        self.turn_end = sessions.turn_end
        self.session_close = sessions.session_close
        self.close_all = sessions.close_all
        # LLM attempts
        self.llm_before = llm.llm_before
        self.llm_after = llm.llm_after
        self.llm_failed = llm.llm_failed
        self.api_request_error = llm.api_request_error
        # tools
        self.tool_enter = tools.tool_enter
        self.tool_exit = tools.tool_exit
        self.post_tool_call = tools.post_tool_call
        # auxiliary calls (Hermes 0.22+: titles, compression, vision)
        self.aux_pre = auxiliary.pre
        self.aux_post = auxiliary.post
        # subagents
        self.subagent_start = subagents.subagent_start
        self.subagent_stop = subagents.subagent_stop


__all__ = ["ADAPTER", "FailedAttempt", "HermesCapture", "LLMAttempt", "PendingCall", "SessionRun", "Sessions",
           "run_id_for_session", "safe_base_url"]
