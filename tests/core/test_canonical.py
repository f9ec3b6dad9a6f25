from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from replaykit.core.trace.canonical import canonical_json, fingerprint, mask_volatile_text
from replaykit.core.trace.ir import (
    MediaPart,
    Message,
    OpaquePart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


def test_canonical_form_is_sorted_compact_nfc() -> None:
    assert canonical_json({"b": 1, "a": [1.0, -0.0, "e\u0301"]}) == '{"a":[1.0,0.0,"é"],"b":1}'
    assert canonical_json({"x": math.nan, "y": math.inf}) == '{"x":"NaN","y":"Infinity"}'


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_canonical_json_is_stable_and_parseable(value: object) -> None:
    import json

    text = canonical_json(value)
    assert canonical_json(json.loads(text)) == text


def _request(system: str, call_id: str, raw_args: str) -> list[Message]:
    return [
        Message(role="system", parts=[TextPart(text=system)]),
        Message(role="user", parts=[TextPart(text="weather in Paris?")]),
        Message(role="assistant", parts=[ToolCallPart(id=call_id, name="get_weather", raw_arguments=raw_args)]),
        Message(role="tool", parts=[ToolResultPart(tool_call_id=call_id, content="12C")]),
    ]


def test_fingerprint_ignores_declared_volatile_fields() -> None:
    tools = [ToolSpec(name="get_weather", parameters={"type": "object"})]
    a = _request("Conversation started: Monday, November 30, 2026\ncwd: /home/alice/proj\nid 3f1c2d9e8a7b6c5d4e3f",
                 "call_abc", '{"city": "Paris"}')
    b = _request("Conversation started: Tuesday, December 1, 2026\ncwd: /home/bob/other\nid 0a1b2c3d4e5f60718293",
                 "call_xyz", '{"city":"Paris"}')
    assert fingerprint(a, tools) == fingerprint(b, tools)


def test_fingerprint_sees_real_changes() -> None:
    tools = [ToolSpec(name="get_weather", parameters={"type": "object"})]
    base = fingerprint(_request("sys", "c1", '{"city": "Paris"}'), tools)
    assert fingerprint(_request("sys", "c1", '{"city": "Rome"}'), tools) != base
    assert fingerprint(_request("other sys", "c1", '{"city": "Paris"}'), tools) != base
    assert fingerprint(_request("sys", "c1", '{"city": "Paris"}'), None) != base


def test_mask_volatile_text() -> None:
    masked = mask_volatile_text("Today: 2026-11-30T10:00:00Z at /tmp/x/y uuid 123e4567-e89b-12d3-a456-426614174000")
    assert "2026" not in masked and "/tmp" not in masked and "123e4567" not in masked


def test_fingerprint_of_media_and_opaque_parts() -> None:
    """An image or an opaque block beside text (an imported ATIF step with an image did this) fingerprints,
    as IR models and as their JSON form alike, and a different image is a different request."""
    def request(url: str) -> list[Message]:
        return [Message(role="user", parts=[TextPart(text="what does it show?"), MediaPart(media_type="image/png",
                                                                                           url=url)]),
                Message(role="assistant", parts=[OpaquePart(format="x", data={"k": 1}), TextPart(text="a chart")])]

    base = fingerprint(request("file:///chart.png"))
    assert fingerprint([m.model_dump(exclude_none=True) for m in request("file:///chart.png")]) == base
    assert fingerprint(request("file:///other.png")) != base


_atoms = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                   st.sampled_from(["NaN", "-0.0", "true", "é", "e\u0301", 'x"y', "Infinity"]), st.text(max_size=6))
_keys = st.one_of(st.text(max_size=4), st.sampled_from(["é", "e\u0301", "true", "NaN"]), st.integers(),
                  st.booleans(), st.none())
_values = st.recursive(_atoms, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=3),
                       max_leaves=12)


@settings(max_examples=400, deadline=None)
@given(_values)
def test_the_as_is_shortcut_gives_the_exact_canonical_text(value: object) -> None:
    # canonical_json answers with one C-level encode when the value is already canonical; it must agree
    # with the exact path (normalise, then encode) on every value, or raise what the exact path raises.
    from replaykit.core.trace import canonical

    def exact(v: object) -> object:
        try:
            return canonical._CANONICAL_ENCODER.encode(canonical._normalize(v))
        except Exception as exc:  # compared by type
            return type(exc)

    try:
        got: object = canonical_json(value)
    except Exception as exc:
        got = type(exc)
    assert got == exact(value)
