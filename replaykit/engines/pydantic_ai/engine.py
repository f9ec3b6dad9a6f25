"""Replay a recorded run as a PydanticAI agent, driven by the core's serve-then-live cursor.

The agent is a real ``pydantic_ai.Agent`` whose tools are built from the run's recorded JSON schemas
and whose model is a ``CursorModel`` (a PydanticAI ``WrapperModel``). Every decision is the core
``ReplayCursor``'s (``replaykit.core.replay.cursor``), exactly as in the openai, Hermes and LangGraph engines:

- each model request is converted to IR messages and handed to ``cursor.llm``: ``serve`` returns the
  recorded response (a fresh ``ModelResponse`` with its recorded usage), ``synthetic`` the cursor's
  end-of-turn answer, ``live`` (the cut, or a desync: the request's core fingerprint differs from the
  record's) calls the live model and reports it with ``cursor.live_llm``. The cursor records the
  served / synthetic steps and the ``desync`` / ``synthetic`` events;
- each tool call climbs the core live-tool ladder (``replaykit.core.replay.live_tools``): served from the
  record, the destructive-tool guard, the user's implementation (``--tools-module``), a recorded
  stand-in, else the one "not available" result;
- a live request goes to the core live model (``replaykit.core.replay.live_model``: the play's wire API,
  ``--api``, through the provider's SDK, streamed, with the core retry policy, stale-stream guard and
  length continuation), the same one the openai and LangGraph engines call; its IR response is handed back
  to the agent as a ``ModelResponse``. The core ``IterationBudget`` bounds the live calls of each turn
  and ends it with one grace call.

``replay(run)`` runs the whole record offline (0 provider calls, 0 tool executions, no store);
``play(run, PlayOptions)`` is the ``replaykit play --engine pydantic-ai`` entry point (``PlayResult``);
``play_run(run, options)`` is the same with a mapping of options, returning the agent's history too.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from replaykit.core.errors import BadInput, ProviderError, ReplaykitError
from replaykit.core.replay.cursor import Counters as CoreCounters
from replaykit.core.replay.cursor import LLMDecision, ReplayCursor
from replaykit.core.replay.live_model import DROP_PARAMS, LiveModel
from replaykit.core.replay.live_tools import LiveTools, tool_implementations
from replaykit.core.replay.play import PlayOptions, PlayResult, PlaySession, start_play
from replaykit.core.replay.resilience import IterationBudget
from replaykit.core.trace.ir import Event, Provenance
from replaykit.core.trace.run import Run
from replaykit.engines.pydantic_ai import compat
from replaykit.engines.pydantic_ai.messages import (
    Residue,
    from_pydantic_ai,
    response_to_pydantic_ai,
    to_pydantic_ai,
)
from replaykit.engines.pydantic_ai.plan import Plan, Segment, build_plan
from replaykit.engines.pydantic_ai.tools import build_tools

ENGINE = "pydantic-ai"
BUDGET_ANSWER = "[replaykit] iteration budget exhausted"
SEGMENT_END = "[replaykit] end of this recorded agent run"


class BudgetExhausted(ReplaykitError):
    """The agent asked for another completion after the budget's grace call."""


@dataclass
class Counters:
    """The engine's view of a replay: the core cursor's counters plus what only this engine tells apart
    (stand-in tool results, dry-runs, unavailable tools, retries)."""

    provider_calls: int = 0  # live requests sent (attempts included)
    llm_served: int = 0
    llm_live: int = 0
    synthetic: int = 0
    desyncs: int = 0
    tools_served: int = 0  # by the cursor (live calls answered from a matching recorded call included)
    tools_executed: int = 0
    tools_dry_run: int = 0
    tools_unavailable: int = 0
    retries: int = 0
    grace_calls: int = 0


@dataclass
class EngineResult:
    run_id: str | None
    parent_run_id: str
    status: str  # completed | failed
    final_answer: str | None
    messages: list[Any]  # the last agent run's PydanticAI history (all_messages)
    counters: Counters
    cut: int | None
    lost: list[str]
    events: list[Event]
    error: str | None = None
    core_counters: CoreCounters = field(default_factory=CoreCounters)

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id, "parent_run_id": self.parent_run_id, "engine": ENGINE, "status": self.status,
            "final_answer": self.final_answer, "cut": self.cut, "counters": vars(self.counters),
            "lost": self.lost, "error": self.error,
        }


# ------------------------------------------------------------------------------------------ driver


class Driver:
    """One replay in progress: the plan, the cursor, the tools' implementations, the live model."""

    def __init__(self, plan: Plan, cursor: ReplayCursor, *, session: PlaySession | None = None,
                 options: PlayOptions | None = None, impls: dict[str, Any] | None = None) -> None:
        self.plan = plan
        self.cursor = cursor
        self.session = session
        self.options = options
        self.impls = impls or {}
        self.extra = Counters()  # only the engine-specific tallies; the rest comes from the cursor
        self.budget = IterationBudget(options.max_iterations if options is not None else 50)
        self.residue: dict[int, Residue] = {}
        self.segment: Segment | None = None
        self.served = 0  # LLM steps served so far (the cursor serves the record's rounds in order)
        self.tools = LiveTools(cursor, options, implementations=impls)
        first = plan.calls[0].event.request.params if plan.calls else {}
        self.params = {k: v for k, v in first.items() if k not in DROP_PARAMS}  # as the openai engine sends
        self._live_model: LiveModel | None = None

    @property
    def recorder(self) -> Any:
        return self.cursor.recorder

    def counters(self) -> Counters:
        c = self.cursor.counters
        e = self.extra
        return Counters(provider_calls=c.provider_calls, llm_served=c.served_llm_steps, llm_live=c.live_llm_steps,
                        synthetic=c.synthetic_steps, desyncs=c.desyncs,
                        tools_served=c.served_tool_steps, tools_executed=c.tool_executions,
                        tools_dry_run=e.tools_dry_run, tools_unavailable=e.tools_unavailable,
                        retries=sum(1 for ev in (self.recorder.events if self.recorder is not None else ())
                                    if ev.kind == "error" and getattr(ev, "retryable", False)),
                        grace_calls=e.grace_calls)

    def start_segment(self, segment: Segment) -> None:
        """A new agent run: the IR details of its recorded histories, and a fresh budget for the turn."""
        self.segment = segment
        self.residue = {}
        for call in self.plan.calls[segment.first:segment.stop]:
            self.residue.update(call.history.residue)
        self.budget.reset()

    # ------------------------------------------------------------------------------------- LLM

    async def model_request(self, messages: list[Any], settings: Any, params: Any) -> Any:
        segment = self.segment
        if (segment is not None and not self.cursor.live and self.served >= segment.stop
                and segment.stop < len(self.plan.calls)):
            # The record's next request does not extend this agent run (a new turn, a compressed
            # context): end the run here; the next segment starts from the recorded request.
            return _end_of_segment()
        ir_messages = from_pydantic_ai(messages, self.residue)
        decision = self.cursor.llm(ir_messages, self.plan.tools, api=self.plan.api)
        if decision.action == "live" and self.session is None:
            return self._offline_fallback(decision)
        self.served += decision.action == "serve"
        if decision.response is not None:
            return response_to_pydantic_ai(decision.response, provider_name=self.plan.run.header.provider)
        return await self._live(messages, settings, params, ir_messages, decision)

    def _offline_fallback(self, decision: LLMDecision) -> Any:
        """An offline replay (``replay(run)``) has nothing to go live to. After the cursor has reported a
        desync (its event and counter), the record is followed by position so the agent history is still
        the recorded one (what ``export`` needs for a run no agent loop would reproduce exactly)."""
        index = self.served
        self.served += 1
        if index < len(self.plan.calls):
            response = self.plan.calls[index].event.response
        else:
            from replaykit.core.trace.ir import LLMResponse, Message, TextPart

            answer = self.plan.run.final_answer or "[replaykit] end of the recorded run"
            response = LLMResponse(message=Message(role="assistant", parts=[TextPart(text=answer)]),
                                   finish_reason="stop", model="replaykit-synthetic")
        return response_to_pydantic_ai(response, provider_name=self.plan.run.header.provider)

    async def _live(self, messages: list[Any], settings: Any, params: Any, ir_messages: list[Any],
                    decision: LLMDecision) -> Any:
        state = self.budget.next_call()
        if state == "exhausted":
            raise BudgetExhausted(self.budget.exhausted_text)
        tools: list[Any] | None = self.plan.tools or None
        call_params = dict(self.params)
        if state == "grace":  # one last call that can only answer: no tools offered (as the openai engine)
            self.extra.grace_calls += 1
            ir_messages = [*ir_messages, self.budget.grace_message()]
            tools = None
        model = self.live_model(decision)
        started = time.monotonic()
        t = self.recorder.now() if self.recorder is not None else None
        # The core live model is synchronous (the openai client, streamed): a worker thread keeps the
        # agent's event loop free while it streams, retries and continues.
        response = await asyncio.to_thread(model.complete, ir_messages, tools, call_params, why=decision.reason)
        model.record(self.cursor, response, model=model.options.model, t=t,
                     duration=round(time.monotonic() - started, 6))
        answer = response_to_pydantic_ai(response, provider_name="openai")
        if state == "grace":
            return _without_tool_calls(answer)
        return answer

    def live_model(self, decision: LLMDecision) -> LiveModel:
        if self._live_model is None:
            if self.options is None or self.session is None:
                why = "the request does not match the record" if decision.reason == "desync" else decision.reason
                raise ReplaykitError(f"step {decision.step}: {why}; an offline replay cannot go live "
                                     "(use replaykit play with --base-url and --model)")
            self._live_model = LiveModel(self.options, self.session)
        return self._live_model

    # ------------------------------------------------------------------------------------ tools

    async def call_tool(self, name: str, call_id: str | None, arguments: dict[str, Any]) -> str:
        """Every tool call climbs the core live-tool ladder (``replaykit.core.replay.live_tools``)."""
        answer = await self.tools.aanswer(call_id or "", name, arguments)
        # A stand-in answered from a recorded call is counted by the cursor as served (core.replay.cursor).
        if answer.rung == "guard":
            self.extra.tools_dry_run += 1
        elif answer.rung == "unavailable":
            self.extra.tools_unavailable += 1
        return answer.content


def _since(started: float) -> float:
    return round(time.monotonic() - started, 6)


def _end_of_segment() -> Any:
    """Ends an agent run at a segment boundary; never recorded (it is not a step of either run)."""
    from pydantic_ai.messages import ModelResponse
    from pydantic_ai.messages import TextPart as PaiText

    return ModelResponse(parts=[PaiText(content=SEGMENT_END)], model_name="replaykit-segment-end")


def _without_tool_calls(response: Any) -> Any:
    """The grace answer as the agent sees it: tools were withdrawn, so any call in it is dropped and the
    agent run ends with the text (the trace keeps the answer as the model gave it)."""
    from pydantic_ai.messages import TextPart as PaiText
    from pydantic_ai.messages import ToolCallPart as PaiCall

    parts = [p for p in response.parts if not isinstance(p, PaiCall)]
    if not any(isinstance(p, PaiText) and p.content for p in parts):
        parts.append(PaiText(content=BUDGET_ANSWER))
    response.parts = parts
    return response


# ---------------------------------------------------------------------------------------- the model


def _cursor_model_class() -> type:
    from pydantic_ai.models.wrapper import WrapperModel

    class CursorModel(WrapperModel):
        """Asks the cursor for every request; the live model answers only the live ones."""

        def __init__(self, wrapped: Any, driver: Driver) -> None:
            super().__init__(wrapped)
            self.driver = driver

        async def request(self, messages: Any, model_settings: Any, model_request_parameters: Any) -> Any:
            return await self.driver.model_request(list(messages), model_settings, model_request_parameters)

    return CursorModel


def _offline_model(name: str) -> Any:
    """The wrapped model PydanticAI requires; never called (the driver answers or builds the live one)."""
    from pydantic_ai.models.function import FunctionModel

    def refuse(messages: Any, info: Any) -> Any:
        raise AssertionError("replaykit: the cursor model answers every request itself")

    return FunctionModel(refuse, model_name=name)


def make_agent(plan: Plan, driver: Driver) -> Any:
    compat.require()
    from pydantic_ai import Agent

    model = _cursor_model_class()(_offline_model(plan.run.model or "recorded"), driver)
    return Agent(model, output_type=str, tools=build_tools(plan.tools, driver), retries=3)


async def drive(plan: Plan, driver: Driver, agent: Any) -> tuple[str | None, list[Any]]:
    """Run every agent run (segment) of the plan in order, then the recording's later user turns the
    plan does not hold (a branch keeps only its prefix; the run it came from has every turn, as the
    openai and LangGraph engines send them); returns the last output and history."""
    from pydantic_ai.usage import UsageLimits

    cursor = driver.cursor
    recorder = driver.recorder
    output: str | None = None
    history: list[Any] = []
    # The user turns the plan plays: those in its last request (each agent run may restate the whole
    # conversation, so counting the segments' inputs would count a turn more than once).
    sent = sum(1 for m in plan.calls[-1].request if m.role == "user") if plan.calls else 0
    later = [Segment(len(plan.segments) + i, 0, len(plan.calls), [user], True)
             for i, user in enumerate(cursor.user_turns()[sent:])]
    for segment in [*plan.segments, *later]:
        if segment.index >= len(plan.segments) or (cursor.live and segment.continues and history):
            start = [*history, *to_pydantic_ai(segment.new_input).messages]
        else:  # the recorded request (a fresh conversion: nothing shared between runs)
            start = to_pydantic_ai(plan.calls[segment.first].request).messages
        if recorder is not None:
            for message in segment.new_input:
                if message.role == "user":
                    recorder.turn_start(message, turn=segment.index, provenance=Provenance.SERVED)
        driver.start_segment(segment)
        # No request limit: a long recorded run is replayed to its end (the budget bounds live calls).
        result = await agent.run(None, message_history=start, usage_limits=UsageLimits(request_limit=None))
        output = result.output
        history = result.all_messages()
        if recorder is not None:
            recorder.turn_end(output, reason=driver.budget.reason,
                              provenance=Provenance.LIVE if cursor.live else Provenance.SERVED)
    return output, history


# ---------------------------------------------------------------------------------------- entry points


def replay(run: Run) -> EngineResult:
    """Replay the whole run offline through a PydanticAI agent: 0 provider calls, 0 tool executions.
    A request past the end of the record gets the cursor's synthetic answer; a desync is an error
    (there is no live model to fail open to)."""
    compat.require()
    plan = build_plan(run)
    driver = Driver(plan, ReplayCursor(run, cut=None))
    agent = make_agent(plan, driver)
    output, history = asyncio.run(drive(plan, driver, agent))
    return EngineResult(None, run.run_id, "completed", output, history, driver.counters(), None, plan.lost, [],
                        core_counters=driver.cursor.counters)


def play(run: Run, options: PlayOptions) -> PlayResult:
    """``replaykit play RUN --engine pydantic-ai``: serve the prefix, go live at the cut, record the new
    run (lineage ``play``). On final failure raises one clear line naming the saved partial run."""
    return _play(run, options)[1]


def play_run(run: Run, options: Any) -> EngineResult:
    """``play`` with options as a ``PlayOptions`` or a mapping (``at``, ``base_url``, ``model``, ``store``,
    ``tools_module``, ``stale_timeout``, ``max_attempts``, ``max_iterations``, ``retry_base_delay``,
    ``allow_destructive``, ``api_key_env``); without ``at`` the whole record is served."""
    return _play(run, play_options(options))[0]


def play_options(options: Any) -> PlayOptions:
    if isinstance(options, PlayOptions):
        return options
    if not isinstance(options, dict):
        raise BadInput("play options must be PlayOptions or a mapping")
    from replaykit.core.trace.store import RunStore

    if not options.get("base_url") or not options.get("model"):
        raise BadInput("play --engine pydantic-ai needs --base-url URL and --model NAME")
    store = options.get("store")
    extra = dict(options.get("extra") or {})
    for key in ("tools_module", "retry_base_delay", "retry_max_delay", "max_continuations"):
        if options.get(key) is not None:
            extra[key] = options[key]
    kw: dict[str, Any] = {}
    for key in ("stale_timeout", "max_attempts", "request_timeout", "run_id", "stream_timing"):
        if options.get(key) is not None:
            kw[key] = options[key]
    budget = options.get("max_iterations") or options.get("iteration_budget")
    if budget is not None:
        kw["max_iterations"] = int(budget)
    at = options.get("at", options.get("cut"))
    return PlayOptions(
        base_url=str(options["base_url"]), model=str(options["model"]), api_key_env=options.get("api_key_env"),
        allow_destructive=bool(options.get("allow_destructive", False)),
        store=store if isinstance(store, RunStore) else RunStore(store),
        cut=at, serve_only=bool(options.get("serve_only", at is None)), extra=extra, **kw,
    )


def _play(run: Run, options: PlayOptions) -> tuple[EngineResult, PlayResult]:
    compat.require()
    plan = build_plan(run)
    impls = tool_implementations(options)  # a bad --tools-module fails before the new run exists
    options.api_key()  # a named but unset variable fails before the new run is created
    session = start_play(run, options, engine=ENGINE, framework_version=compat.version())
    driver = Driver(plan, session.cursor, session=session, options=options, impls=impls)
    agent = make_agent(plan, driver)
    status, error, output = "completed", None, None
    history: list[Any] = []
    try:
        output, history = asyncio.run(drive(plan, driver, agent))
    except ReplaykitError as exc:  # GaveUp (provider), BudgetExhausted, a bad tools module...
        status, error = "failed", str(exc)
    except BaseException as exc:
        session.finish(None, status="interrupted", error=type(exc).__name__)
        raise
    play_result = session.finish(output, status=status, error=error)
    if status == "failed":
        raise ProviderError(f"{error}; partial branch saved as {session.run_id}")
    result = EngineResult(session.run_id, run.run_id, status, output, history, driver.counters(), session.cursor.cut,
                          plan.lost, list(session.recorder.events), error, core_counters=session.cursor.counters)
    return result, play_result
