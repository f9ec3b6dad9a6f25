"""The capture engine inside Hermes: one run per Hermes session, fed by hooks and middleware.

Split by concern (see docs/hermes.md, "Capture design"):

- ``sessions.py``: a run per session, per-session state (``SessionRun``), user turns, run ends;
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

from replaykit.adapters.hermes.capture.llm import FailedAttempt, LLMAttempt, LLMCapture
from replaykit.adapters.hermes.capture.sessions import ADAPTER, SessionRun, run_id_for_session, safe_base_url
from replaykit.adapters.hermes.capture.subagents import SubagentCapture
from replaykit.adapters.hermes.capture.tools import PendingCall, ToolCapture


class HermesCapture(LLMCapture, ToolCapture, SubagentCapture):
    """Process-wide capture engine (the plugin makes one)."""


__all__ = ["ADAPTER", "FailedAttempt", "HermesCapture", "LLMAttempt", "PendingCall", "SessionRun",
           "run_id_for_session", "safe_base_url"]
