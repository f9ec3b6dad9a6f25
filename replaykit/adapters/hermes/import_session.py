"""``replaykit import PATH --format hermes-session``: Hermes's own session store into runs.

PATH is a ``state.db`` (SQLite, opened read-only; Hermes 0.19.0 or 0.22), a Hermes home holding one, a JSON
snapshot ``sessions/session_<id>.json``, or (``.jsonl``) what ``hermes sessions export`` writes, read by
``import_export`` (the ``hermes-export`` format). Every event is marked ``reconstructed``: state.db keeps
the conversation, not the requests (no sampling parameters, no per-call usage, no failed attempts).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from replaykit import __version__
from replaykit.adapters.base import ImportedRun
from replaykit.adapters.hermes.capture import run_id_for_session, safe_base_url
from replaykit.adapters.hermes.conversation import build_run
from replaykit.core.errors import BadInput
from replaykit.core.trace.codecs import decode_request
from replaykit.core.trace.interop import Losses
from replaykit.core.trace.ir import Lineage, RunHeader, Source
from replaykit.core.trace.store import utc_now_iso

LACKS = ("Hermes's session store keeps the conversation, not the calls: each request was reconstructed from "
         "the messages before it (no sampling parameters, tool schemas only from a JSON snapshot, no failed "
         "attempts or retries, no per-call usage)")


def session_header(session_id: str, *, model: Any, platform: Any, parent: Any, created: float | None,
                   base_url: Any = None, title: Any = None) -> RunHeader:
    """An imported session's header. A session with a parent is linked to the parent's imported run: as a
    subagent when Hermes marks it one (``source: subagent``), else as a continuation (context compression
    and resumes start a new session whose ``parent_session_id`` names the old one)."""
    import datetime as dt

    created_at = (dt.datetime.fromtimestamp(created, dt.UTC).isoformat().replace("+00:00", "Z")
                  if isinstance(created, (int, float)) else utc_now_iso())
    lineage = None
    if isinstance(parent, str) and parent:
        subagent = platform == "subagent"
        lineage = Lineage(relation="subagent" if subagent else "import",
                          parent_run_id=run_id_for_session(parent) + "-imported",
                          details=None if subagent else {"hermes": "continues the parent session"})
    return RunHeader(
        run_id=run_id_for_session(session_id) + "-imported", created_at=created_at,
        source=Source(framework="hermes", adapter="replaykit.adapters.hermes.import_session",
                      replaykit_version=__version__),
        model=model if isinstance(model, str) else None, platform=platform if isinstance(platform, str) else None,
        session_id=session_id, base_url=safe_base_url(base_url), title=title if isinstance(title, str) else None,
        lineage=lineage, tags=["imported", "reconstructed"],
    )


def import_session(path: Path, session_id: str | None = None) -> list[ImportedRun]:
    path = Path(path)
    if path.is_dir():
        path = path / "state.db"
        if not path.is_file():
            raise BadInput(f"no state.db in {path.parent}")
    if path.suffix == ".json":
        return [_from_snapshot(path, session_id)]
    if path.suffix == ".jsonl":  # what `hermes sessions export` writes: the hermes-export importer's
        from replaykit.adapters.hermes.import_export import import_export

        return import_export(path, session_id)
    return _from_db(path, session_id)


def _from_snapshot(path: Path, session_id: str | None) -> ImportedRun:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BadInput(f"{path} is not a Hermes session JSON snapshot ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list) or not data.get("session_id"):
        raise BadInput(f"{path} is not a Hermes session JSON snapshot (no session_id/messages)")
    if session_id and data["session_id"] != session_id:
        raise BadInput(f"{path} holds session {data['session_id']}, not {session_id}")
    header = session_header(str(data["session_id"]), model=data.get("model"), platform=data.get("platform"), parent=None,
                     created=None, base_url=data.get("base_url"))
    tools = decode_request("openai-chat", {"messages": [], "tools": data["tools"]}).tools \
        if isinstance(data.get("tools"), list) else None
    return build_run(header, data["messages"], system_prompt=data.get("system_prompt"), tools=tools or None,
                     meta={"session_start": data.get("session_start"), "source_file": path.name},
                     warnings=[LACKS.replace("tool schemas only from a JSON snapshot, ", "")])


#: the ``messages`` columns the import reads (Hermes 0.19.0's schema; 0.22 reads the same). Any other
#: column (0.22 adds several, among them a binary ``display_identity``) is skipped and named in a note.
MESSAGE_COLUMNS = ("id", "session_id", "role", "content", "tool_call_id", "tool_calls", "tool_name",
                   "effect_disposition", "timestamp", "token_count", "finish_reason", "reasoning",
                   "reasoning_content", "reasoning_details", "codex_reasoning_items", "codex_message_items",
                   "platform_message_id", "observed", "active", "compacted", "api_content")
_SESSION_TEXT = ("id", "model", "source", "parent_session_id", "title", "system_prompt", "cwd", "git_branch",
                 "end_reason", "billing_provider")


class _Undecodable(bytes):
    """A TEXT value that is not UTF-8 (read as bytes, then skipped and named)."""


def _text(raw: bytes) -> str | bytes:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return _Undecodable(raw)


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [str(r[1]) for r in conn.execute(f"pragma table_info({table})")]  # table: a constant of ours


def _from_db(path: Path, session_id: str | None) -> list[ImportedRun]:
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        conn.row_factory = sqlite3.Row
        conn.text_factory = _text
        conn.execute("select id from sessions limit 1")
    except sqlite3.Error as exc:
        raise BadInput(f"{path} is not a Hermes state.db ({exc})") from exc
    try:
        return _read_db(conn, path, session_id)
    finally:
        conn.close()


def _read_db(conn: sqlite3.Connection, path: Path, session_id: str | None) -> list[ImportedRun]:
    present = _columns(conn, "messages")
    missing = [c for c in ("session_id", "role", "content", "timestamp") if c not in present]
    if missing:
        raise BadInput(f"{path}: unknown state.db schema (messages has no {', '.join(missing)})")
    read = [c for c in MESSAGE_COLUMNS if c in present]
    skipped = [c for c in present if c not in MESSAGE_COLUMNS]
    select = ", ".join(f'"{c}"' for c in read)
    order = "timestamp, id" if "id" in read else "timestamp"
    notes = [f"state.db columns not read (unknown to this importer): {', '.join(skipped)}"] if skipped else []
    try:
        if session_id:
            sessions = conn.execute("select * from sessions where id = ? order by started_at", (session_id,)).fetchall()
        else:
            sessions = conn.execute("select * from sessions order by started_at").fetchall()
        if session_id and not sessions:
            raise BadInput(f"no session {session_id!r} in {path}")
        runs = []
        for raw in sessions:
            row = _Row(raw, notes)
            msgs = conn.execute(f"select {select} from messages where session_id = ? order by {order}",  # noqa: S608
                                (row["id"],)).fetchall()
            runs.append(_session_run(row, [_message(m, notes) for m in msgs], notes))
        return runs
    except sqlite3.Error as exc:
        raise BadInput(f"{path}: unexpected state.db layout ({exc})") from exc


#: ``sessions`` fields kept in the run's meta (read by name; absent in older schemas)
_SESSION_META = ("cwd", "git_branch", "git_repo_root", "end_reason", "ended_at", "message_count", "tool_call_count",
                 "api_call_count", "estimated_cost_usd", "actual_cost_usd", "billing_provider", "billing_mode",
                 "profile_name")
#: session token totals (Hermes keeps no per-call usage): the run's ``usage_total``
_SESSION_USAGE = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens")


def _session_run(row: Any, messages: list[dict[str, Any]], notes: list[str],
                 losses: Losses | None = None) -> ImportedRun:
    """One session (a ``sessions`` row, read by name) and its messages as a reconstructed run."""
    started = row["started_at"]
    times = [round(m["timestamp"] - started, 6) if isinstance(m.get("timestamp"), (int, float))
             and isinstance(started, (int, float)) else None for m in messages]
    keys = row.keys()
    header = session_header(row["id"], model=row["model"], platform=row["source"], parent=row["parent_session_id"],
                            created=started, title=row["title"],
                            base_url=row["billing_base_url"] if "billing_base_url" in keys else None)
    meta: dict[str, Any] = {k: row[k] for k in _SESSION_META if k in keys and row[k] is not None}
    config = _json_object(row["model_config"]) if "model_config" in keys else None
    if config:  # max_iterations, max_tokens, reasoning_config as Hermes ran the session
        meta["model_config"] = {k: v for k, v in config.items() if not k.startswith("_")}
    usage = {k: row[k] for k in _SESSION_USAGE if k in keys and isinstance(row[k], int)}
    return build_run(header, messages, system_prompt=row["system_prompt"], times=times,
                     finish_reasons=[m.get("finish_reason") for m in messages], meta=meta, usage=usage or None,
                     warnings=[LACKS, *dict.fromkeys(notes)], losses=losses)


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


def session_run_of_export(data: dict[str, Any]) -> ImportedRun:
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
    return _session_run(_Fields(data), messages, notes, losses=losses)


class _Fields:
    """A session dict read like a ``sessions`` row: missing fields are None."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def keys(self) -> set[str]:
        return {k for k in self._data if k != "messages"}

    def __getitem__(self, key: str) -> Any:
        return self._data.get(key)


def _message(row: sqlite3.Row, notes: list[str]) -> dict[str, Any]:
    """A message row as a dict; a value that is not text where text belongs (undecodable) is dropped and named."""
    out: dict[str, Any] = {}
    for key in row.keys():
        value = row[key]
        if isinstance(value, bytes):
            notes.append(f"messages.{key}: a value that is not UTF-8 text was skipped")
            continue
        out[key] = value
    return out


class _Row:
    """A sessions row read by name: missing columns are None, undecodable text is None (and named)."""

    def __init__(self, row: sqlite3.Row, notes: list[str]) -> None:
        self._row, self._keys, self._notes = row, set(row.keys()), notes

    def keys(self) -> set[str]:
        return self._keys

    def __getitem__(self, key: str) -> Any:
        value = self._row[key] if key in self._keys else None
        if isinstance(value, bytes):
            self._notes.append(f"sessions.{key}: a value that is not UTF-8 text was skipped")
            return None
        return value
