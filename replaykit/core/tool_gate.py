"""The one place engines ask whether a live tool call may run: the core guard when present.

``gate(name, arguments, allow_destructive)`` returns ``GateVerdict(run, result_text, status, reason)``:
run the tool when ``run``; otherwise record ``result_text`` with ``status`` (``dry_run``) instead.
It delegates to ``replaykit.core.guard.check`` (the configurable destructive-tool guard); only if that
module is missing from this build does a conservative name rule stand in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_DESTRUCTIVE_NAME = re.compile(
    r"(write|delete|remove|rm|move|rename|patch|edit|create|exec|shell|terminal|command|run|send|post|"
    r"email|message|pay|purchase|transfer|deploy|push|commit|install|kill|drop|update|upload)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class GateVerdict:
    run: bool
    result_text: str | None = None
    status: str | None = None
    reason: str = ""


def gate(name: str, arguments: Any, allow_destructive: bool) -> GateVerdict:
    try:
        from replaykit.core import guard  # type: ignore[attr-defined]
    except ImportError:
        return _name_rule(name, allow_destructive)
    verdict = guard.check(name, arguments, allow_destructive)
    decision = getattr(verdict, "decision", None)
    reason = str(getattr(decision, "reason", "")) if decision is not None else ""
    return GateVerdict(bool(verdict.run), verdict.result_text, verdict.status, reason)


def _name_rule(name: str, allow_destructive: bool) -> GateVerdict:
    destructive = bool(_DESTRUCTIVE_NAME.search(name or ""))
    if not destructive or allow_destructive:
        return GateVerdict(True, reason="allowed")
    text = (f"[replaykit dry-run] The tool call `{name}` was NOT executed: it looks destructive (name rule). "
            "Nothing was changed. Re-run with --allow-destructive to execute destructive tool calls.")
    return GateVerdict(False, text, "dry_run", "destructive tool name")
