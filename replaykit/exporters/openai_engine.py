"""``replaykit play RUN --engine openai``: the recorded agent loop against any OpenAI-compatible endpoint.

The loop is the run's own: the first request's messages and tools, then model -> tool calls -> tool
results until the model answers without tools, then the recording's next user turn, and so on. Every
LLM call and tool call goes through the core ``ReplayCursor``: the prefix before the cut is served
from the record (no request, no tool), from the cut on the model is called live (streamed, with the
core resilience: retries, Retry-After, stale-stream timeout, length continuation, iteration budget).

This engine has no tool implementations: a live tool call is answered from the record when the same
call (name and arguments) was recorded, otherwise with an explicit "not available in replay" result
(status ``unavailable``, provenance ``synthetic``). The API key is read from the environment variable
the user names, handed to the client, and never written anywhere.
"""

from __future__ import annotations

import time
from typing import Any

from replaykit.core.codecs import assemble_stream, encode_request
from replaykit.core.cursor import ReplayCursor
from replaykit.core.errors import BadInput, MissingExtra, ReplaykitError
from replaykit.core.ir import (
    LLMResponse,
    Message,
    Provenance,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)
from replaykit.core.play import PlayOptions, PlayResult, PlaySession, start_play
from replaykit.core.resilience import (
    GRACE_PROMPT,
    Classified,
    ContinuationPolicy,
    GaveUp,
    IterationBudget,
    RetryPolicy,
    continue_truncated,
    is_truncated,
    retry_call,
    stale_guard,
)
from replaykit.core.run import Run

ENGINE = "openai"
_DROP_PARAMS = frozenset({"model", "messages", "tools", "stream", "stream_options", "n"})


def unavailable_text(name: str) -> str:
    return (f"[replaykit] tool `{name}` is not available in replay: this call was not in the recording, "
            "and the openai engine does not execute tools.")


class _LiveModel:
    """One OpenAI-compatible endpoint, called through the core resilience pieces."""

    def __init__(self, options: PlayOptions, session: PlaySession) -> None:
        try:
            import openai
        except ImportError as exc:
            raise MissingExtra("openai", "openai") from exc
        self.options = options
        self.session = session
        # max_retries=0: retries belong to the core policy (counted, recorded, Retry-After honoured).
        # A silent stream is caught by ``stale_guard`` (the client's HTTP library differs across openai
        # majors, so no transport-specific timeout object is built here).
        self.client = openai.OpenAI(base_url=options.base_url, api_key=options.api_key() or "replaykit-no-key",
                                    max_retries=0, timeout=options.request_timeout)
        self.policy = RetryPolicy(max_attempts=options.max_attempts,
                                  base_delay=float(options.extra.get("retry_base_delay", 0.5)),
                                  max_delay=float(options.extra.get("retry_max_delay", 20.0)))
        self.continuation = ContinuationPolicy(int(options.extra.get("max_continuations", 3)))

    def _once(self, body: dict[str, Any]) -> LLMResponse:
        # Every field but the two the SDK requires travels in extra_body: recorded parameters from any
        # framework reach the endpoint verbatim, and none can trip the SDK's keyword signature.
        rest = {k: v for k, v in body.items() if k not in ("model", "messages", "stream")}
        rest.setdefault("stream_options", {"include_usage": True})
        stream = self.client.chat.completions.create(model=body["model"], messages=body["messages"], stream=True,
                                                     extra_body=rest)
        try:
            chunks = [chunk.to_dict() for chunk in stale_guard(stream, self.options.stale_timeout)]
        finally:
            stream.close()
        return assemble_stream("openai-chat", chunks)

    def complete(self, messages: list[Message], tools: list[ToolSpec] | None, params: dict[str, Any]) -> LLMResponse:
        cursor = self.session.cursor
        recorder = self.session.recorder

        def call(history: list[Message]) -> LLMResponse:
            body = encode_request("openai-chat", history, tools, {**params, "model": self.options.model}).body

            def on_error(error: Classified, attempt: int, wait: float | None) -> None:
                recorder.llm_error(None, message=error.describe(), error_type=error.kind,
                                   status_code=error.status_code, retryable=wait is not None, attempt=attempt,
                                   provenance=Provenance.LIVE)

            return retry_call(lambda: self._once(body), self.policy,
                              on_attempt=lambda _n: cursor.note_provider_call(), on_error=on_error)

        response = call(messages)
        if is_truncated(response):
            response = continue_truncated(messages, response, call, self.continuation)
        return response


def _tool_message(call: ToolCallPart, content: str, is_error: bool) -> Message:
    return Message(role="tool", parts=[ToolResultPart(tool_call_id=call.id, name=call.name, content=content,
                                                      is_error=is_error)])


def _answer_tool(cursor: ReplayCursor, call: ToolCallPart) -> Message:
    decision = cursor.tool(call.id, call.name, call.arguments)
    if decision.action == "serve" and decision.event is not None:
        event = decision.event
        return _tool_message(call, event.result or event.error or "", event.status == "error")
    recorded = cursor.recorded_tool(call.name, call.arguments)
    if recorded is not None:
        cursor.live_tool(call.id, call.name, call.arguments, result=recorded.result, status=recorded.status,
                         error=recorded.error, executed=False, provenance=Provenance.SERVED)
        return _tool_message(call, recorded.result or "", recorded.status == "error")
    text = unavailable_text(call.name)
    cursor.live_tool(call.id, call.name, call.arguments, result=text, status="unavailable", executed=False,
                     provenance=Provenance.SYNTHETIC)
    return _tool_message(call, text, True)


def _prov(cursor: ReplayCursor) -> Provenance:
    return Provenance.LIVE if cursor.live else Provenance.SERVED


def play(run: Run, options: PlayOptions) -> PlayResult:
    """Play ``run`` against ``options.base_url`` / ``options.model``; the new run goes to the store."""
    llm_calls = run.llm_calls()
    if not llm_calls:
        raise BadInput(f"run {run.run_id} has no LLM call to play")
    first = llm_calls[0]
    messages = run.request_messages(first)
    tools = run.request_tools(first.request)
    params = {k: v for k, v in first.request.params.items() if k not in _DROP_PARAMS}
    session = start_play(run, options, engine=ENGINE)
    cursor = session.cursor
    recorder = session.recorder
    model: _LiveModel | None = None
    turns = cursor.user_turns()
    already = sum(1 for m in messages if m.role == "user")
    pending_turns = turns[already:] if already <= len(turns) else []
    for message in messages:
        if message.role == "user":
            recorder.turn_start(message, provenance=Provenance.SERVED)
    budget = IterationBudget(options.max_iterations)
    final: str | None = None
    try:
        while True:
            state = budget.next_call()
            if state == "exhausted":
                final = messages[-1].text if messages and messages[-1].role == "assistant" else None
                recorder.turn_end(final, status="interrupted", reason="iteration budget exhausted",
                                  provenance=_prov(cursor))
                break
            call_params = dict(params)
            if state == "grace":
                messages.append(Message(role="user", parts=[TextPart(text=GRACE_PROMPT)]))
                call_params["tool_choice"] = "none"
            decision = cursor.llm(messages, tools, model=options.model, params=call_params)
            if decision.response is not None:
                response = decision.response
            else:
                if model is None:
                    model = _LiveModel(options, session)
                started = time.monotonic()
                response = model.complete(messages, tools, call_params)
                cursor.live_llm(messages, response, tools, model=options.model, params=call_params,
                                duration=round(time.monotonic() - started, 6))
            messages.append(response.message)
            calls = response.message.tool_calls
            if calls and state != "grace":
                for call in calls:
                    messages.append(_answer_tool(cursor, call))
                continue
            final = response.message.text
            recorder.turn_end(final, provenance=_prov(cursor))
            if not pending_turns:
                break
            user = pending_turns.pop(0)
            messages.append(user)
            recorder.turn_start(user, provenance=Provenance.SERVED)
            budget.reset()
    except GaveUp as exc:
        session.finish(None, status="failed", error=str(exc))
        raise ReplaykitError(f"play {session.run_id}: {exc}") from exc
    except BaseException as exc:
        session.finish(None, status="interrupted", error=type(exc).__name__)
        raise
    return session.finish(final)
