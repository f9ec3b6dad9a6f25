"""Provider-log importers: conversations become runs whose requests are exactly reconstructable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replaykit.adapters import provider_logs
from replaykit.core.errors import BadInput, ReplaykitError
from replaykit.core.trace import codecs
from replaykit.core.trace.canonical import canonical_json
from replaykit.core.trace.ir import LLMCallEvent, Provenance, ToolCallEvent
from replaykit.core.trace.run import Run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "providers"


def as_run(imported: provider_logs.ImportedRun) -> Run:
    run = Run(imported.header, imported.events)
    run.check_references()
    return run


def test_chat_import_reproduces_every_implied_request() -> None:
    path = FIXTURES / "openai_chat_weather.json"
    body = json.loads(path.read_text())
    [imported] = provider_logs.import_openai_chat(path)
    run = as_run(imported)
    assert run.header.source.framework == "openai-chat" and run.header.lineage is None
    assert run.header.model == "gpt-4o-2024-08-06"
    kinds = [s.event.kind for s in run.steps]
    assert kinds == ["llm_call", "tool_call", "tool_call", "llm_call"]
    assert all(e.provenance == Provenance.RECONSTRUCTED for e in run.events if e.kind != "tools")
    for call in run.llm_calls():
        # The request the conversation implies: the messages before the assistant message, plus the
        # body's model, tools and params: encoded back it equals the original body's prefix exactly.
        encoded = codecs.encode_llm_request(call.request, run.request_messages(call), run.request_tools(call.request))
        assert encoded.losses == []
        n = len(run.request_messages(call))
        assert canonical_json(encoded.body) == canonical_json({**body, "messages": body["messages"][:n]})
    tools = run.tool_calls()
    assert [t.call_id for t in tools] == ["call_9pQ2xL1Tz0", "call_Kd83mZq7Yc"]
    assert tools[0].raw_arguments == '{"city": "Paris", "unit": "celsius"}'
    assert tools[0].llm_call_id == run.llm_calls()[0].id
    assert run.final_answer == "Paris: 18 °C with light rain. Tokyo: 24 °C and sunny."
    assert run.status == "completed"


def test_jsonl_is_several_runs_and_request_deltas_stay_small() -> None:
    runs = provider_logs.import_openai_chat(FIXTURES / "openai_chat_multi.jsonl")
    assert len(runs) == 2
    second = as_run(runs[1])
    calls = second.llm_calls()
    assert len(calls) == 3
    assert calls[1].request.context.base == calls[0].id  # delta-encoded, not re-stored
    assert len(calls[2].request.context.append) == 2
    statuses = [t.status for t in second.tool_calls()]
    assert statuses == ["ok", "ok"]


def test_anthropic_import_marks_tool_errors() -> None:
    [imported] = provider_logs.import_anthropic(FIXTURES / "anthropic_thinking_tools.json")
    run = as_run(imported)
    assert run.header.source.framework == "anthropic"
    tools = run.tool_calls()
    assert [t.status for t in tools] == ["error", "ok"]
    assert tools[0].error is not None and "does not exist" in tools[0].error
    assert run.failing_step == 1
    first = run.llm_calls()[0]
    assert first.request.api == "anthropic-messages"
    body = json.loads((FIXTURES / "anthropic_thinking_tools.json").read_text())
    encoded = codecs.encode_llm_request(first.request, run.request_messages(first), run.request_tools(first.request))
    assert canonical_json(encoded.body) == canonical_json({**body, "messages": body["messages"][:1]})


def test_responses_import_uses_output_items() -> None:
    [imported] = provider_logs.import_openai_responses(FIXTURES / "openai_responses_reasoning.json")
    run = as_run(imported)
    assert [s.event.kind for s in run.steps] == ["llm_call", "tool_call", "tool_call", "llm_call"]
    last = run.llm_calls()[-1]
    assert isinstance(last, LLMCallEvent) and "Madrid is warmer" in last.response.message.text
    reasoning = last.response.message.parts[0]
    assert reasoning.type == "reasoning" and reasoning.encrypted
    assert all(isinstance(t, ToolCallEvent) and t.result for t in run.tool_calls())


@pytest.mark.parametrize(("content", "needle"), [
    (b"", "empty"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe garbage", "UTF-8"),
    (b"{not json", "not valid JSON"),
    (b"[1, 2]", "array"),
    (b'{"messages": "nope"}', "messages"),
    (b'{"messages": [{"role": "tool", "tool_call_id": "ghost", "content": "x"}]}', "answers no"),
    (b'{"messages": [{"role": "wizard", "content": "x"}]}', "role"),
])
def test_bad_input_is_one_clear_line(tmp_path: Path, content: bytes, needle: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(BadInput) as info:
        provider_logs.import_openai_chat(path)
    message = str(info.value)
    assert needle in message and "\n" not in message


def test_bad_anthropic_and_responses(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_x", "content": "x"}]}]}))
    with pytest.raises(ReplaykitError, match="answers no"):
        provider_logs.import_anthropic(path)
    path.write_text(json.dumps({"model": "o4-mini"}))
    with pytest.raises(ReplaykitError, match="input"):
        provider_logs.import_openai_responses(path)
