"""jsonsafe.dumps_indented writes exactly what ``dumps(value, indent=2, default=str)`` writes."""

from __future__ import annotations

import enum
import json
import random
from pathlib import Path
from typing import Any

import pytest

from replaykit.core.analysis.inspect_view import inspect_trace
from replaykit.core.trace import jsonsafe
from tests.conftest import FIXTURES


class Color(enum.StrEnum):
    RED = "red"


class Count(enum.IntEnum):
    ONE = 1


class Name(str):
    pass


def _reference(value: Any) -> str:
    return jsonsafe.dumps(value, indent=2, default=str)


ODD: list[Any] = [
    {}, [], (), "", 0, -0.0, 1.5, 1e300, 1e-7, float("nan"), float("inf"), float("-inf"), True, False, None,
    10**40, -3, {"a": {}, "b": [], "c": [[], {}], "d": [{"e": ()}]},
    {1: "int key", 2.5: "float key", False: "bool key", None: "none key", "s": "str key"},
    {"enum": Color.RED, "int_enum": Count.ONE, "sub": Name("x"), Name("k"): 1},
    {"path": Path("/tmp/x"), "object": object.__name__, "set": frozenset()},
    {"text": 'quote " backslash \\ newline \n tab \t nul \x00 ctrl \x1f del \x7f'},
    {"unicode": "é ü 中文 😀 \u2028 \u2029 \ufeff"},
    {"lone surrogate": "a\ud800b", "\udfff key": ["\udc80"]},
    [1, [2, [3, [4, {"deep": [5.0, None, True]}]]]],
]


@pytest.mark.parametrize("value", ODD, ids=range(len(ODD)))
def test_odd_values(value: Any) -> None:
    assert jsonsafe.dumps_indented(value) == _reference(value)


def _random_value(rng: random.Random, depth: int) -> Any:
    choice = rng.randrange(10 if depth < 4 else 6)
    if choice == 0:
        return rng.choice(["", "a", "é\n", "\ud83d", "x" * rng.randrange(50)])
    if choice == 1:
        return rng.randrange(-10**6, 10**6)
    if choice == 2:
        return rng.choice([0.1, -2.5, 1e20, 3.0, float("nan")])
    if choice == 3:
        return rng.choice([True, False, None])
    if choice in (4, 5):
        return rng.choice([Color.RED, Count.ONE, Name("n")])
    if choice in (6, 7):
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    keys = ["k", "é", "", "a b", 7, 1.5, None, False]
    return {rng.choice(keys): _random_value(rng, depth + 1) for _ in range(rng.randrange(4))}


def test_random_documents() -> None:
    rng = random.Random(13)
    for _ in range(500):
        value = _random_value(rng, 0)
        assert jsonsafe.dumps_indented(value) == _reference(value)


def test_a_real_inspect_document() -> None:
    document = inspect_trace(FIXTURES / "hermes" / "parallel_tools.jsonl", include_bookkeeping=True).to_json()
    assert jsonsafe.dumps_indented(document) == _reference(document)
    assert json.loads(jsonsafe.dumps_indented(document)) == json.loads(_reference(document))


def test_an_unsupported_key_is_refused_like_json_dumps() -> None:
    with pytest.raises(TypeError):
        _reference({(1, 2): "tuple key"})
    with pytest.raises(TypeError):
        jsonsafe.dumps_indented({(1, 2): "tuple key"})
