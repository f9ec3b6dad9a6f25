"""Shared helpers for the interop round-trip tests: the fixture runs and a content view of a run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from replaykit.core.trace.run import Run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RUN_FIXTURES = [*sorted((FIXTURES / "hermes").glob("*.jsonl")), FIXTURES / "schema" / "v1.jsonl",
                FIXTURES / "schema" / "v2.jsonl"]


# Provider request-log fixtures, imported into runs by their own importers (then round-tripped like the rest).
PROVIDER_FIXTURES = [
    ("openai-chat", "openai_chat_weather.json"),
    ("openai-chat", "openai_chat_multi.jsonl"),
    ("openai-responses", "openai_responses_reasoning.json"),
    ("anthropic", "anthropic_thinking_tools.json"),
]


def provider_runs() -> list[Run]:
    from replaykit.adapters import provider_logs

    importers = {"openai-chat": provider_logs.import_openai_chat, "anthropic": provider_logs.import_anthropic,
                 "openai-responses": provider_logs.import_openai_responses}
    runs = []
    for fmt, name in PROVIDER_FIXTURES:
        for item in importers[fmt](FIXTURES / "providers" / name):
            runs.append(Run(item.header, item.events))
    return runs


def fixture_runs() -> dict[str, Run]:
    runs = {}
    for path in RUN_FIXTURES:
        run = Run.load(path)
        runs[run.run_id] = run
    return runs


def view(run: Run, *, skip: frozenset[str] = frozenset({"tools"})) -> list[Any]:
    """Everything a run says, without ids, seq numbers and links whose values change on import."""
    out: list[Any] = []
    for event in run.events:
        if event.kind in skip:
            continue
        if event.kind == "llm_call":
            out.append(("llm_call", [m.model_dump(exclude_none=True) for m in run.request_messages(event)],
                        event.request.model_dump(exclude={"context", "tools_ref"}, exclude_none=True),
                        [t.model_dump() for t in run.request_tools(event.request) or []],
                        event.response.model_dump(exclude_none=True),
                        event.model_dump(include={"t", "duration", "provenance", "corr", "provider_details",
                                                  "attempt"}, exclude_none=True)))
        elif event.kind == "error" and event.request is not None:  # type: ignore[union-attr]
            out.append(("error", [m.model_dump(exclude_none=True) for m in run.request_messages(event)],
                        event.model_dump(exclude={"seq", "id", "request"}, exclude_none=True)))
        else:
            out.append(event.model_dump(exclude={"seq", "id", "llm_call_id", "child_run_id"}, exclude_none=True))
    return out


def first_difference(a: list[Any], b: list[Any]) -> str:
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"item {index}:\n  {str(x)[:800]}\n  {str(y)[:800]}"
    return f"lengths {len(a)} != {len(b)}"
