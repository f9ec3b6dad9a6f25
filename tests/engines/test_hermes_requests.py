"""The Hermes engine's request rewrites, checked by the fingerprint the cursor matches with: the recorded
system prompt (or none), Anthropic's error flag on failed tool results, and a multimodal user turn. The
real-agent plays that need them are tests/interop/test_atif.py (v1.8) and the conformance cell
hermes x import/anthropic."""

from __future__ import annotations

from typing import Any

import pytest

from replaykit.core.trace.canonical import fingerprint
from replaykit.core.trace.codecs import decode_request
from replaykit.core.trace.ir import MediaPart, Message, TextPart
from replaykit.engines.hermes.driver import mark_tool_errors, pin_system, user_content

HERMES_SYSTEM = "You are Hermes Agent, ..."
USER = "Summarise this chart."


def _request(api: str) -> dict[str, Any]:
    if api == "openai-chat":
        return {"model": "m", "messages": [{"role": "system", "content": HERMES_SYSTEM},
                                           {"role": "user", "content": USER}]}
    key = "instructions" if api == "openai-responses" else "system"
    messages = [{"role": "user", "content": USER}]
    return {"model": "m", key: HERMES_SYSTEM, ("input" if api == "openai-responses" else "messages"): messages}


def _fingerprint(api: str, request: dict[str, Any]) -> str:
    body = {k: v for k, v in request.items() if k != "model"}
    return fingerprint(decode_request(api, body).messages)


@pytest.mark.parametrize("api", ["openai-chat", "openai-responses", "anthropic-messages"])
def test_a_record_without_a_system_prompt_gets_none(api: str) -> None:
    recorded = fingerprint([Message(role="user", parts=[TextPart(text=USER)])])
    request = _request(api)
    assert _fingerprint(api, request) != recorded
    pinned = pin_system(api, request, None)
    assert pinned is not None and _fingerprint(api, pinned) == recorded
    assert pin_system(api, pinned, None) is None  # nothing left to drop


@pytest.mark.parametrize("api", ["openai-chat", "openai-responses", "anthropic-messages"])
def test_the_recorded_system_prompt_replaces_hermes_own(api: str) -> None:
    recorded = fingerprint([Message(role="system", parts=[TextPart(text="be brief")]),
                            Message(role="user", parts=[TextPart(text=USER)])])
    pinned = pin_system(api, _request(api), "be brief")
    assert pinned is not None and _fingerprint(api, pinned) == recorded


def test_failed_tool_results_carry_anthropic_error_flag() -> None:
    request = {"messages": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "sql", "input": {}},
                                          {"type": "tool_use", "id": "t2", "name": "sql", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ERROR"},
                                     {"type": "tool_result", "tool_use_id": "t2", "content": "ok"}]},
    ]}
    flagged = mark_tool_errors(request, {"t1"})
    assert flagged is not None
    results = decode_request("anthropic-messages", flagged).messages[-1].parts
    assert [getattr(p, "is_error", None) for p in results] == [True, False]
    assert "is_error" not in request["messages"][2]["content"][0]  # the caller's request is not mutated
    assert mark_tool_errors(flagged, {"t1"}) is None and mark_tool_errors(request, set()) is None


def test_a_user_turn_with_an_image_goes_to_hermes_as_content_parts() -> None:
    image = MediaPart(media_type="image/png", url="https://example.invalid/chart.png")
    turn = Message(role="user", parts=[TextPart(text=USER), image])
    content = user_content(turn)
    assert isinstance(content, list)
    # What Hermes sends in chat mode carries the same parts: the request fingerprints as the record's.
    sent = decode_request("openai-chat", {"messages": [{"role": "user", "content": content}]}).messages
    assert fingerprint(sent) == fingerprint([turn])
    assert user_content(Message(role="user", parts=[TextPart(text=USER)])) == USER
