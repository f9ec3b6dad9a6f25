"""Where Hermes lives (``HERMES_HOME``) and where replaykit records inside it: shared by the plugin and
the ``/replaykit`` slash command."""

from __future__ import annotations

import os
from pathlib import Path

from replaykit.adapters.hermes.guarded import logger


def resolve_store_root(hermes_home: Path, env: dict[str, str] | None = None) -> Path:
    """``$HERMES_HOME/replaykit``, or ``$REPLAYKIT_HOME`` when it resolves inside HERMES_HOME."""
    env = dict(os.environ) if env is None else env
    default = hermes_home / "replaykit"
    override = env.get("REPLAYKIT_HOME")
    if not override:
        return default
    candidate = Path(override).expanduser()
    if not candidate.is_absolute():
        candidate = hermes_home / candidate
    home = hermes_home.resolve()
    resolved = candidate.resolve()
    if resolved != home and home not in resolved.parents:
        logger.warning("replaykit: REPLAYKIT_HOME=%s is outside HERMES_HOME; recording to %s", override, default)
        return default
    return resolved


def hermes_home() -> Path:
    """Hermes's home: Hermes's own answer when it is importable, else ``$HERMES_HOME``, else ``~/.hermes``."""
    try:
        from hermes_constants import get_hermes_home

        return Path(get_hermes_home())
    except Exception:
        return Path(os.environ.get("HERMES_HOME") or "~/.hermes").expanduser()
