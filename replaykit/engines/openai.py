"""``replaykit play RUN --engine openai``: the recorded agent loop against any endpoint the core live model
speaks (``--api``: OpenAI Chat or Responses, Anthropic Messages, Gemini, Bedrock Converse; Chat by default).

The loop is the run's own: the first request's messages and tools, then model -> tool calls -> tool
results until the model answers without tools, then the recording's next user turn, and so on. Every
LLM call and tool call goes through the core ``ReplayCursor``: the prefix before the cut is served
from the record (no request, no tool), from the cut on the model is called live (streamed, with the
core resilience: retries, Retry-After, stale-stream timeout, length continuation, iteration budget).

Tool calls climb the one live-tool ladder (``replaykit.core.replay.live_tools``): served from the record, the
destructive-tool guard, the user's ``--tools-module`` implementation, a recorded stand-in, else "not
available". The API key is read from the environment variable the user names, handed to the client,
and never written anywhere.
"""

from __future__ import annotations

import time

from replaykit.core.errors import BadInput, ReplaykitError
from replaykit.core.replay.cursor import ReplayCursor, with_input
from replaykit.core.replay.live_model import DROP_PARAMS, LiveModel
from replaykit.core.replay.live_tools import LiveTools, tool_implementations
from replaykit.core.replay.play import PlayOptions, PlayResult, start_play
from replaykit.core.replay.resilience import GaveUp, IterationBudget
from replaykit.core.replay.tool_ladder import ToolAnswer
from replaykit.core.trace.ir import (
    Message,
    Provenance,
    ToolCallPart,
    ToolResultPart,
)
from replaykit.core.trace.run import Run

ENGINE = "openai"


def _tool_message(call: ToolCallPart, answer: ToolAnswer) -> Message:
    return Message(role="tool", parts=[ToolResultPart(tool_call_id=call.id, name=call.name, content=answer.content,
                                                      is_error=answer.is_error)])


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
    params = {k: v for k, v in first.request.params.items() if k not in DROP_PARAMS}
    impls = tool_implementations(options)  # a bad --tools-module fails before the new run exists
    session = start_play(run, options, engine=ENGINE)
    cursor = session.cursor
    recorder = session.recorder
    live_tools = LiveTools(cursor, options, implementations=impls)
    model: LiveModel | None = None
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
            call_params = dict(params)
            call_tools = tools
            state = "ok"  # the budget bounds live calls: a served prefix is the record's, however long
            messages[:] = with_input(messages, cursor.take_recorded_input(messages))  # added inside the turn
            decision = cursor.llm(messages, call_tools, model=options.model, params=call_params)
            if decision.response is not None:
                response = decision.response
            else:
                state = budget.next_call()
                if state == "exhausted":
                    final = messages[-1].text if messages and messages[-1].role == "assistant" else None
                    recorder.turn_end(final, status="interrupted", reason="iteration budget exhausted",
                                      provenance=_prov(cursor))
                    break
                if state == "grace":  # one last call that can only answer: no tools offered
                    messages.append(budget.grace_message())
                    call_tools = None
                if model is None:
                    model = LiveModel(options, session)
                started = time.monotonic()
                response = model.complete(messages, call_tools, call_params, why=decision.reason)
                model.record(cursor, response, model=options.model, duration=round(time.monotonic() - started, 6))
            messages.append(response.message)
            calls = response.message.tool_calls
            if calls and state != "grace":
                for call in calls:
                    messages.append(_tool_message(call, live_tools.answer(call.id, call.name, call.arguments)))
                continue
            final = response.message.text
            recorder.turn_end(final, reason=budget.reason, provenance=_prov(cursor))
            user = cursor.next_turn(pending_turns)
            if user is None:
                break
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
