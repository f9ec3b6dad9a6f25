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
from replaykit.exporters._embed import embedded_modules

_HEADER = '''"""PydanticAI agent exported by replaykit (the run id is DATA["run_id"]).

Run it:  python THIS_FILE.py   (offline: the model is served from the recorded responses; exit 0 when
         the replay did what the recording did, 1 with one screen naming the first difference)
Port it: replace the bodies of the tool functions below with real code (each gets the call's
         arguments as keyword arguments); a body returning the recorded result conforms, one that
         returns anything else fails naming the tool, step, expected and actual result. Pass a real
         model (e.g. OpenAIChatModel) to build_agent() to run it live.

All recorded data (history, responses, tool schemas and results) is in DATA below.
"""

from __future__ import annotations

import contextvars
import copy
import inspect
import json
import sys
from typing import Any

from pydantic_ai import Agent, Tool
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import UsageLimits

DATA: dict[str, Any] = json.loads(@@DATA@@)

'''

_FOOTER = '''

IMPLEMENTATIONS = {
@@IMPLEMENTATIONS@@
}

# ------------------------------------------------------------------------------------ embedded
# replaykit.core.replay.tool_conformance and replaykit.engines.pydantic_ai.behaviour, verbatim: the check
# of a tool body you wrote against the record, and what a history did (timing and ids left out).
@@EMBEDDED@@


# ---------------------------------------------------------------------------------- the replay
class ToolMismatch(Exception):
    """A tool body you wrote returned another result than the recording (the message says where)."""


_STUB_CALLS: contextvars.ContextVar[list[bool] | None] = contextvars.ContextVar("stub_calls", default=None)
MISMATCHES: list[str] = []  # what the tool bodies got wrong, in call order
RAN_FOR_REAL: list[str] = []  # the tools whose body ran and matched the record, one entry per call


def recorded_result(tool_index: int, tool_call_id: str | None) -> str:
    """The result the tool returned in the recording for this call."""
    stub_calls = _STUB_CALLS.get()
    if stub_calls is not None:
        stub_calls.append(True)  # answered from the recording: nothing ran for real
    results = DATA["tools"][tool_index]["results"]
    if tool_call_id in results:
        return str(results[tool_call_id])
    return "[not recorded] this call does not appear in the recording"


def checked(tool_index: int, function: Any) -> Any:
    """The tool as the agent calls it: your function, then its result compared with the recording."""

    async def tool(ctx: Any, **arguments: Any) -> str:
        stub_calls: list[bool] = []
        token = _STUB_CALLS.set(stub_calls)
        try:
            value = function(ctx, **arguments)
            if inspect.isawaitable(value):
                value = await value
            actual, failed = result_text(value), False
        except Exception as exc:  # the model sees the error, as in the real agent
            actual, failed = f"Error: {type(exc).__name__}: {exc}", True
        finally:
            _STUB_CALLS.reset(token)
        spec = DATA["tools"][tool_index]
        call_id = ctx.tool_call_id
        if call_id in spec["results"] and not stub_calls:
            expected = str(spec["results"][call_id])
            if agrees(actual, expected, actual_error=failed, expected_error=call_id in spec["errors"]):
                RAN_FOR_REAL.append(spec["name"])
            else:
                where = spec["where"][call_id]
                MISMATCHES.append(mismatch_text(spec["name"], where["step"], where["turn"], call_id, arguments,
                                                expected, actual))
        return actual

    return tool


def build_tools() -> list[Tool]:
    tools = []
    for index, spec in enumerate(DATA["tools"]):
        tools.append(Tool.from_schema(
            checked(index, IMPLEMENTATIONS[index]), name=spec["name"], description=spec["description"],
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
    """The history a replay of this run produces (compare it with run()'s through behaviour())."""
    return ModelMessagesTypeAdapter.validate_python(DATA["history"])


def behaviour(messages: list[Any]) -> list[Any]:
    """What a history did: ``behaviour(run()) == behaviour(recorded_history())`` when the replay did what
    the recording did (timestamps, durations, ids and usage estimates left out)."""
    return behaviour_of_dump(ModelMessagesTypeAdapter.dump_python(messages, mode="json"))


def run(model: Any = None) -> list[Any]:
    """Replay every agent run of the recording; returns the last run's full message history. Raises
    ToolMismatch when a tool body you wrote returned another result than the recording."""
    agent = build_agent(model)
    messages: list[Any] = []
    MISMATCHES.clear()
    RAN_FOR_REAL.clear()
    for turn in DATA["turns"]:
        start = ModelMessagesTypeAdapter.validate_python(turn)
        result = agent.run_sync(None, message_history=start, usage_limits=UsageLimits(request_limit=None))
        if MISMATCHES:
            raise ToolMismatch(MISMATCHES[0])
        # backslashreplace: a lone surrogate (legal in JSON) is shown as its escape, not a crash
        print(str(result.output).encode("utf-8", "backslashreplace").decode("utf-8"))
        messages = result.all_messages()
    return messages


def main() -> int:
    """Replay offline: 0 when the replay did what the recording did, 1 (one screen) when not."""
    try:
        history = run()
    except ToolMismatch as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if behaviour(history) != behaviour(recorded_history()):
        print("error: the replay's history differs from the recording's", file=sys.stderr)
        return 1
    if RAN_FOR_REAL:
        print(f"ran for real and matched the record: {', '.join(sorted(set(RAN_FOR_REAL)))} "
              f"({len(RAN_FOR_REAL)} calls)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''

_TOOL = '''

async def @@FUNC@@(ctx: Any, **arguments: Any) -> str:
    """Recorded tool DATA["tools"][@@INDEX@@]: returns the recorded result. Replace with real code."""
    return recorded_result(@@INDEX@@, ctx.tool_call_id)
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
    turn_of = _turns_of_events(run)
    for spec in plan.tools:
        events = {cid: e for cid, e in plan.tool_events.items() if e.name == spec.name}
        tools.append({"name": spec.name, "description": spec.description or "",
                      "parameters": spec.parameters or {"type": "object", "properties": {}},
                      "results": {cid: (e.result or "") for cid, e in events.items()},
                      "errors": sorted(cid for cid, e in events.items() if e.status == "error"),
                      "where": {cid: {"step": plan.tool_steps[cid], "turn": turn_of.get(e.id, 1)}
                                for cid, e in events.items()}})
    return {
        "run_id": run.run_id,
        "model": run.model,
        "tools": tools,
        "responses": dump([c.response for c in plan.calls], mode="json"),
        "turns": [dump(plan.calls[s.first].history.messages, mode="json") for s in plan.segments],
        "history": dump(result.messages, mode="json"),
        "lost": plan.lost,
    }


def _turns_of_events(run: Run) -> dict[str, int]:
    """Event id -> the user turn (1-based) it happened in."""
    turn = 0
    out: dict[str, int] = {}
    for event in run.events:
        if event.kind == "turn_start":
            turn += 1
        out[event.id] = max(turn, 1)
    return out


def render(run: Run, **_options: Any) -> str:
    from replaykit.core.replay import tool_conformance
    from replaykit.engines.pydantic_ai import behaviour

    data = build_data(run)
    _LAST_SUMMARY[:] = [run, _summary(data)]  # what ``summarize`` reports, without a second replay
    text = json.dumps(data, ensure_ascii=True, sort_keys=True)
    taken: set[str] = set()
    funcs = [_identifier(tool["name"], taken) for tool in data["tools"]]
    # Placeholders are filled in one pass each, data last: nothing inserted is searched again.
    source = _HEADER.replace("@@DATA@@", repr(text))
    for index, func in enumerate(funcs):
        source += _TOOL.replace("@@FUNC@@", func).replace("@@INDEX@@", str(index))
    impl_lines = "\n".join(f"    {index}: {func}," for index, func in enumerate(funcs))
    embedded = "\n\n".join(embedded_modules([tool_conformance, behaviour]))
    return source + _FOOTER.replace("@@IMPLEMENTATIONS@@", impl_lines).replace("@@EMBEDDED@@", embedded)


#: [run, summary] of the last ``render``: ``render_export`` asks for the summary right after rendering,
#: and building the data replays the whole run
_LAST_SUMMARY: list[Any] = []


def _summary(data: dict[str, Any]) -> dict[str, Any]:
    return {"tools": len(data["tools"]), "llm_calls": len(data["responses"]), "turns": len(data["turns"]),
            "lost": data["lost"]}


def summarize(run: Run, source: str) -> dict[str, Any]:
    """What ``replaykit export --json`` reports besides path and bytes."""
    if _LAST_SUMMARY and _LAST_SUMMARY[0] is run:
        return dict(_LAST_SUMMARY[1])
    return _summary(build_data(run))
