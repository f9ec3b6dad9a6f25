"""A redacted cassette answers the test that recorded it: live requests compared in redacted space.

A cassette redacted with ``replaykit redact`` (header ``lineage.relation == "redaction"``) holds
``<PERSON_1>`` where the test's prompt holds a name, and the map back to the values is written nowhere.
So a live request is redacted first, by the same detectors and the same request hooks as the IR pass
(``redact_messages``, the cassette's mode), with one Redactor for the whole session: one value is one
placeholder across the run. Its placeholders are minted with a tag (``<PERSON_live1>``) so they are
never confused with the cassette's own placeholders that reach the request through served responses.

The live request matches a recorded one when the two are equal with every placeholder abstracted to
its type (``<PERSON>``), and the live placeholders can be renamed to the recorded ones consistently:
a placeholder that came from the cassette (a served answer) must be the same one; a minted one maps
to one recorded placeholder, and the same one in every request of the session (a bijection kept
for the run). So a changed value in the same place still matches (the cassette cannot know it), but
two values where the record had one, one where it had two, or a value moved into another
placeholder's place do not.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from replaykit.core.redaction import PLACEHOLDER_REGEX, PlaceholderMap, Redactor, redact_messages
from replaykit.core.replay.match import Miss, RequestIndex
from replaykit.core.trace.canonical import canonical_json, normalized_messages
from replaykit.core.trace.ir import LLMCallEvent, Message
from replaykit.core.trace.run import Run

LIVE_TAG = "live"
_TOKEN = re.compile(r"<([A-Z][A-Z0-9_]*?)_(" + LIVE_TAG + r"\d+|\d+)>")
assert _TOKEN.fullmatch("<PHONE_NUMBER_12>") and re.fullmatch(PLACEHOLDER_REGEX, "<PHONE_NUMBER_12>")


def redaction_mode(run: Run) -> str | None:
    """The mode a redacted run was made with, or None when the run is not a redaction."""
    lineage = run.header.lineage
    if lineage is None or lineage.relation != "redaction":
        return None
    return str((lineage.details or {}).get("mode") or "patterns")


def _shape(messages: Sequence[Message]) -> tuple[str, list[str]]:
    """The request with every placeholder abstracted to its type (hashed), and the placeholders in order."""
    text = canonical_json(normalized_messages(messages))
    tokens = [m.group(0) for m in _TOKEN.finditer(text)]
    abstract = _TOKEN.sub(lambda m: f"<{m.group(1)}>", text)
    return hashlib.blake2b(abstract.encode("utf-8"), digest_size=16).hexdigest(), tokens


def _live(token: str) -> bool:
    return f"_{LIVE_TAG}" in token


@dataclass
class RedactedRequestIndex(RequestIndex):
    """``RequestIndex`` over a redacted cassette: live requests are redacted, then matched by shape."""

    mode: str = "patterns"
    _by_shape: dict[str, list[tuple[Any, list[str]]]] = field(default_factory=dict)  # (entry, placeholders)
    _rename: dict[str, str] = field(default_factory=dict)  # minted live placeholder -> recorded one
    _redactor: Redactor | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        for entry in self._entries:
            digest, tokens = _shape(entry.messages)
            self._by_shape.setdefault(digest, []).append((entry, tokens))
        self._redactor = Redactor(mode=self.mode, mapping=PlaceholderMap(tag=LIVE_TAG))  # type: ignore[arg-type]

    def redact(self, messages: Sequence[Message]) -> list[Message]:
        assert self._redactor is not None
        return redact_messages(messages, self._redactor)

    def _renaming(self, live: list[str], recorded: list[str]) -> dict[str, str] | None:
        """The extension of the session's renaming that makes ``live`` equal ``recorded``, or None."""
        new: dict[str, str] = {}
        taken = set(self._rename.values())
        for a, b in zip(live, recorded, strict=True):
            if not _live(a):
                if a != b:
                    return None  # a placeholder the cassette itself served must come back as itself
                continue
            want = self._rename.get(a) or new.get(a)
            if want is None:
                if b in taken:
                    return None  # that recorded placeholder already stands for another live value
                new[a] = b
                taken.add(b)
            elif want != b:
                return None
        return new

    def take(self, messages: Sequence[Message], live_task: Hashable | None = None, *,
             repeat: bool = False) -> tuple[int, LLMCallEvent] | None:
        digest, tokens = _shape(self.redact(messages))
        candidates = self._by_shape.get(digest) or []
        with self._lock:
            label = self._task_labels.get(live_task) if live_task is not None else None
            fresh = [c for c in candidates if c[0].served == 0]
            pool = fresh or (candidates if repeat else [])
            pool = sorted(pool, key=lambda c: not (label is not None and c[0].task == label))
            for entry, recorded in pool:
                renaming = self._renaming(tokens, recorded)
                if renaming is None:
                    continue
                self._rename.update(renaming)
                entry.served += 1
                if live_task is not None and live_task not in self._task_labels:
                    self._task_labels[live_task] = entry.task
                return entry.step, entry.event
        return None

    def explain(self, messages: Sequence[Message]) -> Miss:
        return super().explain(self.redact(messages))  # the miss names redacted text, never the live value


def request_index(run: Run, linked: Sequence[Run] = ()) -> RequestIndex:
    """The index a cassette answers from: in redacted space when the run is a redaction."""
    mode = redaction_mode(run)
    if mode is None:
        return RequestIndex(run, linked)
    return RedactedRequestIndex(run, linked, mode=mode)


__all__ = ["LIVE_TAG", "RedactedRequestIndex", "redaction_mode", "request_index"]
