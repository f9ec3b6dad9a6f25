"""Subagents: ``subagent_start`` (on the parent's thread, inside the delegating tool call) links the
child's run to the parent's launching step; ``subagent_stop`` (on the delegation thread, possibly after
the parent's turn ended) records the outcome and closes the child's run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from replaykit.adapters.hermes.capture.sessions import Sessions, run_id_for_session
from replaykit.adapters.hermes.capture.tools import _jsonable
from replaykit.core.trace import jsonsafe
from replaykit.core.trace.ir import Correlation, Lineage


class SubagentCapture:
    def __init__(self, sessions: Sessions) -> None:
        self.sessions = sessions

    def subagent_start(self, kw: Mapping[str, Any]) -> None:
        parent_sid, child_sid = kw.get("parent_session_id"), kw.get("child_session_id")
        if not parent_sid or not child_sid:
            return
        parent = self.sessions.session(parent_sid)
        call_id = getattr(self.sessions.local, "tool_call_id", None)
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
        with self.sessions.lock:
            self.sessions.links[child_sid] = lineage
            child = self.sessions.runs.get(child_sid)
        if child is not None:  # the child started before we heard of it: link it from inside
            child.recorder.meta({"lineage": jsonsafe.model_data(lineage, exclude_none=True)})

    def subagent_stop(self, kw: Mapping[str, Any]) -> None:
        parent_sid, child_sid = kw.get("parent_session_id"), kw.get("child_session_id")
        if parent_sid:
            parent = self.sessions.session(parent_sid)
            with parent.lock:
                parent.recorder.subagent(
                    "stop", child_run_id=run_id_for_session(child_sid) if child_sid else None,
                    child_session_id=child_sid, role=kw.get("child_role"), status=kw.get("child_status"),
                    summary=kw.get("child_summary"),
                    duration=kw["duration_ms"] / 1000.0 if isinstance(kw.get("duration_ms"), (int, float)) else None,
                    corr=Correlation(session_id=parent_sid, turn_id=kw.get("parent_turn_id")),
                    # Hermes 0.22: the child's tool calls, metadata only (names, argument keys, sizes, status)
                    provider_details={"tool_call_history": _jsonable(kw["tool_call_history"])}
                    if isinstance(kw.get("tool_call_history"), list) else None)
                self.sessions.syncer.request(parent.recorder.writer.path)  # type: ignore[union-attr]
        if child_sid:
            status = str(kw.get("child_status") or "completed")
            self.sessions.session_close({"session_id": child_sid, "reason": "subagent_stop"},
                               status=status if status in ("completed", "interrupted", "failed") else "failed")
