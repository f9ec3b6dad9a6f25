"""A corpus of realistic, varied runs for the corpus pipeline's tests and benchmark.

``write_corpus(store, n, seed=...)`` writes ``n`` runs ``corpus-00000 ...`` whose shape is drawn from a
seeded random generator: several user turns, a long system prompt, 8 tools with results of 250-2,000
characters, all history kept (each request is the previous one plus the new messages), several
models, and the trouble a reviewer looks for in some of them (tool failures, retried provider
errors, loops of the same call, length truncations, an exhausted iteration budget, failed subagents),
plus personal data and secrets for the redaction pass to find. ``steps`` sets the size of each run
(the benchmark's long-session shape is ``steps=50`` with a 6 KB system prompt).

The same seed gives the same runs (same content, same shape); event ids are fresh per write.
"""

from __future__ import annotations

import random
from pathlib import Path

from replaykit.core.trace.ir import (
    LLMResponse,
    Message,
    RunHeader,
    Source,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    Usage,
)
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.store import RunStore

TOOL_NAMES = ("read_file", "write_file", "search_files", "terminal", "web_search", "web_fetch", "todo", "memory")
TOOLS = [
    ToolSpec(name=name, description=f"The {name.replace('_', ' ')} tool.",
             parameters={"type": "object", "properties": {"arg": {"type": "string"}, "n": {"type": "integer"}},
                         "required": ["arg"]})
    for name in TOOL_NAMES
]
MODELS = ("gpt-4o-mini", "gpt-4o", "claude-sonnet-4-5", "hermes-4-70b")
# Where each model is served (priced by genai-prices; a self-hosted model stays of unknown cost).
PROVIDERS = {
    "gpt-4o-mini": ("openai", "https://api.openai.com/v1"),
    "gpt-4o": ("openai", "https://api.openai.com/v1"),
    "claude-sonnet-4-5": ("anthropic", "https://api.anthropic.com/v1"),
    "hermes-4-70b": ("custom", "http://127.0.0.1:8000/v1"),
}
PEOPLE = ("John Smith", "Priya Patel", "Wei Zhang", "Ana Lucia Oliveira", "Maria Garcia")
WORDS = ("deploy", "config", "invoice", "report", "cluster", "schema", "budget", "release", "ticket", "cache",
         "latency", "backup", "migration", "customer", "endpoint", "metrics")


class _Clock:
    """A fake clock so durations look like a real session's (seconds per LLM call, ms per tool)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _system_prompt(rng: random.Random, size: int) -> str:
    lines = ["You are a careful software agent. Follow the rules below.", "Today is 2026-11-30."]
    while sum(len(line) + 1 for line in lines) < size:
        lines.append(f"- Rule {len(lines)}: when you {rng.choice(WORDS)} the {rng.choice(WORDS)}, check the "
                     f"{rng.choice(WORDS)} first and report the {rng.choice(WORDS)} to the user.")
    return "\n".join(lines)[:size]


def _result(rng: random.Random, tool: str, arg: str) -> str:
    size = rng.randint(250, 2000)
    person = rng.choice(PEOPLE)
    head = (f"{tool}({arg}): owner {person} <{person.split()[0].lower()}@example.com>, "
            f"call +1 415 555 01{rng.randint(10, 99)}. ")
    body: list[str] = []
    while len(head) + sum(len(b) for b in body) < size:
        body.append(f"{rng.choice(WORDS)} {rng.choice(WORDS)} {rng.randint(0, 9999)}; ")
    return (head + "".join(body))[:size]


def write_run(store: RunStore, run_id: str, rng: random.Random, *, steps: int = 12,
              system_prompt_size: int = 1500) -> Path:
    """One run of about ``steps`` steps (LLM calls + tool calls) in 1-4 user turns."""
    clock = _Clock()
    model = rng.choice(MODELS)
    header = RunHeader(run_id=run_id, created_at="2026-11-30T12:00:00.000000Z", model=model,
                       provider=PROVIDERS[model][0], base_url=PROVIDERS[model][1], title=f"corpus run {run_id}",
                       source=Source(framework="hermes" if rng.random() < 0.7 else "pydantic-ai",
                                     adapter="replaykit.testing.corpus_runs"))
    trouble = {
        "tool_failures": rng.random() < 0.25,
        "retry": rng.random() < 0.15,
        "loop": rng.random() < 0.1,
        "truncated": rng.random() < 0.08,
        "budget": rng.random() < 0.05,
        "subagent_fail": rng.random() < 0.05,
    }
    with store.create(header) as writer:
        rec = Recorder(header, writer, keep_events=False, clock=clock)
        messages = [Message(role="system", parts=[TextPart(text=_system_prompt(rng, system_prompt_size))])]
        turns = rng.randint(1, 4)
        per_turn = max(2, steps // turns)
        done = 0
        loop_arg = f"{rng.choice(WORDS)}.txt"
        for turn in range(turns):
            person = rng.choice(PEOPLE)
            user = Message(role="user", parts=[TextPart(
                text=f"Hi, I'm {person}. Please {rng.choice(WORDS)} the {rng.choice(WORDS)} "
                     f"(my key is sk-proj-{rng.getrandbits(128):032x}).")])
            messages.append(user)
            rec.turn_start(user, turn=turn)
            budget_hit = trouble["budget"] and turn == turns - 1
            while done + 2 < (turn + 1) * per_turn or (budget_hit and done < (turn + 1) * per_turn):
                clock.now += rng.uniform(0.5, 3.0)
                if trouble["retry"] and done == 0:
                    rec.error("Error code: 500 - upstream overloaded", where="llm", status_code=500,
                              retryable=True, attempt=1, error_type="InternalServerError")
                tool = "read_file" if trouble["loop"] and done >= 2 else rng.choice(TOOL_NAMES)
                arg = loop_arg if trouble["loop"] and done >= 2 else f"{rng.choice(WORDS)}/{rng.randint(1, 99)}"
                call = ToolCallPart(id=f"call_{done}", name=tool, arguments={"arg": arg})
                think = Message(role="assistant", parts=[TextPart(text=f"Let me {tool} {arg}."), call])
                event = rec.llm_call(
                    messages,
                    LLMResponse(message=think, finish_reason="tool_calls", model=model,
                                usage=Usage(input_tokens=sum(len(m.text) for m in messages) // 4 + 50,
                                            output_tokens=rng.randint(20, 120))),
                    tools=TOOLS, model=model, duration=rng.uniform(0.5, 3.0),
                    attempt=2 if trouble["retry"] and done == 0 else 1)
                failed = trouble["tool_failures"] and rng.random() < 0.3
                result = f"Error: {tool} failed: permission denied" if failed else _result(rng, tool, arg)
                clock.now += rng.uniform(0.01, 0.5)
                rec.tool_call(call.id, tool, {"arg": arg}, result=result, status="error" if failed else "ok",
                              error=result if failed else None, llm_call_id=event.id,
                              duration=rng.uniform(0.01, 0.5))
                messages = [*messages, think,
                            Message(role="tool", parts=[ToolResultPart(tool_call_id=call.id, name=tool,
                                                                       content=result, is_error=failed)])]
                done += 2
            if budget_hit:
                rec.turn_end(None, status="interrupted", reason="max_iterations_reached (90)", sync=False)
                break
            if trouble["subagent_fail"] and turn == 0:
                rec.subagent("start", child_run_id=f"{run_id}-child", goal="look it up", role="leaf")
                rec.subagent("stop", child_run_id=f"{run_id}-child", status="failed", summary="timed out")
            truncated = trouble["truncated"] and turn == turns - 1
            answer = f"Done: the {rng.choice(WORDS)} is {rng.choice(WORDS)}. Contact {person} if needed."
            reply = Message(role="assistant", parts=[TextPart(text=answer)])
            clock.now += rng.uniform(0.5, 3.0)
            rec.llm_call(messages, LLMResponse(message=reply, finish_reason="length" if truncated else "stop",
                                               model=model,
                                               usage=Usage(input_tokens=sum(len(m.text) for m in messages) // 4,
                                                           output_tokens=len(answer) // 4)),
                         tools=TOOLS, model=model, duration=rng.uniform(0.5, 3.0))
            messages.append(reply)
            done += 1
            rec.turn_end(answer, sync=False)
        rec.run_end(None, status="interrupted" if trouble["budget"] else "completed",
                    reason="max_iterations_reached" if trouble["budget"] else None)
    return store.path_for(run_id)


def write_corpus(store: RunStore, n: int, *, seed: int = 7, steps: int = 12, system_prompt_size: int = 1500,
                 prefix: str = "corpus") -> list[Path]:
    """``n`` runs ``<prefix>-00000 ...`` in ``store`` (see the module docstring)."""
    store.ensure()
    rng = random.Random(seed)  # noqa: S311  # test data, not a secret
    return [write_run(store, f"{prefix}-{i:05d}", random.Random(rng.getrandbits(64)), steps=steps,  # noqa: S311
                      system_prompt_size=system_prompt_size) for i in range(n)]
