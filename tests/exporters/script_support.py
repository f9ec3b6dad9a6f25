"""Helpers for the standalone-script tests: IR runs built with the real Recorder, and running a
generated script in-process (compile + exec, as ``python run.py`` would) or as a subprocess."""

from __future__ import annotations

import io
import itertools
import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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
from replaykit.core.trace.run import Run

SEARCH = ToolSpec(name="search", description="search the web",
                  parameters={"type": "object", "properties": {"q": {"type": "string"}}})


def make_run(rounds: int = 2, run_id: str = "demo-run", *, answer: str = "done",
             results: list[str] | None = None, user: str = "find things", model: str = "m1",
             tick: float = 0.25) -> Run:
    """A small agent run: ``rounds`` x (model asks for search -> tool answers), then a final answer.
    Every recorder clock reading advances by ``tick`` seconds."""
    clock = itertools.count(0, tick)
    rec = Recorder(
        RunHeader(run_id=run_id, created_at="2026-11-30T19:00:00Z", model=model, provider="p1",
                  source=Source(framework="hermes", framework_version="0.19.0")),
        clock=lambda: next(clock),
    )
    messages = [Message(role="system", parts=[TextPart(text="You are helpful.")]),
                Message(role="user", parts=[TextPart(text=user)])]
    rec.turn_start(messages[1])
    for i in range(rounds):
        call = ToolCallPart(id=f"call_{i}", name="search", arguments={"q": f"query {i}"})
        response = LLMResponse(message=Message(role="assistant", parts=[call]), finish_reason="tool_calls",
                               usage=Usage(input_tokens=100 + i, output_tokens=10), model=model)
        event = rec.llm_call(messages, response, tools=[SEARCH], model=model, duration=tick / 2)
        result = results[i] if results else f"result {i}"
        rec.tool_call(call.id, "search", {"q": f"query {i}"}, result=result, llm_call_id=event.id, duration=tick / 4)
        messages = [*messages, response.message,
                    Message(role="tool", parts=[ToolResultPart(tool_call_id=call.id, name="search", content=result)])]
    final = LLMResponse(message=Message(role="assistant", parts=[TextPart(text=answer)]), finish_reason="stop",
                        usage=Usage(input_tokens=200, output_tokens=20), model=model)
    rec.llm_call(messages, final, tools=[SEARCH], model=model, duration=tick / 2)
    rec.run_end(answer)
    return Run(rec.header, rec.events)


@contextmanager
def int_digits_unbounded() -> Iterator[None]:
    previous = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(previous)


def load_script(source: str, filename: str = "run.py") -> dict[str, Any]:
    """Compile and execute a generated script as a module (not as __main__): its namespace."""
    code = compile(source, filename, "exec", dont_inherit=True)
    namespace: dict[str, Any] = {"__name__": "replaykit_generated_script", "__file__": filename}
    exec(code, namespace)
    return namespace


def call_main(namespace: dict[str, Any], argv: list[str]) -> tuple[int, bytes, str]:
    """Run the script's ``main(argv)`` capturing stdout bytes and stderr text."""
    out = io.BytesIO()
    wrapper = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    err = io.StringIO()
    saved = sys.stdout, sys.stderr, sys.get_int_max_str_digits()
    sys.stdout, sys.stderr = wrapper, err
    try:
        code = namespace["main"](argv)
        wrapper.flush()
        data = out.getvalue()
    finally:
        sys.stdout, sys.stderr = saved[0], saved[1]
        sys.set_int_max_str_digits(saved[2])
    return code, data, err.getvalue()


def run_script(path: Path, *args: str, env: dict[str, str] | None = None,
               timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``python -I run.py ARGS``: isolated mode, so nothing but the standard library is importable."""
    return subprocess.run([sys.executable, "-I", str(path), *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


def masked(document: dict[str, Any]) -> dict[str, Any]:
    """A replay document without its wall-clock fields (replay_duration, every t_replay)."""
    doc = json.loads(json.dumps(document))
    doc.pop("replay_duration", None)
    for key in ("steps", "timing"):
        for row in doc.get(key, []):
            row.pop("t_replay", None)
    return doc
