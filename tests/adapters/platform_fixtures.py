"""Documents in the platforms' own shapes, written with their SDKs' objects (LangSmith here; Langfuse's are
committed under tests/fixtures/platforms, written by make_langfuse.py; Inspect AI's are built in its test).

LangSmith: two traces of one thread, dumped the way ``Client.list_runs`` hands them out (``langsmith.schemas.Run``
objects, ``model_dump(mode="json")``).

- a LangChain agent: a real chat model (LangChain's ``GenericFakeChatModel``) and a real ``@tool``, inside a
  ``RunnableLambda``, traced by LangChain's own ``LangChainTracer`` (messages serialised by ``dumpd``,
  ``LLMResult`` generations, the tool's ``ToolMessage`` output);
- an OpenAI-wrapper trace built from LangSmith's ``RunTree`` with the shapes ``wrap_openai`` writes (the
  request body as inputs, the ``ChatCompletion`` as outputs, built with openai's own types), two parallel
  tool calls of which one failed, and the token counts and cost the server adds.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

THREAD = "thread-1"
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Current weather for a city.",
                                           "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                          "required": ["city"]}}}]


def _as_listed(run: Any) -> dict[str, Any]:
    """A run as ``Client.list_runs`` returns it: a ``langsmith.schemas.Run``, dumped to JSON."""
    from langsmith import schemas

    fields = run.model_dump(exclude={"child_runs"})
    listed = schemas.Run(**{k: v for k, v in fields.items() if k in schemas.Run.model_fields})
    out: dict[str, Any] = listed.model_dump(mode="json")
    return out


def _flat(run: Any) -> list[Any]:
    return [run, *(r for child in run.child_runs or [] for r in _flat(child))]


def langchain_trace(question: str = "What's the weather in Paris?") -> list[dict[str, Any]]:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
    from langchain_core.runnables import RunnableConfig, RunnableLambda
    from langchain_core.tools import tool
    from langchain_core.tracers.langchain import LangChainTracer
    from langsmith import Client

    class Collected(LangChainTracer):
        """LangChain's own tracer, keeping the finished tree instead of posting it."""

        roots: list[Any]

        def _persist_run(self, run: Any) -> None:
            self.roots.append(run)

        def _persist_run_single(self, run: Any) -> None:
            pass

        @staticmethod
        def _update_run_single(run: Any) -> None:
            pass

    @tool
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return f"sunny, 18 C in {city}"

    model = GenericFakeChatModel(messages=iter([
        AIMessage(content="", tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1",
                                           "type": "tool_call"}],
                  usage_metadata={"input_tokens": 52, "output_tokens": 9, "total_tokens": 61}),
        AIMessage(content="It is sunny and 18 C in Paris.")]))

    def agent(text: str, config: RunnableConfig) -> str:
        messages: list[Any] = [SystemMessage("You are a weather assistant."), HumanMessage(text)]
        while True:
            answer = model.invoke(messages, config, tools=TOOLS)
            messages.append(answer)
            if not answer.tool_calls:
                return str(answer.content)
            for call in answer.tool_calls:
                messages.append(get_weather.invoke(call, config))

    tracer = Collected(client=Client(api_url="http://127.0.0.1:9", api_key="test-not-a-key", auto_batch_tracing=False))
    tracer.roots = []
    RunnableLambda(agent).invoke(question, {"callbacks": [tracer], "metadata": {"thread_id": THREAD},
                                            "run_name": "weather-agent"})
    return [_as_listed(r) for r in _flat(tracer.roots[0])]


def openai_trace(start: dt.datetime | None = None) -> list[dict[str, Any]]:
    from langsmith.run_trees import RunTree
    from openai.types.chat import ChatCompletion

    t0 = start or dt.datetime(2026, 12, 1, 10, 0, tzinfo=dt.UTC)

    def at(seconds: float) -> dt.datetime:
        return t0 + dt.timedelta(seconds=seconds)

    def completion(ident: str, message: dict[str, Any], finish: str, usage: tuple[int, int]) -> dict[str, Any]:
        return ChatCompletion.model_validate({
            "id": ident, "object": "chat.completion", "created": 1796306568, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "finish_reason": finish, "message": message}],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}},
        ).model_dump()

    def call(call_id: str, city: str) -> dict[str, Any]:
        return {"id": call_id, "type": "function",
                "function": {"name": "get_weather", "arguments": json.dumps({"city": city})}}

    system = {"role": "system", "content": "You are a weather assistant."}
    user = {"role": "user", "content": "Compare Paris and Lyon."}
    asked = {"role": "assistant", "content": None, "tool_calls": [call("call_a", "Paris"), call("call_b", "Lyon")]}
    results = [{"role": "tool", "tool_call_id": "call_a", "content": "sunny, 18 C"},
               {"role": "tool", "tool_call_id": "call_b", "content": "Error: TimeoutError('weather service')"}]
    final = {"role": "assistant", "content": "Paris is sunny at 18 C; Lyon's weather is unavailable."}
    metadata = {"thread_id": THREAD, "ls_provider": "openai", "ls_model_name": "gpt-4o-mini", "ls_method": "traceable"}

    root = RunTree(name="compare", run_type="chain", inputs={"question": user["content"]}, start_time=at(0),
                   extra={"metadata": {"thread_id": THREAD}})
    first = root.create_child(name="ChatOpenAI", run_type="llm", start_time=at(0.1), extra={"metadata": metadata},
                              inputs={"messages": [system, user], "model": "gpt-4o-mini", "tools": TOOLS,
                                      "temperature": 0})
    first.end(outputs=completion("chatcmpl-1", asked, "tool_calls", (80, 30)), end_time=at(0.8))
    paris = root.create_child(name="get_weather", run_type="tool", inputs={"city": "Paris"}, start_time=at(0.9),
                              extra={"metadata": {"thread_id": THREAD}})
    paris.end(outputs={"output": "sunny, 18 C"}, end_time=at(1.0))
    lyon = root.create_child(name="get_weather", run_type="tool", inputs={"city": "Lyon"}, start_time=at(0.95),
                             extra={"metadata": {"thread_id": THREAD}})
    lyon.end(error="TimeoutError('weather service')", end_time=at(3.0))
    second = root.create_child(name="ChatOpenAI", run_type="llm", start_time=at(3.1), extra={"metadata": metadata},
                               inputs={"messages": [system, user, asked, *results], "model": "gpt-4o-mini",
                                       "tools": TOOLS, "temperature": 0})
    second.end(outputs=completion("chatcmpl-2", final, "stop", (140, 16)), end_time=at(3.6))
    root.end(outputs={"output": final["content"]}, end_time=at(3.7))
    runs = [_as_listed(r) for r in _flat(root)]
    for run in runs:  # what the server adds to llm runs: token counts and cost
        if run["run_type"] == "llm":
            usage = run["outputs"]["usage"]
            run.update(prompt_tokens=usage["prompt_tokens"], completion_tokens=usage["completion_tokens"],
                       total_tokens=usage["total_tokens"], total_cost="0.0000321")
    return runs
