"""The scripted server checks each request against its API's rules (``replaykit.testing.validate``): the
broken rules are on the request's record, and a strict server answers 400 as the provider would."""

from __future__ import annotations

import pytest

from replaykit.testing.script import ReplyList, text
from replaykit.testing.scripted_server import ScriptedServer
from replaykit.testing.validate import check_request


def test_each_anthropic_rule_is_checked() -> None:
    ok = {"max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
    assert check_request("anthropic", ok) == []
    broken = {
        "messages": [
            {"role": "assistant", "content": [{"type": "tool_use", "id": "functions.Bash:0", "name": "x", "input": {}}]},
            {"role": "user", "content": [{"type": "text", "text": ""}, {"type": "tool_result", "tool_use_id": "zz"}]},
            {"role": "user", "content": []},
            {"role": "assistant", "content": [{"type": "thinking", "thinking": "t"}]},
        ],
    }
    found = " | ".join(check_request("anthropic", broken))
    for rule in ("max_tokens: required", "first message must use the user role", "should match pattern",
                 "without tool_result blocks immediately after", "unexpected tool_use_id 'zz'",
                 "tool_result blocks must come first", "text content blocks must be non-empty",
                 "roles must alternate", "non-empty content", "thinking block without a signature"):
        assert rule in found, rule


def test_chat_and_responses_rules() -> None:
    chat = {"messages": [{"role": "user", "content": "x"},
                         {"role": "assistant", "tool_calls": [{"id": "c" * 41, "type": "function",
                                                               "function": {"name": "f", "arguments": "{}"}}]},
                         {"role": "user", "content": "y"}, {"role": "tool", "tool_call_id": "nope", "content": ""}]}
    found = " | ".join(check_request("openai-chat", chat))
    assert "longer than 40 characters" in found and "were not answered" in found and "does not answer" in found
    responses = {"input": [{"type": "function_call_output", "call_id": "c9", "output": "x"},
                           {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
                           {"role": "user", "content": "next"}, {"type": "reasoning", "id": "rs_1", "summary": []}]}
    found = " | ".join(check_request("openai-responses", responses))
    assert "no function_call found for call_id 'c9'" in found and "no tool output found" in found
    assert "reasoning item without the item that followed it" in found


def test_a_strict_server_refuses_as_the_provider_would() -> None:
    anthropic = pytest.importorskip("anthropic")
    with ScriptedServer(ReplyList([text("hi")], then=lambda r: text("hi")), strict=True) as srv:
        client = anthropic.Anthropic(base_url=srv.base_url[:-3], api_key="x", max_retries=0)
        with pytest.raises(anthropic.BadRequestError, match="roles must alternate"):
            client.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "a"},
                                                                      {"role": "user", "content": "b"}])
        reply = client.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "a"}])
        assert reply.content[0].text == "hi"
        assert [bool(r.violations) for r in srv.llm_requests] == [True, False]
    with ScriptedServer(ReplyList([text("hi")])) as lenient:  # not strict: answered, the broken rule still recorded
        client = anthropic.Anthropic(base_url=lenient.base_url[:-3], api_key="x", max_retries=0)
        client.messages.create(model="m", max_tokens=5, messages=[{"role": "assistant", "content": "a"}])
        assert lenient.violations == [(0, "messages[0]: the first message must use the user role")]
