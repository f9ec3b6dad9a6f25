"""The Hermes engine puts back the whitespace Hermes strips from every message it sends, only where
stripping the recorded text gives exactly what Hermes sent."""

from __future__ import annotations

from replaykit.core.trace.ir import Message, TextPart, ToolResultPart
from replaykit.engines.hermes.stripped import restore_stripped


def _text(role: str, text: str) -> Message:
    return Message(role=role, parts=[TextPart(text=text)])


def test_recorded_whitespace_is_put_back() -> None:
    recorded = [_text("user", "\nlist all helm releases\n"), _text("assistant", "Paris.\n"),
                Message(role="tool", parts=[ToolResultPart(tool_call_id="c1", content="  out\n")])]
    sent = [_text("user", "list all helm releases"), _text("assistant", "Paris."),
            Message(role="tool", parts=[ToolResultPart(tool_call_id="c1", content="out")])]
    assert restore_stripped(sent, recorded) == recorded


def test_other_differences_are_left_for_the_desync() -> None:
    recorded = [_text("user", "Hello there\n"), _text("assistant", "A\n")]
    sent = [_text("user", "Hello"), _text("user", "A")]  # another text; another role
    assert restore_stripped(sent, recorded) == sent
    assert restore_stripped(sent, None) == sent
    longer = [*sent, _text("user", "more")]  # what the record does not hold is kept as sent
    assert restore_stripped(longer, recorded)[-1].text == "more"
