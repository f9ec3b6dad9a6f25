"""``replaykit play RUN --engine langgraph``: the run's LangGraph graph, driven by the core cursor.

The graph is the one ``replaykit.engines.langgraph.graph`` builds (model node, tools node, the
``tools_condition`` loop), but both nodes ask the shared serve-then-live cursor
(``replaykit.core.replay.cursor.ReplayCursor``, set up by ``replaykit.core.replay.play.start_play``) what to do:

- model node: ``cursor.llm`` serves the recorded answer before the cut, flags a desync, or answers a
  synthetic end of turn; otherwise the node calls the endpoint (``--api``, ``--base-url``, ``--model``,
  key from ``--api-key-env``) through the core live model (``replaykit.core.replay.live_model``: retry
  policy, stale-stream timeout, length continuation) and records it with ``LiveModel.record``;
- tool node: every call climbs the one live-tool ladder (``replaykit.core.replay.live_tools``): served from
  the record, the destructive-tool guard, the user's implementation (``--tools-module`` or
  ``options.extra["tool_impls"]``), a recorded stand-in, else ``unavailable``.

Later user turns of the record are sent after each turn ends. ``options.extra["checkpoint_db"]``
checkpoints every step into a SQLite file (thread ``play-<new run id>``).

The core ``IterationBudget`` (``--max-iterations``) bounds the live model calls of each turn as in the
other engines: past it, one grace call without tools (``GRACE_PROMPT`` sent), whose tool calls are
dropped so the graph ends the turn with its text; the turn end records why. LangGraph's own recursion
limit is set above what the record and the budget can need, so it is only a backstop; reaching it ends
the play as failed with a one-line error, the partial run kept.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from replaykit.core.errors import ProviderError, ReplaykitError
from replaykit.core.replay.cursor import with_input
from replaykit.core.replay.live_tools import LiveTools, tool_implementations
from replaykit.core.replay.resilience import IterationBudget
from replaykit.core.trace import jsonsafe
from replaykit.core.trace.ir import Message, ToolSpec
from replaykit.engines.langgraph.graph import record_of, runtime, sqlite_checkpointer

if TYPE_CHECKING:
    from replaykit.core.trace.run import Run

JSON = dict[str, Any]
ENGINE = "langgraph"


def _dump(model: Any) -> JSON:
    dumped: JSON = jsonsafe.model_data(model, exclude_none=True)
    return dumped


class CursorModelNode:
    """The graph's model node in play mode: the cursor decides, the endpoint answers live steps."""

    def __init__(self, rt: Any, cursor: Any, client: Any, tools: list[ToolSpec] | None, model: str,
                 params: JSON, budget: IterationBudget) -> None:
        self.rt = rt
        self.budget = budget  # live calls of the current turn (reset by ``_drive`` at each turn)
        self.cursor = cursor
        self.client = client  # replaykit.core.replay.live_model.LiveModel: retries, stale streams
        self.tools = tools
        self.model = model
        self.params = params

    def __call__(self, state: JSON) -> JSON:
        rt = self.rt
        lc_messages = state["messages"]
        messages = [Message.model_validate(rt.lc_to_ir(m)) for m in lc_messages]
        # Input the application added inside the turn (an image a tool returned, sent as a user message
        # after its result): into the request and into the graph's state, as the record has it.
        found = self.cursor.take_recorded_input(messages)
        update = _inserted(rt, lc_messages, found)
        messages = with_input(messages, found)
        decision = self.cursor.llm(messages, self.tools, model=self.model)
        if decision.action == "live":
            response = self._live(messages, decision)
            provenance = "live"
        else:
            response = decision.response
            provenance = "served" if decision.action == "serve" else "synthetic"
        message = rt.ir_to_lc(_dump(response.message), rt.message_id(len(messages)), provenance,
                              step=decision.step if decision.action == "serve" else None)
        return {"messages": [*update, message]}

    def _live(self, messages: list[Message], decision: Any) -> Any:
        """One live call within the turn's budget; the grace call offers no tools and its answer, as the
        graph sees it, has no tool call (the trace keeps the answer as the model gave it)."""
        state = self.budget.next_call()
        if state == "exhausted":  # the grace answer ends the turn, so a well-formed graph never gets here
            raise ReplaykitError(self.budget.exhausted_text)
        tools = self.tools
        if state == "grace":
            messages = [*messages, self.budget.grace_message()]
            tools = None
        response = self.client.complete(messages, tools, self.params, why=decision.reason)
        self.client.record(self.cursor, response, model=self.model)
        if state == "grace" and response.message.tool_calls:
            parts = [p for p in response.message.parts if p.type != "tool_call"]
            response = response.model_copy(update={"message": response.message.model_copy(update={"parts": parts})})
        return response


def _inserted(rt: Any, lc_messages: list[Any], found: list[tuple[int, Message]]) -> list[Any]:
    """The state update that puts the input ``found`` in place (the graph's ids stay positional): appended
    when it all goes at the end, else the whole list again, the graph's own messages moved up."""
    if not found:
        return []
    if found[0][0] >= len(lc_messages):
        return [rt.ir_to_lc(_dump(m), rt.message_id(index), "recorded") for index, m in found]
    from langchain_core.messages import RemoveMessage
    from langgraph.graph.message import REMOVE_ALL_MESSAGES

    added = dict(found)
    own = iter(lc_messages)
    merged = [rt.ir_to_lc(_dump(added[i]), rt.message_id(i), "recorded") if i in added
              else next(own).model_copy(update={"id": rt.message_id(i)})
              for i in range(len(lc_messages) + len(found))]
    return [RemoveMessage(id=REMOVE_ALL_MESSAGES), *merged]


class CursorToolRouter:
    """The ToolNode's interceptor and tool bodies in play mode (same interface as ``ToolRouter``); every
    call climbs the core live-tool ladder."""

    def __init__(self, rt: Any, tools: LiveTools) -> None:
        self.rt = rt
        self.tools = tools

    def answer(self, name: str, args: JSON) -> str:
        call = self.rt._CURRENT_CALL.get(None)
        answer = self.tools.answer(call["id"] if call else "", name, args)
        if call is not None:
            call["outcome"] = ("done", {"status": answer.status, "is_error": answer.is_error})
        return answer.content

    def wrap(self, request: Any, execute: Any) -> Any:
        rt = self.rt
        tool_call = request.tool_call
        messages = request.state["messages"] if isinstance(request.state, dict) else request.state.messages
        asker = next(m for m in reversed(messages) if isinstance(m, rt.AIMessage))
        offset = [c["id"] for c in asker.tool_calls].index(tool_call["id"])
        call: JSON = {"id": tool_call["id"], "outcome": None}
        token = rt._CURRENT_CALL.set(call)
        try:
            result = execute(request)
        finally:
            rt._CURRENT_CALL.reset(token)
        if not isinstance(result, rt.ToolMessage):
            return result
        outcome = (call["outcome"] or ("", {"is_error": True}))[1]
        ir = rt.lc_to_ir(result.model_copy(update={"additional_kwargs": {}}))
        ir["parts"][0]["is_error"] = bool(outcome["is_error"])
        return rt.ir_to_lc(ir, rt.message_id(len(messages) + offset), "live")


def play(run: Run, options: Any) -> Any:
    """Play ``run`` through its LangGraph graph: the prefix served, live from the cut (PlayResult)."""
    from replaykit.core.replay.play import start_play

    rt = runtime()
    import langgraph

    impls = tool_implementations(options)  # a bad --tools-module fails before the new run exists
    session = start_play(run, options, engine=ENGINE, framework_version=getattr(langgraph, "__version__", None))
    cursor = session.cursor
    record = record_of(run)
    specs = [ToolSpec.model_validate(s) for s in record.tool_specs if "parameters" in s or "description" in s]
    tools_offered = _first_tools(run) or specs or None
    extra = options.extra or {}
    limit = _recursion_limit(run, options)
    try:
        from replaykit.core.replay.live_model import DROP_PARAMS, LiveModel

        client = LiveModel(options, session)
        calls = run.llm_calls()
        params = {k: v for k, v in (calls[0].request.params if calls else {}).items() if k not in DROP_PARAMS}
        budget = IterationBudget(int(options.max_iterations))
        model = CursorModelNode(rt, cursor, client, tools_offered, options.model, params, budget)
        router = CursorToolRouter(rt, LiveTools(cursor, options, implementations=impls))
        functions = [rt.recorded_tool_function(router, s["name"]) for s in record.tool_specs]
        tools = rt.make_tools(record.tool_specs, functions)
        with _checkpointer(extra.get("checkpoint_db")) as saver:
            graph = rt.build_graph(model, tools, router, checkpointer=saver)
            config: JSON = {"recursion_limit": limit}
            if saver is not None:
                config["configurable"] = {"thread_id": f"play-{session.run_id}"}
            messages = _drive(rt, graph, run, record, cursor, config, saver is not None, budget)
    except ReplaykitError as exc:  # the partial run is kept (closed as failed); the error says where
        session.finish(None, status="failed", error=str(exc))
        raise ProviderError(f"{exc}; partial run saved as {session.run_id}") from exc
    except Exception as exc:  # langgraph's own failures (recursion limit, ...) end the play as failed
        error = _graph_error(exc, limit)
        session.finish(None, status="failed", error=error)
        raise ReplaykitError(f"play {session.run_id}: {error}; partial run saved as {session.run_id}") from exc
    except BaseException as exc:
        session.finish(None, status="interrupted", error=type(exc).__name__)
        raise
    final = _final_text(rt, messages)
    return session.finish(final, status="completed")


def _recursion_limit(run: Run, options: Any) -> int:
    """Graph steps allowed per ``invoke`` (one user turn): a model and a tools step per recorded call,
    the same per live call of the budget plus its grace call, and slack; ``extra["recursion_limit"]``
    overrides it."""
    override = (options.extra or {}).get("recursion_limit")
    if override is not None:
        return int(override)
    return 2 * (len(run.llm_calls()) + int(options.max_iterations) + 1) + 3


def _graph_error(exc: Exception, limit: Any) -> str:
    """One line for a failure inside langgraph; its recursion limit is named in our terms."""
    from langgraph.errors import GraphRecursionError

    if isinstance(exc, GraphRecursionError):
        return (f"the LangGraph recursion limit of {limit} graph steps in one turn was reached before the "
                "turn ended (raise --max-iterations or options.extra['recursion_limit'])")
    return f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"


def _first_tools(run: Run) -> list[ToolSpec] | None:
    for event in run.llm_calls():
        tools = run.request_tools(event.request)
        if tools:
            return list(tools)
    return None


@contextlib.contextmanager
def _checkpointer(path: Any) -> Any:
    if not path:
        yield None
        return
    with sqlite_checkpointer(path) as saver:
        yield saver


def _drive(rt: Any, graph: Any, run: Run, record: Any, cursor: Any, config: JSON, stateful: bool,
           budget: IterationBudget) -> list[Any]:
    """First turn from the first recorded request's context, then each later recorded user turn (each
    turn's start and end recorded, as the other engines do; each turn gets a fresh budget)."""
    if not record.requests:
        return []
    from replaykit.core.trace.ir import Provenance

    recorder = cursor.recorder
    first = record.requests[0]
    for message in first:
        if message.get("role") == "user" and recorder is not None:
            recorder.turn_start(Message.model_validate(message), provenance=Provenance.SERVED)
    budget.reset()
    messages = rt.invoke(graph, {"messages": [rt.ir_to_lc(m, rt.message_id(i), "recorded")
                                              for i, m in enumerate(first)]}, config)["messages"]
    _turn_end(rt, cursor, messages, budget)
    already = sum(1 for message in first if message.get("role") == "user")  # the first request's turns
    pending = cursor.user_turns()[already:]
    while (user := cursor.next_turn(pending)) is not None:
        if recorder is not None:
            recorder.turn_start(user, provenance=Provenance.SERVED)
        new = [rt.ir_to_lc(_dump(user), rt.message_id(len(messages)), "recorded")]
        value = new if stateful else [*messages, *new]
        budget.reset()
        messages = rt.invoke(graph, {"messages": value}, config)["messages"]
        _turn_end(rt, cursor, messages, budget)
    return list(messages)


def _turn_end(rt: Any, cursor: Any, messages: list[Any], budget: IterationBudget) -> None:
    from replaykit.core.trace.ir import Provenance

    if cursor.recorder is not None:
        cursor.recorder.turn_end(_final_text(rt, messages), reason=budget.reason,
                                 provenance=Provenance.LIVE if cursor.live else Provenance.SERVED)


def _final_text(rt: Any, messages: list[Any]) -> str | None:
    for message in reversed(messages):
        if isinstance(message, rt.AIMessage):
            return None if message.tool_calls else str(message.content)
    return None
