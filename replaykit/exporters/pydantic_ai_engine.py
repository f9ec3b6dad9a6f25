"""Replay a recorded run as a PydanticAI agent: served from the record, or live from a cut.

The agent is a real ``pydantic_ai.Agent`` whose tools are built from the run's recorded JSON schemas
and whose model is a ``CursorModel`` (a PydanticAI ``WrapperModel``):

- before the cut it serves the recorded responses, each a fresh deep copy carrying its recorded usage,
  after checking that the agent sent exactly the recorded request (else a ``desync`` event, and the
  call goes live: replay fails open);
- from the cut on it delegates to the live model (``OpenAIChatModel``, or ``OpenAIResponsesModel`` when
  the run used the Responses API) pointed at any OpenAI-compatible endpoint, wrapped in
  ``ResilientModel`` which applies the core's shared retry / backoff / stale-timeout /
  length-continuation / iteration-budget policy;
- when the agent asks for one more completion than the record holds and there is no live model, it
  answers with a synthetic end-of-turn response and a ``synthetic`` event, never a provider call.

``replay(run)`` runs the whole record offline (0 provider calls, 0 tool executions); ``play(run,
options)`` serves steps ``0..N-1`` and goes live at step ``N``, recording the result into the store as
a new run whose lineage names the original, so ``replaykit diff`` compares them.
"""

from __future__ import annotations

import asyncio
import copy
import os
import time
from dataclasses import dataclass
from typing import Any

from replaykit.core.canonical import dumps_compact
from replaykit.core.errors import BadInput, ProviderError, ReplaykitError
from replaykit.core.ir import (
    Event,
    Lineage,
    LLMCallEvent,
    Provenance,
    RunHeader,
    Source,
    ToolCallEvent,
)
from replaykit.core.recorder import Recorder
from replaykit.core.run import Run
from replaykit.exporters import _pydantic_ai_compat as compat
from replaykit.exporters.pydantic_ai_messages import (
    Residue,
    from_pydantic_ai,
    parts_signature,
    response_from_pydantic_ai,
    to_pydantic_ai,
)
from replaykit.exporters.pydantic_ai_plan import Plan, PlannedCall, build_plan
from replaykit.exporters.pydantic_ai_tools import (
    build_tools,
    implementation_for,
    load_tools_module,
    run_implementation,
    unavailable_text,
)

ENGINE = "pydantic-ai"


# ------------------------------------------------------------------------------------------ options


@dataclass
class EngineOptions:
    """The play options this engine reads (from the core's ``PlayOptions`` or any object / mapping
    with these names)."""

    at: int | None = None
    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    allow_destructive: bool = False
    stale_timeout: float | None = None
    tools_module: str | None = None
    store: str | None = None
    record: bool = True
    max_attempts: int | None = None
    iteration_budget: int | None = None
    retry_base_delay: float | None = None

    serve_only: bool = False

    @classmethod
    def read(cls, options: Any, run: Run | None = None) -> EngineOptions:
        """From the core's ``PlayOptions`` (``cut``, ``serve_only``, ``max_iterations``, ``extra``), or a
        mapping / object using this class's names."""
        if isinstance(options, EngineOptions):
            return options
        def get(name: str, default: Any = None) -> Any:
            if isinstance(options, dict):
                return options.get(name, default)
            return getattr(options, name, default)

        extra = get("extra", None) or {}
        at = get("at", None)
        if at is None:
            at = get("cut", None)
        serve_only = bool(get("serve_only", False))
        if at is None and run is not None and not serve_only and hasattr(options, "cut"):
            from replaykit.core.cursor import play_cut  # the contract's default cut (PlayOptions)

            at = play_cut(run)
        store = get("store", None)
        return cls(
            at=None if serve_only else at, base_url=get("base_url", None), model=get("model", None),
            api_key_env=get("api_key_env", None), allow_destructive=bool(get("allow_destructive", False)),
            stale_timeout=get("stale_timeout", None),
            tools_module=get("tools_module", None) or extra.get("tools_module"),
            store=str(store.root) if hasattr(store, "root") else store,
            record=bool(get("record", True)), max_attempts=get("max_attempts", None),
            iteration_budget=get("iteration_budget", None) or get("max_iterations", None),
            retry_base_delay=get("retry_base_delay", None) or extra.get("retry_base_delay"),
            serve_only=serve_only,
        )


@dataclass
class Counters:
    provider_calls: int = 0  # live requests sent (attempts included)
    llm_served: int = 0
    llm_live: int = 0
    synthetic: int = 0
    desyncs: int = 0
    tools_served: int = 0
    tools_executed: int = 0
    tools_dry_run: int = 0
    tools_unavailable: int = 0
    retries: int = 0


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

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id, "parent_run_id": self.parent_run_id, "engine": ENGINE, "status": self.status,
            "final_answer": self.final_answer, "cut": self.cut, "counters": vars(self.counters),
            "lost": self.lost, "error": self.error,
        }


# ------------------------------------------------------------------------------------------ session


class Session:
    """The state of one replay: where the cursor is, what is served, what went live, what is recorded."""

    def __init__(self, run: Run, plan: Plan, opts: EngineOptions, recorder: Recorder | None,
                 live_model: Any | None) -> None:
        self.run = run
        self.plan = plan
        self.opts = opts
        self.recorder = recorder
        self.live_model = live_model
        self.counters = Counters()
        self.cut = opts.at if opts.at is not None else None
        self.next_call = 0
        self.segment_stop = 0
        self.live = False
        self.verified = 0  # messages of the current agent run already checked against the record
        self.impls = load_tools_module(opts.tools_module) if opts.tools_module else {}
        self._copied = 0  # run.events[:_copied] are in the new run
        self._consumed: set[str] = set()  # recorded tool call ids already served
        self._residue: dict[int, Residue] = {}
        self._last_llm_event: str | None = None
        self._call_llm: dict[str, str] = {}  # live tool call id -> llm_call event id
        if live_model is not None and hasattr(live_model, "on_attempt"):
            live_model.on_attempt = self._on_attempt
            live_model.on_error = self._on_error

    def _on_attempt(self) -> None:
        self.counters.provider_calls += 1

    def _on_error(self, failure: Any, attempt: int, wait: float) -> None:
        if failure.retryable and wait:
            self.counters.retries += 1
        if self.recorder is not None:
            self.recorder.error(failure.reason, where="llm", status_code=failure.status_code,
                                retryable=failure.retryable, attempt=attempt, provenance=Provenance.LIVE,
                                error_type="provider")

    # -------------------------------------------------------------------------------- the cursor

    def _before_cut(self, step: int) -> bool:
        return self.cut is None or step < self.cut

    async def model_request(self, messages: list[Any], settings: Any, params: Any, wrapped: Any) -> Any:
        k = self.next_call
        if not self.live and k < self.segment_stop:
            call = self.plan.calls[k]
            if self._before_cut(call.step):
                mismatch = self._check(messages, call)
                if mismatch is None or self.live_model is None:
                    if mismatch is not None:
                        self._desync(call, mismatch)
                    self.next_call += 1
                    self.counters.llm_served += 1
                    self.verified = len(messages) + 1
                    return copy.deepcopy(call.response)
                self._desync(call, mismatch)
            self._go_live(call.step)
        if self.live_model is None or (not self.live and k >= self.segment_stop):
            return self._synthetic(k)
        return await self._live_request(messages, settings, params, wrapped)

    def _check(self, messages: list[Any], call: PlannedCall) -> str | None:
        """None when the agent's request is the recorded one; else where it differs."""
        expected = call.history.messages
        if len(messages) != len(expected):
            return f"the agent sent {len(messages)} messages, the record has {len(expected)}"
        for index in range(min(self.verified, len(messages)), len(messages)):
            if parts_signature(messages[index]) != parts_signature(expected[index]):
                return f"message {index} differs from the record"
        return None

    def _desync(self, call: PlannedCall, reason: str) -> None:
        self.counters.desyncs += 1
        if self.recorder is not None:
            self._copy_prefix_until(call.step)
            self.recorder.desync(call.step, reason=reason, expected=call.event.id)

    def _synthetic(self, k: int) -> Any:
        from pydantic_ai.messages import ModelResponse, TextPart

        self.counters.synthetic += 1
        step = self.plan.calls[k].step if k < len(self.plan.calls) else len(self.run.steps)
        if self.recorder is not None:
            self.recorder.synthetic(step, reason="the agent asked for a completion after the record ended; "
                                                 "answered with an end-of-turn response (no provider call)")
        answer = self.run.final_answer or "[replaykit] end of the recorded run"
        return ModelResponse(parts=[TextPart(content=answer)], model_name="replaykit-synthetic",
                             finish_reason="stop")

    def _go_live(self, step: int) -> None:
        if self.live:
            return
        self.live = True
        if self.recorder is not None:
            self._copy_prefix_until(step)
        # What the record looked like at the cut: lets the live part's messages keep IR-only details.
        at_cut = [c for c in self.plan.calls if c.step >= step]
        if at_cut:
            self._residue = at_cut[0].history.residue
        elif self.plan.calls:
            last = self.plan.calls[-1]
            self._residue = to_pydantic_ai([*last.request, last.event.response.message]).residue

    def _copy_prefix_until(self, step: int) -> None:
        """Copy the recorded events before step ``step`` into the new run (steps marked served)."""
        assert self.recorder is not None
        stop_seq = None
        for s in self.run.steps:
            if s.index == step:
                stop_seq = s.event.seq
        batch: list[Event] = []
        while self._copied < len(self.run.events):
            event = self.run.events[self._copied]
            if stop_seq is not None and event.seq >= stop_seq:
                break
            if isinstance(event, LLMCallEvent | ToolCallEvent):
                event = event.model_copy(update={"provenance": Provenance.SERVED})
            batch.append(event)
            self._copied += 1
        if batch:
            self.recorder.copy_events(batch)
        for event in reversed(batch):
            if isinstance(event, LLMCallEvent):
                self.recorder.set_last_request(event.id, self.run.request_messages(event))
                self._last_llm_event = event.id
                break

    async def _live_request(self, messages: list[Any], settings: Any, params: Any, wrapped: Any) -> Any:
        started = time.monotonic()
        t = self.recorder.now() if self.recorder is not None else 0.0
        response = await wrapped.request(messages, settings, params)
        self.counters.llm_live += 1
        if self.recorder is not None:
            ir_messages = from_pydantic_ai(messages, self._residue)
            ir_response = response_from_pydantic_ai(response)
            event = self.recorder.llm_call(
                ir_messages, ir_response, api=self.plan.api, model=self.opts.model, tools=self.plan.tools,
                t=t, duration=round(time.monotonic() - started, 6), provenance=Provenance.LIVE,
            )
            self._last_llm_event = event.id
            for part in ir_response.message.tool_calls:
                self._call_llm[part.id] = event.id
        return response

    # --------------------------------------------------------------------------------- the tools

    async def call_tool(self, name: str, call_id: str | None, arguments: dict[str, Any]) -> str:
        recorded = self.plan.tool_events.get(call_id or "")
        if recorded is not None and not self.live and recorded.name == name \
                and self._before_cut(self.plan.tool_steps[recorded.call_id]):
            self._consumed.add(recorded.call_id)
            self.counters.tools_served += 1
            return recorded.result or ""
        if not self.live and recorded is not None:
            self._go_live(self.plan.tool_steps[recorded.call_id])
        return await self._live_tool(name, call_id or "", arguments)

    async def _live_tool(self, name: str, call_id: str, arguments: dict[str, Any]) -> str:
        started = time.monotonic()
        t = self.recorder.now() if self.recorder is not None else 0.0
        impl = implementation_for(self.impls, name)
        status = "ok"
        error: str | None = None
        provenance = Provenance.LIVE
        if impl is not None:
            verdict = _guard_check(name, arguments, self.opts.allow_destructive)
            if verdict is None or not verdict.run:
                result = verdict.result_text if verdict is not None else _no_guard_text(name)
                status = "dry_run"
                self.counters.tools_dry_run += 1
            else:
                try:
                    result = await run_implementation(impl, arguments)
                except Exception as exc:  # the user's tool failed: the model sees the error, as in Hermes
                    status = "error"
                    error = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
                    result = f"Error: {error}"
                self.counters.tools_executed += 1
        else:
            match = self._match_recorded(name, arguments)
            if match is not None:
                result = match.result or ""
                status = match.status if match.status in ("ok", "error") else "ok"
                provenance = Provenance.SERVED
                self.counters.tools_served += 1
            else:
                result = unavailable_text(name)
                status = "unavailable"
                provenance = Provenance.SYNTHETIC
                self.counters.tools_unavailable += 1
        if self.recorder is not None:
            self.recorder.tool_call(
                call_id, name, arguments, result=result, status=status, error=error,
                llm_call_id=self._call_llm.get(call_id, self._last_llm_event), t=t,
                duration=round(time.monotonic() - started, 6), provenance=provenance,
            )
        return result

    def _match_recorded(self, name: str, arguments: dict[str, Any]) -> ToolCallEvent | None:
        wanted = dumps_compact(arguments)
        for call_id, event in self.plan.tool_events.items():
            if call_id in self._consumed or event.name != name or event.status not in ("ok", "error"):
                continue
            if dumps_compact(event.arguments if event.arguments is not None else {}) == wanted:
                self._consumed.add(call_id)
                return event
        return None


def _guard_check(name: str, arguments: dict[str, Any], allow_destructive: bool) -> Any:
    """Ask the core's destructive-tool guard; without it, nothing real runs (fail closed)."""
    try:
        import importlib

        guard = importlib.import_module("replaykit.core.guard")
    except ImportError:
        return None
    return guard.check(name, arguments, allow_destructive=allow_destructive)


def _no_guard_text(name: str) -> str:
    return (f"[replaykit dry-run] The tool call `{name[:80]}` was NOT executed: the destructive-tool guard "
            "is not available in this build.")


# ---------------------------------------------------------------------------------------- the model


def _cursor_model_class() -> type:
    from pydantic_ai.models.wrapper import WrapperModel

    class CursorModel(WrapperModel):  # type: ignore[misc, valid-type]
        """Serves the record up to the cut, then delegates to the wrapped (live) model."""

        def __init__(self, wrapped: Any, session: Session) -> None:
            super().__init__(wrapped)
            self.session = session

        async def request(self, messages: Any, model_settings: Any, model_request_parameters: Any) -> Any:
            return await self.session.model_request(messages, model_settings, model_request_parameters,
                                                    self.wrapped)

    return CursorModel


def _offline_model(name: str) -> Any:
    """The wrapped model when there is no live endpoint: never reached (the cursor answers itself)."""
    from pydantic_ai.models.function import FunctionModel

    def refuse(messages: Any, info: Any) -> Any:
        raise AssertionError("replaykit: offline replay must not reach a model")

    return FunctionModel(refuse, model_name=name)


def make_agent(plan: Plan, session: Session, live_model: Any | None) -> Any:
    compat.require()
    from pydantic_ai import Agent

    wrapped = live_model if live_model is not None else _offline_model(plan.run.model or "recorded")
    model = _cursor_model_class()(wrapped, session)
    return Agent(model, output_type=str, tools=build_tools(plan.tools, session), retries=3)


async def drive(plan: Plan, session: Session, agent: Any) -> tuple[str | None, list[Any]]:
    """Run every agent run (segment) of the plan in order; returns the last output and history."""
    from pydantic_ai.usage import UsageLimits

    output: str | None = None
    history: list[Any] = []
    for segment in plan.segments:
        if session.live:
            if segment.continues:
                extra = to_pydantic_ai(segment.new_input).messages
                start = [*history, *extra]
            else:
                start = copy.deepcopy(plan.calls[segment.first].history.messages)
            if session.recorder is not None:
                for message in segment.new_input:
                    if message.role == "user":
                        session.recorder.turn_start(message, turn=segment.index)
        else:
            start = copy.deepcopy(plan.calls[segment.first].history.messages)
            session.next_call = segment.first
        session.segment_stop = segment.stop
        session.verified = 0
        result = await agent.run(None, message_history=start, usage_limits=UsageLimits(request_limit=None))
        output = result.output
        history = result.all_messages()
        if session.recorder is not None and session.live:
            session.recorder.turn_end(output)
    return output, history


# ---------------------------------------------------------------------------------------- entry points


def replay(run: Run) -> EngineResult:
    """Replay the whole run offline through a PydanticAI agent: 0 provider calls, 0 tool executions."""
    compat.require()
    plan = build_plan(run)
    session = Session(run, plan, EngineOptions(), None, None)
    agent = make_agent(plan, session, None)
    output, history = asyncio.run(drive(plan, session, agent))
    return EngineResult(None, run.run_id, "completed", output, history, session.counters, None, plan.lost, [])


def play(run: Run, options: Any) -> Any:
    """``replaykit play RUN --engine pydantic-ai``: serve the prefix, go live at the cut, record the result
    as a new run with lineage. Returns the core's ``PlayResult`` (``run_id`` is the new run)."""
    from replaykit.core.cursor import Counters as CoreCounters
    from replaykit.core.play import PlayResult

    result = play_run(run, options)
    c = result.counters
    counters = CoreCounters(
        provider_calls=c.provider_calls, tool_executions=c.tools_executed, served_llm_steps=c.llm_served,
        served_tool_steps=c.tools_served, live_llm_steps=c.llm_live,
        live_tool_steps=c.tools_executed + c.tools_dry_run + c.tools_unavailable,
        desyncs=c.desyncs, synthetic_steps=c.synthetic,
    )
    return PlayResult(run_id=result.run_id or "", parent_run_id=run.run_id, engine=ENGINE, status=result.status,
                      cut=result.cut if result.cut is not None else len(run.steps), counters=counters,
                      final_answer=result.final_answer, error=result.error, steps=len(result.events),
                      model=getattr(options, "model", None) or run.model)


def play_run(run: Run, options: Any) -> EngineResult:
    compat.require()
    opts = EngineOptions.read(options, run)
    if opts.at is not None and not 0 <= opts.at <= len(run.steps):
        raise BadInput(f"--at {opts.at} out of range: run {run.run_id} has steps 0..{len(run.steps) - 1}")
    plan = build_plan(run)
    live_model = build_live_model(plan, opts) if opts.base_url and not opts.serve_only else None
    if live_model is None and opts.at is not None:
        raise BadInput("play needs --base-url and --model to go live at the cut")
    recorder, writer_path = _new_recorder(run, opts)
    session = Session(run, plan, opts, recorder, live_model)
    agent = make_agent(plan, session, live_model)
    status, error, output, history = "completed", None, None, []
    try:
        output, history = asyncio.run(_drive_and_close(plan, session, agent, live_model))
    except ReplaykitError as exc:
        status, error = "failed", str(exc)
    if recorder is not None:
        if not session.live:
            session._copy_prefix_until(-1)
        recorder.run_end(output, status=status, reason=error)
        recorder.close()
    result = EngineResult(recorder.run_id if recorder else None, run.run_id, status, output, history,
                          session.counters, opts.at, plan.lost, recorder.events if recorder else [], error)
    if status == "failed":
        saved = f"; partial branch saved as {result.run_id}" if result.run_id else ""
        raise ProviderError(f"{error}{saved}")
    del writer_path
    return result


async def _drive_and_close(plan: Plan, session: Session, agent: Any, live_model: Any | None) -> Any:
    try:
        return await drive(plan, session, agent)
    finally:
        client = getattr(live_model, "openai_client", None)
        if client is not None:  # close inside the loop that opened its connections
            await client.close()


def _new_recorder(run: Run, opts: EngineOptions) -> tuple[Recorder | None, Any]:
    if not opts.record:
        return None, None
    from replaykit.core.store import RunStore, new_run_id, utc_now_iso

    store = RunStore(opts.store)
    header = RunHeader(
        run_id=new_run_id("play"), created_at=utc_now_iso(),
        source=Source(framework=ENGINE, framework_version=compat.version(), adapter="replaykit.exporters."
                      "pydantic_ai_engine"),
        model=opts.model or run.header.model, provider=run.header.provider if not opts.base_url else "openai-compatible",
        base_url=_safe_url(opts.base_url) if opts.base_url else run.header.base_url, api_mode=run.header.api_mode,
        title=f"play of {run.run_id}" + (f" from step {opts.at}" if opts.at is not None else ""),
        lineage=Lineage(relation="play", parent_run_id=run.run_id, parent_step=opts.at, engine=ENGINE,
                        details={"model": opts.model, "base_url": _safe_url(opts.base_url) if opts.base_url else None}),
        metadata={k: v for k, v in run.header.metadata.items() if k in ("system_prompt",)},
    )
    writer = store.create(header)
    return Recorder(header, writer), store.path_for(header.run_id)


def _safe_url(url: str) -> str:
    """A base URL without any credentials it might carry (user:pass@, query tokens)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


# ------------------------------------------------------------------------------------- live model


def api_key(opts: EngineOptions) -> str:
    if opts.api_key_env:
        value = os.environ.get(opts.api_key_env)
        if not value:
            raise BadInput(f"--api-key-env {opts.api_key_env}: that environment variable is not set")
        return value
    return "replaykit-no-key"  # local OpenAI-compatible servers accept any key


def build_live_model(plan: Plan, opts: EngineOptions) -> Any:
    """``OpenAIChatModel`` (or ``OpenAIResponsesModel``) at ``--base-url``, wrapped in the core's
    resilience policy."""
    if not opts.model:
        raise BadInput("play --engine pydantic-ai needs --model NAME")
    openai_models = compat.require_openai()
    from openai import AsyncOpenAI
    from pydantic_ai.providers.openai import OpenAIProvider

    from replaykit.exporters.pydantic_ai_resilience import ResilientModel, policy_for

    policy = policy_for(opts)
    client = AsyncOpenAI(base_url=opts.base_url, api_key=api_key(opts), max_retries=0,
                         timeout=policy.http_timeout())
    provider = OpenAIProvider(openai_client=client)
    if plan.api == "openai-responses":
        model = openai_models.OpenAIResponsesModel(opts.model, provider=provider)
    else:
        model = openai_models.OpenAIChatModel(opts.model, provider=provider)
    resilient = ResilientModel(model, policy)
    resilient.openai_client = client
    return resilient
