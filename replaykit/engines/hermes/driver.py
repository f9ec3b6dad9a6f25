"""The process side of ``--engine hermes`` (started by ``replaykit.engines.hermes.engine``; never imported by
a process that has not set ``HERMES_HOME``): a real ``AIAgent`` whose LLM and tool executions go through
replaykit middleware registered in-process.

``python -m replaykit.engines.hermes.driver SPEC.json OUT.json``
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

from replaykit.adapters.hermes import wire
from replaykit.adapters.hermes.response import response_to_ir
from replaykit.core.codecs import decode_request, encode_response
from replaykit.core.cursor import ReplayCursor
from replaykit.core.errors import BadInput, ReplaykitError
from replaykit.core.ir import LLMResponse, Message, Provenance
from replaykit.core.play import PlayOptions, PlaySession, start_play
from replaykit.core.recorder import Recorder
from replaykit.core.resilience import classify
from replaykit.core.run import Run
from replaykit.core.store import RunStore
from replaykit.core.tool_gate import gate

API = "openai-chat"
_FINISH = {"stop", "length", "tool_calls", "content_filter", "function_call"}


def completion_from_ir(response: LLMResponse, model: str | None, index: int) -> Any:
    """The recorded answer as the ``ChatCompletion`` Hermes's chat loop consumes."""
    from openai.types.chat import ChatCompletion

    body = encode_response(API, response).body
    body["object"] = "chat.completion"
    body.setdefault("id", f"replaykit-served-{index}")
    body.setdefault("created", 0)
    body["model"] = body.get("model") or model or "replaykit"
    choice = body["choices"][0]
    choice.setdefault("index", 0)
    if choice.get("finish_reason") not in _FINISH:
        choice["finish_reason"] = "tool_calls" if response.message.tool_calls else "stop"
    body.pop("usage", None)  # recorded usage may carry provider-specific details; not needed to replay
    try:
        return ChatCompletion.model_validate(body)
    except Exception:
        return ChatCompletion.model_construct(**body)


class PlayMiddleware:
    """The two execution middlewares (and the system-prompt pin) around one cursor."""

    def __init__(self, session: PlaySession, recorded_system: str | None) -> None:
        self.session = session
        self.cursor: ReplayCursor = session.cursor
        self.recorder: Recorder = session.recorder
        self.options = session.options
        self.recorded_system = recorded_system
        self._active: set[str] = set()
        self._lock = threading.Lock()
        self._served = 0

    def llm_request(self, **kw: Any) -> Any:
        """Pin the recorded system prompt: Hermes rebuilds it (date, paths, memory), the replay must not."""
        request = kw.get("request")
        if not self.recorded_system or not isinstance(request, dict):
            return None
        messages = request.get("messages")
        if not (isinstance(messages, list) and messages and isinstance(messages[0], dict)
                and messages[0].get("role") == "system" and messages[0].get("content") != self.recorded_system):
            return None
        pinned = [{**messages[0], "content": self.recorded_system}, *messages[1:]]
        return {"request": {**request, "messages": pinned}, "source": "replaykit", "reason": "recorded system prompt"}

    def llm_execution(self, **kw: Any) -> Any:
        next_call = kw["next_call"]
        request = kw.get("request") or {}
        model, raw_tools, params, _sdk = wire.split_request(API, request)
        body: dict[str, Any] = {"messages": request.get("messages") or []}
        if isinstance(raw_tools, list) and raw_tools:
            body["tools"] = raw_tools
        decoded = decode_request(API, body)  # the shared codec, as the recorder uses
        messages, tools = decoded.messages, decoded.tools
        decision = self.cursor.llm(messages, tools, model=model, params=params)
        if decision.response is not None:
            self._served += 1
            return completion_from_ir(decision.response, model, self._served)
        self.cursor.note_provider_call()
        started = time.perf_counter()
        try:
            result = next_call()
        except BaseException as exc:  # Hermes classifies and retries; we record the failed attempt
            error = classify(exc) if isinstance(exc, Exception) else None
            self.recorder.llm_error(None, message=error.describe() if error else type(exc).__name__,
                                    error_type=error.kind if error else type(exc).__name__,
                                    status_code=error.status_code if error else None,
                                    retryable=error.retryable if error else False, provenance=Provenance.LIVE)
            raise
        response = response_to_ir(API, result)
        self.cursor.live_llm(messages, response, tools, model=model, params=params,
                             duration=round(time.perf_counter() - started, 6))
        return result

    def tool_execution(self, **kw: Any) -> Any:
        next_call = kw["next_call"]
        name = str(kw.get("tool_name") or "")
        args = kw.get("args")
        call_id = str(kw.get("tool_call_id") or f"{name}@{threading.get_ident()}")
        with self._lock:
            nested = call_id in self._active  # Hermes's concurrent path enters the chain twice
            if not nested:
                self._active.add(call_id)
        if nested:
            return next_call()
        try:
            decision = self.cursor.tool(call_id, name, args)
            if decision.action == "serve" and decision.event is not None:
                event = decision.event
                return event.result if event.result is not None else (event.error or "")
            verdict = gate(name, args, self.options.allow_destructive, store=self.options.store.root)
            if not verdict.run:
                text = verdict.result_text or "[replaykit] not executed"
                self.cursor.live_tool(call_id, name, args, result=text, status=verdict.status or "dry_run",
                                      executed=False, provenance=Provenance.LIVE)
                return text
            started = time.perf_counter()
            try:
                result = next_call()
            except BaseException as exc:
                self.cursor.live_tool(call_id, name, args, result=None, status="error", error=repr(exc)[:2000],
                                      duration=round(time.perf_counter() - started, 6))
                raise
            text = result if isinstance(result, str) else json.dumps(result, default=str)
            self.cursor.live_tool(call_id, name, args, result=text, duration=round(time.perf_counter() - started, 6))
            return result
        finally:
            with self._lock:
                self._active.discard(call_id)


def _recorded_system(run: Run) -> str | None:
    calls = run.llm_calls()
    if not calls:
        return None
    first = run.request_messages(calls[0])
    return first[0].text if first and first[0].role == "system" else None


def _turns(run: Run, cursor: ReplayCursor) -> list[Message]:
    turns = cursor.user_turns()
    if turns:
        return turns
    calls = run.llm_calls()
    users = [m for m in run.request_messages(calls[0]) if m.role == "user"] if calls else []
    if not users:
        raise BadInput(f"run {run.run_id} has no user message to replay")
    return users[-1:]


def run(spec: dict[str, Any]) -> dict[str, Any]:
    import run_agent  # plugin discovery happens here (the recording plugin is disabled by env)
    from hermes_cli import __version__ as hermes_version
    from hermes_cli.plugins import PluginContext, PluginManifest, get_plugin_manager

    source = Run.load(spec["source"])
    options = PlayOptions(
        base_url=spec["base_url"], model=spec["model"], api_key_env=spec.get("api_key_env"),
        allow_destructive=bool(spec.get("allow_destructive")), stale_timeout=spec.get("stale_timeout"),
        store=RunStore(spec["store"]), cut=spec.get("cut"), serve_only=bool(spec.get("serve_only")),
        max_iterations=int(spec.get("max_iterations") or 50), run_id=spec.get("run_id"),
    )
    session = start_play(source, options, engine="hermes", framework_version=hermes_version)
    cursor = session.cursor
    middleware = PlayMiddleware(session, _recorded_system(source))
    ctx = PluginContext(PluginManifest(name="replaykit-play", source="inproc"), get_plugin_manager())
    ctx.register_middleware("llm_request", middleware.llm_request)
    ctx.register_middleware("llm_execution", middleware.llm_execution)
    ctx.register_middleware("tool_execution", middleware.tool_execution)
    agent = run_agent.AIAgent(
        base_url=options.base_url, api_key=options.api_key() or "replaykit-no-key", provider="custom",
        model=options.model, enabled_toolsets=list(spec["toolsets"]), quiet_mode=True, skip_context_files=True,
        skip_memory=True, platform=spec.get("platform") or "cli", max_iterations=options.max_iterations,
        tool_delay=0.0,
    )
    history: list[dict[str, Any]] | None = None
    final: str | None = None
    status = "completed"
    error: str | None = None
    try:
        for message in _turns(source, cursor):
            session.recorder.turn_start(message, provenance=Provenance.SERVED)
            result = agent.run_conversation(message.text, conversation_history=history)
            history = result.get("messages")
            final = result.get("final_response")
            turn_status = "failed" if result.get("failed") else "interrupted" if result.get("interrupted") else "completed"
            session.recorder.turn_end(final, status=turn_status,
                                      provenance=Provenance.LIVE if cursor.live else Provenance.SERVED)
            if turn_status != "completed":
                status, error = turn_status, str(result.get("error") or result.get("turn_exit_reason") or turn_status)
                break
    except Exception as exc:
        status, error = "failed", " ".join(f"{type(exc).__name__}: {exc}".split())[:400]
    played = session.finish(final, status=status, error=error)
    return played.to_json()


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m replaykit.engines.hermes.driver SPEC.json OUT.json", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as handle:
        spec = json.load(handle)
    try:
        out = run(spec)
    except ReplaykitError as exc:
        out = {"error": str(exc), "error_kind": "bad_input"}
    with open(argv[1], "w", encoding="utf-8") as handle:
        json.dump(out, handle, default=str)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
