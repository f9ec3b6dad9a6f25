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

from replaykit.adapters.base import ImportedRun
from replaykit.adapters.hermes.conversation import build_run
from replaykit.adapters.hermes.session_rows import (
    LACKS,
    MESSAGE_COLUMNS,
    SessionRows,
    session_header,
    session_runs,
)
from replaykit.core.errors import BadInput
from replaykit.core.trace.codecs import decode_request


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
    if isinstance(data, dict) and isinstance(data.get("messages"), list) and data.get("id") and not data.get("session_id"):
        from replaykit.adapters.hermes.import_export import import_export  # a /save json snapshot (0.22)

        runs = import_export(path, session_id)
        return runs[0]
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
    order = "id" if "id" in read else "timestamp"  # Hermes's own order (clocks can regress)
    notes = [f"state.db columns not read (unknown to this importer): {', '.join(skipped)}"] if skipped else []
    try:
        if session_id:
            sessions = conn.execute("select * from sessions where id = ? order by started_at", (session_id,)).fetchall()
        else:
            sessions = conn.execute("select * from sessions order by started_at").fetchall()
        if session_id and not sessions:
            raise BadInput(f"no session {session_id!r} in {path}")
        stored = []
        for raw in sessions:
            row = _Row(raw, notes)
            msgs = conn.execute(f"select {select} from messages where session_id = ? order by {order}",  # noqa: S608
                                (row["id"],)).fetchall()
            stored.append(SessionRows(row, [_message(m, notes) for m in msgs], notes))
        return session_runs(stored)
    except sqlite3.Error as exc:
        raise BadInput(f"{path}: unexpected state.db layout ({exc})") from exc


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
