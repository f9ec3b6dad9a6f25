"""A recorded run as a real, compiled LangGraph graph: replay, checkpoints, forks, Mermaid drawing.

    graph = build_replay_graph(run)                       # served model + tools node, 0 provider calls
    result = replay(run, checkpoint_db="cp.sqlite")      # every step a SqliteSaver checkpoint
    fork = fork_run(run, store=store, step=4, target="result", value="...", live=LiveEndpoint(...))

The graph itself is built by ``replaykit.engines.langgraph.runtime`` (shared verbatim with the exported
source); this module plugs replaykit in: the live provider (the core live model at any OpenAI-compatible
endpoint), the destructive-tool guard in front of every real tool execution (the live-tool ladder's
guard rung), SQLite checkpointing, and recording a fork back into the store as a new run with lineage.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replaykit.core.errors import BadInput, MissingExtra, ReplaykitError
from replaykit.core.gcpause import cyclic_gc_paused
from replaykit.core.trace import jsonsafe
from replaykit.engines.langgraph.live import LiveEndpoint, make_live_model

if TYPE_CHECKING:
    from replaykit.core.trace.run import Run
    from replaykit.engines.langgraph import runtime as lg_runtime

JSON = dict[str, Any]
ToolImpl = Callable[..., Any]


class LangGraphDesync(ReplaykitError):
    """The graph left the record and nothing live was configured to continue."""


def runtime() -> Any:
    """``replaykit.engines.langgraph.runtime``, or MissingExtra when langgraph is not installed."""
    try:
        from replaykit.engines.langgraph import runtime as rt
    except ModuleNotFoundError as exc:
        name = exc.name or ""
        if name.split(".")[0] in ("langgraph", "langchain_core"):
            raise MissingExtra("langgraph", name) from exc
        raise
    return rt


def _sqlite_saver(conn: Any) -> Any:
    try:
        from langgraph.checkpoint.sqlite import SqliteSaver
    except ModuleNotFoundError as exc:
        raise MissingExtra("langgraph", "langgraph-checkpoint-sqlite") from exc
    from replaykit.engines.langgraph.checkpoints import RememberingSerializer

    return SqliteSaver(conn, serde=RememberingSerializer())


def record_of(run: Run) -> lg_runtime.Record:
    rt = runtime()
    header = jsonsafe.model_data(run.header, exclude_none=True)
    events = [jsonsafe.model_data(e, exclude_none=True) for e in run.events]
    record: lg_runtime.Record = rt.Record(header, events)
    return record


def _dumps(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, default=str)


# ------------------------------------------------------------------------------------ the graph


@dataclass
class ReplayGraph:
    """A compiled graph plus what it serves from and what it logged."""

    graph: Any
    record: lg_runtime.Record
    log: lg_runtime.ReplayLog
    model: lg_runtime.ModelNode
    router: lg_runtime.ToolRouter

    def drive(self, config: JSON | None = None) -> list[Any]:
        rt = runtime()
        try:
            with cyclic_gc_paused():
                messages: list[Any] = rt.drive(self.graph, self.record, config)
        except rt.ReplayDesync as exc:
            raise LangGraphDesync(rt.mismatch_report(self.record, self.log) or str(exc)) from exc
        return messages


def tool_identifiers(names: list[str]) -> list[str]:
    """Python identifiers for tool names: ASCII word characters only, unique, never a keyword."""
    import keyword

    out: list[str] = []
    seen: set[str] = set()
    for name in names:
        base = re.sub(r"[^A-Za-z0-9_]", "_", name.encode("ascii", "replace").decode("ascii"))[:48].strip("_")
        if not base or base[0].isdigit() or keyword.iskeyword(base) or base.startswith("__"):
            base = f"tool_{base}".rstrip("_")
        candidate, n = base, 2
        while candidate in seen:
            candidate, n = f"{base}_{n}", n + 1
        seen.add(candidate)
        out.append(candidate)
    return out


def build_replay_graph(run: Run, *, live: LiveEndpoint | None = None,
                       live_model: Callable[[list[JSON], list[JSON]], JSON] | None = None,
                       tool_impls: Mapping[str, ToolImpl] | None = None, allow_destructive: bool = False,
                       guard_policy: Any = None, checkpointer: Any = None,
                       safe_tool_names: bool = False) -> ReplayGraph:
    """A compiled graph of ``run``. Without ``live``/``live_model`` it is pure replay (0 provider calls);
    tools outside the record run only through ``tool_impls`` and the guard."""
    rt = runtime()
    record = record_of(run)
    log = rt.ReplayLog()
    if live_model is None and live is not None:
        live_model = make_live_model(live)
    model = rt.ModelNode(record, log, live_model)
    from replaykit.core.replay.live_tools import guard_for

    router = rt.ToolRouter(record, log, dict(tool_impls or {}),
                           guard_for(allow_destructive, policy=guard_policy))
    specs = record.tool_specs
    if safe_tool_names:  # drawings: trace text never reaches a diagram as anything but identifiers
        specs = [{**s, "name": n} for s, n in zip(specs, tool_identifiers([s["name"] for s in specs]), strict=True)]
    functions = [rt.recorded_tool_function(router, s["name"]) for s in record.tool_specs]
    tools = rt.make_tools(specs, functions)
    graph = rt.build_graph(model, tools, router, checkpointer=checkpointer)
    return ReplayGraph(graph, record, log, model, router)


def mermaid_for_run(run: Run) -> str:
    """The graph's Mermaid drawing, offline (``draw_mermaid``, never the mermaid.ink PNG API)."""
    built = build_replay_graph(run, safe_tool_names=True)
    text: str = built.graph.get_graph().draw_mermaid()
    return text


# ------------------------------------------------------------------------------------ checkpoints


@contextmanager
def sqlite_checkpointer(path: str | os.PathLike[str]) -> Iterator[Any]:
    """A SqliteSaver on ``path`` (created 0600); closed on exit so a reopen reads it from disk."""
    import sqlite3

    db = Path(path).expanduser()
    if db.is_dir():
        raise BadInput(f"checkpoint database {db} is a directory")
    if not db.exists():
        db.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(db, os.O_CREAT | os.O_WRONLY, 0o600)
        os.close(fd)
    conn = sqlite3.connect(str(db), check_same_thread=False)
    try:
        yield _sqlite_saver(conn)
    finally:
        conn.close()


def thread_config(thread_id: str) -> JSON:
    return {"configurable": {"thread_id": thread_id}}


@dataclass
class ReplayResult:
    messages: list[JSON]
    counters: JSON
    log: list[JSON]
    thread_id: str | None = None
    checkpoints: int = 0


def replay(run: Run, *, checkpoint_db: str | os.PathLike[str] | None = None,
           thread_id: str | None = None) -> ReplayResult:
    """Replay ``run`` through its graph: messages (IR dicts), counters, and with ``checkpoint_db`` a
    SqliteSaver checkpoint after every node (model step or tools step)."""
    with cyclic_gc_paused():  # the record and the conversions too, not only the drive
        return _replay(run, checkpoint_db, thread_id)


def _replay(run: Run, checkpoint_db: str | os.PathLike[str] | None, thread_id: str | None) -> ReplayResult:
    rt = runtime()
    if checkpoint_db is None:
        built = build_replay_graph(run)
        final = built.drive()
        return ReplayResult([rt.lc_to_ir(m) for m in final], built.log.counters(), built.log.entries)
    thread = thread_id or f"replay-{run.run_id}"
    with sqlite_checkpointer(checkpoint_db) as saver:
        built = build_replay_graph(run, checkpointer=saver)
        config = thread_config(thread)
        if built.graph.get_state(config).values:
            raise BadInput(f"thread {thread!r} already has checkpoints in {checkpoint_db}; pick another thread id")
        final = built.drive(config)
        count = _checkpoint_count(saver, thread)
    return ReplayResult([rt.lc_to_ir(m) for m in final], built.log.counters(), built.log.entries, thread, count)


def _checkpoint_count(saver: Any, thread: str) -> int:
    """The thread's checkpoints, counted in SQL (the SqliteSaver's ``checkpoints`` table): ``list``
    would decode every checkpoint and its writes to count them."""
    row = saver.conn.execute("SELECT COUNT(*) FROM checkpoints WHERE thread_id = ?", (thread,)).fetchone()
    return int(row[0])


def checkpoint_messages(run: Run, checkpoint_db: str | os.PathLike[str], thread_id: str) -> list[JSON]:
    """The messages at the head of a thread, read back from the SQLite file (a fresh connection)."""
    rt = runtime()
    with sqlite_checkpointer(checkpoint_db) as saver:
        built = build_replay_graph(run, checkpointer=saver)
        values = built.graph.get_state(thread_config(thread_id)).values
    return [rt.lc_to_ir(m) for m in values.get("messages", [])]


# ------------------------------------------------------------------------------------ forks


@dataclass
class ForkResult:
    run_id: str | None
    messages: list[JSON]
    counters: JSON
    log: list[JSON]
    fork_checkpoint_id: str | None
    parent_checkpoint_id: str | None
    thread_id: str
    final_answer: str | None


def _find_checkpoint(graph: Any, config: JSON, step: int) -> Any:
    """The oldest checkpoint whose state holds the message of recorded step ``step``."""
    rt = runtime()
    found = None
    for snapshot in graph.get_state_history(config):  # newest first
        messages = snapshot.values.get("messages", []) if snapshot.values else []
        if any((s := rt.stash_of(m)) is not None and s.get("step") == step for m in messages):
            found = snapshot
    if found is None:
        raise BadInput(f"no checkpoint holds step {step}; replay the run into this thread first")
    return found


def _edited_message(rt: Any, snapshot: Any, step: int, target: str, value: Any,
                    call_id: str | None) -> tuple[Any, str]:
    """The edited LangChain message (same id, so ``add_messages`` replaces it) and the node it comes from."""
    message = next(m for m in snapshot.values["messages"] if (s := rt.stash_of(m)) and s.get("step") == step)
    ir = rt.lc_to_ir(message)
    if target == "result":
        part = dict(ir["parts"][0])
        part["content"] = value if isinstance(value, str) else _dumps(value)
        part["is_error"] = False
        edited = {**ir, "parts": [part, *ir["parts"][1:]]}
        return rt.ir_to_lc(edited, message.id, "edited", step=step), rt.TOOLS_NODE
    if target == "args":
        parts = []
        for part in ir["parts"]:
            if part.get("type") == "tool_call" and part.get("id") == call_id:
                part = {k: v for k, v in part.items() if k != "raw_arguments"}
                part["arguments"] = value
            parts.append(part)
        stash = rt.stash_of(message) or {}
        return (rt.ir_to_lc({**ir, "parts": parts}, message.id, "edited", stash.get("llm_index"), step=step),
                rt.MODEL_NODE)
    text = value if isinstance(value, str) else _dumps(value)
    edited = {"role": "assistant", "parts": [{"type": "text", "text": text}] if text else []}
    return rt.ir_to_lc(edited, message.id, "edited", step=step), rt.MODEL_NODE


def _parse_edit(run: Run, step: int, target: str, value: Any) -> tuple[int, Any, str | None]:
    """(the step whose message is edited, the value, the tool call id) for an edit at ``step``."""
    from replaykit.core.trace.ir import LLMCallEvent, ToolCallEvent

    event = run.step(step).event
    if target == "result":
        if not isinstance(event, ToolCallEvent):
            raise BadInput(f"step {step} is an LLM call; --result edits a tool step")
        return step, value, event.call_id
    if target == "args":
        if not isinstance(event, ToolCallEvent):
            raise BadInput(f"step {step} is an LLM call; --args edits a tool step")
        if isinstance(value, str):
            import json

            try:
                value = json.loads(value)
            except ValueError as exc:
                raise BadInput(f"--args is not valid JSON: {exc}") from exc
        if not isinstance(value, dict):
            raise BadInput("--args must be a JSON object")
        asker = _asking_step(run, event)
        return asker, value, event.call_id
    if target == "response":
        if not isinstance(event, LLMCallEvent):
            raise BadInput(f"step {step} is a tool call; --response edits an LLM step")
        return step, value, None
    raise BadInput(f"unknown edit target {target!r} (args, result or response)")


def _asking_step(run: Run, tool_event: Any) -> int:
    from replaykit.core.trace.ir import LLMCallEvent

    asker = None
    for candidate in run.steps:
        if candidate.event.seq >= tool_event.seq:
            break
        if isinstance(candidate.event, LLMCallEvent) and any(
                c.id == tool_event.call_id for c in candidate.event.response.message.tool_calls):
            asker = candidate.index
    if asker is None:
        raise BadInput(f"no recorded LLM call asked for tool call {tool_event.call_id!r}")
    return asker


def fork_run(run: Run, *, step: int, target: str, value: Any, checkpoint_db: str | os.PathLike[str],
             store: Any = None, live: LiveEndpoint | None = None,
             live_model: Callable[[list[JSON], list[JSON]], JSON] | None = None,
             tool_impls: Mapping[str, ToolImpl] | None = None, allow_destructive: bool = False,
             guard_policy: Any = None, thread_id: str | None = None, run_id: str | None = None) -> ForkResult:
    """Fork ``run`` at ``step`` with one edit and continue: served where the record still matches, live
    after that. The run is first replayed into ``thread_id`` (unless that thread already holds it); the
    fork is a new branch of the same thread. With ``store`` the fork is recorded as a new run."""
    rt = runtime()
    edit_step, value, call_id = _parse_edit(run, step, target, value)
    thread = thread_id or f"fork-{run.run_id}-{secrets.token_hex(3)}"
    config = thread_config(thread)
    with sqlite_checkpointer(checkpoint_db) as saver:
        built = build_replay_graph(run, checkpointer=saver, live=live, live_model=live_model,
                                   tool_impls=tool_impls, allow_destructive=allow_destructive,
                                   guard_policy=guard_policy)
        if not built.graph.get_state(config).values:
            built.drive(config)
        served_before = len(built.log.entries)
        target_snapshot = _find_checkpoint(built.graph, config, edit_step)
        edited, as_node = _edited_message(rt, target_snapshot, edit_step, target, value, call_id)
        fork_cfg = built.graph.update_state(target_snapshot.config, {"messages": [edited]}, as_node=as_node)
        try:
            result = rt.invoke(built.graph, None, fork_cfg)
            messages = rt.continue_turns(built.graph, built.record, result["messages"], config)
        except rt.ReplayDesync as exc:
            raise LangGraphDesync(str(exc)) from exc
        entries = built.log.entries[served_before:]
    ir_messages = [rt.lc_to_ir(m) for m in messages]
    final = _final_answer(ir_messages)
    new_id = None
    if store is not None:
        from replaykit.engines.langgraph.record import record_fork

        new_id = record_fork(run, store, step=step, target=target, value=value, call_id=call_id,
                             entries=entries, messages=ir_messages, final_answer=final, run_id=run_id,
                             endpoint=live)
    return ForkResult(new_id, ir_messages, rt_counters(rt, entries), entries,
                      fork_cfg["configurable"].get("checkpoint_id"),
                      target_snapshot.config["configurable"].get("checkpoint_id"), thread, final)


def rt_counters(rt: Any, entries: list[JSON]) -> JSON:
    log = rt.ReplayLog()
    for entry in entries:
        log.add(entry)
    counters: JSON = log.counters()
    return counters


def _final_answer(messages: list[JSON]) -> str | None:
    for message in reversed(messages):
        if message.get("role") == "assistant":
            if any(p.get("type") == "tool_call" for p in message.get("parts", ())):
                return None
            return "".join(p.get("text", "") for p in message.get("parts", ()) if p.get("type") == "text")
    return None
