"""ATIF and OTLP export / import of the long-session workload, against loading the same run from the store.

Workload (product.md): a 1000-step Hermes-like session of 100 user turns, a 6 KB system prompt, 8 tools,
tool results of 250-2,000 characters, all history kept. Baseline: ``Run.load`` of its trace file (validated
read, measured in the same process). Sizes are compared with the trace file: ATIF stays linear (only
the difference of each request travels); OTLP with content repeats the whole history on every chat span,
as the GenAI conventions define ``gen_ai.input.messages``.

    python bench/bench_interop.py [--json]
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from pathlib import Path

from replaykit.adapters.atif import import_atif
from replaykit.adapters.otel import import_otel
from replaykit.core.ir import LLMResponse, Message, TextPart, ToolCallPart, ToolResultPart, ToolSpec, Usage
from replaykit.core.recorder import Recorder
from replaykit.core.run import Run
from replaykit.core.store import RunStore
from replaykit.exporters import export
from replaykit.testing.sample_runs import sample_header

# 100 turns of 4 or 5 tool round trips and one answer: 50 x 9 + 50 x 11 = 1000 steps.
TURNS = 100
TOOLS = [ToolSpec(name=f"tool_{i}", description=f"Tool number {i}", parameters={
    "type": "object", "properties": {"path": {"type": "string"}, "n": {"type": "integer"}}}) for i in range(8)]


def record(store: RunStore) -> str:
    rng = random.Random(7)
    header = sample_header("interop-bench")
    recorder = Recorder(header, store.create(header), keep_events=False)
    messages = [Message(role="system", parts=[TextPart(text=("You are a careful agent. " * 250)[:6000])])]
    for turn in range(TURNS):
        user = Message(role="user", parts=[TextPart(text=f"Task {turn}: read the files and summarise.")])
        recorder.turn_start(user, turn=turn)
        messages = [*messages, user]
        for k in range(4 + turn % 2):
            call = ToolCallPart(id=f"call_{turn}_{k}", name=f"tool_{k % 8}", arguments={"path": f"f{turn}_{k}", "n": k})
            answer = Message(role="assistant", parts=[call])
            event = recorder.llm_call([*messages], LLMResponse(message=answer, finish_reason="tool_calls",
                                                               usage=Usage(input_tokens=1000, output_tokens=20)),
                                      tools=TOOLS, model="m", duration=0.2)
            result = "".join(rng.choice("abcdefgh ") for _ in range(rng.randint(250, 2000)))
            recorder.tool_call(call.id, call.name, call.arguments, result=result, llm_call_id=event.id, duration=0.01)
            messages = [*messages, answer, Message(role="tool", parts=[ToolResultPart(
                tool_call_id=call.id, name=call.name, content=result)])]
        final = Message(role="assistant", parts=[TextPart(text=f"Summary of task {turn}.")])
        recorder.llm_call([*messages], LLMResponse(message=final, finish_reason="stop"), tools=TOOLS, model="m")
        recorder.turn_end(final.text)
        messages = [*messages, final]
    recorder.run_end("done")
    recorder.close()
    return header.run_id


def best(fn, repeat: int = 3) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def bench() -> list[dict[str, object]]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        store = RunStore(root / "store")
        run_id = record(store)
        trace = store.path_for(run_id)
        run = Run.load(trace)
        steps = len(run.steps)
        load = best(lambda: Run.load(trace))
        rows: list[dict[str, object]] = []
        cases = [("atif", lambda p: export(run, "atif", p), import_atif, 3),
                 ("otel (no content)", lambda p: export(run, "otel", p), import_otel, 3),
                 ("otel --include-content", lambda p: export(run, "otel", p, include_content=True), import_otel, 1)]
        for name, write, read, repeat in cases:
            out = root / "out.json"

            def write_once(out: Path = out, write=write) -> None:  # type: ignore[no-untyped-def]
                out.unlink(missing_ok=True)
                write(out)

            exported = best(write_once, repeat)
            imported = best(lambda out=out, read=read: read(out), repeat)
            size = out.stat().st_size
            rows.append({"bench": f"{name} export, {steps}-step run (s)", "replaykit": round(exported, 4),
                         "baseline": round(load, 4), "ratio": round(exported / load, 2),
                         "note": "baseline: Run.load of the same trace"})
            rows.append({"bench": f"{name} import (s)", "replaykit": round(imported, 4), "baseline": round(load, 4),
                         "ratio": round(imported / load, 2), "note": "baseline: Run.load of the same trace"})
            rows.append({"bench": f"{name} file size (bytes)", "replaykit": size, "baseline": trace.stat().st_size,
                         "ratio": round(size / trace.stat().st_size, 2), "note": "baseline: the trace file"})
        return rows


def main() -> int:
    rows = bench()
    if "--json" in sys.argv:
        print(json.dumps(rows))
    else:
        for row in rows:
            print(f"{row['bench']:<50} {row['replaykit']:>12} {row['baseline']:>12} x{row['ratio']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
