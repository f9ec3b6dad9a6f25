"""Hermes 0.22's silent re-issue: a streamed attempt that fails with a 5xx before its first delta is sent
again without streaming inside the same ``llm_execution`` call (``_unmask_server_error_with_nonstreaming``),
and no exception, no ``api_request_error`` says so. The one trace of it is the agent's marker
``_stream_5xx_probe_ts`` (the monotonic time of its last such probe): when it moves during a call, the
provider received one request more than the call shows. The recorder (capture/llm.py) and the Hermes play
engine (engines/hermes/driver.py) both watch it through this module.
"""

from __future__ import annotations

from typing import Any

#: AIAgent's attribute: monotonic time of its last streaming-5xx re-issue (Hermes 0.22)
PROBE_MARK = "_stream_5xx_probe_ts"
#: what a rebuilt attempt's message says
REISSUED_MESSAGE = ("the streamed attempt failed with a server error (5xx) before its first delta; "
                    "Hermes re-sent it without streaming")


def find_agent(next_call: Any) -> Any:
    """Hermes's ``AIAgent`` behind an ``llm_execution`` chain: the chain's terminal call
    (``_perform_api_call``) closes over it. None on a Hermes without the re-issue marker."""
    seen: set[int] = set()
    todo: list[Any] = [next_call]
    while todo and len(seen) < 64:
        fn = todo.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        for cell in getattr(fn, "__closure__", None) or ():
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            if hasattr(type(value), "run_conversation") and hasattr(value, PROBE_MARK):
                return value
            if callable(value):
                todo.append(value)
            elif isinstance(value, list):
                todo.extend(v for v in value[:8] if callable(v))
    return None


def mark(agent: Any) -> Any:
    """The agent's re-issue marker now (None without an agent)."""
    return getattr(agent, PROBE_MARK, None) if agent else None


def reissued(agent: Any, before: Any) -> bool:
    """Whether the agent re-issued a streamed attempt since its marker read ``before``."""
    now = mark(agent)
    return now is not None and now != before
