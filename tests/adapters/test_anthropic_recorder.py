"""Anthropic Messages through the one httpx transport: the real ``anthropic`` client (sync and async,
JSON and streams, tool use, a 429 then success) recorded against the scripted server, then served with
the server stopped; misses explained in Anthropic's own error shape."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import replaykit
from replaykit.adapters.cassette import Cassette
from replaykit.adapters.openai import CassetteMiss
from replaykit.core.trace import codecs
from replaykit.core.trace.canonical import canonical_json
from replaykit.core.trace.ir import ErrorEvent
from replaykit.core.trace.run import Run
from replaykit.testing.scripted_server import ScriptedServer, fail_first
from tests.adapters.recorder_support import FINAL, cli, weather, weather_policy

anthropic = pytest.importorskip("anthropic")

CLOSED = "http://127.0.0.1:9"  # nothing listens there
SYSTEM = "You answer weather questions."
TOOLS = [{"name": "weather", "description": "Current weather of a city.",
          "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]


def _root(srv: ScriptedServer) -> str:
    return srv.base_url.removesuffix("/v1")  # the SDK adds /v1/messages itself


def _next_turn(messages: list[dict[str, Any]], message: Any) -> bool:
    uses = [b for b in message.content if b.type == "tool_use"]
    if not uses:
        return False
    messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in message.content]})
    messages.append({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": u.id, "content": weather(**u.input)} for u in uses]})
    return True


def _text(message: Any) -> str:
    return "".join(b.text for b in message.content if b.type == "text")


def anthropic_agent(root: str, prompt: str = "Weather in Paris?", *, stream: bool = False,
                    max_retries: int = 0) -> str:
    """A hand-written tool loop on ``anthropic.Anthropic``: ``messages.create``, or the ``messages.stream``
    helper (its accumulator reads every event)."""
    client = anthropic.Anthropic(base_url=root, api_key="sk-ant-test", max_retries=max_retries)
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    for _ in range(4):
        kwargs = {"model": "claude-test", "max_tokens": 1024, "system": SYSTEM, "messages": messages,
                  "tools": TOOLS}
        if stream:
            with client.messages.stream(**kwargs) as events:
                message = events.get_final_message()
        else:
            message = client.messages.create(**kwargs)
        if not _next_turn(messages, message):
            return _text(message)
    raise AssertionError("the agent did not finish")


async def async_anthropic_agent(root: str, prompt: str = "Weather in Paris?") -> str:
    client = anthropic.AsyncAnthropic(base_url=root, api_key="sk-ant-test", max_retries=0)
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    for _ in range(4):
        stream = await client.messages.create(model="claude-test", max_tokens=1024, system=SYSTEM,
                                              messages=messages, tools=TOOLS, stream=True)
        blocks: dict[int, dict[str, Any]] = {}
        async for event in stream:  # raw events: assemble by hand, as a delta-handling client does
            if event.type == "content_block_start":
                blocks[event.index] = event.content_block.model_dump(exclude_none=True)
                blocks[event.index]["_json"] = ""
            elif event.type == "content_block_delta" and event.delta.type == "text_delta":
                blocks[event.index]["text"] += event.delta.text
            elif event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                blocks[event.index]["_json"] += event.delta.partial_json
        content = []
        for _, block in sorted(blocks.items()):
            raw = block.pop("_json")
            if block["type"] == "tool_use":
                block["input"] = json.loads(raw)
            content.append(block)
        uses = [b for b in content if b["type"] == "tool_use"]
        if not uses:
            return "".join(b.get("text", "") for b in content)
        messages.append({"role": "assistant", "content": content})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": u["id"], "content": weather(**u["input"])} for u in uses]})
    raise AssertionError("the agent did not finish")


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_recorded_then_served_with_the_server_stopped(tmp_path: Path, stream: bool) -> None:
    path = tmp_path / "anthropic.jsonl"
    with ScriptedServer(weather_policy()) as srv:
        with Cassette(path, "once") as session:
            assert anthropic_agent(_root(srv), stream=stream) == FINAL
        bodies = [r.body for r in srv.llm_requests]
    assert session.counters.recorded == 2 and session.counters.provider_calls == 2
    run = Run.load(path)
    assert [s.kind for s in run.steps] == ["llm", "tool", "llm"]
    calls = run.llm_calls()
    assert [c.request.api for c in calls] == ["anthropic-messages"] * 2
    for event, body in zip(calls, bodies, strict=True):  # each request rebuilds exactly as sent
        rebuilt = codecs.encode_llm_request(event.request, run.request_messages(event),
                                            run.request_tools(event.request)).body
        assert canonical_json(rebuilt) == canonical_json(body)
    tool = run.tool_calls()[0]
    assert tool.name == "weather" and tool.arguments == {"city": "Paris"} and tool.llm_call_id == calls[0].id
    assert run.final_answer == FINAL and run.status == "completed"
    assert bool((calls[0].provider_details or {}).get("streamed")) is stream
    assert ("stream" in (calls[0].response.provider_details or {})) is stream
    assert b"sk-ant-test" not in path.read_bytes()  # the x-api-key header is never recorded

    before = path.read_bytes()
    with Cassette(path, "none") as served:
        assert anthropic_agent(CLOSED, stream=stream) == FINAL
    assert served.counters.served == 2 and served.counters.provider_calls == 0
    assert path.read_bytes() == before
    code, out, _ = cli("replay", str(path), "--json")
    assert code == 0 and json.loads(out)["counters"]["provider_calls"] == 0


def test_anthropic_429_then_success_is_an_error_event_then_the_call(tmp_path: Path) -> None:
    path = tmp_path / "retry.jsonl"
    with ScriptedServer(fail_first(1, weather_policy(), "429", retry_after=0.01)) as srv:
        with Cassette(path, "once") as session:
            assert anthropic_agent(_root(srv), stream=True, max_retries=2) == FINAL
        assert len(srv.llm_requests) == 3  # the 429, its retry, the second turn
    assert session.counters.errors == 1 and session.counters.recorded == 2
    run = Run.load(path)
    errors = [e for e in run.events if isinstance(e, ErrorEvent)]
    assert len(errors) == 1
    error = errors[0]
    assert error.status_code == 429 and error.retryable and error.attempt == 1 and error.where == "llm"
    assert "rate_limit_error" in error.message
    assert run.llm_calls()[0].attempt == 2  # the retry of the same request
    with Cassette(path, "none") as served:  # served: the answer, without the failed attempt
        assert anthropic_agent(CLOSED, stream=True) == FINAL
    assert served.counters.provider_calls == 0 and served.counters.served == 2


def test_anthropic_async_stream_recorded_then_served(tmp_path: Path) -> None:
    path = tmp_path / "async.jsonl"
    with ScriptedServer(weather_policy()) as srv, replaykit.record(path=path):
        assert asyncio.run(async_anthropic_agent(_root(srv))) == FINAL
    with replaykit.serve(path) as session:
        assert asyncio.run(async_anthropic_agent(CLOSED)) == FINAL
    assert session.counters.served == 2 and session.counters.provider_calls == 0


def test_anthropic_miss_explains_in_anthropic_error_shape(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    with ScriptedServer(weather_policy()) as srv, Cassette(path, "once"):
        anthropic_agent(_root(srv))
    cassette = Cassette(path, "none", label="tests/test_x.py::test_weather")
    session = cassette.start()
    try:
        with pytest.raises(anthropic.BadRequestError) as info:
            anthropic_agent(CLOSED, prompt="Weather in Rome?")
    finally:
        cassette.stop()
    message = session.misses[0]
    assert "tests/test_x.py::test_weather" in message and "nearest recorded step 0" in message
    assert "messages[1].parts[0].text: recorded 'Weather in Paris?' vs actual 'Weather in Rome?'" in message
    assert message in str(info.value) and info.value.status_code == 400
    assert session.counters.provider_calls == 0
    with pytest.raises(CassetteMiss), replaykit.serve(path):
        try:
            anthropic_agent(CLOSED, prompt="Weather in Rome?")
        except anthropic.BadRequestError:
            pass  # an agent that swallows the error: the block still fails with the explanation


def test_non_model_anthropic_endpoints_pass_through(tmp_path: Path) -> None:
    """``count_tokens`` and ``models`` are not model calls: they reach the server, and nothing is recorded."""
    path = tmp_path / "c.jsonl"
    with ScriptedServer(weather_policy()) as srv, Cassette(path, "once") as session:
        client = anthropic.Anthropic(base_url=_root(srv), api_key="sk-ant-test", max_retries=0)
        assert client.models.list().data[0].id == "scripted-model"
    assert session.counters.recorded == 0 and session.counters.provider_calls == 0
