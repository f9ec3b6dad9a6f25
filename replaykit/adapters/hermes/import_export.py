"""``replaykit import PATH --format hermes-export``: what ``hermes sessions export`` writes, as runs.

Hermes (0.19.0 and 0.22 alike) writes two JSON-lines shapes, told apart here by their first line:

- ``--format jsonl`` (the default): one session per line, its ``sessions`` fields and its ``messages`` rows
  (Hermes's ``SessionDB.export_session``; 0.22 adds ``timings``). Read by the same named columns as a
  state.db (``session_rows``, shared with ``import_session``): only live rows; several sessions are one run
  each, a subagent linked both ways to its parent's run, a continuation to the session it continues.
- ``--format trace``: the session re-emitted as a Claude Code transcript (``agent/trace_upload.py``,
  ``"version": "hermes-agent"``): user / assistant lines chained by ``parentUuid``, tool calls as
  ``tool_use`` blocks, results as ``tool_result`` blocks. No system prompt, no per-message time, no
  lineage, no usage: the import names each.

A session that ``/save json`` wrote (the same session shape, one indented JSON document) is read as the
jsonl shape. Both hold conversations, not calls: every request is reconstructed from the messages before it
(``conversation.build_run``) and marked so. A truncated line, another tool's transcript or a
``--only user-prompts`` export is refused in one line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from replaykit.adapters.base import ImportedRun, read_import_text
from replaykit.adapters.hermes.conversation import build_run
from replaykit.adapters.hermes.session_rows import (
    as_bad_input,
    export_session_rows,
    session_header,
    session_runs,
)
from replaykit.core.errors import BadInput
from replaykit.core.trace.interop import Losses

#: the ``version`` every line of Hermes's trace export carries (a constant of Hermes, not a release)
TRACE_VERSION = "hermes-agent"
#: keys a future session export might carry to say its format version; Hermes 0.19.0-0.22 write none
_VERSION_KEYS = ("version", "export_version", "format_version", "schema_version")

TRACE_LACKS = ("a trace export holds the conversation only: no system prompt, no tool schemas, no sampling "
               "parameters, no usage, no reasoning, no tool status, no failed attempts or retries, no "
               "per-message time (every line carries the export's time), no parent session (lineage); images "
               "are '[image omitted]', and Hermes redacts secrets in it unless exported with --no-redact")


def import_export(path: Path, session_id: str | None = None) -> list[ImportedRun]:
    path = Path(path)
    if path.is_dir():  # `hermes sessions export DIR/ --format trace` with filters: one ID.trace.jsonl a session
        files = sorted(path.glob("*.jsonl"))
        if not files:
            raise BadInput(f"{path}: no .jsonl file (expected what `hermes sessions export` writes)")
        runs: list[ImportedRun] = []
        seen: dict[str, Path] = {}
        for file in files:
            for run in _import_file(file, None):
                sid = str(run.header.session_id)
                if sid in seen:
                    raise BadInput(f"{path}: session {sid} is in both {seen[sid].name} and {file.name}")
                seen[sid] = file
                runs.append(run)
        runs = [r for r in runs if not session_id or r.header.session_id == session_id]
        if session_id and not runs:
            raise BadInput(f"no session {session_id!r} in {path}")
        return runs
    return _import_file(path, session_id)


def _import_file(path: Path, session_id: str | None) -> list[ImportedRun]:
    docs = _documents(path)
    first_where, first = docs[0]
    kind = _kind(first)
    if kind == "prompts":
        raise BadInput(f"{first_where}: a `--only user-prompts` export holds the user prompts alone, not the "
                       "sessions; export again without --only")
    if kind is None:
        raise BadInput(f"{first_where}: not a `hermes sessions export` file (expected a session with 'id' and "
                       "'messages' per line, or a `--format trace` transcript)")
    for where, doc in docs[1:]:
        if _kind(doc) != kind:
            raise BadInput(f"{where}: not a line of the same export as line 1 ({_KIND_NAMES[kind]})")
    runs = _session_runs(docs, session_id) if kind == "sessions" else _trace_runs(docs, session_id)
    if session_id and not runs:
        raise BadInput(f"no session {session_id!r} in {path}")
    return runs


_KIND_NAMES = {"sessions": "a session export", "trace": "a trace export"}


def _documents(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """Every non-blank line as a JSON object, with where it is; a line that is not one is refused. A file
    that is one JSON object is one document: a session as ``/save json`` writes it (the export's shape,
    indented)."""
    text = read_import_text(path)
    if text.lstrip().startswith("{") and "\n" in text.strip():
        try:
            whole = json.loads(text)
        except (ValueError, RecursionError):
            whole = None  # JSON lines (or a truncated file): read line by line below
        if isinstance(whole, dict):
            return [(path.name, whole)]
    out: list[tuple[str, dict[str, Any]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path.name}:{number}"
        try:
            doc = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise BadInput(f"{where}: not valid JSON ({exc}); truncated?") from exc
        if not isinstance(doc, dict):
            raise BadInput(f"{where}: not a JSON object (a `hermes sessions export` line is one)")
        out.append((where, doc))
    if not out:
        raise BadInput(f"{path.name}: empty file (expected what `hermes sessions export` writes)")
    return out


def _kind(doc: Mapping[str, Any]) -> str | None:
    if isinstance(doc.get("messages"), list) and doc.get("id"):
        return "sessions"
    if "sessionId" in doc and "message" in doc and "type" in doc:
        return "trace"
    if "session_id" in doc and "index" in doc and "text" in doc:
        return "prompts"
    return None


# ------------------------------------------------------------------ --format jsonl (sessions)


def _session_runs(docs: list[tuple[str, dict[str, Any]]], session_id: str | None) -> list[ImportedRun]:
    for where, data in docs:
        for key in _VERSION_KEYS:
            if key in data:
                raise BadInput(f"{where}: unknown Hermes export version ({key} {data[key]!r}); this importer "
                               "reads the unversioned session export of Hermes 0.19.0 to 0.22")
        if not isinstance(data["id"], str):
            raise BadInput(f"{where}: a session id that is not text ({data['id']!r})")
    chosen = [(where, data) for where, data in docs if not session_id or data["id"] == session_id]
    return session_runs([export_session_rows(data, where) for where, data in chosen])


# ------------------------------------------------------------------ --format trace (Claude Code shape)


def _trace_runs(docs: list[tuple[str, dict[str, Any]]], session_id: str | None) -> list[ImportedRun]:
    sessions: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for where, line in docs:
        version = line.get("version")
        if version != TRACE_VERSION:
            raise BadInput(f"{where}: unknown trace export version {version!r} (Hermes writes {TRACE_VERSION!r}; "
                           "a Claude Code transcript of its own is not a Hermes export)")
        sid = line.get("sessionId")
        if not isinstance(sid, str) or not sid:
            raise BadInput(f"{where}: a trace line without a sessionId")
        sessions.setdefault(sid, []).append((where, line))
    return [as_bad_input(lines[0][0], _trace_run, sid, lines) for sid, lines in sessions.items()
            if not session_id or sid == session_id]


def _trace_run(session_id: str, lines: list[tuple[str, dict[str, Any]]]) -> ImportedRun:
    messages: list[dict[str, Any]] = []
    previous: str | None = None
    model: str | None = None
    for where, line in lines:
        if line.get("parentUuid") != previous:
            raise BadInput(f"{where}: parentUuid does not name the line before it in session {session_id} "
                           "(lines missing or out of order)")
        previous = line.get("uuid") if isinstance(line.get("uuid"), str) else None
        message = line.get("message")
        if not isinstance(message, dict):
            raise BadInput(f"{where}: a trace line without a message object")
        if line.get("type") == "assistant":
            model = model or (message.get("model") if message.get("model") != "unknown" else None)
            messages.append(_assistant(message, where))
        elif line.get("type") == "user":
            messages.extend(_user_or_results(message, where))
        else:
            raise BadInput(f"{where}: unknown trace line type {line.get('type')!r} (expected user or assistant)")
    first = lines[0][1]
    meta = {k: v for k, v in (("cwd", first.get("cwd")), ("git_branch", first.get("gitBranch")),
                              ("exported_at", first.get("timestamp")), ("export", "hermes sessions export --format trace"))
            if isinstance(v, str) and v}
    header = session_header(session_id, model=model, platform=None, parent=None, created=None)
    losses = Losses()
    if lines:
        losses.add("line ids", f"{len(lines)} uuid/parentUuid pairs",
                   reason="the export's own line chain (checked for order, then dropped: the run has its own ids)",
                   fields=["uuid", "parentUuid", "isSidechain", "userType"])
    return build_run(header, messages, system_prompt=None, meta=meta, warnings=[TRACE_LACKS], losses=losses)


def _text_of(blocks: list[Any]) -> str | None:
    texts = []
    for block in blocks:
        if isinstance(block, Mapping) and block.get("type") == "text":
            texts.append(str(block.get("text") or ""))
    return "".join(texts) if texts else None


def _assistant(message: Mapping[str, Any], where: str) -> dict[str, Any]:
    """An assistant line back in Chat form. Hermes writes ``[text ""]`` for an empty string content and no
    text block for a null one, so the content comes back as it was stored."""
    blocks = message.get("content")
    if isinstance(blocks, str):
        return {"role": "assistant", "content": blocks}
    if not isinstance(blocks, list):
        raise BadInput(f"{where}: assistant content is neither text nor a block list")
    calls = []
    for block in blocks:
        if not isinstance(block, Mapping):
            raise BadInput(f"{where}: an assistant content block that is not an object")
        if block.get("type") == "tool_use":
            data = block.get("input")
            # Hermes keeps unparsable arguments as {"_raw": text}: that text is what the model sent.
            raw = data["_raw"] if isinstance(data, Mapping) and set(data) == {"_raw"} and isinstance(data["_raw"], str) \
                else json.dumps(data if data is not None else {}, ensure_ascii=False)
            calls.append({"id": str(block.get("id") or ""), "type": "function",
                          "function": {"name": str(block.get("name") or ""), "arguments": raw}})
    out: dict[str, Any] = {"role": "assistant", "content": _text_of(blocks)}
    if calls:
        out["tool_calls"] = calls
    return out


def _user_or_results(message: Mapping[str, Any], where: str) -> list[dict[str, Any]]:
    """A user line: the user's turn, or tool results (one tool message per ``tool_result`` block)."""
    content = message.get("content")
    if isinstance(content, str):
        return [{"role": "user", "content": content}]
    if not isinstance(content, list):
        raise BadInput(f"{where}: user content is neither text nor a block list")
    results = [b for b in content if isinstance(b, Mapping) and b.get("type") == "tool_result"]
    if results and len(results) != len(content):
        raise BadInput(f"{where}: tool results mixed with other content in one line (Hermes writes one result per line)")
    if results:
        return [{"role": "tool", "tool_call_id": str(b.get("tool_use_id") or ""),
                 "content": b.get("content") if isinstance(b.get("content"), str) else json.dumps(b.get("content"))}
                for b in results]
    parts = [{"type": "text", "text": str(b.get("text") or "")} for b in content if isinstance(b, Mapping)
             and b.get("type") == "text"]
    if len(parts) != len(content):
        raise BadInput(f"{where}: a user content block that is not text")
    return [{"role": "user", "content": parts}]
