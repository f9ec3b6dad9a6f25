"""The one place engines ask whether a live tool call may run: the core destructive-tool guard with the
store's policy.

``gate(name, arguments, allow_destructive)`` returns ``GateVerdict(run, result_text, status, reason)``:
run the tool when ``run``; otherwise record ``result_text`` with ``status`` (``dry_run``) instead.
It delegates to ``replaykit.core.guard.check`` with the policy of ``<store>/guard.toml`` (cached).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class GateVerdict:
    run: bool
    result_text: str | None = None
    status: str | None = None
    reason: str = ""


def _policy_for(store: str | Path | None) -> Any:
    """The guard policy of ``store`` (``<store>/guard.toml``), else of the default store; cached per file
    modification time so a long play does not re-read it for every tool call."""
    from replaykit.core import guard
    from replaykit.core.trace.store import default_store_root

    root = Path(store) if store is not None else default_store_root()
    config = root / "guard.toml"
    try:
        info = config.stat()
        stamp: tuple[int, int] | None = (info.st_mtime_ns, info.st_size)
    except OSError:
        stamp = None
    key = (str(config), stamp)
    cached = _POLICY_CACHE.get(key)
    if cached is None:
        cached = guard.load_policy(store=root)
        _POLICY_CACHE.clear()
        _POLICY_CACHE[key] = cached
    return cached


_POLICY_CACHE: dict[tuple[str, tuple[int, int] | None], Any] = {}


def gate(name: str, arguments: Any, allow_destructive: bool, *, store: str | Path | None = None,
         policy: Any = None) -> GateVerdict:
    """Ask the guard (with the user's ``guard.toml`` of ``store``, or an explicit ``policy``)."""
    from replaykit.core import guard

    if policy is None:
        policy = _policy_for(store)
    verdict = guard.check(name, arguments, allow_destructive, policy)
    decision = getattr(verdict, "decision", None)
    reason = str(getattr(decision, "reason", "")) if decision is not None else ""
    return GateVerdict(bool(verdict.run), verdict.result_text, verdict.status, reason)

