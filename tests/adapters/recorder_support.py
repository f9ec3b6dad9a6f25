"""Shared pieces of the recorder / cassette tests: a scripted weather agent on the raw openai client."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

from replaykit.testing.scripted_server import ToolCall, sequence_policy

#: A closed port: a request that tried to leave the process would fail to connect.
CLOSED_URL = "http://127.0.0.1:9/v1"
FINAL = "Sunny in Paris, 21 C."
TOOLS = [{"type": "function", "function": {
    "name": "weather", "description": "Current weather of a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
RESP_TOOLS = [{"type": "function", "name": "weather", "description": "Current weather of a city.",
               "parameters": TOOLS[0]["function"]["parameters"]}]


def weather_policy(final: str = FINAL) -> Any:
    return sequence_policy([ToolCall("weather", {"city": "Paris"})], final_text=final)


def weather(city: str) -> str:
    return json.dumps({"city": city, "temp_c": 21})


def chat_agent(base_url: str, prompt: str = "Weather in Paris?", *, stream: bool = False) -> str:
    """A hand-written tool loop on ``openai.OpenAI`` (Chat Completions), streamed or not."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="sk-test", max_retries=0)
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You answer weather questions."},
                                      {"role": "user", "content": prompt}]
    for _ in range(4):
        if stream:
            text, calls = _read_stream(client.chat.completions.create(
                model="gpt-test", messages=messages, tools=TOOLS, stream=True,
                stream_options={"include_usage": True}))
        else:
            message = client.chat.completions.create(model="gpt-test", messages=messages, tools=TOOLS) \
                .choices[0].message
            text = message.content or ""
            calls = [{"id": c.id, "type": "function",
                      "function": {"name": c.function.name, "arguments": c.function.arguments}}
                     for c in message.tool_calls or []]
        if not calls:
            return text
        messages.append({"role": "assistant", "content": text or None, "tool_calls": calls})
        for call in calls:
            args = json.loads(call["function"]["arguments"])
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": weather(**args)})
    raise AssertionError("the agent did not finish")


def _read_stream(stream: Any) -> tuple[str, list[dict[str, Any]]]:
    text = ""
    calls: dict[int, dict[str, Any]] = {}
    for chunk in stream:
        for choice in chunk.choices:
            text += choice.delta.content or ""
            for frag in choice.delta.tool_calls or []:
                call = calls.setdefault(frag.index, {"id": None, "type": "function",
                                                     "function": {"name": None, "arguments": ""}})
                call["id"] = call["id"] or frag.id
                if frag.function is not None:
                    call["function"]["name"] = call["function"]["name"] or frag.function.name
                    call["function"]["arguments"] += frag.function.arguments or ""
    return text, [calls[i] for i in sorted(calls)]


async def async_chat_agent(base_url: str, prompt: str) -> str:
    import openai

    client = openai.AsyncOpenAI(base_url=base_url, api_key="sk-test", max_retries=0)
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    for _ in range(4):
        message = (await client.chat.completions.create(model="gpt-test", messages=messages, tools=TOOLS)) \
            .choices[0].message
        if not message.tool_calls:
            return message.content or ""
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": weather(**json.loads(call.function.arguments)) + prompt[-1]})
    raise AssertionError("the agent did not finish")


def responses_agent(base_url: str, prompt: str = "Weather in Paris?", *, stream: bool = False) -> str:
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="sk-test", max_retries=0)
    items: list[Any] = [{"role": "user", "content": prompt}]
    for _ in range(4):
        if stream:
            response = None
            for event in client.responses.create(model="gpt-test", input=items, tools=RESP_TOOLS, stream=True):
                if event.type == "response.completed":
                    response = event.response
            assert response is not None
        else:
            response = client.responses.create(model="gpt-test", input=items, tools=RESP_TOOLS)
        calls = [o for o in response.output if o.type == "function_call"]
        if not calls:
            return response.output_text
        for call in calls:
            items.append(call.model_dump(exclude_none=True))
            items.append({"type": "function_call_output", "call_id": call.call_id,
                          "output": weather(**json.loads(call.arguments))})
    raise AssertionError("the agent did not finish")


def cli(*args: str) -> tuple[int, str, str]:
    """``replaykit ARGS`` in-process: (exit code, stdout, stderr)."""
    from replaykit.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)
