"""Record a LangGraph graph's runs (``replaykit.adapters.langgraph``).

Model calls are recorded where every LangGraph chat model ends up: OpenAI-compatible HTTP through httpx
(``ChatOpenAI``, or the openai client called from a node; ``replaykit.adapters.openai``). This module adds
what only LangGraph knows, with nothing wired into the graph:

- every model call and tool call carries its graph position in ``corr.extra``: ``langgraph_node``,
  ``langgraph_step``, ``checkpoint_ns`` (subgraph path, ``parent:task|child:task``), ``checkpoint_id``
  (the checkpoint the step started from: time travel and forks can go back to it) and ``thread_id``;
- tool node calls are recorded from LangChain's tool callbacks (exact arguments, status, error and
  duration) through a callback handler registered with ``langchain_core``'s configure hook, so every
  graph run inside the block gets it without a ``callbacks=`` argument;
- a call made inside a subgraph also names the subgraph (``corr.extra.subgraph``), so a reader can cut
  the run by subgraph.

Any active recording or cassette (``replaykit.record``, the pytest plugin) attaches this automatically
when LangGraph is imported; ``record_graph`` is the explicit form::

    with record_graph("lg-run") as session:
        graph.invoke({"messages": [("user", "Weather in Paris?")]}, {"configurable": {"thread_id": "1"}})
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from replaykit.adapters import cassette
from replaykit.adapters.langgraph_callbacks import FRAMEWORK
from replaykit.adapters.openai import Session
from replaykit.core.errors import MissingExtra


@contextlib.contextmanager
def record_graph(run_id: str | None = None, *, store: str | os.PathLike[str] | None = None,
                 path: str | os.PathLike[str] | None = None, title: str | None = None) -> Iterator[Session]:
    """Record every graph run (model calls, tool node calls, positions) made in the block as one run."""
    try:
        import langgraph.version as lg_version

        version = str(getattr(lg_version, "__version__", "unknown"))
    except ImportError as exc:
        raise MissingExtra("langgraph", "langgraph") from exc
    with cassette.record(run_id, store=store, path=path, framework=FRAMEWORK, title=title,
                         metadata={"framework_version": version}) as session:
        yield session  # attached by the recording itself (LangGraph is imported)
