"""Each LLM request of a session as a delta against the previous one, checked exactly on Hermes's thread.

Hermes sends every API call a fresh list of fresh shallow copies of the whole conversation, so proving
that request k kept request k-1's messages means looking at each of them (an edit of any old message, in
place or by replacing it, must reach the trace). ``RequestChain`` does that with one C-level list
comparison per call (``raw[:n] == seen``: dict equality, identity short-circuits on the shared leaf
strings) against **its own copy** of the previous request: containers copied once, when a message is
new, leaves (Hermes's ``str`` contents and arguments) shared. It never keeps Hermes's dicts or lists past
the call: holding them (one request longer, or on a verifier thread, as before issue 27) kept Hermes's
garbage alive across its next allocation bursts, so the collector walked and promoted it again, and the
recorder's callbacks ended up freeing it. If the prefix differs (compression, a changed system prompt, a
rewritten old message), the common prefix is found element by element (rare) and the rest decoded:
every request rebuilds byte-equal from the trace, decided before the event is written.

Traces written by the earlier off-thread verifier may hold ``request_fix`` events; ``Run.load`` still
applies them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from replaykit.adapters.hermes import fastpath
from replaykit.core.trace import jsonsafe
from replaykit.core.trace.ir import Message

CHAT = "openai-chat"


def elements(api: str, body: Mapping[str, Any]) -> list[Any]:
    """The conversation of a request as a list of comparable raw elements."""
    if api == CHAT:
        msgs = body.get("messages")
        # Hermes's own (fresh) list, never mutated: compared, its tail sliced, and kept until the next
        # request of the session replaces it.
        return msgs if isinstance(msgs, list) else []
    out: list[Any] = []
    head = "instructions" if api == "openai-responses" else "system"
    if head in body:
        out.append((head, body[head]))
    items = body.get("input" if api == "openai-responses" else "messages")
    if isinstance(items, str):
        out.append(("input_str", items))
    elif isinstance(items, list):
        out.extend(items)
    return out


def _convert(api: str, element: Any) -> list[Message]:
    """One raw element -> IR messages through the shared provider codecs (so every engine re-encodes a
    recorded request the same way)."""
    if api == CHAT:
        from replaykit.core.trace.codecs import openai_chat

        return [openai_chat.decode_message(element)]
    from replaykit.core.trace import codecs

    if isinstance(element, tuple):
        kind, value = element
        body: dict[str, Any] = {"input": value} if kind == "input_str" else {kind: value}
        if api == "openai-responses":
            body.setdefault("input", [])
        else:
            body.setdefault("messages", [])
        return list(codecs.decode_request(api, body).messages)
    if api == "openai-responses":
        from replaykit.core.trace.codecs import openai_responses

        return list(openai_responses.decode_items([element]))
    from replaykit.core.trace.codecs import anthropic

    return [anthropic.decode_message(element, "message")]


def decode(api: str, element: Any) -> list[dict[str, Any]]:
    """One raw element -> its IR messages as JSON dicts (fast path for Chat, else the codecs)."""
    if api == CHAT:
        fast = fastpath.chat_message(element)
        if fast is not None:
            return [fast]
    return [jsonsafe.model_data(m, exclude_none=True) for m in _convert(api, element)]


@dataclass(slots=True)
class Prepared:
    """A request compared with the last one written: keep its first ``keep`` raw elements, decode the rest.
    Holds Hermes's list only while its call is in flight (Hermes holds it then too)."""

    api: str
    raw: list[Any]
    keep: int
    tail: list[list[dict[str, Any]]]
    written: int  # RequestChain.written when prepared (another request written since: prepare again)


@dataclass(slots=True)
class RequestChain:
    """The last request written in a session: what the next one is a delta against. Holds its own copy
    of that request's elements (``own_copy``: containers ours, leaves shared) and one int per element."""

    api: str | None = None
    seen: list[Any] = field(default_factory=list)
    cum: list[int] = field(default_factory=lambda: [0])  # IR messages the first i elements decode to
    last_id: str | None = None
    written: int = 0

    def prepare(self, api: str, raw: list[Any]) -> Prepared:
        seen = self.seen
        n = len(seen) if self.api == api and self.last_id is not None else 0
        if n and len(raw) >= n and same_prefix(raw, seen, n):
            keep = n  # the common case: the conversation grew
        else:
            keep = _common_prefix(raw, seen, n)
        return Prepared(api, raw, keep, [decode(api, e) for e in raw[keep:]], self.written)

    def delta(self, pre: Prepared) -> tuple[str | None, int, list[dict[str, Any]]]:
        """(base event id, IR messages kept, appended IR messages) of a prepared request."""
        if pre.written != self.written:  # another request of the session was written meanwhile
            fresh = self.prepare(pre.api, pre.raw)
            pre.keep, pre.tail, pre.written = fresh.keep, fresh.tail, fresh.written
        keep_ir = self.cum[pre.keep] if pre.keep else 0
        return (self.last_id if keep_ir else None), keep_ir, [m for group in pre.tail for m in group]

    def commit(self, pre: Prepared, event_id: str) -> None:
        """``pre`` was written as ``event_id``: it is what the next request is compared with."""
        cum = self.cum
        del cum[pre.keep + 1:]
        total = cum[-1]
        for group in pre.tail:
            total += len(group)
            cum.append(total)
        seen = self.seen
        if self.api != pre.api:
            seen.clear()
        del seen[pre.keep:]
        seen.extend(map(own_copy, pre.raw[pre.keep:]))
        self.api, self.last_id = pre.api, event_id
        self.written += 1


def same_prefix(raw: list[Any], seen: list[Any], n: int) -> bool:
    """Whether ``raw[:n]`` equals ``seen`` (len n): the last element first (Hermes rewrites the tail:
    moving cache markers, a repaired message), then all of them in one C-level comparison."""
    return bool(raw[n - 1] == seen[n - 1] and raw[:n] == seen)


def own_copy(value: Any) -> Any:
    """``value`` with its dicts, lists and tuples copied (ours, so Hermes's containers are not kept
    alive) and everything else shared (strings, numbers: immutable leaves the collector never walks)."""
    kind = type(value)
    if kind is dict:
        return {k: own_copy(v) for k, v in value.items()}
    if kind is list:
        return [*map(own_copy, value)]
    if kind is tuple:
        return tuple(map(own_copy, value))
    return value


def _common_prefix(raw: list[Any], prev: list[Any], n: int) -> int:
    keep, limit = 0, min(len(raw), n)
    while keep < limit and raw[keep] == prev[keep]:
        keep += 1
    return keep
