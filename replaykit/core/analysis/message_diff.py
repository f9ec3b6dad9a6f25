"""Which messages of two LLM requests differ, and how: what a diff shows instead of two fingerprints.

``message_changes(a, b)`` aligns the two message lists as sequences (a message inserted in the middle is
one insertion, not every later message changed) and reports each change with its index in either
request, its role, and an inline text diff: a list of ``{"op": "equal"|"delete"|"insert", "text"}``
segments (words, or lines for long texts) that the terminal renders as ``[-old-]{+new+}`` and HTML as
``<del>``/``<ins>``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import Any

from replaykit.core.analysis.step_detail import message_text
from replaykit.core.trace import jsonsafe
from replaykit.core.trace.canonical import canonical_json, normalized_messages
from replaykit.core.trace.ir import Message

#: Above this many characters a text is diffed by lines, not words (word diffs are quadratic).
WORD_DIFF_LIMIT = 20_000
#: Past this many token pairs (after the common head and tail are set aside) the changed middle is
#: shown as one deletion and one insertion instead of being matched (SequenceMatcher is quadratic).
MATCH_LIMIT = 250_000
_TOKEN = re.compile(r"\s+|[^\s]+")


def _tokens(text: str) -> list[str]:
    if len(text) > WORD_DIFF_LIMIT:
        return text.splitlines(keepends=True)
    return _TOKEN.findall(text)


def inline_diff(a: str, b: str) -> list[dict[str, str]]:
    """Segments turning ``a`` into ``b``; adjacent segments of one kind are merged."""
    ta, tb = _tokens(a), _tokens(b)
    segments: list[dict[str, str]] = []

    def add(op: str, text: str) -> None:
        if not text:
            return
        if segments and segments[-1]["op"] == op:
            segments[-1]["text"] += text
        else:
            segments.append({"op": op, "text": text})

    if a == b:
        return [{"op": "equal", "text": a}] if a else []
    # Set the common head and tail aside: a changed tool result in a long history is a small middle.
    head = 0
    while head < min(len(ta), len(tb)) and ta[head] == tb[head]:
        head += 1
    tail = 0
    while tail < min(len(ta), len(tb)) - head and ta[-1 - tail] == tb[-1 - tail]:
        tail += 1
    mid_a, mid_b = ta[head:len(ta) - tail], tb[head:len(tb) - tail]
    tail_text = "".join(ta[len(ta) - tail:])
    add("equal", "".join(ta[:head]))
    if len(mid_a) * len(mid_b) > MATCH_LIMIT:
        add("delete", "".join(mid_a))
        add("insert", "".join(mid_b))
        add("equal", tail_text)
        return segments
    ta, tb = mid_a, mid_b
    matcher = difflib.SequenceMatcher(None, ta, tb, autojunk=False)
    opcodes = matcher.get_opcodes()
    # Blanks alone between two changes join them ("[-Sunny, 21C-]", not "[-Sunny,-] [-21C-]").
    merged: list[list[Any]] = []
    for n, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        blank = tag == "equal" and not "".join(ta[i1:i2]).strip()
        between = 0 < n < len(opcodes) - 1
        if blank and between:
            tag = "replace"
        if merged and tag != "equal" and merged[-1][0] != "equal":
            merged[-1][2], merged[-1][4] = i2, j2
        else:
            merged.append([tag, i1, i2, j1, j2])
    for tag, i1, i2, j1, j2 in merged:
        if tag == "equal":
            add("equal", "".join(ta[i1:i2]))
        else:
            add("delete", "".join(ta[i1:i2]))
            add("insert", "".join(tb[j1:j2]))
    add("equal", tail_text)
    return segments


def render_inline(segments: Sequence[dict[str, str]], *, context: int = 60) -> str:
    """Segments as one readable string: ``[-deleted-]{+inserted+}``, long unchanged runs shortened."""
    out: list[str] = []
    last = len(segments) - 1
    for n, seg in enumerate(segments):
        text = seg["text"]
        if seg["op"] == "delete":
            out.append(f"[-{text}-]")
        elif seg["op"] == "insert":
            out.append(f"{{+{text}+}}")
        elif len(text) > 2 * context:
            head = text[:context] if n > 0 else ""
            tail = text[-context:] if n < last else ""
            out.append(f"{head}…{tail}")
        else:
            out.append(text)
    return "".join(out)


def _key(message: Message) -> str:
    """What a message says, for alignment: tool call ids are left out (they are volatile: two runs of
    the same agent name their calls differently, which is not a change in what the model saw)."""
    data = jsonsafe.model_data(message, exclude_none=True)
    for part in data.get("parts", []):
        part.pop("id", None)
        part.pop("tool_call_id", None)
    return canonical_json(data)


class KeyCache:
    """Keys and inline diffs already computed in one diff. A run's requests share their Message objects
    (delta encoding), so a long run is keyed once per message, not once per request that repeats it."""

    def __init__(self) -> None:
        self._keys: dict[int, tuple[Message, str]] = {}
        self._norms: dict[int, tuple[Message, str]] = {}
        self.diffs: dict[tuple[str, str], list[dict[str, str]]] = {}

    def norm(self, message: Message) -> str:
        """The message in the request fingerprint's normal form (volatile system-prompt text masked,
        reasoning left out, tool call ids replaced by their position within the message)."""
        hit = self._norms.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        value = canonical_json(normalized_messages([message])[0])
        self._norms[id(message)] = (message, value)
        return value

    def key(self, message: Message) -> str:
        hit = self._keys.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        value = _key(message)
        self._keys[id(message)] = (message, value)  # holding the message keeps its id unique
        return value


def message_changes(a: Sequence[Message], b: Sequence[Message], cache: KeyCache | None = None) -> list[dict[str, Any]]:
    """The changes turning request messages ``a`` into ``b``, in order (tool call ids ignored)."""
    cache = cache or KeyCache()
    keys_a = [cache.key(m) for m in a]
    keys_b = [cache.key(m) for m in b]
    changes: list[dict[str, Any]] = []
    matcher = difflib.SequenceMatcher(None, keys_a, keys_b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        paired = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        for k in range(paired):
            ma, mb = a[i1 + k], b[j1 + k]
            role = ma.role if ma.role == mb.role else f"{ma.role} -> {mb.role}"
            pair = (keys_a[i1 + k], keys_b[j1 + k])
            if pair not in cache.diffs:
                cache.diffs[pair] = inline_diff(message_text(ma), message_text(mb))
            changes.append({"op": "changed", "index_a": i1 + k, "index_b": j1 + k, "role": role,
                            "diff": cache.diffs[pair]})
        for i in range(i1 + paired, i2):
            changes.append({"op": "removed", "index_a": i, "index_b": None, "role": a[i].role,
                            "diff": [{"op": "delete", "text": message_text(a[i])}]})
        for j in range(j1 + paired, j2):
            changes.append({"op": "added", "index_a": None, "index_b": j, "role": b[j].role,
                            "diff": [{"op": "insert", "text": message_text(b[j])}]})
    return changes


def describe_change(change: dict[str, Any]) -> str:
    """One line per change: ``message 3 (tool) changed: ...[-old-]{+new+}...``."""
    where = change["index_a"] if change["index_a"] is not None else change["index_b"]
    if change["op"] == "changed" and change["index_a"] != change["index_b"]:
        where = f"{change['index_a']}->{change['index_b']}"
    return f"message {where} ({change['role']}) {change['op']}: {render_inline(change['diff'])}"
