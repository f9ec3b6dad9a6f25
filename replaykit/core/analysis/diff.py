"""Diff two runs step by step: the first divergence, why it happened, and every later difference.

Runs are aligned as sequences of steps (LLM calls and tool calls in recorded order), by
``difflib.SequenceMatcher`` over a key per step (a tool step's name and parsed arguments; an LLM step's
answer: text and the tool calls it asked for), so a step inserted or removed in one run shows as one
insertion or removal, not as every later step differing. Steps of a non-matching stretch are paired by
kind (and tool name) where they can be; a pair is then compared field by field. A group of parallel tool
calls that finished in another order is matched call by call (by id, else name + arguments). Compared: the kind of
each step; for LLM steps the request's messages (message by message in the fingerprint's normal form:
volatile fields and tool call ids ignored, each message normalized once per diff, and in the canonical
shape of ``canonical.message_units``: N tool results in one user message and N tool messages are the
same request), the answer
text, the tool calls asked for (names and parsed arguments; call ids are volatile) and the finish
reason; for tool steps the name, parsed arguments, result, status and error. When a request's messages
differ, the difference lists which messages changed and how (``message_diff.message_changes``: index,
role, an inline text diff). Never compared: ids,
times, durations, usage, provider response ids, model names (a play against another model is
compared on what the model *did*).

Each difference carries a cause:

- ``edit``: a step holding a branch's edit (provenance ``edited``, or the call whose arguments the
  edit changed);
- ``desync``: at or after a ``desync`` event of either run (the replay went live there);
- ``synthetic_end``: a step replaykit made up after the record ended (except where that record stops
  mid-turn, ``ends_open``: a play's synthetic steps past such an end are listed in ``notes`` as
  ``past_record_end``, since an engine cannot stop between a tool call and its result);
- ``unavailable_tool``: a live tool call the engine could not run or serve, answered with a marked
  "not available in replay" result;
- ``tool_result``: the same tool call returned something else;
- ``model_drift``: the model answered the same request differently;
- ``input``: the request itself differs with nothing earlier to explain it (another prompt, another turn);
- a later difference whose request differs because of an earlier one names that step in ``follows``.

A bridged call (Hermes 0.22's Tool Search: the model calls ``tool_call`` naming the real tool) is compared
as its underlying call (``core.trace.bridge``, read through ``core.trace.bridge_view``): in tool steps,
the tool calls a response asked for, the request messages and the alignment. A 0.22 recording and a play
of its port (which calls the tool directly) are equal where the agent did the same; when only one run
went through the bridge, a ``bridged_calls`` note says so (and, for a play whose engine was served the
bridged calls unbridged, ``lineage.details.unbridged``, that this is the engine's version, not the
model). A batch of several tools in one ``tool_call`` reads as one call per tool (Hermes 0.22 runs it
so); a bridged call whose underlying call cannot be read is compared as made.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

from replaykit.core.analysis.message_diff import KeyCache, message_changes
from replaykit.core.analysis.timeline import describe
from replaykit.core.trace.bridge import BRIDGE_TOOL_NAME, event_underlying
from replaykit.core.trace.bridge_view import (
    recorded_underlying,
    underlying_message,
)
from replaykit.core.trace.canonical import arguments_key, canonical_json, parsed_arguments
from replaykit.core.trace.codecs import neutral_finish_reason
from replaykit.core.trace.ir import DesyncEvent, Edit, LLMCallEvent, Provenance, ToolCallEvent
from replaykit.core.trace.run import Run, Step
from replaykit.core.trace.store import RunStore
from replaykit.core.trace.wire_record import step_losses

CAUSES = ("edit", "desync", "synthetic_end", "unavailable_tool", "tool_result", "model_drift", "input")


@dataclass
class Difference:
    """One field of one aligned pair of steps that differs. ``step`` is the step number in run A (in run
    B for a step only B has); ``step_a`` / ``step_b`` are the numbers in each run (None: absent there)."""

    step: int
    field: str
    cause: str
    a: Any = None
    b: Any = None
    follows: int | None = None
    step_a: int | None = None
    step_b: int | None = None
    messages: list[dict[str, Any]] | None = None  # request.messages only: which messages changed, how

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"step": self.step, "step_a": self.step_a, "step_b": self.step_b,
                               "field": self.field, "cause": self.cause, "a": self.a, "b": self.b}
        if self.follows is not None:
            out["follows"] = self.follows
        if self.messages is not None:
            out["messages"] = self.messages
        return out


@dataclass
class DiffResult:
    run_a: str
    run_b: str
    steps_a: int
    steps_b: int
    differences: list[Difference] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    notes: list[dict[str, Any]] = field(default_factory=list)
    # translation losses of each run's live steps (``core/trace/wire_record.py``): what a cross-API play
    # could not send as recorded
    losses_a: int = 0
    losses_b: int = 0

    @property
    def losses(self) -> int:
        return self.losses_a + self.losses_b

    @property
    def equal(self) -> bool:
        return not self.differences

    @property
    def first(self) -> Difference | None:
        return self.differences[0] if self.differences else None

    def alignment(self) -> dict[str, int]:
        """How many aligned rows are equal, changed, only in A (removed) and only in B (inserted)."""
        counts = {"equal": 0, "changed": 0, "removed": 0, "inserted": 0}
        for row in self.rows:
            counts[row["op"]] += 1
        return counts

    def to_json(self) -> dict[str, Any]:
        return {
            "run_a": self.run_a,
            "run_b": self.run_b,
            "equal": self.equal,
            "steps_a": self.steps_a,
            "steps_b": self.steps_b,
            "first_divergence": self.first.to_json() if self.first else None,
            "alignment": self.alignment(),
            "differences": [d.to_json() for d in self.differences],
            "steps": self.rows,
            "notes": self.notes,
            "translation_losses": {"a": self.losses_a, "b": self.losses_b},
        }


class _Bridged:
    """A run's bridged calls (Hermes 0.22's Tool Search ``tool_call``) read as their underlying calls
    (``core.trace.bridge``): a bridged call and the direct call of the same tool with the same arguments
    are the same step. Each message is rewritten once per diff; a run without a bridged call costs one
    scan of its tool calls."""

    def __init__(self, run: Run) -> None:
        self.recorded = recorded_underlying(run)
        # (the later entries of a batch ran through the bridge too, under ids of their own)
        expanded = {call_id for ids in self.recorded.batches.values() for call_id in ids}
        steps = [s.index for s in run.steps if isinstance(s.event, ToolCallEvent)
                 and (event_underlying(s.event)[0] != s.event.name or s.event.call_id in expanded)]
        self.count = len(steps)
        self.first = steps[0] if steps else None
        self.active = self.count > 0 or any(c.name == BRIDGE_TOOL_NAME for e in run.llm_calls()
                                            for c in e.response.message.tool_calls)
        self._messages: dict[int, tuple[Any, Any]] = {}

    def message(self, message: Any) -> Any:
        if not self.active:
            return message
        hit = self._messages.get(id(message))
        if hit is None or hit[0] is not message:
            hit = (message, underlying_message(message, self.recorded))
            self._messages[id(message)] = hit
        return hit[1]

    def calls(self, message: Any) -> list[list[Any]]:
        # (a batch of several tools in one bridged call reads as one call per tool: bridge_view)
        view = self.message(message) if self.active else message
        return [[c.name, parsed_arguments(c.arguments, c.raw_arguments)] for c in view.tool_calls]


def _calls(message: Any, bridged: _Bridged | None) -> list[list[Any]]:
    if bridged is None:
        return [[c.name, parsed_arguments(c.arguments, c.raw_arguments)] for c in message.tool_calls]
    return bridged.calls(message)


def _llm_fields(run: Run, event: LLMCallEvent, keys: KeyCache, bridged: _Bridged | None = None) -> dict[str, Any]:
    message = event.response.message
    view = bridged.message if bridged is not None else (lambda m: m)
    return {
        # A list of per-message normal forms, compared with == (not re-serialized: a long run's
        # requests are long, and each message is normalized once per diff).
        "request.messages": [unit for m in run.request_messages(event) for unit in keys.norm(view(m))],
        "response.text": message.text,
        "response.tool_calls": _calls(message, bridged),
        "response.finish_reason": event.response.finish_reason,
    }


def _tool_call(event: ToolCallEvent) -> tuple[str, Any]:
    """A tool step's (name, parsed arguments): a bridged call's underlying call."""
    name, arguments = event_underlying(event)
    if name != event.name:
        return name, parsed_arguments(arguments)
    return event.name, parsed_arguments(event.arguments, event.raw_arguments)


def _tool_fields(event: ToolCallEvent) -> dict[str, Any]:
    name, arguments = _tool_call(event)
    return {
        "name": name,
        "arguments": arguments,
        "result": event.result,
        "status": event.status,
        "error": event.error,
    }


def _fields(run: Run, step: Step, keys: KeyCache, bridged: _Bridged | None = None) -> dict[str, Any]:
    event = step.event
    return _llm_fields(run, event, keys, bridged) if isinstance(event, LLMCallEvent) else _tool_fields(event)


def _same_finish_across_apis(a: Any, b: Any) -> bool:
    """Two model calls on different wire APIs finish alike when their finish reasons mean the same
    (Chat's ``tool_calls``, Bedrock's ``tool_use``, Gemini's ``STOP`` with calls...)."""
    if not isinstance(a, LLMCallEvent) or not isinstance(b, LLMCallEvent) or a.request.api == b.request.api:
        return False
    return neutral_finish_reason(a.response.finish_reason, bool(a.response.message.tool_calls)) == \
        neutral_finish_reason(b.response.finish_reason, bool(b.response.message.tool_calls))


def _same(x: Any, y: Any) -> bool:
    try:
        return canonical_json(x) == canonical_json(y)
    except TypeError:
        return bool(x == y)


def _unbridged(run: Run) -> bool:
    """A play whose engine served the record's bridged calls as their underlying calls
    (``ReplayCursor(unbridge=True)``: Hermes 0.19.0 playing a Hermes 0.22 Tool Search recording)."""
    lineage = run.header.lineage
    return lineage is not None and bool((lineage.details or {}).get("unbridged"))


def _desync_from(run: Run) -> int | None:
    steps = [e.step for e in run.events if isinstance(e, DesyncEvent)]
    return min(steps) if steps else None


def _edit_touches(step: Step, edits: list[Edit]) -> bool:
    event = step.event
    if event.provenance == Provenance.EDITED:
        return True
    for edit in edits:
        if edit.target != "args" or edit.tool_call_id is None:
            continue
        if isinstance(event, ToolCallEvent) and event.call_id == edit.tool_call_id:
            return True
        if isinstance(event, LLMCallEvent) and any(c.id == edit.tool_call_id for c in event.response.message.tool_calls):
            return True
    return False


def _cause(step_a: Step | None, step_b: Step | None, field_name: str, edits: list[Edit],
           desync: int | None, index: int) -> str:
    present = [s for s in (step_a, step_b) if s is not None]
    if any(_edit_touches(s, edits) for s in present):
        return "edit"
    if desync is not None and index >= desync:
        return "desync"
    synthetic = [s for s in present if s.event.provenance == Provenance.SYNTHETIC]
    if synthetic:
        # A synthetic tool step is a stand-in for a tool the engine could not run or serve.
        return "unavailable_tool" if any(isinstance(s.event, ToolCallEvent) for s in synthetic) else "synthetic_end"
    if step_a is None or step_b is None:
        return "model_drift"  # one run stopped earlier: the model ended (or continued) the turn
    if isinstance(step_a.event, ToolCallEvent):
        return "tool_result" if field_name in ("result", "status", "error") else "model_drift"
    return "input" if field_name == "request.messages" else "model_drift"


def _row(run: Run, step: Step | None) -> dict[str, Any] | None:
    if step is None:
        return None
    return {"step": step.index, "kind": step.kind, "provenance": str(step.event.provenance),
            "summary": describe(step.event),
            "name": step.event.name if isinstance(step.event, ToolCallEvent) else None}


def _step_key(step: Step, bridged: _Bridged | None = None) -> str:
    """What a step *is*, for alignment: a tool step's call (name, arguments); an LLM step's answer
    (text, tool calls asked for). Results and requests are left out: they are what gets compared."""
    event = step.event
    if isinstance(event, ToolCallEvent):
        return "tool:" + _tool_key(step)
    message = event.response.message
    return "llm:" + canonical_json([message.text, _calls(message, bridged)])


def _coarse_key(step: Step) -> str:
    event = step.event
    return f"tool:{_tool_call(event)[0]}" if isinstance(event, ToolCallEvent) else "llm"


Pair = tuple[Step | None, Step | None]


def _pair_stretch(a_steps: list[Step], b_steps: list[Step]) -> list[Pair]:
    """Pair the steps of a stretch where the two runs differ: same kind (and tool name) first, in
    order; what is left over is a removal (only in A) or an insertion (only in B)."""
    pairs: list[Pair] = []
    matcher = difflib.SequenceMatcher(None, [_coarse_key(s) for s in a_steps], [_coarse_key(s) for s in b_steps],
                                      autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        paired = (i2 - i1) if tag == "equal" else min(i2 - i1, j2 - j1) if tag == "replace" else 0
        pairs.extend((a_steps[i1 + k], b_steps[j1 + k]) for k in range(paired))
        pairs.extend((a_steps[i], None) for i in range(i1 + paired, i2))
        pairs.extend((None, b_steps[j]) for j in range(j1 + paired, j2))
    return pairs


def align(a_steps: list[Step], b_steps: list[Step], bridged: tuple[_Bridged, _Bridged] | None = None) -> list[Pair]:
    """The two step sequences aligned: matching steps paired, inserted and removed steps alone."""
    pairs: list[Pair] = []
    view_a, view_b = bridged if bridged is not None else (None, None)
    matcher = difflib.SequenceMatcher(None, [_step_key(s, view_a) for s in a_steps],
                                      [_step_key(s, view_b) for s in b_steps], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            pairs.extend(zip(a_steps[i1:i2], b_steps[j1:j2], strict=True))
        else:
            pairs.extend(_pair_stretch(a_steps[i1:i2], b_steps[j1:j2]))
    return pairs


def _tool_key(step: Step) -> str:
    event = step.event
    assert isinstance(event, ToolCallEvent)
    name, arguments = event_underlying(event)
    if name != event.name:
        return canonical_json([name, arguments_key(arguments)])
    return canonical_json([event.name, arguments_key(event.arguments, event.raw_arguments)])


def _align_parallel(a_steps: list[Step], b_steps: list[Step]) -> list[Step]:
    """``b_steps`` with each group of consecutive tool steps reordered like ``a``'s group at the same
    position when both hold the same calls: parallel tool calls finish in any order, which is not a
    difference. Matched by call id, else by name + arguments."""
    out = list(b_steps)
    i = 0
    while i < len(a_steps) and i < len(out):
        if a_steps[i].kind != "tool" or out[i].kind != "tool":
            i += 1
            continue
        j = i
        while j < len(a_steps) and j < len(out) and a_steps[j].kind == "tool" and out[j].kind == "tool":
            j += 1
        group_a, group_b = a_steps[i:j], out[i:j]
        remaining = list(group_b)
        ordered: list[Step] = []
        for step in group_a:
            event = step.event
            assert isinstance(event, ToolCallEvent)
            match = next((s for s in remaining if isinstance(s.event, ToolCallEvent) and s.event.call_id == event.call_id),
                         None) or next((s for s in remaining if _tool_key(s) == _tool_key(step)), None)
            if match is None:
                break
            remaining.remove(match)
            ordered.append(match)
        if not remaining:
            out[i:j] = ordered
        i = j
    return out


def ends_open(run: Run) -> bool:
    """True when ``run``'s record stops in the middle of a turn: its last step is a tool call, or an LLM
    call that asked for tools, or a user message came after it that no LLM call answered (a log cut
    short, an agent killed by a timeout). A play of such a record cannot stop where it stops: the engine
    answers what is left open synthetically (``replaykit.core.replay.serve``), and those steps are past the
    record, not a difference."""
    steps = run.steps
    if not steps:
        return False
    last = steps[-1].event
    if isinstance(last, ToolCallEvent) or last.response.message.tool_calls:
        return True
    return any(e.kind == "turn_start" and e.seq > last.seq for e in run.events)


def _past_open_end(pairs: list[Pair], a: Run, b: Run) -> set[int]:
    """Positions in ``pairs`` of the synthetic steps one run made past the end of the other's record,
    when that record ends open (``ends_open``): the play's closing of a record that stops mid-turn."""
    out: set[int] = set()
    for run, side in ((a, 0), (b, 1)):
        if not ends_open(run):
            continue
        last = max((i for i, pair in enumerate(pairs) if pair[side] is not None), default=-1)
        tail = range(last + 1, len(pairs))
        others = [pairs[i][1 - side] for i in tail]
        if others and all(s is not None and s.event.provenance == Provenance.SYNTHETIC for s in others):
            out.update(tail)
    return out


def lineage_edits(store: RunStore, runs: list[Run]) -> list[Edit]:
    """The branch edits of every run ``runs`` descend from (present in ``store``): a play of a branch
    diffed against the original still knows which step was edited."""
    from replaykit.core.replay.play import lineage_chain

    edits = []
    for run in runs:
        for ancestor in lineage_chain(store, run):
            if ancestor.header.lineage is not None and ancestor.header.lineage.edit is not None:
                edits.append(ancestor.header.lineage.edit)
    return edits


def diff_runs(a: Run, b: Run, *, edits: list[Edit] | None = None) -> DiffResult:
    """Compare ``a`` and ``b`` (``edits``: the branch edits of either run's lineage, for causes)."""
    edits = list(edits or [])
    for run in (a, b):
        lineage = run.header.lineage
        if lineage is not None and lineage.edit is not None:
            edits.append(lineage.edit)
    desyncs = [d for d in (_desync_from(a), _desync_from(b)) if d is not None]
    desync = min(desyncs) if desyncs else None
    result = DiffResult(a.run_id, b.run_id, len(a.steps), len(b.steps))
    result.losses_a = sum(len(step_losses(e)) for e in a.llm_calls())
    result.losses_b = sum(len(step_losses(e)) for e in b.llm_calls())
    for run, label in ((a, "a"), (b, "b")):
        for event in run.events:
            if event.kind in ("desync", "synthetic"):
                result.notes.append({"run": label, "kind": event.kind, "step": getattr(event, "step", None),
                                     "reason": getattr(event, "reason", "")})
    bridged = (_Bridged(a), _Bridged(b))
    if bridged[0].count != bridged[1].count:  # one run called through the bridge where the other did not
        for view, label, other in ((bridged[0], "a", b), (bridged[1], "b", a)):
            if view.count:
                why = f"{view.count} tool call(s) made through Tool Search's tool_call, compared as the underlying tool calls"
                if _unbridged(other):  # a version difference, not the model's: say so
                    engine = other.header.lineage.engine if other.header.lineage else None
                    version = other.header.source.framework_version
                    why += (f" (run {'B' if label == 'a' else 'A'} is a play on {engine or 'an engine'}"
                            f"{' ' + version if version else ''}, which cannot take a bridged call as made: "
                            "it was served each one as its underlying call)")
                result.notes.append({"run": label, "kind": "bridged_calls", "step": view.first, "reason": why})
    first_index: int | None = None
    keys = KeyCache()
    pairs = align(a.steps, _align_parallel(a.steps, b.steps), bridged)
    past_end = _past_open_end(pairs, a, b)
    for position_in_pairs, (step_a, step_b) in enumerate(pairs):
        index = step_a.index if step_a is not None else step_b.index if step_b is not None else 0
        if position_in_pairs in past_end:
            present = step_a or step_b
            assert present is not None
            result.notes.append({"run": "a" if step_a is not None else "b", "kind": "past_record_end",
                                 "step": present.index,
                                 "reason": f"the other run's record ends mid-turn: {describe(present.event)}"})
            continue
        # Desync events number steps in the run that desynced (the played one, B, in practice).
        position = step_b.index if step_b is not None else index
        found: list[Difference] = []
        if step_a is None or step_b is None:
            present = step_a or step_b
            assert present is not None
            found.append(Difference(index, "step", _cause(step_a, step_b, "step", edits, desync, position),
                                    None if step_a is None else describe(step_a.event),
                                    None if step_b is None else describe(step_b.event)))
        elif step_a.kind != step_b.kind:
            found.append(Difference(index, "kind", _cause(step_a, step_b, "kind", edits, desync, position),
                                    step_a.kind, step_b.kind))
        else:
            fields_a, fields_b = _fields(a, step_a, keys, bridged[0]), _fields(b, step_b, keys, bridged[1])
            for name, value_a in fields_a.items():
                value_b = fields_b[name]
                if value_a == value_b if name == "request.messages" else _same(value_a, value_b):
                    continue
                if name == "response.finish_reason" and _same_finish_across_apis(step_a.event, step_b.event):
                    continue
                cause = _cause(step_a, step_b, name, edits, desync, position)
                difference = Difference(index, name, cause, value_a, value_b)
                if name == "request.messages":
                    difference.a, difference.b = f"{len(value_a)} messages", f"{len(value_b)} messages"
                    difference.messages = message_changes(
                        [bridged[0].message(m) for m in a.request_messages(step_a.event)],
                        [bridged[1].message(m) for m in b.request_messages(step_b.event)], keys)
                found.append(difference)
        for difference in found:
            difference.step_a = step_a.index if step_a is not None else None
            difference.step_b = step_b.index if step_b is not None else None
        if found and first_index is not None:
            # A step whose input already differs (or a tool call the diverged model asked for) is a
            # consequence of the first divergence, not a new cause.
            input_differs = any(d.field in ("request.messages", "step", "kind") for d in found)
            is_tool = step_a is not None and isinstance(step_a.event, ToolCallEvent)
            for difference in found:
                if difference.cause == "input" or (difference.cause == "model_drift" and (input_differs or is_tool)):
                    difference.cause = result.differences[0].cause
                    difference.follows = first_index
        if found and first_index is None:
            first_index = index
        result.differences.extend(found)
        op = "removed" if step_b is None else "inserted" if step_a is None else "changed" if found else "equal"
        result.rows.append({
            "step": index,
            "step_a": step_a.index if step_a is not None else None,
            "step_b": step_b.index if step_b is not None else None,
            "op": op,
            "differs": bool(found),
            "field": found[0].field if found else None,
            "cause": found[0].cause if found else None,
            "a": _row(a, step_a),
            "b": _row(b, step_b),
        })
        lost = len(step_losses(step_b.event)) if step_b is not None and step_b.kind == "llm" else 0
        if lost:
            result.rows[-1]["losses_b"] = lost
    return result
