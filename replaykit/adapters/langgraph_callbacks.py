"""What only LangGraph knows, added to any recording session (``replaykit.adapters.openai.Session``):
graph positions on every model and tool call (``graph_context``) and tool node calls from LangChain's tool
callbacks (``attach``). A recording or cassette calls ``attach`` itself when LangGraph is imported;
``replaykit.adapters.langgraph.record_graph`` is the explicit form."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any
from uuid import UUID

from replaykit.adapters.openai import Session
from replaykit.core.errors import MissingExtra

FRAMEWORK = "langgraph"
_handler_var: ContextVar[Any | None] = ContextVar("replaykit_langgraph_handler", default=None)
_hook_lock = threading.Lock()
_hook_registered = False


def graph_context(config: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """Where in the graph the current call happens (None outside a graph run)."""
    if config is None:
        try:
            from langgraph.config import get_config

            config = dict(get_config())
        except (ImportError, RuntimeError):
            return None
    metadata = config.get("metadata") or {}
    configurable = config.get("configurable") or {}
    ns = configurable.get("checkpoint_ns") or metadata.get("langgraph_checkpoint_ns") or metadata.get("checkpoint_ns")
    out: dict[str, Any] = {}
    for key in ("langgraph_node", "langgraph_step"):
        if metadata.get(key) is not None:
            out[key] = metadata[key]
    if configurable.get("thread_id") is not None:
        out["thread_id"] = str(configurable["thread_id"])
    if ns:
        out["checkpoint_ns"] = str(ns)
        parents = str(ns).split("|")
        if len(parents) > 1:
            out["subgraph"] = "|".join(p.split(":", 1)[0] for p in parents[:-1])
    checkpoint_map = configurable.get("checkpoint_map")
    if isinstance(checkpoint_map, dict) and checkpoint_map:
        parent_ns = "|".join(str(ns).split("|")[:-1]) if ns else ""
        checkpoint_id = checkpoint_map.get(parent_ns) or next(reversed(checkpoint_map.values()))
        out["checkpoint_id"] = str(checkpoint_id)
    elif configurable.get("checkpoint_id"):
        out["checkpoint_id"] = str(configurable["checkpoint_id"])
    return out or None


def _text(output: Any) -> str:
    content = getattr(output, "content", output)
    if isinstance(content, str):
        return content
    try:
        return json.dumps(content, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(content)


def _handler_class() -> type:
    from langchain_core.callbacks import BaseCallbackHandler

    class ToolRecorder(BaseCallbackHandler):  # type: ignore[misc]
        """LangChain callbacks -> ``Session.record_tool`` (tool node calls with exact status/duration)."""

        def __init__(self, session: Session) -> None:
            self.session = session
            self._open: dict[UUID, tuple[float, str, Any, str | None, dict[str, Any] | None]] = {}

        def on_tool_start(self, serialized: dict[str, Any] | None, input_str: str, *, run_id: UUID,
                          metadata: dict[str, Any] | None = None, inputs: dict[str, Any] | None = None,
                          **kwargs: Any) -> None:
            name = kwargs.get("name") or (serialized or {}).get("name") or "tool"
            call_id = kwargs.get("tool_call_id")
            where = graph_context() or graph_context({"metadata": metadata or {}})
            self._open[run_id] = (time.monotonic(), str(name), inputs if inputs is not None else input_str,
                                  call_id, where)

        def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
            started = self._open.pop(run_id, None)
            if started is None:
                return
            t0, name, args, call_id, where = started
            call_id = call_id or getattr(output, "tool_call_id", None)
            if not call_id:
                return  # a tool run outside a model's tool call: nothing to pair it with
            status = "error" if getattr(output, "status", "success") == "error" else "ok"
            self.session.record_tool(call_id, name, args, result=_text(output), status=status,
                                     duration=round(time.monotonic() - t0, 6), corr_extra=where)

        def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
            started = self._open.pop(run_id, None)
            if started is None or not started[3]:
                return
            t0, name, args, call_id, where = started
            assert call_id is not None
            self.session.record_tool(call_id, name, args, result=None, status="error",
                                     error=f"{type(error).__name__}: {error}"[:2000],
                                     duration=round(time.monotonic() - t0, 6), corr_extra=where)

    return ToolRecorder


def attach(session: Session) -> Callable[[], None]:
    """Add LangGraph positions and tool-node callbacks to ``session``; returns the detach function."""
    global _hook_registered
    try:
        from langchain_core.tracers.context import register_configure_hook
    except ImportError as exc:
        raise MissingExtra("langgraph", "langchain_core") from exc
    with _hook_lock:
        if not _hook_registered:
            register_configure_hook(_handler_var, inheritable=True)
            _hook_registered = True
    provider = graph_context
    session.context_providers.append(provider)
    token = _handler_var.set(_handler_class()(session))

    def detach() -> None:
        if provider in session.context_providers:
            session.context_providers.remove(provider)
        try:
            _handler_var.reset(token)
        except ValueError:  # detached from another context: clear it there
            _handler_var.set(None)

    return detach


