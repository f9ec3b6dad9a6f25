"""``replaykit play RUN --engine langgraph``: the run's LangGraph graph, driven by the core cursor.

The graph is the one ``replaykit.engines.langgraph.graph`` builds (model node, ToolNode, the
``tools_condition`` loop), but both nodes ask the shared serve-then-live cursor
(``replaykit.core.cursor.ReplayCursor``, set up by ``replaykit.core.play.start_play``) what to do:

- model node: ``cursor.llm`` serves the recorded answer before the cut, flags a desync, or answers a
  synthetic end of turn; otherwise the node calls the OpenAI-compatible endpoint (``--base-url``,
  ``--model``, key from ``--api-key-env``) through the openai engine's live model (core retry policy,
  stale-stream timeout, length continuation) and reports it with ``cursor.live_llm``;
- tool node: ``cursor.tool`` serves recorded results (by call id, any order); a live call goes through
  the destructive-tool guard (dry-run unless ``--allow-destructive``), then a real implementation from
  ``options.extra["tool_impls"]`` if one is given, else a recorded result with the same arguments
  (a stand-in, not an execution), else ``unavailable``.

Later user turns of the record are sent after each turn ends. ``options.extra["checkpoint_db"]``
checkpoints every step into a SQLite file (thread ``play-<new run id>``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from replaykit.core import jsonsafe
from replaykit.core.errors import ReplaykitError
from replaykit.core.ir import Message, ToolSpec
from replaykit.engines.langgraph.graph import _guard_check, record_of, runtime, sqlite_checkpointer

if TYPE_CHECKING:
    from replaykit.core.run import Run

JSON = dict[str, Any]
ENGINE = "langgraph"


def _dump(model: Any) -> JSON:
    dumped: JSON = jsonsafe.model_data(model, exclude_none=True)
    return dumped


class CursorModelNode:
    """The graph's model node in play mode: the cursor decides, the endpoint answers live steps."""

    def __init__(self, rt: Any, cursor: Any, client: Any, tools: list[ToolSpec] | None, model: str,
                 params: JSON) -> None:
        self.rt = rt
        self.cursor = cursor
        self.client = client  # replaykit.core.live_model.LiveModel: retries, stale streams
        self.tools = tools
        self.model = model
        self.params = params

    def __call__(self, state: JSON) -> JSON:
        rt = self.rt
        lc_messages = state["messages"]
        messages = [Message.model_validate(rt.lc_to_ir(m)) for m in lc_messages]
        decision = self.cursor.llm(messages, self.tools, model=self.model)
        if decision.action == "live":
            response = self.client.complete(messages, self.tools, self.params)
            self.cursor.live_llm(messages, response, self.tools, model=self.model)
            provenance = "live"
        else:
            response = decision.response
            provenance = "served" if decision.action == "serve" else "synthetic"
        message = rt.ir_to_lc(_dump(response.message), rt.message_id(len(lc_messages)), provenance,
                              step=decision.step if decision.action == "serve" else None)
        return {"messages": [message]}


class CursorToolRouter:
    """The ToolNode's interceptor and tool bodies in play mode (same interface as ``ToolRouter``)."""

    def __init__(self, rt: Any, cursor: Any, *, allow_destructive: bool, tool_impls: Mapping[str, Any],
                 policy: Any = None) -> None:
        self.rt = rt
        self.cursor = cursor
        self.allow_destructive = allow_destructive
        self.tool_impls = dict(tool_impls)
        self.policy = policy
        self._answers: dict[str, tuple[str, str]] = {}

    def answer(self, name: str, args: JSON) -> str:
        call = self.rt._CURRENT_CALL.get(None)
        call_id = call["id"] if call else ""
        content, status = self._decide(call_id, name, args)
        if call is not None:
            call["outcome"] = ("done", {"status": status})
        return content

    def _decide(self, call_id: str, name: str, args: JSON) -> tuple[str, str]:
        decision = self.cursor.tool(call_id, name, args)
        if decision.action == "serve":
            event = decision.event
            return event.result or "", event.status
        dry = _guard_check(name, args, self.allow_destructive, self.policy)
        if dry is not None:
            self.cursor.live_tool(call_id, name, args, result=dry[0], status=dry[1], executed=False)
            return dry
        impl = self.tool_impls.get(name)
        if impl is not None:
            try:
                value = impl(**args)
                content, status, error = (value if isinstance(value, str) else _json(value)), "ok", None
            except Exception as exc:  # a failing tool is a result the model sees
                content, status, error = f"{type(exc).__name__}: {exc}", "error", str(exc)
            self.cursor.live_tool(call_id, name, args, result=content, status=status, error=error, executed=True)
            return content, status
        stand_in = self.cursor.recorded_tool(name, args)
        if stand_in is not None:
            from replaykit.core.ir import Provenance

            self.cursor.live_tool(call_id, name, args, result=stand_in.result, status=stand_in.status,
                                  executed=False, provenance=Provenance.SERVED)
            return stand_in.result or "", stand_in.status
        content = f"[replaykit] tool {name!r} has no implementation in this play; nothing was executed"
        self.cursor.live_tool(call_id, name, args, result=content, status="unavailable", executed=False)
        return content, "unavailable"

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
        status = (call["outcome"] or ("", {"status": "error"}))[1]["status"]
        ir = rt.lc_to_ir(result.model_copy(update={"additional_kwargs": {}}))
        ir["parts"][0]["is_error"] = status == "error"
        return rt.ir_to_lc(ir, rt.message_id(len(messages) + offset), "live")


def _json(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, default=str)


def play(run: Run, options: Any) -> Any:
    """Play ``run`` through its LangGraph graph: the prefix served, live from the cut (PlayResult)."""
    from replaykit.core.play import start_play

    rt = runtime()
    import langgraph

    session = start_play(run, options, engine=ENGINE, framework_version=getattr(langgraph, "__version__", None))
    cursor = session.cursor
    record = record_of(run)
    specs = [ToolSpec.model_validate(s) for s in record.tool_specs if "parameters" in s or "description" in s]
    tools_offered = _first_tools(run) or specs or None
    extra = options.extra or {}
    try:
        from replaykit.core.live_model import DROP_PARAMS, LiveModel

        client = LiveModel(options, session)
        calls = run.llm_calls()
        params = {k: v for k, v in (calls[0].request.params if calls else {}).items() if k not in DROP_PARAMS}
        model = CursorModelNode(rt, cursor, client, tools_offered, options.model, params)
        router = CursorToolRouter(rt, cursor, allow_destructive=options.allow_destructive,
                                  tool_impls=extra.get("tool_impls") or {}, policy=extra.get("guard_policy"))
        functions = [rt.recorded_tool_function(router, s["name"]) for s in record.tool_specs]
        tools = rt.make_tools(record.tool_specs, functions)
        with _checkpointer(extra.get("checkpoint_db")) as saver:
            graph = rt.build_graph(model, tools, router, checkpointer=saver)
            config: JSON = {"recursion_limit": 2 * int(options.max_iterations) + 3}
            if saver is not None:
                config["configurable"] = {"thread_id": f"play-{session.run_id}"}
            messages = _drive(rt, graph, run, record, cursor, config, saver is not None)
    except ReplaykitError as exc:
        return session.finish(None, status="failed", error=str(exc))
    except Exception as exc:  # langgraph's own failures (recursion limit, ...) end the play as failed
        return session.finish(None, status="failed", error=f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
    final = _final_text(rt, messages)
    return session.finish(final, status="completed")


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


def _drive(rt: Any, graph: Any, run: Run, record: Any, cursor: Any, config: JSON, stateful: bool) -> list[Any]:
    """First turn from the first recorded request's context, then each later recorded user turn."""
    if not record.requests:
        return []
    first = record.requests[0]
    messages = rt.invoke(graph, {"messages": [rt.ir_to_lc(m, rt.message_id(i), "recorded")
                                              for i, m in enumerate(first)]}, config)["messages"]
    for user in cursor.user_turns()[1:]:  # the first turn is in the first request
        new = [rt.ir_to_lc(_dump(user), rt.message_id(len(messages)), "recorded")]
        value = new if stateful else [*messages, *new]
        messages = rt.invoke(graph, {"messages": value}, config)["messages"]
    return list(messages)


def _final_text(rt: Any, messages: list[Any]) -> str | None:
    for message in reversed(messages):
        if isinstance(message, rt.AIMessage):
            return None if message.tool_calls else str(message.content)
    return None
