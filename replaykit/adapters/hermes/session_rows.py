"""Hermes session rows (a state.db ``sessions`` row or a session of ``hermes sessions export``) into runs.

Shared by the ``hermes-session`` importer (state.db, read by named columns) and the ``hermes-export``
importer (the jsonl that ``hermes sessions export`` writes holds the same fields per session).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from replaykit import __version__
from replaykit.adapters.base import ImportedRun
from replaykit.adapters.hermes.capture import run_id_for_session, safe_base_url
from replaykit.adapters.hermes.conversation import build_run, clean_message
from replaykit.core.errors import BadInput
from replaykit.core.trace.bridge import underlying_call
from replaykit.core.trace.interop import Losses
from replaykit.core.trace.ir import Lineage, RunHeader, Source
from replaykit.core.trace.store import utc_now_iso

LACKS = ("Hermes's session store keeps the conversation, not the calls: each request was reconstructed from "
         "the messages before it (no sampling parameters, tool schemas only from a JSON snapshot, no failed "
         "attempts or retries, no per-call usage, no tool status: a failed tool's result is kept as its text)")
TIMES = "times are when Hermes stored each message: a call spans from the message before it to its own"


def session_header(session_id: str, *, model: Any, platform: Any, parent: Any, created: float | None,
                   base_url: Any = None, title: Any = None,
                   launched: tuple[str, int | None] | None = None) -> RunHeader:
    """An imported session's header. A session with a parent is linked to the parent's imported run: as a
    subagent when Hermes marks it one (``source: subagent``), else as a continuation (context compression
    and resumes start a new session whose ``parent_session_id`` names the old one). ``launched``: the
    parent run's ``subagent`` start event and the step of the LLM call that delegated, when known."""
    import datetime as dt

    try:
        created_at = (dt.datetime.fromtimestamp(created, dt.UTC).isoformat().replace("+00:00", "Z")
                      if isinstance(created, (int, float)) else utc_now_iso())
    except (OverflowError, OSError, ValueError):  # a start time no clock can show: the import's time
        created_at = utc_now_iso()
    lineage = None
    if isinstance(parent, str) and parent:
        subagent = platform == "subagent"
        lineage = Lineage(relation="subagent" if subagent else "import",
                          parent_run_id=run_id_for_session(parent) + "-imported",
                          parent_event_id=launched[0] if launched else None,
                          parent_step=launched[1] if launched else None,
                          details={"parent_session_id": parent} if subagent else
                          {"parent_session_id": parent, "hermes": "continues the parent session"})
    return RunHeader(
        run_id=run_id_for_session(session_id) + "-imported", created_at=created_at,
        source=Source(framework="hermes", adapter="replaykit.adapters.hermes.import_session",
                      replaykit_version=__version__),
        model=model if isinstance(model, str) else None, platform=platform if isinstance(platform, str) else None,
        session_id=session_id, base_url=safe_base_url(base_url), title=title if isinstance(title, str) else None,
        lineage=lineage, tags=["imported", "reconstructed"],
    )


SUBAGENT_PROMPT = ("a subagent's requests also carried the delegation instructions Hermes appends to its system "
                   "prompt on every call (an ephemeral prompt Hermes does not store): the reconstructed "
                   "requests have the stored system prompt alone")

#: the ``messages`` columns the import reads (Hermes 0.19.0's schema; 0.22 reads the same). Any other
#: column (0.22 adds several, among them a binary ``display_identity``) is skipped and named in a note.
MESSAGE_COLUMNS = ("id", "session_id", "role", "content", "tool_call_id", "tool_calls", "tool_name",
                   "effect_disposition", "timestamp", "token_count", "finish_reason", "reasoning",
                   "reasoning_content", "reasoning_details", "codex_reasoning_items", "codex_message_items",
                   "platform_message_id", "observed", "active", "compacted", "api_content")
#: ``sessions`` fields kept in the run's meta (read by name; absent in older schemas)
_SESSION_META = ("cwd", "git_branch", "git_repo_root", "end_reason", "ended_at", "message_count", "tool_call_count",
                 "api_call_count", "estimated_cost_usd", "actual_cost_usd", "billing_provider", "billing_mode",
                 "profile_name")
#: session token totals (Hermes keeps no per-call usage): the run's ``usage_total``
_SESSION_USAGE = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens")


@dataclass
class SessionRows:
    """One stored session: its ``sessions`` row (read by name: a state.db row or an export's session dict)
    and its message rows, with what reading them noticed."""

    row: Any
    messages: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    losses: Losses | None = None
    where: str | None = None  # where it was read, for errors (an export's file:line)


def session_runs(sessions: list[SessionRows]) -> list[ImportedRun]:
    """Sessions into runs, a parent before the sessions it started. A subagent's run is linked both ways,
    as the live capture links it: its lineage names the parent's run, the ``subagent`` start event and the
    delegating step; the parent's run holds ``subagent`` start/stop events around the ``delegate_task``
    call that launched it (matched by goal, else in order)."""
    ordered = sorted(sessions, key=lambda s: _number(s.row["started_at"]))
    delegated = _delegations(ordered)
    launched: dict[str, tuple[str, int | None]] = {}
    return [as_bad_input(s.where or f"session {s.row['id']}", session_run, s.row, s.messages, s.notes,
                         losses=s.losses, subagents=delegated.get(s.row["id"]), launched=launched) for s in ordered]


def as_bad_input(where: str, convert: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``convert(*args, **kwargs)`` with what a stored session can hold wrong refused in one line naming
    ``where`` (an export's ``file:line``, a state.db's ``session ID``): a message the codec refuses, or a
    value of the wrong type deep inside (a number where Hermes writes text, ...), never an internal error."""
    try:
        return convert(*args, **kwargs)
    except BadInput as exc:
        if str(exc).startswith(where.rpartition(":")[0] or where):  # the reader named the place already
            raise
        raise BadInput(f"{where}: {exc}") from exc
    except (ValueError, TypeError, OverflowError) as exc:  # pydantic's ValidationError is a ValueError
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BadInput(f"{where}: not what Hermes writes ({first})") from exc


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _delegations(sessions: list[SessionRows]) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """parent session id -> tool call id -> the child sessions that call started."""
    by_id = {s.row["id"]: s for s in sessions if isinstance(s.row["id"], str)}
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    slots_of: dict[str, list[tuple[str, Any]]] = {}
    for child in sessions:
        parent_id = child.row["parent_session_id"]
        if child.row["source"] != "subagent" or not isinstance(parent_id, str) or parent_id not in by_id:
            continue
        if parent_id not in slots_of:
            slots_of[parent_id] = _delegate_slots(by_id[parent_id].messages)
        slots = slots_of[parent_id]
        if not slots:
            continue
        goal = next((m.get("content") for m in child.messages if m.get("role") == "user"), None)
        slot = next((x for x in slots if isinstance(goal, str) and x[1] == goal), slots[0])
        slots.remove(slot)
        answers = [m.get("content") for m in child.messages if m.get("role") == "assistant" and m.get("content")]
        out.setdefault(parent_id, {}).setdefault(slot[0], []).append({
            "child_run_id": run_id_for_session(child.row["id"]) + "-imported", "child_session_id": child.row["id"],
            "goal": goal if isinstance(goal, str) else None,
            "summary": answers[-1] if answers and isinstance(answers[-1], str) else None})
    return out


def _delegate_slots(messages: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """(tool call id, goal) for every subagent a ``delegate_task`` call asked for (one goal, or ``tasks``)."""
    slots: list[tuple[str, Any]] = []
    for message in messages:
        if message.get("role") != "assistant" or message.get("active", 1) in (0, False):
            continue
        for call in clean_message(message).get("tool_calls") or []:
            function = call.get("function") if isinstance(call.get("function"), dict) else {}
            name, args = underlying_call(str(function.get("name") or ""), _json_object(function.get("arguments")))
            if name != "delegate_task" or not isinstance(call.get("id"), str):
                continue
            args = args if isinstance(args, dict) else {}
            listed = args.get("tasks")
            tasks: list[Any] = listed if isinstance(listed, list) else [args]
            slots.extend((call["id"], t.get("goal") if isinstance(t, dict) else None) for t in tasks)
    return slots


def session_run(row: Any, messages: list[dict[str, Any]], notes: list[str], losses: Losses | None = None,
                subagents: dict[str, list[dict[str, Any]]] | None = None,
                launched: dict[str, tuple[str, int | None]] | None = None) -> ImportedRun:
    """One session (a ``sessions`` row, read by name) and its messages as a reconstructed run. Only the
    live rows make the conversation (``active``, as Hermes itself reads a session); the rows /undo, rewind
    or in-place compaction took out of it are named, not replayed: when they left the context is not
    stored, so no request could be rebuilt with them."""
    losses = losses if losses is not None else Losses()
    messages = _live_rows(messages, losses)
    started = row["started_at"]
    times = [round(m["timestamp"] - started, 6) if isinstance(m.get("timestamp"), (int, float))
             and isinstance(started, (int, float)) else None for m in messages]
    keys = row.keys()
    header = session_header(row["id"], model=row["model"], platform=row["source"], parent=row["parent_session_id"],
                            created=started, title=row["title"],
                            base_url=row["billing_base_url"] if "billing_base_url" in keys else None,
                            launched=(launched or {}).get(row["id"]))
    meta: dict[str, Any] = {k: row[k] for k in _SESSION_META if k in keys and row[k] is not None}
    config = _json_object(row["model_config"]) if "model_config" in keys else None
    if config:  # max_iterations, max_tokens, reasoning_config as Hermes ran the session
        meta["model_config"] = {k: v for k, v in config.items() if not k.startswith("_")}
    usage = {k: row[k] for k in _SESSION_USAGE if k in keys and isinstance(row[k], int)}
    if row["source"] == "subagent":
        notes = [*notes, SUBAGENT_PROMPT]
    system = row["system_prompt"] if isinstance(row["system_prompt"], str) else None
    return build_run(header, messages, system_prompt=system, times=times,
                     finish_reasons=[m.get("finish_reason") for m in messages], meta=meta, usage=usage or None,
                     warnings=[LACKS, TIMES, *dict.fromkeys(notes)], losses=losses, stored_times=True,
                     subagents=subagents, launched=launched)


def _live_rows(messages: list[dict[str, Any]], losses: Losses) -> list[dict[str, Any]]:
    live = []
    for message in messages:
        if message.get("active", 1) in (0, False):
            if message.get("compacted") in (1, True):
                losses.add("compacted messages", f"message {message.get('id')} ({message.get('role')})",
                           fields=["active", "compacted"],
                           reason="archived by Hermes's in-place compaction (a summary took their place in the context)")
            else:
                losses.add("undone messages", f"message {message.get('id')} ({message.get('role')})", fields=["active"],
                           reason="taken out of the context by /undo, rewind or an edit")
            continue
        live.append(message)
    return live


def _json_object(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return None
        return parsed if isinstance(parsed, dict) else None
    return None


def export_session_rows(data: dict[str, Any], where: str | None = None) -> SessionRows:
    """One session of what ``hermes sessions export`` writes (``--format jsonl``; ``import_export`` reads the
    file): its ``sessions`` fields and ``messages`` rows, read by the same named columns as a state.db."""
    notes: list[str] = []
    losses = Losses()
    rows = [m for m in data["messages"] if isinstance(m, dict)]
    for key in sorted({k for m in rows for k in m} - set(MESSAGE_COLUMNS)):
        count = sum(1 for m in rows if m.get(key) is not None)
        if count:
            losses.add("message fields", f"{key} ({count})", fields=[key],
                       reason="Hermes's own bookkeeping of a message (ids, display hints): not part of any call")
    messages = [{k: v for k, v in m.items() if k in MESSAGE_COLUMNS} for m in rows]
    calls = data.get("api_call_count")
    answers = sum(1 for m in messages if m.get("role") == "assistant")
    if isinstance(calls, int) and calls > answers:
        notes.append(f"Hermes counted {calls} API calls for {answers} assistant messages: the other "
                     f"{calls - answers} (failed attempts, retries) are not in the export")
    return SessionRows(_Fields(data), messages, notes, losses, where)


class _Fields:
    """A session dict read like a ``sessions`` row: missing fields are None."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def keys(self) -> set[str]:
        return {k for k in self._data if k != "messages"}

    def __getitem__(self, key: str) -> Any:
        return self._data.get(key)


