"""Nothing replaykit does inside Hermes may break the agent: a failing capture step is logged once per
place and kind of error, and recording carries on."""

from __future__ import annotations

import logging

logger = logging.getLogger("replaykit.hermes")
_warned: set[tuple[str, str]] = set()


def log_once(where: str, exc: BaseException) -> None:
    key = (where, type(exc).__name__)
    if key not in _warned:
        _warned.add(key)
        logger.warning("replaykit: %s failed (%s: %s); recording continues", where, type(exc).__name__, exc)
