"""The Hermes plugin: ``register(ctx)`` is what Hermes calls (entry point ``hermes_agent.plugins`` ->
``replaykit.adapters.hermes.plugin``, or the directory plugin that ``replaykit hermes install`` writes).

Capture points (see docs/hermes.md): the ``llm_execution`` middleware for every LLM attempt (exact request,
raw response, exceptions), ``tool_execution`` for every tool run (nested re-entries de-duplicated), and
hooks for what middleware cannot see. ``llm_request`` and ``tool_request`` middleware are deliberately NOT
registered: Hermes deep-copies the request for them on every call (quadratic over a long session).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from replaykit.adapters.hermes.guarded import log_once as _log_once
from replaykit.adapters.hermes.home import hermes_home, resolve_store_root

_capture: Any = None  # the process-wide HermesCapture once registered
_timing: Any = None  # the Timing of the last register() when REPLAYKIT_HERMES_TIMING is set (bench)


def _safe(where: str, fn: Callable[[dict[str, Any]], Any]) -> Callable[..., None]:
    def hook(**kwargs: Any) -> None:
        try:
            fn(kwargs)
        except Exception as exc:  # never raise into Hermes
            _log_once(where, exc)

    hook.__name__ = f"replaykit_{where}"
    return hook


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
        pending = None
        try:
            pending = capture.tool_enter(kwargs)
        except Exception as exc:  # post_tool_call still records the call (reconstructed_from)
            _log_once("tool_execution", exc)
        if pending is None:  # nested re-entry of the same call (thread-pool path), or entry failed
            return next_call()
        try:
            result = next_call()
        except BaseException as exc:
            _exit(capture, pending, None, exc)
            raise
        _exit(capture, pending, result, None)
        return result

    return tool_execution


def _exit(capture: Any, pending: Any, result: Any, exc: BaseException | None) -> None:
    try:
        capture.tool_exit(pending, result, exc)
    except Exception as inner:
        _log_once("tool_execution.result" if exc is None else "tool_execution.error", inner)


def _known_hooks() -> frozenset[str] | None:
    """The hook names this Hermes fires (None when it does not say)."""
    try:
        from hermes_cli.plugins import VALID_HOOKS
    except Exception:
        return None
    return frozenset(VALID_HOOKS)


def build_capture(store_root: Path | None = None) -> Any:
    from replaykit.adapters.hermes.capture import HermesCapture
    from replaykit.core.trace.store import RunStore

    try:
        from hermes_cli import __version__ as hermes_version
    except Exception:
        hermes_version = None
    root = store_root if store_root is not None else resolve_store_root(hermes_home())
    return HermesCapture(RunStore(root), hermes_version=hermes_version)


def register(ctx: Any) -> None:
    """Called by Hermes's plugin manager. Never raises."""
    global _capture, _timing
    if os.environ.get("REPLAYKIT_DISABLE") == "1":
        return
    started = time.perf_counter()
    timing = None
    if os.environ.get("REPLAYKIT_HERMES_TIMING"):  # opt-in self-timing (bench); see timing.py
        from replaykit.adapters.hermes.timing import Timing

        timing = _timing = Timing(os.environ["REPLAYKIT_HERMES_TIMING"])
    try:
        capture = _capture or build_capture()
        if _capture is None:
            from replaykit.adapters.hermes.versions import warn_if_unsupported

            warn_if_unsupported(capture.sessions.hermes_version)
        _capture = capture
        middleware = {"llm_execution": make_llm_execution(capture), "tool_execution": make_tool_execution(capture)}
        for kind, cb in middleware.items():
            ctx.register_middleware(kind, timing.middleware(kind, cb) if timing else cb)
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
            # Hermes 0.22+ (registering an unknown hook on 0.19.0 only logs a warning: skipped there)
            "pre_auxiliary_call": capture.aux_pre,
            "post_auxiliary_call": capture.aux_post,
        }
        known = _known_hooks()
        for name, fn in hooks.items():
            if known is not None and name not in known:
                continue
            hook = _safe(name, fn)
            ctx.register_hook(name, timing.hook(name, hook) if timing else hook)
        from replaykit.adapters.hermes.command import handle_command

        ctx.register_command("replaykit", handle_command, description="replaykit: list and inspect recorded runs",
                             args_hint="runs | inspect RUN")
    except Exception as exc:
        _log_once("register", exc)
    if timing:
        timing.register_seconds = time.perf_counter() - started
