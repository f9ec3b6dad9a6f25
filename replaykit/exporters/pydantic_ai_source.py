"""``replaykit export RUN --format pydantic-ai -o agent.py``: a readable, runnable PydanticAI module.

The generated module defines the agent, one Python function per recorded tool (returning the recorded
result, ready to be replaced with real code) and the recorded history, and replays the run offline
with a ``FunctionModel`` serving the recorded responses. It needs only ``pydantic_ai`` (not replaykit).

Safety: every piece of trace content (messages, tool names, descriptions, schemas, results) lives in
one data literal, ``DATA = json.loads(<str literal>)``, written with ``repr`` of a JSON string, so no
trace content can ever become syntax. Function names are derived from tool names but reduced to
``tool_<ascii identifier>`` (made unique); the tool's real name is read from ``DATA``. The result is
compiled before it is written, and written 0600.
"""

from __future__ import annotations

import json
import keyword
import re
from typing import Any

from replaykit.core.trace.run import Run
from replaykit.engines.pydantic_ai import compat

_HEADER = '''"""PydanticAI agent exported by replaykit (the run id is DATA["run_id"]).

Run it:  python THIS_FILE.py   (offline: the model is served from the recorded responses)
Port it: replace the bodies of the tool functions below with real code, and pass a real model
         (e.g. OpenAIChatModel) to build_agent().

All recorded data (history, responses, tool schemas and results) is in DATA below.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from pydantic_ai import Agent, Tool
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import UsageLimits

DATA: dict[str, Any] = json.loads({data_literal})

'''

_FOOTER = '''

IMPLEMENTATIONS = {{
{impl_lines}
}}


def recorded_result(tool_index: int, tool_call_id: str | None) -> str:
    """The result the tool returned in the recording for this call."""
    results = DATA["tools"][tool_index]["results"]
    if tool_call_id in results:
        return str(results[tool_call_id])
    return "[not recorded] this call does not appear in the recording"


def build_tools() -> list[Tool]:
    tools = []
    for index, spec in enumerate(DATA["tools"]):
        tools.append(Tool.from_schema(
            IMPLEMENTATIONS[index], name=spec["name"], description=spec["description"],
            json_schema=spec["parameters"], takes_ctx=True,
        ))
    return tools


def recorded_responses() -> Any:
    """A model function serving the recorded responses in order (fresh copies, recorded usage)."""
    responses = ModelMessagesTypeAdapter.validate_python(DATA["responses"])
    position = [0]

    def serve_recorded(messages: list[Any], info: AgentInfo) -> ModelResponse:
        if position[0] >= len(responses):
            return ModelResponse(parts=[TextPart(content="")])  # the recording ended here
        response = copy.deepcopy(responses[position[0]])
        position[0] += 1
        return response

    return serve_recorded


def build_agent(model: Any = None) -> Agent:
    """The agent. Without a model it replays the recording; pass a real model to run it live."""
    if model is None:
        model = FunctionModel(recorded_responses(), model_name=DATA["model"] or "recorded")
    return Agent(model, output_type=str, tools=build_tools(), retries=3)


def recorded_history() -> list[Any]:
    """The history a replay of this run produces (what run() returns)."""
    return ModelMessagesTypeAdapter.validate_python(DATA["history"])


def run(model: Any = None) -> list[Any]:
    """Replay every agent run of the recording; returns the last run's full message history."""
    agent = build_agent(model)
    messages: list[Any] = []
    for turn in DATA["turns"]:
        start = ModelMessagesTypeAdapter.validate_python(turn)
        result = agent.run_sync(None, message_history=start, usage_limits=UsageLimits(request_limit=None))
        # backslashreplace: a lone surrogate (legal in JSON) is shown as its escape, not a crash
        print(str(result.output).encode("utf-8", "backslashreplace").decode("utf-8"))
        messages = result.all_messages()
    return messages


if __name__ == "__main__":
    run()
'''

_TOOL = '''

async def {func}(ctx: Any, **arguments: Any) -> str:
    """Recorded tool DATA["tools"][{index}]: returns the recorded result. Replace with real code."""
    return recorded_result({index}, ctx.tool_call_id)
'''


def _identifier(name: str, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_]", "_", name)[:60].strip("_") or "tool"
    candidate = f"tool_{base}"
    if keyword.iskeyword(candidate) or not candidate.isidentifier():
        candidate = "tool_"
    unique = candidate
    n = 2
    while unique in taken:
        unique = f"{candidate}_{n}"
        n += 1
    taken.add(unique)
    return unique


def build_data(run: Run) -> dict[str, Any]:
    """The one data literal: tools with results, the served responses, each agent run's start history,
    and the history the replay produces."""
    compat.require()
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    from replaykit.engines.pydantic_ai.engine import replay
    from replaykit.engines.pydantic_ai.plan import build_plan

    plan = build_plan(run)
    result = replay(run)
    dump = ModelMessagesTypeAdapter.dump_python
    tools = []
    for spec in plan.tools:
        results = {cid: (e.result or "") for cid, e in plan.tool_events.items() if e.name == spec.name}
        tools.append({"name": spec.name, "description": spec.description or "",
                      "parameters": spec.parameters or {"type": "object", "properties": {}}, "results": results})
    return {
        "run_id": run.run_id,
        "model": run.model,
        "tools": tools,
        "responses": dump([c.response for c in plan.calls], mode="json"),
        "turns": [dump(plan.calls[s.first].history.messages, mode="json") for s in plan.segments],
        "history": dump(result.messages, mode="json"),
        "lost": plan.lost,
    }


def render(run: Run, **_options: Any) -> str:
    data = build_data(run)
    text = json.dumps(data, ensure_ascii=True, sort_keys=True)
    taken: set[str] = set()
    funcs = [_identifier(tool["name"], taken) for tool in data["tools"]]
    source = _HEADER.format(
                            data_literal=repr(text))
    for index, func in enumerate(funcs):
        source += _TOOL.format(func=func, index=index)
    impl_lines = "\n".join(f"    {index}: {func}," for index, func in enumerate(funcs))
    source += _FOOTER.format(impl_lines=impl_lines)
    return source


def summarize(run: Run, source: str) -> dict[str, Any]:
    """What ``replaykit export --json`` reports besides path and bytes."""
    data = build_data(run)
    return {"tools": len(data["tools"]), "llm_calls": len(data["responses"]), "turns": len(data["turns"]),
            "lost": data["lost"]}
