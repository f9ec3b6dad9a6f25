"""Record and serve OpenAI model calls at the HTTP layer (``replaykit.adapters.openai``).

Anything built on httpx or httpx2 and speaking OpenAI Chat Completions or Responses is captured: the
``openai`` client (sync, async, streaming), PydanticAI's OpenAI models, LangChain's ChatOpenAI, Hermes's
client. Wire a transport by hand::

    from replaykit.adapters.openai import RecordingTransport, recording_session
    session = recording_session(recorder)
    client = openai.OpenAI(http_client=httpx.Client(transport=RecordingTransport(session)))

or let ``replaykit.record(...)`` / ``replaykit.serve(run)`` / the pytest plugin patch every client for
the duration of a block (see docs/testing.md).
"""

from __future__ import annotations

from replaykit.adapters.openai._session import CassetteMiss, Counters, Exchange, Session, task_key
from replaykit.adapters.openai._transport import (
    AsyncRecordingTransport,
    RecordingTransport,
    activate,
    active_session,
    deactivate,
    install,
    uninstall,
)
from replaykit.core.trace.recorder import Recorder

__all__ = [
    "AsyncRecordingTransport",
    "CassetteMiss",
    "Counters",
    "Exchange",
    "RecordingTransport",
    "Session",
    "activate",
    "active_session",
    "deactivate",
    "install",
    "recording_session",
    "task_key",
    "uninstall",
]


def recording_session(recorder: Recorder) -> Session:
    """A session that records every model call it sees into ``recorder`` (nothing served)."""
    return Session(recorder=recorder, index=None)
