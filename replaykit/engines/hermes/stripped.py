"""Undo Hermes's whitespace normalisation where the record kept the whitespace.

Before every request Hermes strips the string content of each message it sends (user, assistant and tool
alike: ``am["content"] = am["content"].strip()`` in ``agent/conversation_loop.py``, "for consistent prefix
matching" of provider caches). A run recorded elsewhere keeps what its application sent: a user turn
ending in a newline, an answer the model ended with one, an indented prompt. At a served position nothing
is sent, so the recorded text is put back there, and only where stripping it gives exactly what Hermes
sent: any other difference is left for the cursor to report as a desync.
"""

from __future__ import annotations

from collections.abc import Sequence

from replaykit.core.replay.serve import request_fingerprint
from replaykit.core.trace.ir import Message, TextPart, ToolResultPart


def restore_stripped(messages: Sequence[Message], recorded: Sequence[Message] | None) -> list[Message]:
    """``messages`` with each message Hermes stripped replaced by its recorded form (index by index)."""
    out = list(messages)
    if not recorded:
        return out
    for index, (sent, kept) in enumerate(zip(messages, recorded, strict=False)):
        if sent.role != kept.role or len(sent.parts) != len(kept.parts):
            continue
        candidate = _unstripped(sent, kept)
        if candidate is not sent and request_fingerprint([candidate]) == request_fingerprint([kept]):
            out[index] = candidate
    return out


def _unstripped(sent: Message, kept: Message) -> Message:
    parts = list(sent.parts)
    changed = False
    for i, (part, want) in enumerate(zip(sent.parts, kept.parts, strict=True)):
        if isinstance(part, TextPart) and isinstance(want, TextPart) and _stripped_from(part.text, want.text):
            parts[i] = part.model_copy(update={"text": want.text})
            changed = True
        elif isinstance(part, ToolResultPart) and isinstance(want, ToolResultPart) \
                and _stripped_from(part.content, want.content):
            parts[i] = part.model_copy(update={"content": want.content})
            changed = True
    return sent.model_copy(update={"parts": parts}) if changed else sent


def _stripped_from(text: str, original: str) -> bool:
    return text != original and text == original.strip()
