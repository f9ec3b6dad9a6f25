"""The Hermes plugin: ``register(ctx)`` is what Hermes calls (entry point ``hermes_agent.plugins`` ->
``replaykit.adapters.hermes.plugin``, or the directory plugin that ``replaykit hermes install`` writes).

Capture points (see docs/hermes.md): the ``llm_execution`` middleware for every LLM attempt (exact request,
raw response, exceptions), ``tool_execution`` for every tool run (nested re-entries de-duplicated), and
hooks for what middleware cannot see. ``llm_request`` and ``tool_request`` middleware are deliberately NOT
registered: Hermes deep-copies the request for them on every call (quadratic over a long session).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

logger = logging.getLogger("replaykit.hermes")
_warned: set[tuple[str, str]] = set()
_capture: Any = None  # the process-wide HermesCapture once registered


def _log_once(where: str, exc: BaseException) -> None:
    key = (where, type(exc).__name__)
    if key not in _warned:
        _warned.add(key)
        logger.warning("replaykit: %s failed (%s: %s); recording continues", where, type(exc).__name__, exc)


def _safe(where: str, fn: Callable[[dict[str, Any]], Any]) -> Callable[..., None]:
    def hook(**kwargs: Any) -> None:
        try:
            fn(kwargs)
        except Exception as exc:  # never raise into Hermes
            _log_once(where, exc)

    hook.__name__ = f"replaykit_{where}"
    return hook


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


def _hermes_home() -> Path:
    try:
        from hermes_constants import get_hermes_home

        return Path(get_hermes_home())
    except Exception:
        return Path(os.environ.get("HERMES_HOME") or "~/.hermes").expanduser()


def make_llm_execution(capture: Any) -> Callable[..., Any]:
    def llm_execution(**kwargs: Any) -> Any:
        next_call = kwargs["next_call"]
        cap = None
        try:
            cap = capture.llm_before(kwargs)
        except Exception as exc:
            _log_once("llm_execution", exc)
        try:
            result = next_call()
        except BaseException as exc:
            if cap is not None:
                try:
                    capture.llm_failed(cap, exc)
                except Exception as inner:
                    _log_once("llm_execution.error", inner)
            raise
        if cap is not None:
            try:
                capture.llm_after(cap, result)
            except Exception as exc:
                _log_once("llm_execution.result", exc)
        return result

    return llm_execution


def make_tool_execution(capture: Any) -> Callable[..., Any]:
    def tool_execution(**kwargs: Any) -> Any:
        next_call = kwargs["next_call"]
        key = None
        try:
            key = capture.tool_enter(kwargs)
            t, t0 = capture_now(capture, kwargs), time.perf_counter()
        except Exception as exc:
            _log_once("tool_execution", exc)
        if key is None:  # nested re-entry of the same call (thread-pool path), or capture failed
            return next_call()
        try:
            result = next_call()
        except BaseException as exc:
            try:
                capture.tool_exit(key, kwargs, t, t0, None, exc)
            except Exception as inner:
                _log_once("tool_execution.error", inner)
            raise
        try:
            capture.tool_exit(key, kwargs, t, t0, result, None)
        except Exception as exc:
            _log_once("tool_execution.result", exc)
        return result

    return tool_execution


def capture_now(capture: Any, kwargs: dict[str, Any]) -> float | None:
    session_id = kwargs.get("session_id")
    if not session_id:
        return None
    t: float = capture.session(session_id).recorder.now()
    return t


def build_capture(store_root: Path | None = None) -> Any:
    from replaykit.adapters.hermes.capture import HermesCapture
    from replaykit.core.store import RunStore

    try:
        from hermes_cli import __version__ as hermes_version
    except Exception:
        hermes_version = None
    root = store_root if store_root is not None else resolve_store_root(_hermes_home())
    return HermesCapture(RunStore(root), hermes_version=hermes_version)


def register(ctx: Any) -> None:
    """Called by Hermes's plugin manager. Never raises."""
    global _capture
    if os.environ.get("REPLAYKIT_DISABLE") == "1":
        return
    try:
        capture = _capture or build_capture()
        _capture = capture
        ctx.register_middleware("llm_execution", make_llm_execution(capture))
        ctx.register_middleware("tool_execution", make_tool_execution(capture))
        hooks: dict[str, Callable[[dict[str, Any]], Any]] = {
            "on_session_start": capture.session_start,
            "pre_llm_call": capture.turn_start,
            "api_request_error": capture.api_request_error,
            "post_tool_call": capture.post_tool_call,
            "post_llm_call": capture.post_llm_call,
            "on_session_end": capture.turn_end,
            "on_session_finalize": lambda kw: capture.session_close(kw, "completed"),
            "on_session_reset": lambda kw: capture.session_close(kw, "completed"),
            "subagent_start": capture.subagent_start,
            "subagent_stop": capture.subagent_stop,
        }
        for name, fn in hooks.items():
            ctx.register_hook(name, _safe(name, fn))
        from replaykit.adapters.hermes.command import handle_command

        ctx.register_command("replaykit", handle_command, description="replaykit: list and inspect recorded runs",
                             args_hint="runs | inspect RUN")
    except Exception as exc:
        _log_once("register", exc)
