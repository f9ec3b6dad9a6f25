"""``replaykit import PATH --format hermes-unroll``: the standalone .py files the hermes-unroll plugin writes.

The file is parsed with ``ast`` and only literals are read (module-level ``NAME = <literal>`` and the
``messages.append(...)`` calls of its ``replay()`` function); it is never executed or imported. JSON
``true``/``false``/``null`` that such files sometimes contain are read as their Python values.

hermes-unroll records per turn, so its files lack the exact requests, tool schemas, sampling parameters,
raw responses and failed attempts; everything imported is marked ``reconstructed`` and the warnings say so.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from replaykit import __version__
from replaykit.adapters.base import ImportedRun
from replaykit.adapters.hermes.capture import run_id_for_session
from replaykit.adapters.hermes.conversation import build_run
from replaykit.core.errors import BadInput
from replaykit.core.trace.ir import RunHeader, Source
from replaykit.core.trace.store import new_run_id, utc_now_iso

_JSON_NAMES = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}
MAX_BYTES = 64 * 1024 * 1024


class _NotLiteral(Exception):
    pass


def literal(node: ast.AST) -> Any:
    """``ast.literal_eval`` plus JSON's true/false/null; anything else raises ``_NotLiteral``."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id in _JSON_NAMES:
        return _JSON_NAMES[node.id]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [literal(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise _NotLiteral("dict unpacking")
        return {literal(k): literal(v) for k, v in zip(node.keys, node.values, strict=True)}  # type: ignore[arg-type]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = literal(node.operand)
        if isinstance(value, (int, float)):
            return -value if isinstance(node.op, ast.USub) else value
    raise _NotLiteral(type(node).__name__)


def _constants(tree: ast.Module) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            try:
                out[stmt.targets[0].id] = literal(stmt.value)
            except _NotLiteral:
                continue
    return out


def _appended_messages(func: ast.FunctionDef) -> list[dict[str, Any]]:
    """``messages.append(...)`` arguments in source order (a literal, or a name bound to one just before)."""
    bound: dict[str, Any] = {}
    found: list[dict[str, Any]] = []

    def visit(stmts: list[ast.stmt]) -> None:
        for stmt in stmts:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                try:
                    bound[stmt.targets[0].id] = literal(stmt.value)
                except _NotLiteral:
                    bound.pop(stmt.targets[0].id, None)
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                call = stmt.value
                fn = call.func
                if (isinstance(fn, ast.Attribute) and fn.attr == "append" and isinstance(fn.value, ast.Name)
                        and fn.value.id == "messages" and len(call.args) == 1):
                    arg = call.args[0]
                    try:
                        value = bound.get(arg.id) if isinstance(arg, ast.Name) else literal(arg)
                    except _NotLiteral:
                        value = None
                    if isinstance(value, dict) and value.get("role"):
                        found.append(value)
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and not isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
                    visit(inner)
            for handler in getattr(stmt, "handlers", []) or []:
                visit(handler.body)

    visit(func.body)
    return found


def import_unroll(path: Path) -> list[ImportedRun]:
    path = Path(path)
    try:
        if path.stat().st_size > MAX_BYTES:
            raise BadInput(f"{path} is larger than {MAX_BYTES // (1024 * 1024)} MB; not a hermes-unroll file")
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"cannot read {path}: {exc}") from exc
    try:
        tree = ast.parse(source, filename=str(path))
    except (SyntaxError, ValueError) as exc:
        raise BadInput(f"{path} is not valid Python ({exc.__class__.__name__}); not a hermes-unroll file") from exc
    consts = _constants(tree)
    replay = next((s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == "replay"), None)
    if "SESSION_ID" not in consts or replay is None:
        raise BadInput(f"{path} is not a hermes-unroll file (no SESSION_ID constant or replay() function)")
    messages = _appended_messages(replay)
    session_id = str(consts.get("SESSION_ID") or "")
    run_id = (run_id_for_session(session_id) + "-unroll") if session_id else new_run_id("hermes-unroll")
    header = RunHeader(
        run_id=run_id, created_at=utc_now_iso(),
        source=Source(framework="hermes", adapter="replaykit.adapters.hermes.import_unroll", replaykit_version=__version__),
        model=consts.get("MODEL") or None, provider=consts.get("PROVIDER") or None, session_id=session_id or None,
        title=path.name, tags=["imported", "reconstructed", "hermes-unroll"],
    )
    warnings = [
        "hermes-unroll files hold the conversation only: requests were reconstructed from the messages "
        "(no tool schemas, sampling parameters, raw responses, per-call usage or failed attempts)",
    ]
    raw_timeline = consts.get("TIMELINE")
    timeline: list[Any] = raw_timeline if isinstance(raw_timeline, list) else []
    times = _times(messages, timeline)
    if not any(m.get("role") == "assistant" and m.get("tool_calls") for m in messages) and any(
            m.get("role") == "tool" for m in messages):
        warnings.append("tool results without the assistant messages that requested them (hermes-unroll "
                        "captured per turn); their arguments are unknown")
    meta = {k.lower(): consts[k] for k in ("USAGE", "ACTIVE_SKILLS", "TAGS", "ORIGINAL_DURATION_MS") if k in consts}
    meta["source_file"] = path.name
    run = build_run(header, messages, system_prompt=consts.get("SYSTEM_PROMPT") or None, times=times, meta=meta,
                    warnings=warnings)
    expected = consts.get("EXPECTED")
    if isinstance(expected, str) and expected and run.events:
        from replaykit.core.trace.ir import TurnEndEvent

        last = run.events[-1]
        if isinstance(last, TurnEndEvent) and last.final_answer is None:
            run.events[-1] = last.model_copy(update={"final_answer": expected})
    return [run]


def _times(messages: list[dict[str, Any]], timeline: list[Any]) -> list[float | None]:
    """Offsets (s) from the TIMELINE entries of the matching kinds, in order."""
    want = {"user": "user_message", "assistant": "llm_call", "tool": "tool_call"}
    queues: dict[str, list[float]] = {}
    for entry in timeline:
        if isinstance(entry, dict) and isinstance(entry.get("offset_ms"), (int, float)):
            queues.setdefault(str(entry.get("kind")), []).append(entry["offset_ms"] / 1000.0)
    out: list[float | None] = []
    for msg in messages:
        queue = queues.get(want.get(str(msg.get("role")), ""), [])
        out.append(queue.pop(0) if queue else None)
    return out
