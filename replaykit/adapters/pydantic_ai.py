"""Record a PydanticAI agent's runs (``replaykit.adapters.pydantic_ai``), PydanticAI 1.x and 2.x.

PydanticAI's OpenAI models (``OpenAIChatModel``, ``OpenAIResponsesModel``, any OpenAI-compatible
provider) talk HTTP through httpx (1.x) or httpx2 (2.x), so the recording happens at that seam
(``replaykit.adapters.openai``): every model request exactly as sent (messages, tools, settings),
every response whole (streamed ones assembled: ``run_stream`` and ``iter`` included), failed attempts as
``error`` events, and every tool call with the result PydanticAI sent back to the model (a tool's retry
prompt included, ``status`` error when PydanticAI marked it so). Nothing is wired into the agent::

    from replaykit.adapters.pydantic_ai import record_agent
    with record_agent(agent, "weather-1") as session:
        agent.run_sync("Weather in Paris?")
    with replaykit.serve("weather-1"):            # the same agent, answered from the run, 0 requests
        agent.run_sync("Weather in Paris?")

The run's source names ``pydantic-ai`` and the installed version; the agent's name goes into metadata.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from replaykit.adapters import cassette
from replaykit.adapters.openai import Session
from replaykit.core.errors import MissingExtra

FRAMEWORK = "pydantic-ai"


def framework_version() -> str:
    try:
        import pydantic_ai
    except ImportError as exc:
        raise MissingExtra("pydantic-ai", "pydantic_ai") from exc
    return str(getattr(pydantic_ai, "__version__", "unknown"))


@contextlib.contextmanager
def record_agent(agent: Any = None, run_id: str | None = None, *, store: str | os.PathLike[str] | None = None,
                 path: str | os.PathLike[str] | None = None, title: str | None = None) -> Iterator[Session]:
    """Record every model call the block makes (``agent``'s runs and any other PydanticAI agent's)."""
    metadata: dict[str, Any] = {"framework_version": framework_version()}
    name = getattr(agent, "name", None)
    if name:
        metadata["agent"] = str(name)
    with cassette.record(run_id, store=store, path=path, framework=FRAMEWORK, title=title,
                         metadata=metadata) as session:
        yield session
