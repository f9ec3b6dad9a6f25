"""Recorded requests looked up by content (cassettes), and why a request matches none of them.

Cassettes (``replaykit.record`` / ``replaykit.serve`` and the pytest plugin) answer a live request from
the record when its *fingerprint* (``replaykit.core.trace.canonical.fingerprint``: the one request identity
replay uses everywhere, volatile fields ignored) equals a recorded request's. Unlike the replay cursor
(``core/replay/cursor.py``), which walks one run in recorded order, a cassette is matched by content, so
concurrent tasks (parallel tools, subagents, several agents in one test) may arrive in any order.

Identical requests from different tasks are told apart per task: the first request of a live task
(an asyncio task or a thread, chosen by the caller) is matched to a recorded task label
(``corr.task_id``), and later requests of the same live task prefer recorded requests of that label.

When nothing matches, ``RequestIndex.explain`` names the nearest recorded step (the longest shared
message prefix) and the first differing field (message index, key, recorded vs actual, clipped).
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from replaykit.core.trace.canonical import canonical_json, fingerprint, normalized_messages
from replaykit.core.trace.ir import LLMCallEvent, Message
from replaykit.core.trace.run import Run

CLIP = 80


def clip(text: str, limit: int = CLIP) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass(frozen=True)
class Difference:
    """The first place two requests differ: ``messages[index].key``, recorded vs actual (clipped)."""

    message_index: int | None
    key: str
    recorded: str
    actual: str

    def describe(self) -> str:
        where = f"messages[{self.message_index}].{self.key}" if self.message_index is not None else self.key
        return f"{where}: recorded {clip(self.recorded)!r} vs actual {clip(self.actual)!r}"


_PART_FIELDS = {"text": ("text",), "tool_call": ("id", "name", "arguments"),
                "tool_result": ("tool_call_id", "content", "is_error")}


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else canonical_json(value)


def _part_difference(index: int, j: int, recorded: Any, actual: Any) -> Difference:
    if isinstance(recorded, list) and isinstance(actual, list) and recorded[:1] == actual[:1]:
        names = _PART_FIELDS.get(str(recorded[0]), ())
        for k, name in enumerate(names, start=1):
            a = recorded[k] if k < len(recorded) else None
            b = actual[k] if k < len(actual) else None
            if a != b:
                return Difference(index, f"parts[{j}].{name}", _as_text(a), _as_text(b))
    kind_a = recorded[0] if isinstance(recorded, list) else recorded.get("type", "?")
    kind_b = actual[0] if isinstance(actual, list) else actual.get("type", "?")
    if kind_a != kind_b:
        return Difference(index, f"parts[{j}].type", str(kind_a), str(kind_b))
    return Difference(index, f"parts[{j}]", _as_text(recorded), _as_text(actual))


def first_difference(recorded: Sequence[Message], actual: Sequence[Message]) -> Difference | None:
    """Where ``actual`` first differs from ``recorded`` as fingerprints compare them (None: same)."""
    rec, act = normalized_messages(recorded), normalized_messages(actual)
    for i, (a, b) in enumerate(zip(rec, act, strict=False)):
        if a == b:
            continue
        if a["role"] != b["role"]:
            return Difference(i, "role", a["role"], b["role"])
        for j, (p, q) in enumerate(zip(a["parts"], b["parts"], strict=False)):
            if p != q:
                return _part_difference(i, j, p, q)
        return Difference(i, "parts (count)", str(len(a["parts"])), str(len(b["parts"])))
    if len(rec) != len(act):
        extra = rec[len(act)] if len(rec) > len(act) else act[len(rec)]
        return Difference(min(len(rec), len(act)), "(message)",
                          _as_text(extra) if len(rec) > len(act) else "(none)",
                          _as_text(extra) if len(act) > len(rec) else "(none)")
    return None


def shared_prefix(recorded: Sequence[Any], actual: Sequence[Any]) -> int:
    """How many leading normalized messages two requests share."""
    n = 0
    for a, b in zip(recorded, actual, strict=False):
        if a != b:
            break
        n += 1
    return n


@dataclass
class _Entry:
    step: int
    event: LLMCallEvent
    messages: list[Message]
    task: str | None
    run_id: str | None = None  # set for a linked run's calls (not the main run's)
    served: int = 0


@dataclass(frozen=True)
class Miss:
    """A request no recorded request matches, explained."""

    nearest_step: int | None
    difference: Difference | None
    run_id: str | None = None  # the linked run holding the nearest step (None: the main run)

    def describe(self) -> str:
        if self.nearest_step is None:
            return "the cassette holds no model call"
        diff = self.difference.describe() if self.difference else "same messages, other request fields"
        where = f" of linked run {self.run_id}" if self.run_id else ""
        return f"nearest recorded step {self.nearest_step}{where}, first difference at {diff}"


@dataclass
class RequestIndex:
    """The LLM calls of a recorded run (and of its linked runs: subgraphs, subagents), looked up by
    fingerprint (thread-safe)."""

    run: Run
    linked: Sequence[Run] = ()
    _by_fp: dict[str, list[_Entry]] = field(default_factory=dict)
    _entries: list[_Entry] = field(default_factory=list)
    _task_labels: dict[Hashable, str | None] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        for run in (self.run, *self.linked):
            for step in run.steps:
                event = step.event
                if not isinstance(event, LLMCallEvent):
                    continue
                messages = run.request_messages(event)
                task = event.corr.task_id if event.corr is not None else None
                entry = _Entry(step.index, event, messages, task, None if run is self.run else run.run_id)
                self._entries.append(entry)
                self._by_fp.setdefault(fingerprint(messages), []).append(entry)

    def __len__(self) -> int:
        return len(self._entries)

    def take(self, messages: Sequence[Message], live_task: Hashable | None = None, *,
             repeat: bool = False) -> tuple[int, LLMCallEvent] | None:
        """The recorded (step, call) answering ``messages``: same fingerprint, preferring the recorded
        task this live task was matched to before, then recorded order. Each recorded call is served
        once unless ``repeat`` (then a used one answers again when no fresh one is left)."""
        candidates = self._by_fp.get(fingerprint(messages))
        if not candidates:
            return None
        with self._lock:
            label = self._task_labels.get(live_task) if live_task is not None else None
            fresh = [e for e in candidates if e.served == 0]
            pool = fresh or (candidates if repeat else [])
            if not pool:
                return None
            chosen = next((e for e in pool if label is not None and e.task == label), pool[0])
            chosen.served += 1
            if live_task is not None and live_task not in self._task_labels:
                self._task_labels[live_task] = chosen.task
            return chosen.step, chosen.event

    def explain(self, messages: Sequence[Message]) -> Miss:
        """The nearest recorded request (longest shared normalized prefix) and the first difference."""
        if not self._entries:
            return Miss(None, None)
        actual = normalized_messages(messages)
        best = max(self._entries,
                   key=lambda e: (shared_prefix(normalized_messages(e.messages), actual), -e.served, -e.step))
        return Miss(best.step, first_difference(best.messages, messages), best.run_id)
