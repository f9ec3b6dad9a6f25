"""Property: any Gemini or Bedrock request body of the shapes the APIs take decodes and re-encodes to
itself (canonical JSON), and re-encodes the same way again from what it decoded to (the live model
records a sent body that way)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replaykit.core.trace import codecs
from replaykit.core.trace.canonical import canonical_json

TEXT = st.text(max_size=30)  # any unicode, NUL and lone surrogates included
NAME = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True)
ID = st.from_regex(r"[A-Za-z0-9_-]{1,20}", fullmatch=True)
B64 = st.binary(min_size=1, max_size=12).map(lambda b: __import__("base64").b64encode(b).decode())
JSONV = st.recursive(st.none() | st.booleans() | st.integers() | TEXT,
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAME, inner, max_size=3), max_leaves=6)
ARGS = st.dictionaries(NAME, JSONV, max_size=3)
EXTRA = st.dictionaries(st.sampled_from(["partMetadata", "videoMetadata"]), st.dictionaries(NAME, TEXT, max_size=1),
                        max_size=1)


def _sig(part: dict[str, Any], sig: str | None) -> dict[str, Any]:
    return {**part, "thoughtSignature": sig} if sig is not None else part


GEMINI_MODEL_PART = st.one_of(
    st.builds(lambda t, s, e: _sig({"text": t, **e}, s), TEXT, st.none() | B64, EXTRA),
    st.builds(lambda t, s: _sig({"text": t, "thought": True}, s), TEXT, st.none() | B64),
    st.builds(lambda n, a, i, s: _sig({"functionCall": {"name": n, "args": a, **({"id": i} if i else {})}}, s),
              NAME, ARGS, st.none() | ID, st.none() | B64),
    st.builds(lambda c: {"executableCode": {"language": "PYTHON", "code": c}}, TEXT),
)
GEMINI_USER_PART = st.one_of(
    st.builds(lambda t: {"text": t}, TEXT),
    st.builds(lambda m, d: {"inlineData": {"mimeType": m, "data": d}}, st.sampled_from(["image/png", "audio/wav"]), B64),
    st.builds(lambda u: {"fileData": {"mimeType": "application/pdf", "fileUri": "gs://b/" + u}}, NAME),
    st.builds(lambda n, r, i: {"functionResponse": {"name": n, "response": r, **({"id": i} if i else {})}},
              NAME, st.one_of(st.builds(lambda t: {"output": t}, TEXT), st.builds(lambda t: {"error": t}, TEXT),
                              st.dictionaries(NAME, JSONV, max_size=3)), st.none() | ID),
)


@st.composite
def gemini_bodies(draw: Any) -> dict[str, Any]:
    contents = []
    for turn in range(draw(st.integers(1, 5))):
        if turn % 2 == 0:
            contents.append({"role": "user", "parts": draw(st.lists(GEMINI_USER_PART, min_size=1, max_size=3))})
        else:
            contents.append({"role": "model", "parts": draw(st.lists(GEMINI_MODEL_PART, min_size=1, max_size=3))})
    body: dict[str, Any] = {"contents": contents}
    if draw(st.booleans()):
        body["systemInstruction"] = {"parts": [{"text": draw(TEXT)}]}
    if draw(st.booleans()):
        body["tools"] = [{"functionDeclarations": [{"name": draw(NAME), "description": draw(TEXT),
                                                    "parameters": {"type": "OBJECT", "properties": {
                                                        "q": {"type": "STRING"}}}}]}, {"googleSearch": {}}]
    if draw(st.booleans()):
        body["generationConfig"] = {"temperature": 0.5, "maxOutputTokens": draw(st.integers(1, 9000))}
    return body


BEDROCK_USER_BLOCK = st.one_of(
    st.builds(lambda t: {"text": t}, TEXT),
    st.builds(lambda f, d: {"image": {"format": f, "source": {"bytes": d}}}, st.sampled_from(["png", "jpeg", "webp"]), B64),
    st.builds(lambda i, c, s: {"toolResult": {"toolUseId": i, "content": c, **({"status": s} if s else {})}},
              ID, st.lists(st.one_of(st.builds(lambda t: {"text": t}, TEXT), st.builds(lambda j: {"json": j}, ARGS)),
                           min_size=1, max_size=2), st.none() | st.sampled_from(["success", "error"])),
    st.just({"cachePoint": {"type": "default"}}),
)
BEDROCK_ASSISTANT_BLOCK = st.one_of(
    st.builds(lambda t: {"text": t}, TEXT),
    st.builds(lambda i, n, a: {"toolUse": {"toolUseId": i, "name": n, "input": a}}, ID, NAME, ARGS),
    st.builds(lambda t, s: {"reasoningContent": {"reasoningText": {"text": t, **({"signature": s} if s else {})}}},
              TEXT, st.none() | B64),
    st.builds(lambda d: {"reasoningContent": {"redactedContent": d}}, B64),
)


@st.composite
def bedrock_bodies(draw: Any) -> dict[str, Any]:
    messages = []
    for turn in range(draw(st.integers(1, 5))):
        role, blocks = ("user", BEDROCK_USER_BLOCK) if turn % 2 == 0 else ("assistant", BEDROCK_ASSISTANT_BLOCK)
        messages.append({"role": role, "content": draw(st.lists(blocks, min_size=1, max_size=3))})
    body: dict[str, Any] = {"messages": messages}
    if draw(st.booleans()):
        body["system"] = [{"text": draw(TEXT)}, {"cachePoint": {"type": "default"}}]
    if draw(st.booleans()):
        body["toolConfig"] = {"tools": [{"toolSpec": {"name": draw(NAME), "description": draw(TEXT),
                                                      "inputSchema": {"json": {"type": "object"}}}}],
                              "toolChoice": {"auto": {}}}
    if draw(st.booleans()):
        body["inferenceConfig"] = {"maxTokens": draw(st.integers(1, 9000))}
    return body


def _round_trip(api: str, body: dict[str, Any]) -> None:
    decoded = codecs.decode_request(api, body)
    encoded = codecs.encode_request(api, decoded.messages, decoded.tools, decoded.params)
    assert encoded.losses == []
    assert canonical_json(encoded.body) == canonical_json(body)
    again = codecs.decode_request(api, encoded.body)
    assert canonical_json(codecs.encode_request(api, again.messages, again.tools, again.params).body) == \
        canonical_json(body)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gemini_bodies())
def test_gemini_bodies_round_trip(body: dict[str, Any]) -> None:
    _round_trip("google-gemini", body)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bedrock_bodies())
def test_bedrock_bodies_round_trip(body: dict[str, Any]) -> None:
    _round_trip("bedrock-converse", body)
