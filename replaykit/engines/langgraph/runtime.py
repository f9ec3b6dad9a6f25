"""The LangGraph runtime of a recorded run: a model node, a tools node and the loop between them.

This module imports only the standard library, ``langchain_core``, ``langgraph`` and replaykit's
stdlib-only ``core.serve`` (the delta resolver, the request fingerprint, the serve position) and
``core.tool_ladder``: ``replaykit.exporters.langgraph_source`` embeds ``core.canonical``,
``core.serve``, the ladder and this module verbatim into the generated module, so the in-memory graph
(``replaykit.engines.langgraph.graph``) and the exported file run the very same code. Everything
replaykit-specific (the live provider, the destructive-tool guard, real tool implementations) is
plugged in through the ``live_model``, ``guard`` and ``implementations`` hooks.

Data are plain JSON: ``header`` and ``events`` are trace lines (``model_dump(mode="json",
exclude_none=True)`` of the IR), messages are IR message dicts (``{"role", "parts": [...]}``).

How the model node decides what to answer:

- every LangChain message the graph creates carries ``additional_kwargs["replaykit"]`` with its IR
  message, its provenance and (for served answers) the index of the recorded LLM call. A message whose
  visible fields no longer agree with that IR (someone edited it) counts as edited;
- the position is ``serve.next_llm_index`` of the state: one past the last served answer, or the call
  whose recorded request the state adopted;
- while the state holds only recorded content, the node serves the recorded LLM call at that position;
  when the recorded request differs from the state (the harness injected, compressed or re-stripped
  messages), the state is replaced by the recorded request first, so the result equals the record;
- once the state holds edited or live content, the node serves a recorded call only if its request
  matches the state by ``serve.request_fingerprint`` (the cursor's rule); otherwise it calls
  ``live_model`` (or raises ``ReplayDesync`` when there is none);
- after the record ends: in pure replay the graph stops; in live mode a synthetic end-of-turn answer.

Message ids are positional (``rk-<position>``), so a replay is deterministic and an edit can replace a
message by reusing its id (``add_messages`` replaces by id).
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import operator
import threading
import time
from collections.abc import Callable, Sequence
from typing import Annotated, Any, TypedDict

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages
from langgraph.prebuilt import ToolNode, tools_condition

# Embedded verbatim above this module in generated code (the import lines are dropped there).
from replaykit.core.replay.serve import next_llm_index, request_fingerprint
from replaykit.core.replay.tool_conformance import agrees, mismatch_text
from replaykit.core.replay.tool_ladder import UNAVAILABLE_STATUS, Found, Guard, climb, implementation_for
from replaykit.core.trace.deltas import resolve_all_requests, tool_message

STASH = "replaykit"
MODEL_NODE = "model"
TOOLS_NODE = "tools"
PURE = frozenset({"recorded", "served"})

JSON = dict[str, Any]
LiveModel = Callable[[list[JSON], list[JSON]], JSON]  # (messages, tool specs) -> LLMResponse dict


class ReplayDesync(RuntimeError):
    """The state no longer matches the record and there is no live model to continue with."""


def replay_messages(left: Sequence[BaseMessage], right: Any) -> list[BaseMessage]:
    """The messages reducer: ``add_messages``'s rule (replace by id, append the rest, ``RemoveMessage``,
    remove all) without rebuilding an id index of the whole conversation at every superstep (which
    made a long replay quadratic). The graph's own lists are positional (the message at ``i`` has id
    ``rk-<i>``): for a list this reducer returned lately that still is, a message's id is its place and
    no index is needed; otherwise the list's id index, kept from when the reducer returned it (a copy)
    or built."""
    items = right if isinstance(right, list) else [right]
    if any(not isinstance(m, BaseMessage) or m.id is None for m in items):
        general: list[BaseMessage] = add_messages(list[Any](left), items)  # type: ignore[assignment]
        return general  # foreign input (dicts, id-less messages): the general rule
    merged = list(left)
    index = _index_of(left)  # None: positional
    for message in items:
        mid: str = message.id  # type: ignore[assignment]
        if index is None:
            at = _position(mid)
            if at is not None and at <= len(merged) and not isinstance(message, RemoveMessage):
                if at == len(merged):
                    merged.append(message)
                else:
                    merged[at] = message  # positional: merged[at] has this very id
                continue
            index = {m.id: i for i, m in enumerate(merged)}  # type: ignore[misc]
        if isinstance(message, RemoveMessage):
            if mid == REMOVE_ALL_MESSAGES:
                merged, index = [], None
                continue
            if mid not in index:
                raise ValueError(f"attempting to delete a message with an id that doesn't exist ('{mid}')")
            del merged[index[mid]]
            index = {m.id: i for i, m in enumerate(merged)}  # type: ignore[misc]
            continue
        found = index.get(mid)
        if found is None:
            index[mid] = len(merged)
            merged.append(message)
        else:
            merged[found] = message
    # The last few lists returned: LangGraph may reduce against one of them again (a copy of it, or the
    # value one superstep back), and each holds the conversation whole.
    _INDEX_CACHE[:] = [(merged, index), *_INDEX_CACHE[:3]]
    return merged


_INDEX_CACHE: list[tuple[list[BaseMessage], dict[str, int] | None]] = []


def _position(mid: str) -> int | None:
    """``i`` for the positional id ``rk-<i>`` (exactly as ``message_id`` writes it), else None."""
    if mid.startswith("rk-") and mid[3:].isdigit():
        at = int(mid[3:])
        if message_id(at) == mid:
            return at
    return None


def _index_of(messages: Sequence[BaseMessage]) -> dict[str, int] | None:
    """Message id -> position, or None when ``messages`` is known positional: from the cache when it
    holds the very messages of a list returned lately (LangGraph may hand back a copy of it; an index is
    copied, as the list it belongs to may be reduced again), else built (an empty list is positional)."""
    if not messages:
        return None
    # LangGraph hands the reducer back the very list it returned last time (every superstep of a
    # replay, measured): an identity check instead of a scan of the whole conversation
    for cached, index in _INDEX_CACHE:
        if cached is messages:
            return None if index is None else dict(index)
    for cached, index in _INDEX_CACHE:
        if len(cached) == len(messages) and all(map(operator.is_, cached, messages)):
            return None if index is None else dict(index)
    return {m.id: i for i, m in enumerate(messages) if isinstance(m.id, str)}


def _replay_messages_batch(state: list[BaseMessage], writes: Sequence[Any]) -> list[BaseMessage]:
    """``replay_messages`` over a batch of writes (the form a ``DeltaChannel`` reducer takes), in one
    pass: the rule goes message by message, so the writes' messages in order are one write (rebuilding
    a checkpointed state replays up to a snapshot's worth of writes; one copy of the list, not one each)."""
    items: list[Any] = []
    for write in writes:
        items.extend(write if isinstance(write, list) else [write])
    return replay_messages(state, items)


def _messages_channel() -> Any:
    """The messages channel. Where LangGraph has ``DeltaChannel`` (1.2+), a checkpoint stores each
    superstep's new and replaced messages, not the whole conversation again at every node (which made a
    checkpointed replay quadratic in time and in file size); else the reducer alone."""
    try:
        from langgraph.channels.delta import DeltaChannel
    except ImportError:
        return replay_messages
    return DeltaChannel(_replay_messages_batch, list)


class MessagesState(TypedDict):
    """The state with a checkpointer: the messages in a ``DeltaChannel`` where LangGraph has it."""

    messages: Annotated[list[AnyMessage], _messages_channel()]


class UncheckpointedMessagesState(TypedDict):
    """The state without a checkpointer: the same messages and reducer in LangGraph's plain reducer
    channel. Nothing is stored, so a ``DeltaChannel`` gains nothing, and LangGraph stamps ids on every
    message written to one: without a checkpointer each turn's input is the whole conversation, so that
    was a Python loop over the conversation at every turn."""

    messages: Annotated[list[AnyMessage], replay_messages]


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def message_id(position: int) -> str:
    return f"rk-{position}"


# ------------------------------------------------------------------------------ IR <-> LangChain


def _text(message: JSON) -> str:
    return "".join(p.get("text", "") for p in message.get("parts", ()) if p.get("type") == "text")


def lc_args(arguments: Any) -> JSON:
    """LangChain tool calls need dict arguments; anything else travels as ``{}`` (the IR keeps it)."""
    return arguments if isinstance(arguments, dict) else {}


def ir_to_lc(message: JSON, mid: str, provenance: str = "recorded", llm_index: int | None = None,
             step: int | None = None, next_llm: int | None = None) -> BaseMessage:
    """A LangChain message for an IR message, carrying the IR itself so the round trip is exact.
    ``next_llm``: the message belongs to the adopted recorded request of that LLM call."""
    stash: JSON = {"ir": message, "provenance": provenance}
    if llm_index is not None:
        stash["llm_index"] = llm_index
    if step is not None:
        stash["step"] = step
    if next_llm is not None:
        stash["next_llm"] = next_llm
    extra = {STASH: stash}
    role = message.get("role")
    if role in ("system", "developer"):
        return SystemMessage(content=_text(message), id=mid, additional_kwargs=extra)
    if role == "user":
        return HumanMessage(content=_text(message), id=mid, additional_kwargs=extra)
    if role == "assistant":
        calls = [
            {"name": p["name"], "args": lc_args(p.get("arguments")), "id": p["id"], "type": "tool_call"}
            for p in message.get("parts", ())
            if p.get("type") == "tool_call"
        ]
        return AIMessage(content=_text(message), id=mid, tool_calls=calls, additional_kwargs=extra)
    results = [p for p in message.get("parts", ()) if p.get("type") == "tool_result"]
    first = results[0] if results else {"tool_call_id": "", "content": ""}
    return ToolMessage(
        content=first.get("content", ""), tool_call_id=first.get("tool_call_id", ""), name=first.get("name"),
        status="error" if first.get("is_error") else "success", id=mid, additional_kwargs=extra,
    )


def _view(message: BaseMessage) -> tuple[Any, ...]:
    """The fields of a LangChain message an edit can change."""
    calls = [(c["id"], c["name"], canonical(c["args"])) for c in getattr(message, "tool_calls", None) or ()]
    return (message.type, canonical(message.content), calls, getattr(message, "tool_call_id", None),
            getattr(message, "status", None))


# Verified messages by object identity: the model node checks the whole state on every call, and
# re-verifying unchanged messages would make a long replay quadratic. The key includes the identity of
# the fields an edit replaces, so a message changed in place is verified again.
_VERIFIED: dict[tuple[int, int, int, int, int], tuple[BaseMessage, JSON | None]] = {}
_VERIFIED_MAX = 200_000


_LC_TYPE = {"system": "system", "developer": "system", "user": "human", "assistant": "ai"}


def _agrees(message: BaseMessage, ir: JSON) -> bool:
    """True when ``message`` shows exactly the fields ``ir_to_lc(ir)`` gives it, checked on the fields
    themselves (building a LangChain message to compare with costs a hundred times more)."""
    kind = _LC_TYPE.get(str(ir.get("role")), "tool")
    if message.type != kind or not isinstance(message.content, str):
        return False
    if kind == "tool":
        results = [p for p in ir.get("parts", ()) if p.get("type") == "tool_result"]
        first = results[0] if results else {"tool_call_id": "", "content": ""}
        return (message.content == first.get("content", "")
                and getattr(message, "tool_call_id", None) == first.get("tool_call_id", "")
                and getattr(message, "status", None) == ("error" if first.get("is_error") else "success"))
    if message.content != _text(ir):
        return False
    calls = getattr(message, "tool_calls", None) or []
    wanted = [p for p in ir.get("parts", ()) if p.get("type") == "tool_call"] if kind == "ai" else []
    return len(calls) == len(wanted) and all(
        c["id"] == p["id"] and c["name"] == p["name"] and canonical(c["args"]) == canonical(lc_args(p.get("arguments")))
        for c, p in zip(calls, wanted, strict=True))


def _verified_key(message: BaseMessage) -> tuple[int, int, int, int, int]:
    return (id(message), id(message.content), id(getattr(message, "tool_calls", None)),
            id(getattr(message, "status", None)), id(message.additional_kwargs))


def _remember(message: BaseMessage, stash: JSON | None) -> None:
    if len(_VERIFIED) >= _VERIFIED_MAX:
        _VERIFIED.clear()
    _VERIFIED[_verified_key(message)] = (message, stash)


def stash_of(message: BaseMessage) -> JSON | None:
    """The stash of a message whose visible fields still agree with its IR, else None."""
    hit = _VERIFIED.get(_verified_key(message))
    if hit is not None and hit[0] is message:
        return hit[1]
    stash = message.additional_kwargs.get(STASH)
    if not isinstance(stash, dict) or "ir" not in stash:
        stash = None
    elif not _agrees(message, stash["ir"]) and _view(ir_to_lc(stash["ir"], "x")) != _view(message):
        stash = None
    _remember(message, stash)
    return stash


def provenance_of(message: BaseMessage) -> str:
    stash = stash_of(message)
    return "edited" if stash is None else str(stash.get("provenance", "recorded"))


def lc_to_ir(message: BaseMessage) -> JSON:
    """The IR message of a LangChain message (exact when it still carries a consistent stash)."""
    stash = stash_of(message)
    if stash is not None:
        ir: JSON = stash["ir"]
        return ir
    content = message.content if isinstance(message.content, str) else canonical(message.content)
    if isinstance(message, AIMessage):
        parts: list[JSON] = [{"type": "text", "text": content}] if content else []
        parts += [{"type": "tool_call", "id": c["id"], "name": c["name"], "arguments": c["args"]}
                  for c in message.tool_calls]
        return {"role": "assistant", "parts": parts}
    if isinstance(message, ToolMessage):
        part: JSON = {"type": "tool_result", "tool_call_id": message.tool_call_id, "content": content,
                      "is_error": message.status == "error"}
        if message.name is not None:
            part["name"] = message.name
        return {"role": "tool", "parts": [part]}
    role = "system" if isinstance(message, SystemMessage) else "user"
    return {"role": role, "parts": [{"type": "text", "text": content}]}


# ------------------------------------------------------------------------------------ the record


class Record:
    """Lookups over a recorded run: its LLM calls with full requests, its tool calls, its tools."""

    def __init__(self, header: JSON, events: Sequence[JSON]) -> None:
        self.header = header
        self.events = list(events)
        full = resolve_all_requests(self.events)
        tool_sets: dict[str, list[JSON]] = {}
        self.llm: list[JSON] = []
        self.requests: list[list[JSON]] = []
        self.tools_of: list[list[JSON]] = []
        self.step_of: dict[str, int] = {}
        self.tool_calls: list[JSON] = []
        asked: dict[str, str] = {}  # tool call id -> id of the latest LLM call that asked for it
        self._owner: dict[str, str] = {}  # tool event id -> asking LLM call event id
        for event in self.events:
            kind = event.get("kind")
            if kind == "tools":
                tool_sets[event["hash"]] = event["tools"]
            if kind in ("llm_call", "tool_call"):
                self.step_of[event["id"]] = len(self.step_of)
            if kind == "llm_call":
                for part in event["response"]["message"].get("parts", ()):
                    if part.get("type") == "tool_call":
                        asked[part["id"]] = event["id"]
                self.llm.append(event)
                self.requests.append(full[event["id"]])
                self.tools_of.append(tool_sets.get(event["request"].get("tools_ref") or "", []))
            elif kind == "tool_call":
                self.tool_calls.append(event)
                owner_id = event.get("llm_call_id") or asked.get(event["call_id"])
                if owner_id is not None:
                    self._owner[event["id"]] = owner_id
        self.llm_index = {e["id"]: i for i, e in enumerate(self.llm)}
        self._by_fingerprint: dict[str, int] | None = None
        # Tool results by the recorded LLM call that asked for them, then by call id.
        self._tool_by_call: dict[tuple[int | None, str], JSON] = {}
        self._tool_by_key: dict[tuple[str, str], JSON] = {}
        for event in self.tool_calls:
            owner = self.llm_index.get(self._owner.get(event["id"], ""))
            self._tool_by_call.setdefault((owner, event["call_id"]), event)
            self._tool_by_call.setdefault((None, event["call_id"]), event)
            self._tool_by_key.setdefault((event["name"], canonical(lc_args(event.get("arguments")))), event)
        self.tool_specs = self._all_tools(tool_sets)

    def _all_tools(self, tool_sets: dict[str, list[JSON]]) -> list[JSON]:
        """Every tool the run declared or called, by name (first declaration wins), in first-seen order."""
        specs: dict[str, JSON] = {}
        for tools in tool_sets.values():
            for spec in tools:
                specs.setdefault(spec["name"], spec)
        for event in self.llm:
            for part in event["response"]["message"].get("parts", ()):
                if part.get("type") == "tool_call":
                    specs.setdefault(part["name"], {"name": part["name"]})
        for event in self.tool_calls:
            specs.setdefault(event["name"], {"name": event["name"]})
        return list(specs.values())

    def match_request(self, messages: list[JSON]) -> int | None:
        """The first recorded LLM call whose request matches ``messages`` by the serve rule (the
        request fingerprint). Built on first use: a pure replay never needs it."""
        if self._by_fingerprint is None:
            self._by_fingerprint = {}
            for index, request in enumerate(self.requests):
                self._by_fingerprint.setdefault(request_fingerprint(request), index)
        return self._by_fingerprint.get(request_fingerprint(messages))

    def recorded_tool(self, llm_index: int | None, call_id: str, name: str, args: JSON) -> JSON | None:
        """The recorded tool event for this exact call (same asking LLM call, id, name and arguments)."""
        event = self._tool_by_call.get((llm_index, call_id))
        if event is None or event["name"] != name or canonical(lc_args(event.get("arguments"))) != canonical(args):
            return None
        return event

    def tool_by_arguments(self, name: str, args: JSON) -> JSON | None:
        return self._tool_by_key.get((name, canonical(args)))

    def conversation(self) -> list[JSON]:
        """The run's conversation: the last request, its answer, later tool results and user turns."""
        if not self.llm:
            return [e["message"] for e in self.events if e.get("kind") == "turn_start"]
        last = self.llm[-1]
        messages = [*self.requests[-1], last["response"]["message"]]
        after = False
        for event in self.events:
            if event is last:
                after = True
            elif after and event.get("kind") == "tool_call" and event.get("result") is not None:
                messages.append(tool_message(event))
            elif after and event.get("kind") == "turn_start":
                messages.append(event["message"])
        return messages


# ------------------------------------------------------------------------------------ the log


class ReplayLog:
    """What the graph did, step by step (thread-safe: the ToolNode runs tools in parallel)."""

    def __init__(self) -> None:
        self.entries: list[JSON] = []
        self._lock = threading.Lock()

    def add(self, entry: JSON) -> None:
        with self._lock:
            self.entries.append(entry)

    def counters(self) -> JSON:
        llm = [e for e in self.entries if e["kind"] == "llm"]
        tools = [e for e in self.entries if e["kind"] == "tool"]
        return {
            "provider_calls": sum(1 for e in llm if e["provenance"] in ("live", "desync")),
            "tool_executions": sum(1 for e in tools if e.get("executed")),
            "served_llm_steps": sum(1 for e in llm if e["provenance"] == "served"),
            "served_tool_steps": sum(1 for e in tools if e["provenance"] == "served"),
            "synthetic_steps": sum(1 for e in self.entries if e["provenance"] == "synthetic"),
        }

    def conforming_steps(self) -> list[int]:
        """The recorded steps the graph reproduced: served, or run for real by a tool body whose result
        equals the recorded one."""
        return sorted({e["step"] for e in self.entries if e.get("step") is not None
                       and (e["provenance"] == "served" or e.get("conforms"))})

    def ran_for_real(self) -> list[JSON]:
        """The tool calls a real tool body answered whose result equals the record's."""
        return [e for e in self.entries if e.get("conforms")]


def mismatch_report(record: Record, log: ReplayLog) -> str | None:
    """One screen naming the first tool call whose real body gave another result than the record (tool,
    step, user turn, call id, arguments, expected and actual), or None when every body agreed."""
    entry = next((e for e in log.entries if e.get("conforms") is False), None)
    if entry is None:
        return None
    turn, seen = 0, 0
    for event in record.events:
        if event.get("kind") == "turn_start":
            turn += 1
        if event.get("kind") in ("llm_call", "tool_call"):
            if seen == entry["step"]:
                break
            seen += 1
    return mismatch_text(entry["name"], entry["step"], max(turn, 1), entry["call_id"], entry["arguments"],
                         entry["expected"], entry["result"])


# ------------------------------------------------------------------------------------ the nodes


def _stamp(message: JSON, position: int, provenance: str, llm_index: int | None = None,
           step: int | None = None, next_llm: int | None = None) -> BaseMessage:
    """A message the graph creates from an IR message: it agrees with its IR by construction, so it is
    remembered as verified (``stash_of`` would otherwise check its fields the first time it is read)."""
    stamped = ir_to_lc(message, message_id(position), provenance, llm_index, step, next_llm)
    _remember(stamped, stamped.additional_kwargs[STASH])
    return stamped


class StateView:
    """``stash_of`` of every message of a state, with what the model node asks of them (all pure? the
    next recorded call, the IR list), kept across calls: only messages not seen at the same place last
    time are checked again, so a long replay stays linear (the graph hands the same objects back)."""

    def __init__(self) -> None:
        self._messages: list[BaseMessage] = []
        self.stashes: list[JSON | None] = []
        self._pure: list[bool] = []  # all messages up to here pure
        self._next: list[int] = []  # next_llm_index up to here
        self._irs: list[JSON | None] = []

    def update(self, messages: Sequence[BaseMessage]) -> StateView:
        old = self._messages
        flags = list(map(operator.is_, old, messages))  # up to the shorter list, in C
        try:
            same = flags.index(False)
        except ValueError:
            same = len(flags)
        del self.stashes[same:], self._pure[same:], self._next[same:], self._irs[same:]
        pure = self._pure[-1] if self._pure else True
        nxt = self._next[-1] if self._next else 0
        for message in messages[same:]:
            stash = stash_of(message)
            self.stashes.append(stash)
            self._irs.append(stash["ir"] if stash is not None else None)
            pure = pure and stash is not None and stash.get("provenance") in PURE
            nxt = max(nxt, next_llm_index((stash,)))
            self._pure.append(pure)
            self._next.append(nxt)
        self._messages = list(messages)
        return self

    @property
    def pure(self) -> bool:
        return self._pure[-1] if self._pure else True

    @property
    def next_llm(self) -> int:
        return self._next[-1] if self._next else 0

    def differing(self, request: Sequence[JSON]) -> list[int]:
        """``differing(request, irs)`` against this view's IR list (which it may update)."""
        return differing(request, self._irs)

    def irs(self) -> list[JSON]:
        if self.pure:
            return list(self._irs)  # type: ignore[arg-type]  # pure: every message has its IR
        return [ir for ir in self._irs if ir is not None]


class ModelNode:
    """The graph's model: serves recorded answers, falls back to ``live_model`` (see module doc)."""

    def __init__(self, record: Record, log: ReplayLog, live_model: LiveModel | None = None) -> None:
        self.record = record
        self.log = log
        self.live_model = live_model
        self._view = StateView()

    def __call__(self, state: JSON) -> JSON:  # not MessagesState: the graph picks the state schema
        messages = state["messages"]
        view = self._view.update(messages)
        if view.pure:
            return self._serve_next(messages, view)
        current = [lc_to_ir(m) for m in messages]
        index = self.record.match_request(current)
        if index is not None:
            return self._serve(index, current, len(messages), replace=False)
        return self._live(current, len(messages), "the state differs from every recorded request")

    def _serve_next(self, messages: Sequence[BaseMessage], view: StateView) -> JSON:
        index = view.next_llm
        stashes = view.stashes
        current = view.irs()
        if index >= len(self.record.llm):
            if self.live_model is not None:
                return self._synthetic(current, len(messages))
            # Pure replay: the record ended, so does the graph, on the recorded conversation (parallel
            # tool results in recorded order, which may differ from the order the model asked).
            final = self.record.conversation()
            if final == current or sorted(map(canonical, final)) != sorted(map(canonical, current)):
                return {"messages": []}
            pool: dict[str, list[JSON]] = {}
            for stash in stashes:
                assert stash is not None
                pool.setdefault(canonical(stash["ir"]), []).append(stash)
            out: list[Any] = [RemoveMessage(id=REMOVE_ALL_MESSAGES)]
            for i, message in enumerate(final):
                old = pool[canonical(message)].pop(0)
                out.append(_stamp(message, i, old["provenance"], old.get("llm_index"), old.get("step")))
            return {"messages": out}
        request = self.record.requests[index]
        differ = view.differing(request)
        prefix = not differ and len(request) >= len(current)
        return self._serve(index, current, len(messages), replace=not prefix, stashes=stashes, differ=differ)

    def _serve(self, index: int, current: list[JSON], position: int, *, replace: bool,
               stashes: Sequence[JSON | None] | None = None, differ: list[int] | None = None) -> JSON:
        request = self.record.requests[index]
        event = self.record.llm[index]
        out: list[Any] = []
        if replace:
            # The harness rewrote the context (compression, injected notes, re-serialized arguments):
            # adopt the recorded request.
            out = adopt_request(request, current, stashes, index, differ)
        else:
            out += [_stamp(m, position + i, "recorded") for i, m in enumerate(request[len(current):])]
        position = len(request)
        out.append(_stamp(event["response"]["message"], position, "served", index, self.record.step_of[event["id"]]))
        self.log.add({"kind": "llm", "provenance": "served", "llm_index": index, "step": self.record.step_of[event["id"]],
                      "request": request, "response": event["response"]})
        return {"messages": out}

    def _live(self, current: list[JSON], position: int, reason: str) -> JSON:
        if self.live_model is None:
            raise ReplayDesync(f"cannot continue offline: {reason} and no live model is configured")
        tools = self.record.tool_specs
        started = time.perf_counter()
        response = self.live_model(current, tools)
        duration = time.perf_counter() - started
        self.log.add({"kind": "llm", "provenance": "live", "llm_index": None, "step": None, "request": current,
                      "response": response, "tools": tools, "duration": duration})
        return {"messages": [_stamp(response["message"], position, "live")]}

    def _synthetic(self, current: list[JSON], position: int) -> JSON:
        message: JSON = {"role": "assistant", "parts": []}
        response: JSON = {"message": message, "finish_reason": "stop"}
        self.log.add({"kind": "llm", "provenance": "synthetic", "llm_index": None, "step": None,
                      "request": current, "response": response,
                      "reason": "the model asked for another completion after the record ended"})
        return {"messages": [_stamp(response["message"], position, "synthetic")]}


_CURRENT_CALL: contextvars.ContextVar[JSON] = contextvars.ContextVar("replaykit_tool_call")


class ToolRouter:
    """Answers tool calls through the one live-tool ladder (``decide`` / ``climb``, from
    ``replaykit.core.replay.tool_ladder``): served from the record where it holds this call, then the ``guard``
    in front of any ``implementations`` (tool name -> function), then a recorded call with the same
    name and arguments, else "not available"."""

    def __init__(self, record: Record, log: ReplayLog, implementations: dict[str, Callable[..., Any]] | None = None,
                 guard: Guard | None = None) -> None:
        self.record = record
        self.log = log
        self.implementations = dict(implementations or {})
        self.guard = guard
        self._recorded_functions: set[str] = set()  # tools whose function answered through ``answer``

    def answer(self, name: str, args: JSON) -> str:
        """The body of every recorded tool function (runs inside ``wrap``, which set the call)."""
        call = _CURRENT_CALL.get(None)
        if call is None:  # called outside the graph: serve by arguments
            event = self.record.tool_by_arguments(name, args)
            if event is None:
                raise ReplayDesync(f"tool {name!r}: no recorded call with these arguments")
            return str(event.get("result") or "")
        chosen: list[JSON] = []

        def found(event: JSON | None) -> Found | None:
            if event is None:
                return None
            chosen.append(event)
            return Found(str(event.get("result") or ""), str(event.get("status") or "ok"), event.get("error"))

        def served() -> Found | None:
            if call["asker_provenance"] in PURE or call["asker_provenance"] == "edited":
                return found(self.record.recorded_tool(call["llm_index"], call["id"], name, args))
            return None

        started = time.perf_counter()
        answer = climb(name, args, served=served, guard=self.guard,
                       implementation=implementation_for(self.implementations, name),
                       stand_in=lambda: found(self.record.tool_by_arguments(name, args)))
        if chosen and answer.provenance == "served":
            call["outcome"] = ("served", chosen[-1])
        else:
            call["outcome"] = (answer.provenance, {"status": answer.status, "executed": answer.executed,
                                                   "duration": time.perf_counter() - started})
        return answer.content

    def wrap(self, request: Any, execute: Callable[[Any], Any]) -> Any:
        """ToolNode interceptor: tells the tool which call it answers, then fixes the message id."""
        tool_call = request.tool_call
        messages = request.state["messages"] if isinstance(request.state, dict) else request.state.messages
        asker = next(m for m in reversed(messages) if isinstance(m, AIMessage))
        stash = stash_of(asker)
        offset = [c["id"] for c in asker.tool_calls].index(tool_call["id"])
        call: JSON = {"id": tool_call["id"], "llm_index": stash.get("llm_index") if stash else None,
                      "asker_provenance": provenance_of(asker), "outcome": None}
        token = _CURRENT_CALL.set(call)
        try:
            result = execute(request)
        finally:
            _CURRENT_CALL.reset(token)
        if call["outcome"] is not None:  # the tool's function is a recorded one: it asked ``answer``
            self._recorded_functions.add(tool_call["name"])
        if not isinstance(result, ToolMessage):
            return result
        provenance, detail = call["outcome"] or ("live", {"status": "error" if result.status == "error" else "ok",
                                                          "executed": True})
        recorded = None
        if call["outcome"] is None and (call["asker_provenance"] in PURE or call["asker_provenance"] == "edited"):
            # A real tool body answered a call the record holds: its result is checked against the record.
            recorded = self.record.recorded_tool(call["llm_index"], str(tool_call["id"]), tool_call["name"],
                                                 tool_call["args"])
        return self._answered(tool_call, len(messages) + offset, offset, provenance, detail, result, recorded)

    def serve_inline(self, messages: Sequence[BaseMessage]) -> list[BaseMessage] | None:
        """The tool messages of the last AI message's calls when the record holds every one of them and
        each tool's function is a recorded one (it answers through ``answer``, so serving it here is
        exactly what the ToolNode would do, minus a thread pool and the tool-call machinery per
        superstep); else None (the ToolNode runs the message)."""
        asker = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
        if asker is None or not asker.tool_calls:
            return None
        calls = asker.tool_calls
        if any(c["name"] not in self._recorded_functions for c in calls):
            return None  # a real tool body (or one not called yet): run it as LangGraph does
        provenance = provenance_of(asker)
        if provenance not in PURE and provenance != "edited":
            return None
        stash = stash_of(asker)
        llm_index = stash.get("llm_index") if stash else None
        events: list[JSON] = []
        for c in calls:
            event = self.record.recorded_tool(llm_index, str(c["id"]), c["name"], c["args"])
            if event is None:
                return None
            events.append(event)
        return [self._answered(c, len(messages) + offset, offset, "served", event)
                for offset, (c, event) in enumerate(zip(calls, events, strict=True))]

    def _answered(self, tool_call: Any, position: int, offset: int, provenance: str, detail: JSON,
                  result: ToolMessage | None = None, recorded: JSON | None = None) -> BaseMessage:
        """The stamped tool message of one answered call, logged (``detail``: the served event, or the
        live outcome with the ToolNode's ``result``). ``recorded``: the recorded event of a call a real
        tool body answered; the entry says whether the body agreed with it (``conforms``, with the
        ``expected`` result). One that agreed counts as that recorded step and its message is the
        recorded one, so the replay stays on the record."""
        status = detail.get("status", "ok")
        if provenance == "served" or result is None:
            ir = tool_message(detail)
        else:
            ir = lc_to_ir(result.model_copy(update={"additional_kwargs": {}}))
            ir["parts"][0]["is_error"] = status in ("error", UNAVAILABLE_STATUS)
        entry: JSON = {"kind": "tool", "provenance": provenance, "executed": bool(detail.get("executed")),
                       "call_id": tool_call["id"], "name": tool_call["name"], "arguments": tool_call["args"], "offset": offset,
                       "result": ir["parts"][0].get("content", ""), "status": status,
                       "step": self.record.step_of.get(str(detail["id"])) if provenance == "served" else None,
                       "duration": detail.get("duration")}
        stamped_as = provenance
        if recorded is not None:
            expected = tool_message(recorded)
            part, want = ir["parts"][0], expected["parts"][0]
            entry["step"] = self.record.step_of.get(str(recorded["id"]))
            entry["expected"] = want.get("content", "")
            entry["conforms"] = agrees(part.get("content", ""), want.get("content", ""),
                                       actual_error=bool(part.get("is_error")),
                                       expected_error=bool(want.get("is_error")))
            if entry["conforms"]:
                ir, stamped_as = expected, "served"
        self.log.add(entry)
        return _stamp(ir, position, stamped_as, step=entry["step"])


class ToolsNode:
    """The graph's tools node (a real StateGraph node). A message whose calls the record answers is
    answered here, in the graph's thread (``router.serve_inline``): the served rung runs nothing, and
    LangGraph's prebuilt ToolNode would add a new thread pool and the tool-call machinery per superstep
    (most of a replay's time). Any other message (a live tool, a real tool body, a call the record does
    not hold) goes whole to a prebuilt ``ToolNode``: parallel execution, argument handling and error
    messages as LangGraph does them."""

    def __init__(self, tools: Sequence[StructuredTool], router: Any) -> None:
        self.tool_node = ToolNode(list(tools), wrap_tool_call=router.wrap, handle_tool_errors=True)
        self.router = router

    def __call__(self, state: JSON, config: RunnableConfig) -> Any:
        serve = getattr(self.router, "serve_inline", None)
        answered = serve(state["messages"]) if serve is not None else None
        if answered is not None:
            return {"messages": answered}
        return self.tool_node.invoke(state, config)


# ------------------------------------------------------------------------------------ the graph


def recorded_tool_function(router: ToolRouter, name: str) -> Callable[..., str]:
    def tool(**arguments: Any) -> str:
        return router.answer(name, arguments)

    return tool


def make_tools(specs: Sequence[JSON], functions: Sequence[Callable[..., Any]]) -> list[StructuredTool]:
    """StructuredTools whose argument schemas are the recorded JSON schemas."""
    tools = []
    for spec, function in zip(specs, functions, strict=True):
        schema = spec.get("parameters") or {"type": "object", "properties": {}}
        tools.append(StructuredTool.from_function(
            function, name=spec["name"], description=spec.get("description") or spec["name"], args_schema=schema,
        ))
    return tools


def build_graph(model: ModelNode, tools: Sequence[StructuredTool], router: ToolRouter, *,
                checkpointer: Any = None) -> Any:
    """model -> (tools_condition) -> tools -> model, over a messages state."""
    graph: Any = StateGraph(MessagesState if checkpointer is not None else UncheckpointedMessagesState)
    graph.add_node(MODEL_NODE, model)
    graph.add_edge(START, MODEL_NODE)
    if tools:
        node = ToolsNode(tools, router)
        # The drawing names a node's tools when it is a ToolNode; this node says them itself.
        graph.add_node(TOOLS_NODE, node, metadata={"__tools": list(node.tool_node.tools_by_name)})
        graph.add_conditional_edges(MODEL_NODE, tools_condition, {"tools": TOOLS_NODE, END: END})
        graph.add_edge(TOOLS_NODE, MODEL_NODE)
    else:
        graph.add_edge(MODEL_NODE, END)
    return graph.compile(checkpointer=checkpointer)


def turn_input(record: Record, index: int, state: list[JSON],
               stashes: Sequence[JSON | None] | None = None, differ: list[int] | None = None) -> list[Any]:
    """What to send the graph to start recorded LLM call ``index`` from ``state``."""
    return adopt_request(record.requests[index], state, stashes, index, differ)


def differing(request: Sequence[JSON], state: list[Any]) -> list[int]:
    """The positions (below both lengths) where ``request`` holds another message than ``state``.

    Found in C by identity first; a message equal to the state's but another object (the recorded
    request's own copy of a served tool result, say) is then written into ``state`` in place of the
    state's, so that position is an identity check from then on. Without this, every model call compared
    every such message again by value: the whole conversation per step."""
    flags = list(map(operator.is_, request, state))
    differ: list[int] = []
    at = -1
    with contextlib.suppress(ValueError):  # flags.index raises when no position is left
        while True:
            at = flags.index(False, at + 1)
            if request[at] == state[at]:
                state[at] = request[at]
            else:
                differ.append(at)
    return differ


def adopt_request(request: list[JSON], state: list[JSON], stashes: Sequence[JSON | None] | None,
                  index: int, differ: list[int] | None = None) -> list[Any]:
    """The updates that turn ``state`` into the recorded ``request`` of LLM call ``index``.

    Message by message when the request is the same conversation (same roles, at least as long): equal
    messages are left alone (so a long replay stays linear), a copy that differs only in wire details
    (provider_details) keeps its provenance and place in the record (llm_index, step), one the harness
    rewrote (re-stripped text, re-serialized arguments) becomes ``recorded``; same positional ids, so
    the reducer replaces. Anything else (a compressed context) replaces the whole state. New and
    rewritten messages are marked as the request of call ``index``: the model node serves it next.
    ``differ``: ``differing(request, state)`` when the caller has it."""
    if differ is None:
        differ = differing(request, list(state))
    if len(request) < len(state) or any(request[i].get("role") != state[i].get("role") for i in differ):
        return [RemoveMessage(id=REMOVE_ALL_MESSAGES),
                *(_stamp(m, i, "recorded", next_llm=index) for i, m in enumerate(request))]
    out: list[Any] = []
    for i in differ:
        new, old_ir = request[i], state[i]
        old = (stashes[i] if stashes is not None and i < len(stashes) else None) or {}
        if _without_details(new) == _without_details(old_ir):
            out.append(_stamp(new, i, str(old.get("provenance", "recorded")), old.get("llm_index"), old.get("step")))
        else:
            out.append(_stamp(new, i, "recorded", old.get("llm_index"), old.get("step"), next_llm=index))
    out += [_stamp(m, len(state) + i, "recorded", next_llm=index) for i, m in enumerate(request[len(state):])]
    return out


def _without_details(message: JSON) -> JSON:
    """A message without its provider_details (on the message and its parts)."""
    out = {k: v for k, v in message.items() if k != "provider_details"}
    parts = out.get("parts")
    if isinstance(parts, list):
        out["parts"] = [
            {k: v for k, v in p.items() if k != "provider_details"} if isinstance(p, dict) else p for p in parts
        ]
    return out


def next_recorded_call(messages: Sequence[BaseMessage]) -> int:
    return next_llm_index(stash_of(m) for m in messages)


def whole_state(messages: list[BaseMessage]) -> Any:
    """The messages as a whole new channel value (``Overwrite``, where LangGraph has it): the reducer
    would otherwise merge the whole conversation into an empty state message by message at every
    ``invoke``, the only per-turn work that grew with the conversation in Python."""
    try:
        from langgraph.types import Overwrite
    except ImportError:
        return messages
    return Overwrite(messages)


def invoke(graph: Any, value: Any, config: JSON | None, durability: str = "sync") -> Any:
    """``graph.invoke``; ``durability`` only with a checkpointer (langgraph rejects it otherwise)."""
    if getattr(graph, "checkpointer", None) is None:
        return graph.invoke(value, config)
    return graph.invoke(value, config, durability=durability)


def drive(graph: Any, record: Record, config: JSON | None = None, *, durability: str = "sync") -> list[BaseMessage]:
    """Replay the record through the graph, one ``invoke`` per user turn; the final messages. Once the
    graph leaves the record (a real tool, a live model), later recorded user turns are still sent."""
    try:
        return _drive(graph, record, config, durability)
    finally:
        forget_verified()


def forget_verified() -> None:
    """Empty the module's caches (verified messages, reducer indexes): they hold the messages of a
    replay alive, and a process that replays again and again kept every earlier conversation (each
    later replay slower: a larger heap). A message read again after this is simply verified again."""
    _VERIFIED.clear()
    _INDEX_CACHE.clear()


def _drive(graph: Any, record: Record, config: JSON | None, durability: str) -> list[BaseMessage]:
    messages: list[BaseMessage] = []
    index = 0
    view = StateView()
    while index < len(record.llm):
        view.update(messages)
        if view.pure:
            state, differ = view.irs(), view.differing(record.requests[index])
        else:
            state, differ = [lc_to_ir(m) for m in messages], None
        new = turn_input(record, index, state, view.stashes, differ)
        if getattr(graph, "checkpointer", None) is None:
            # No checkpointer: the graph keeps no state between invokes; send the whole updated state.
            new = whole_state(replay_messages(messages, new))
        result = invoke(graph, {"messages": new}, config, durability)
        messages = result["messages"]
        if not view.update(messages).pure:
            return continue_turns(graph, record, messages, config, durability=durability)
        following = view.next_llm
        if following <= index:
            raise ReplayDesync(f"the graph made no progress at recorded LLM call {index}")
        index = following
    return messages


def continue_turns(graph: Any, record: Record, messages: list[BaseMessage], config: JSON | None = None, *,
                   durability: str = "sync") -> list[BaseMessage]:
    """After the graph left the record, send the record's later user turns as the user sent them."""
    start = next_recorded_call(messages)
    for index in range(max(start, 1), len(record.llm)):
        request = record.requests[index]
        asked_tools = any(p.get("type") == "tool_call"
                          for p in record.llm[index - 1]["response"]["message"].get("parts", ()))
        if asked_tools or not request or request[-1].get("role") != "user":
            continue  # not the start of a new user turn
        trailing: list[JSON] = []
        for message in reversed(request):
            if message.get("role") != "user":
                break
            trailing.insert(0, message)
        new: list[Any] = [_stamp(m, len(messages) + i, "recorded") for i, m in enumerate(trailing)]
        if getattr(graph, "checkpointer", None) is None:
            new = whole_state(replay_messages(messages, new))
        messages = invoke(graph, {"messages": new}, config, durability)["messages"]
    return messages
