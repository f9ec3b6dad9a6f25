"""A scripted candidate for ``replaykit eval`` tests and benchmarks: it answers each run's requests with
that run's recorded answers (so an unchanged candidate reproduces the record), except where a behaviour
is planted for that run.

    policy = mirror_policy(runs, {"corpus-00003": Plant("tool_argument", step=1)})
    with ScriptedServer(policy) as srv: ...

A request is matched to its run by the run's system prompt and first user message, and to the recorded
LLM call by the number of assistant messages it already holds (the history a recorded loop replays).
Stdlib and replaykit only.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from replaykit.core.trace.ir import LLMResponse
from replaykit.core.trace.run import Run
from replaykit.testing.script import Policy, Reply, ScriptRequest, ToolCall, fault, text

PlantKind = Literal["identical", "tool_argument", "final_answer", "extra_tool", "429", "stall", "401"]
#: The tool the ``extra_tool`` plant calls: no recorded run holds it.
EXTRA_TOOL = "eval_extra_lookup"
DIFFERENT_ANSWER = "A different answer altogether."


@dataclass(frozen=True)
class Plant:
    """``tool_argument``: the first tool call of LLM call ``step`` gets an extra argument;
    ``final_answer``: the last LLM call answers ``DIFFERENT_ANSWER``; ``extra_tool``: before its last
    answer the candidate calls ``EXTRA_TOOL`` once; ``429``: the run's first ``count`` requests get a 429
    with ``Retry-After: retry_after``; ``stall``: its first request's stream stalls; ``401``: every request
    of the run is refused."""

    kind: PlantKind = "identical"
    step: int = 0
    count: int = 2
    retry_after: float = 0.3
    stall_seconds: float = 3.0


def _key(system: str, first_user: str) -> str:
    return f"{system[:400]}\0{first_user}"


def _reply(response: LLMResponse) -> Reply:
    message = response.message
    calls = tuple(ToolCall(c.name, c.raw_arguments if c.arguments is None and c.raw_arguments else
                           (c.arguments or {}), c.id) for c in message.tool_calls)
    usage = response.usage
    counts = None
    if usage is not None and usage.input_tokens is not None and usage.output_tokens is not None:
        counts = {"prompt_tokens": usage.input_tokens, "completion_tokens": usage.output_tokens,
                  "total_tokens": usage.input_tokens + usage.output_tokens}
    return Reply(text=message.text or None, tool_calls=calls, usage=counts)


class _RunScript:
    def __init__(self, run: Run, plant: Plant) -> None:
        self.responses = [e.response for e in run.llm_calls()]
        self.plant = plant
        self.requests = 0


def _assistant_turns(body: Mapping[str, Any]) -> tuple[int, bool]:
    """(assistant messages that are not the planted extra call, whether the extra call was made)."""
    count, extra = 0, False
    for message in body.get("messages") or ():
        if not isinstance(message, Mapping) or message.get("role") != "assistant":
            continue
        names = [((c.get("function") or {}).get("name")) for c in message.get("tool_calls") or ()]
        if EXTRA_TOOL in names:
            extra = True
        else:
            count += 1
    return count, extra


def mirror_policy(runs: Iterable[Run], plants: Mapping[str, Plant] | None = None,
                  unknown: Reply | None = None) -> Policy:
    """A policy answering every run of ``runs`` from its record, with ``plants`` (run id -> Plant)."""
    plants = plants or {}
    scripts: dict[str, _RunScript] = {}
    for run in runs:
        llm = run.llm_calls()
        if not llm:
            continue
        messages = run.request_messages(llm[0])
        system = next((m.text for m in messages if m.role in ("system", "developer")), "")
        first_user = next((m.text for m in messages if m.role == "user"), "")
        scripts[_key(system, first_user)] = _RunScript(run, plants.get(run.run_id, Plant()))
    lock = threading.Lock()

    def policy(request: ScriptRequest) -> Reply:
        script = scripts.get(_key(request.system_text, request.first_user_text))
        if script is None:
            return unknown or text("no recorded run matches this request")
        plant = script.plant
        with lock:
            script.requests += 1
            seen = script.requests
        if plant.kind == "401":
            return fault("401")
        if plant.kind == "429" and seen <= plant.count:
            return fault("429", retry_after=plant.retry_after)
        if plant.kind == "stall" and seen == 1:
            return fault("stall", stall_after_chunks=1, stall_seconds=plant.stall_seconds)
        index, extra_made = _assistant_turns(request.body)
        if index >= len(script.responses):
            return text("past the end of the record")
        last = len(script.responses) - 1
        if plant.kind == "extra_tool" and index == last and not extra_made:
            return Reply(tool_calls=(ToolCall(EXTRA_TOOL, {"query": "anything else?"}),))
        reply = _reply(script.responses[index])
        if plant.kind == "final_answer" and index == last:
            return Reply(text=DIFFERENT_ANSWER, usage=reply.usage)
        if plant.kind == "tool_argument" and index == plant.step and reply.tool_calls:
            first = reply.tool_calls[0]
            arguments = first.arguments if isinstance(first.arguments, Mapping) else json.loads(first.arguments or "{}")
            changed = ToolCall(first.name, {**arguments, "eval_changed": 1}, first.id)
            return Reply(text=reply.text, tool_calls=(changed, *reply.tool_calls[1:]), usage=reply.usage)
        return reply

    return policy
