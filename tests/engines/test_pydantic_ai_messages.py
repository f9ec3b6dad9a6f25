"""IR <-> PydanticAI history: round trips on every fixture, both directions, on the installed major."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai")

from hypothesis import given, settings
from hypothesis import strategies as st

from replaykit.core.errors import ReplaykitError
from replaykit.core.trace.ir import (
    MediaPart,
    Message,
    OpaquePart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from replaykit.core.trace.run import Run
from replaykit.engines.pydantic_ai.engine import replay
from replaykit.engines.pydantic_ai.messages import (
    comparable,
    from_pydantic_ai,
    response_from_pydantic_ai,
    response_to_pydantic_ai,
    to_pydantic_ai,
)
from tests.exporters.pai_fixtures import FIXTURES

ROOT = Path(__file__).resolve().parents[1] / "fixtures"


def _all_runs() -> list[tuple[str, Run]]:
    runs = [(name, make()) for name, make in FIXTURES.items()]
    for path in sorted(ROOT.glob("**/*.jsonl")):  # every stored trace fixture (schema, Hermes recordings)
        try:
            runs.append((str(path.relative_to(ROOT)), Run.load(path)))
        except ReplaykitError:
            continue  # provider logs and other non-trace inputs of the importers
    assert any("hermes" in name for name, _ in runs) or not (ROOT / "hermes").exists()
    return runs


RUNS = _all_runs()


@pytest.mark.parametrize(("name", "run"), RUNS, ids=[n for n, _ in RUNS])
def test_every_request_round_trips(name: str, run: Run) -> None:
    for event in run.llm_calls():
        messages = run.request_messages(event)
        history = to_pydantic_ai(messages)
        assert from_pydantic_ai(history.messages, history.residue) == messages
        # Everything the residue restores is reported, one line per PydanticAI message.
        assert len(history.lost) == len(history.residue)
        assert response_from_pydantic_ai(response_to_pydantic_ai(event.response)) == event.response
    conversation = run.conversation()
    history = to_pydantic_ai(conversation)
    assert from_pydantic_ai(history.messages, history.residue) == conversation


@pytest.mark.parametrize(("name", "run"), RUNS, ids=[n for n, _ in RUNS])
def test_agent_history_round_trips_through_the_ir(name: str, run: Run) -> None:
    if not run.llm_calls():
        pytest.skip("no LLM calls")
    if any(not e.response.message.tool_calls and not e.response.message.text.strip() for e in run.llm_calls()):
        # Known gap: PydanticAI (output_type=str) rejects a blank text answer with a retry, so a recorded
        # blank answer (Hermes's empty-response retries) cannot be served as-is yet.
        pytest.xfail("recorded blank text answer: not servable through Agent(output_type=str) yet")
    history = replay(run).messages  # a real PydanticAI agent's history
    back = to_pydantic_ai(from_pydantic_ai(history))
    assert back.residue == {}  # nothing PydanticAI produced needs the IR side
    strip = [_parts_only(m) for m in comparable(history)]
    assert [_parts_only(m) for m in comparable(back.messages)] == strip


def _parts_only(message: dict) -> dict:
    # Response metadata (usage, model, ids) lives on LLMResponse in the IR, not on a history message.
    return {"kind": message["kind"], "parts": message["parts"], "instructions": message.get("instructions")}


def test_what_pydantic_ai_cannot_hold_is_reported_and_kept() -> None:
    messages = [
        Message(role="developer", parts=[TextPart(text="be brief")], name="ops"),
        Message(role="user", parts=[TextPart(text="hi"), OpaquePart(format="anthropic", data={"x": 1})]),
        Message(role="assistant", parts=[ReasoningPart(text="", encrypted="ENC", redacted=True),
                                         ToolCallPart(id="c1", name="t", arguments=[1, 2])]),
        Message(role="tool", parts=[ToolResultPart(tool_call_id="c1", content="boom", is_error=True)]),
    ]
    history = to_pydantic_ai(messages)
    text = " ".join(history.lost)
    for expected in ("developer role", "message name", "opaque part", "encrypted reasoning",
                     "redacted reasoning", "non-object tool call arguments", "tool result error flag"):
        assert expected in text
    assert from_pydantic_ai(history.messages, history.residue) == messages
    # An edited PydanticAI message no longer matches its fingerprint: the edit wins over the residue.
    from pydantic_ai.messages import ModelRequest, UserPromptPart

    edited = [ModelRequest(parts=[UserPromptPart(content="changed")]), *history.messages[1:]]
    assert from_pydantic_ai(edited, history.residue)[0] == Message(role="user", parts=[TextPart(text="changed")])


def test_pydantic_ai_only_parts_survive_the_ir() -> None:
    from pydantic_ai import messages as m

    history = [
        m.ModelRequest(parts=[m.SystemPromptPart(content="s"), m.UserPromptPart(
            content=["look", m.ImageUrl(url="https://example.com/a.png"), m.BinaryContent(data=b"\x00\x01",
                                                                                        media_type="image/png")])]),
        m.ModelResponse(parts=[m.ThinkingPart(content="hmm", signature="sig", provider_name="anthropic"),
                               m.ToolCallPart(tool_name="t", args={"a": 1}, tool_call_id="c9")]),
        m.ModelRequest(parts=[m.ToolReturnPart(tool_name="t", content={"k": [1, 2]}, tool_call_id="c9")],
                       instructions="follow the rules"),
    ]
    ir = from_pydantic_ai(history)
    instructions = [msg for msg in ir if msg.provider_details == {"pydantic_ai_instructions": True}]
    assert [msg.text for msg in instructions] == ["follow the rules"]
    kinds = [p.type for msg in ir for p in msg.parts]
    assert "media" in kinds and "reasoning" in kinds and "tool_call" in kinds
    back = to_pydantic_ai(ir)
    assert comparable(back.messages) == comparable(history)


_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["system", "developer", "user", "assistant", "tool"]), _text, _text),
                min_size=1, max_size=8))
def test_round_trip_property(items: list[tuple[str, str, str]]) -> None:
    messages: list[Message] = []
    for n, (role, a, b) in enumerate(items):
        if role == "assistant":
            parts: list = [TextPart(text=a), ToolCallPart(id=f"c{n}", name=b or "t", arguments={"q": a},
                                                          raw_arguments=None)]
        elif role == "tool":
            parts = [ToolResultPart(tool_call_id=f"c{n - 1}", name=b or None, content=a)]
        elif role == "user":
            parts = [TextPart(text=a), MediaPart(media_type="image/png", url=f"https://x.test/{n}.png")]
        else:
            parts = [TextPart(text=a)]
        messages.append(Message(role=role, parts=parts))  # type: ignore[arg-type]
    history = to_pydantic_ai(messages)
    assert from_pydantic_ai(history.messages, history.residue) == messages


@pytest.mark.parametrize("name,run", _all_runs(), ids=[n for n, _ in _all_runs()])
def test_memoised_conversion_of_a_runs_requests_is_the_plain_one(name: str, run: Run) -> None:
    """``to_pydantic_ai(request, memo)`` over a run's requests (what ``build_plan`` does, sharing the
    conversion of their common prefix) gives what converting each request alone gives."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    from replaykit.engines.pydantic_ai.messages import to_pydantic_ai

    def plain(history: object) -> object:
        dumped = ModelMessagesTypeAdapter.dump_python(history.messages, mode="json")  # type: ignore[attr-defined]
        return _without_timestamps(dumped)

    memo: dict[object, object] = {}
    hits = 0
    for call in run.llm_calls():
        request = run.request_messages(call)
        before = len(memo)
        shared, alone = to_pydantic_ai(request, memo), to_pydantic_ai(request)
        hits += len(shared.messages) - (len(memo) - before)
        assert plain(shared) == plain(alone)
        assert shared.lost == alone.lost
        assert {k: (v.fingerprint, v.messages, v.reasons) for k, v in shared.residue.items()} == \
            {k: (v.fingerprint, v.messages, v.reasons) for k, v in alone.residue.items()}
    if len(run.llm_calls()) > 1:
        assert hits > 0  # the common prefix was converted once


def _without_timestamps(value: object) -> object:
    if isinstance(value, dict):
        return {k: _without_timestamps(v) for k, v in value.items() if k != "timestamp"}
    if isinstance(value, list):
        return [_without_timestamps(v) for v in value]
    return value
