"""A real PydanticAI agent (1.x in the Hermes venv, 2.x in the latest one) recorded against the scripted
server, then replayed with the server stopped: same output, 0 requests; a changed prompt is explained."""

from __future__ import annotations

import asyncio
import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import replaykit
from replaykit.adapters.cassette import Cassette
from replaykit.adapters.pydantic_ai import record_agent
from replaykit.core.trace.run import Run
from replaykit.testing.scripted_server import ScriptedServer
from tests.adapters.recorder_support import CLOSED_URL, FINAL, cli, weather

pytest.importorskip("pydantic_ai")
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
from pydantic_ai.providers.openai import OpenAIProvider


def make_agent(base_url: str, responses: bool = False) -> Agent[None, str]:
    import openai

    client = openai.AsyncOpenAI(base_url=base_url, api_key="sk-test", max_retries=0)
    provider = OpenAIProvider(openai_client=client)
    model_cls: Any = OpenAIResponsesModel if responses else OpenAIChatModel
    agent: Agent[None, str] = Agent(model_cls("gpt-test", provider=provider), name="weather-agent",
                                    system_prompt="You answer weather questions.")

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """Current weather of a city."""
        return weather(city)

    return agent


def run_agent(agent: Agent[None, str], prompt: str, stream: bool = False) -> str:
    if not stream:
        return agent.run_sync(prompt).output

    async def streamed() -> str:
        async with agent.run_stream(prompt) as result:
            return "".join([piece async for piece in result.stream_text(delta=True)])

    return asyncio.run(streamed())


def policy() -> Any:
    from replaykit.testing.scripted_server import ToolCall, sequence_policy

    return sequence_policy([ToolCall("get_weather", {"city": "Paris"})], final_text=FINAL)


@pytest.mark.parametrize(("responses", "stream"), [(False, False), (False, True), (True, False)])
def test_agent_recorded_then_replayed_offline(tmp_path: Path, responses: bool, stream: bool) -> None:
    path = tmp_path / "pai.jsonl"
    with ScriptedServer(policy()) as srv, Cassette(path, "once", framework="pydantic-ai"):
        assert run_agent(make_agent(srv.base_url, responses), "Weather in Paris?", stream) == FINAL
        sent = len(srv.llm_requests)
    assert sent == 2
    run = Run.load(path)
    assert [s.kind for s in run.steps] == ["llm", "tool", "llm"]
    tool = run.tool_calls()[0]
    assert tool.name == "get_weather" and json.loads(tool.result or "{}")["temp_c"] == 21
    with Cassette(path, "none") as served:
        assert run_agent(make_agent(CLOSED_URL, responses), "Weather in Paris?", stream) == FINAL
    assert served.counters.served == 2 and served.counters.provider_calls == 0

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cassette = Cassette(path, "none", label="test_pai")
        session = cassette.start()
        try:
            with pytest.raises(Exception, match="not in cassette"):
                run_agent(make_agent(CLOSED_URL, responses), "Weather in Rome?", stream)
        finally:
            cassette.stop()
    assert "recorded 'Weather in Paris?' vs actual 'Weather in Rome?'" in session.misses[0]


def test_record_agent_api_and_cli(tmp_path: Path, store_dir: Path) -> None:
    with ScriptedServer(policy()) as srv:
        agent = make_agent(srv.base_url)
        with record_agent(agent, "pai-run") as session:
            assert agent.run_sync("Weather in Paris?").output == FINAL
    assert session.counters.recorded == 2
    run = replaykit.RunStore().load("pai-run")
    assert run.header.source.framework == "pydantic-ai" and run.meta["agent"] == "weather-agent"
    code, out, _ = cli("replay", "pai-run", "--json")
    assert code == 0 and json.loads(out)["counters"]["provider_calls"] == 0
    with replaykit.serve("pai-run"):
        assert make_agent(CLOSED_URL).run_sync("Weather in Paris?").output == FINAL


def test_parallel_tool_calls_recorded_and_served(tmp_path: Path) -> None:
    from replaykit.testing.scripted_server import ToolCall, sequence_policy

    both = [ToolCall("get_weather", {"city": "Paris"}), ToolCall("get_weather", {"city": "Oslo"})]
    path = tmp_path / "parallel.jsonl"
    with ScriptedServer(sequence_policy([both], final_text=FINAL)) as srv, Cassette(path, "once"):
        assert make_agent(srv.base_url).run_sync("Weather in Paris and Oslo?").output == FINAL
    run = Run.load(path)
    assert [s.kind for s in run.steps] == ["llm", "tool", "tool", "llm"]
    first = run.llm_calls()[0]
    calls = {t.call_id: t for t in run.tool_calls()}
    assert set(calls) == {c.id for c in first.response.message.tool_calls}
    assert {json.loads(t.result or "{}")["city"] for t in calls.values()} == {"Paris", "Oslo"}
    assert all(t.llm_call_id == first.id for t in calls.values())
    with Cassette(path, "none") as served:
        assert make_agent(CLOSED_URL).run_sync("Weather in Paris and Oslo?").output == FINAL
    assert served.counters.served == 2 and served.counters.provider_calls == 0


@pytest.mark.parametrize("stream", [False, True])
def test_model_without_http_recorded_by_the_model_wrapper(tmp_path: Path, stream: bool) -> None:
    """A FunctionModel makes no HTTP call: record_agent(wrap_model=True) records at the model."""
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import DeltaToolCall, FunctionModel

    def answer(messages: list[Any], info: Any) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("get_weather", {"city": "Paris"}, tool_call_id="c1")])
        return ModelResponse(parts=[TextPart(FINAL)])

    async def answer_stream(messages: list[Any], info: Any) -> Any:
        if len(messages) == 1:
            yield {0: DeltaToolCall(name="get_weather", json_args='{"city": "Paris"}', tool_call_id="c1")}
        else:
            yield FINAL

    agent: Agent[None, str] = Agent(FunctionModel(answer, stream_function=answer_stream), name="fn-agent")

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """Current weather of a city."""
        return weather(city)

    path = tmp_path / "fn.jsonl"
    with record_agent(agent, path=path, wrap_model=True) as session:
        assert run_agent(agent, "Weather in Paris?", stream) == FINAL
    assert session.counters.recorded == 2 and session.counters.provider_calls == 0
    run = Run.load(path)
    assert [s.kind for s in run.steps] == ["llm", "tool", "llm"] and run.final_answer == FINAL
    assert run.tool_calls()[0].name == "get_weather" and run.tool_calls()[0].llm_call_id == run.llm_calls()[0].id
    assert run.request_messages(run.llm_calls()[0])[-1].text == "Weather in Paris?"
    assert [t.name for t in run.request_tools(run.llm_calls()[0].request) or []] == ["get_weather"]
    assert run.meta["recorded_at"] == "model"
    code, out, _ = cli("replay", str(path), "--json")
    assert code == 0 and json.loads(out)["counters"]["provider_calls"] == 0
