"""The replay graph's checkpoint serializer: LangGraph's own encoding, and the objects it wrote back for
the bytes it wrote (fresh containers, shared leaves), bounded."""

from __future__ import annotations

import pytest

pytest.importorskip("langgraph.checkpoint.sqlite")

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from replaykit.engines.langgraph import checkpoints


def test_writes_what_langgraph_writes_and_gives_back_what_it_wrote() -> None:
    serde = checkpoints.RememberingSerializer()
    message = AIMessage(content="hi", id="rk-1", tool_calls=[{"name": "f", "args": {"a": 1}, "id": "c1"}])
    value = {"v": 1, "channel_values": {"messages": [message]}, "versions": {"x": 1}}
    typed = serde.dumps_typed(value)
    assert typed == JsonPlusSerializer().dumps_typed(value)  # the bytes on disk are LangGraph's
    first = serde.loads_typed(typed)
    assert first == value and first is not value
    assert first["channel_values"]["messages"][0] is message  # the very message, not a decoded copy
    first["channel_values"]["messages"].append("junk")  # a reader changing its copy changes nothing
    first["versions"]["x"] = 2
    assert serde.loads_typed(typed) == value
    # Bytes it did not write are decoded as LangGraph decodes them.
    other = ToolMessage(content="r", tool_call_id="c1", id="rk-2")
    foreign = JsonPlusSerializer().dumps_typed([other])
    decoded = serde.loads_typed(foreign)
    assert decoded == [other] and decoded[0] is not other


def test_memory_is_bounded_and_shared_with_clones(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checkpoints, "MAX_BLOBS", 3)
    serde = checkpoints.RememberingSerializer()
    clone = serde.with_msgpack_allowlist([("langchain_core", "messages", "ai", "AIMessage")])
    messages = [AIMessage(content=f"m{i}", id=f"rk-{i}") for i in range(5)]
    typed = [serde.dumps_typed([m]) for m in messages]
    assert len(serde._memory) == 3
    assert serde.loads_typed(typed[0])[0] is not messages[0]  # forgotten: decoded again
    assert clone.loads_typed(typed[4])[0] is messages[4]
