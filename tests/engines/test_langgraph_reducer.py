"""The graph's messages reducer gives exactly ``add_messages``'s result, on the graph's positional ids
(``rk-<i>``, no index) and on anything else (foreign ids, removals), also when LangGraph reduces against
a copy of a list it returned or against an older list again."""

from __future__ import annotations

import random
from typing import Any

import pytest

pytest.importorskip("langgraph")

from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages

from replaykit.engines.langgraph import runtime as rt


def _shape(messages: list[Any]) -> list[tuple[str, str]]:
    return [(m.id, m.content) for m in messages]


def _write(rng: random.Random, state: list[Any], n: int) -> list[Any]:
    kind = rng.random()
    if kind < 0.45:  # the graph's own appends (positional)
        return [AIMessage(content=f"a{n}.{i}", id=rt.message_id(len(state) + i)) for i in range(rng.randint(1, 3))]
    if kind < 0.65 and state:  # replace an existing message by id
        old = rng.choice(state)
        return [HumanMessage(content=f"r{n}", id=old.id)]
    if kind < 0.75:  # a foreign id, or a positional-looking id in the wrong place
        return [HumanMessage(content=f"f{n}", id=rng.choice([f"user-{n}", rt.message_id(len(state) + 1), rt.message_id(len(state) + 5), "rk-01"]))]
    if kind < 0.85 and state:
        return [RemoveMessage(id=rng.choice(state).id)]
    if kind < 0.9:
        return [RemoveMessage(id=REMOVE_ALL_MESSAGES), AIMessage(content=f"z{n}", id=rt.message_id(0))]
    return []


@pytest.mark.parametrize("seed", range(6))
def test_reducer_equals_add_messages(seed: int) -> None:
    rng = random.Random(seed)
    rt.forget_verified()
    expected: list[Any] = []
    ours: list[Any] = []
    history: list[tuple[list[Any], list[Any]]] = []
    for n in range(150):
        if history and rng.random() < 0.2:  # reduce against an older value (and its copy) again
            expected, ours = rng.choice(history)
        write = _write(rng, expected, n)
        base = list(ours) if rng.random() < 0.5 else ours  # LangGraph may hand back a copy
        expected = add_messages(expected, write)  # type: ignore[assignment]
        ours = rt.replay_messages(base, write)
        assert _shape(ours) == _shape(expected), (seed, n)
        history.append((expected, ours))
    # One batch of writes is the same as the writes one by one (the DeltaChannel reducer contract).
    writes = [_write(rng, expected, 1000 + i) for i in range(5)]
    one_by_one = ours
    for w in writes:
        one_by_one = rt.replay_messages(one_by_one, w)
    assert _shape(rt._replay_messages_batch(ours, writes)) == _shape(one_by_one)
