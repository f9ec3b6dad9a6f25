"""A tool execution in flight (``PendingCall``): what the tool capture keeps between ``tool_enter`` and
the event that records it, and what a session's flush writes when the completing hook never came."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class PendingCall:
    """One tool execution between ``tool_enter`` and the event that records it."""

    key: tuple[str, str]  # (session_id, tool_call_id): the de-duplication key of nested entries
    call_id: str
    name: Any
    args: Any
    original_args: Any
    kw: Mapping[str, Any]
    t0: float  # perf_counter at entry (duration)
    t: float | None = None  # the run's time offset at entry (None if it could not be taken)
    result: Any = None
    exc: BaseException | None = None
    duration: float | None = None

    @property
    def session_id(self) -> str:
        return self.key[0]
