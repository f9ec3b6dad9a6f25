"""``replaykit hermes resume-from RUN``: a run (typically a branch) as a new Hermes session.

The run's conversation as the model last saw it (``Run.conversation``: the last request, its answer and
the tool results after it, so a branch's edit is in it) is written into ``$HERMES_HOME/state.db``
through Hermes's own session store (``hermes_state.SessionDB.create_session`` / ``append_message``),
never by SQL of ours, so ``hermes --resume SESSION`` continues the conversation from there. Messages go
through the OpenAI Chat codec because Hermes keeps OpenAI-style rows. What Hermes's rows cannot hold is
reported: an assistant turn whose tool calls have no result yet (an argument edit not played) is left
out, and codec losses (provider-only reasoning data) are listed.
"""

from __future__ import annotations

import datetime as dt
import uuid
from pathlib import Path
from typing import Any

from replaykit.core.errors import BadInput, MissingExtra
from replaykit.core.trace import codecs
from replaykit.core.trace.ir import Message
from replaykit.core.trace.run import Run

END_REASON = "replaykit_resume_from"


def _session_db(home: Path) -> Any:
    try:
        from hermes_state import SessionDB
    except ModuleNotFoundError as exc:
        raise MissingExtra("hermes", "hermes-agent") from exc
    if home.exists() and not home.is_dir():
        raise BadInput(f"--hermes-home {home} is not a directory")
    return SessionDB(db_path=home / "state.db")


def session_messages(run: Run) -> tuple[list[Message], list[Message], list[str]]:
    """(system messages, the rest, what was left out) of the conversation to hand to Hermes."""
    conversation = run.conversation()
    if not conversation:
        raise BadInput(f"run {run.run_id} has no conversation to resume from")
    left_out: list[str] = []
    answered = {r.tool_call_id for m in conversation for r in m.tool_results}
    while conversation and conversation[-1].role == "assistant" and any(
            c.id not in answered for c in conversation[-1].tool_calls):
        calls = ", ".join(c.name for c in conversation[-1].tool_calls)
        left_out.append(f"the last assistant turn calls {calls} with no result yet (play the branch first to "
                        "run it); the session ends before it")
        conversation = conversation[:-1]
    system = [m for m in conversation if m.role in ("system", "developer")]
    rest = [m for m in conversation if m.role not in ("system", "developer")]
    if not rest:
        raise BadInput(f"run {run.run_id} has no user or assistant message to resume from")
    return system, rest, left_out


def resume_from(run: Run, hermes_home: Path) -> dict[str, Any]:
    system, rest, left_out = session_messages(run)
    encoded = codecs.encode_request("openai-chat", rest, None, {})
    rows = encoded.body["messages"]
    names = {r.tool_call_id: r.name for m in rest for r in m.tool_results}
    # Assistant messages map one to one onto assistant rows (tool results may split into several rows).
    thoughts = iter(["".join(p.text for p in m.parts if p.type == "reasoning") for m in rest
                     if m.role == "assistant"])
    db = _session_db(hermes_home)
    session_id = f"{dt.datetime.now():%Y%m%d_%H%M%S}_{uuid.uuid4().hex[:6]}"  # Hermes's own id shape
    try:
        db.create_session(session_id, source="cli", model=run.model,
                          system_prompt="\n\n".join(m.text for m in system) or None)
        for row in rows:
            thought = next(thoughts, "") if row["role"] == "assistant" else ""
            db.append_message(
                session_id, row["role"], content=row.get("content"), tool_calls=row.get("tool_calls"),
                tool_call_id=row.get("tool_call_id"),
                tool_name=names.get(row.get("tool_call_id")) if row["role"] == "tool" else None,
                reasoning=thought or None,
                finish_reason=("tool_calls" if row.get("tool_calls") else "stop") if row["role"] == "assistant"
                else None,
            )
        db.end_session(session_id, END_REASON)
    finally:
        db.close()
    return {
        "run_id": run.run_id, "session_id": session_id, "hermes_home": str(hermes_home),
        "state_db": str(hermes_home / "state.db"), "messages": len(rows),
        "system_prompt": bool(system), "losses": [*left_out, *encoded.losses],
        "resume_command": f"hermes --resume {session_id}",
    }
