"""Benchmark: ``diff_runs`` (sequence alignment + message-level detail) on two long runs that diverge early.

    PYTHONPATH=. python bench/bench_diff.py [--steps 1000] [--repeat 3]

Two 1000-step runs (the long-session shape: a 6 KB system prompt, all history kept, tool results of
250-2,000 characters) that differ in one tool result near the start, so every later request differs
and the diff must say, for each, which message changed and how. Baseline, in the same process: loading
the two runs (``Run.load``), which any diff must do first. A second row diffs a run against a copy of
itself with two steps inserted near the start (alignment must pair every later step).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from replaykit.core.analysis.diff import diff_runs
from replaykit.core.trace.ir import (
    LLMResponse,
    Message,
    RunHeader,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Usage,
)
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.testing.engine_runs import SAMPLE_TOOLS

SYSTEM = "You are a careful assistant. " + "Follow the house rules. " * 260  # about 6 KB


def record(store: RunStore, run_id: str, steps: int, *, changed_at: int | None = None,
           inserted_at: int | None = None) -> Path:
    header = RunHeader(run_id=run_id, created_at="2026-12-01T00:00:00Z", model="m")
    recorder = Recorder(header, store.create(header), keep_events=False)
    messages = [Message(role="system", parts=[TextPart(text=SYSTEM)]),
                Message(role="user", parts=[TextPart(text="Work through the task list.")])]
    calls = list(range(steps // 2))
    if inserted_at is not None:
        calls.insert(inserted_at, -1)
    for n, i in enumerate(calls):
        call = ToolCallPart(id=f"c{n}", name="read_file", arguments={"path": f"f{i}.txt"},
                            raw_arguments=json.dumps({"path": f"f{i}.txt"}))
        answer = Message(role="assistant", parts=[call])
        recorder.llm_call(messages, LLMResponse(message=answer, finish_reason="tool_calls",
                                                usage=Usage(input_tokens=100, output_tokens=10)), tools=SAMPLE_TOOLS)
        size = 250 + (i * 37) % 1750
        result = (f"file {i} " + "lorem ipsum dolor " * 120)[:size]
        if i == changed_at:
            result = "CHANGED " + result
        recorder.tool_call(call.id, call.name, call.arguments, raw_arguments=call.raw_arguments, result=result)
        messages = [*messages, answer,
                    Message(role="tool", parts=[ToolResultPart(tool_call_id=call.id, content=result)])]
    recorder.llm_call(messages, LLMResponse(message=Message(role="assistant", parts=[TextPart(text="done")]),
                                            finish_reason="stop"), tools=SAMPLE_TOOLS)
    recorder.run_end("done")
    recorder.close()
    return store.path_for(run_id)


def _best(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="last line: JSON rows for bench/run_all.py")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore(tmp)
        a = record(store, "a", args.steps)
        b = record(store, "b", args.steps, changed_at=10)
        c = record(store, "c", args.steps, inserted_at=10)
        run_a, run_b, run_c = Run.load(a), Run.load(b), Run.load(c)
        load = _best(lambda: (Run.load(a), Run.load(b)), args.repeat)
        changed = _best(lambda: diff_runs(Run.load(a), Run.load(b)), args.repeat)
        inserted = _best(lambda: diff_runs(Run.load(a), Run.load(c)), args.repeat)
        result_b, result_c = diff_runs(run_a, run_b), diff_runs(run_a, run_c)
        assert result_b.first is not None and result_b.first.cause == "tool_result"
        assert result_c.alignment()["inserted"] == 2 and result_c.alignment()["removed"] == 0
        details = sum(len(d.messages or []) for d in result_b.differences)
        print(f"runs: {len(run_a.steps)} steps, {a.stat().st_size / 1e6:.2f} MB each")
        print(f"baseline: load both runs                         {load * 1e3:9.1f} ms")
        print(f"diff, one early tool result changed (load + diff) {changed * 1e3:9.1f} ms "
              f"({len(result_b.differences)} differences, {details} message changes)  x{changed / load:.2f}")
        print(f"diff, two steps inserted early (load + diff)      {inserted * 1e3:9.1f} ms "
              f"({result_c.alignment()})  x{inserted / load:.2f}")
        if args.json:
            print(json.dumps([
                {"bench": f"diff load+align+messages ms ({args.steps} steps, early change)",
                 "replaykit": round(changed * 1e3, 1), "baseline": round(load * 1e3, 1),
                 "ratio": round(changed / load, 3), "note": "baseline: Run.load of both runs"},
                {"bench": f"diff load+align ms ({args.steps} steps, 2 inserted)",
                 "replaykit": round(inserted * 1e3, 1), "baseline": round(load * 1e3, 1),
                 "ratio": round(inserted / load, 3), "note": "baseline: Run.load of both runs"},
            ]))


if __name__ == "__main__":
    main()
