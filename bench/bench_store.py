"""Store append and load throughput against a naive baseline measured in the same run.

Baseline append: ``json.dumps(event) + open(path, "a") + write + close`` per event (what a simple
recorder does). Baseline load: ``json.loads`` of every line, no validation. replaykit's numbers include
pydantic validation on load and one ``os.write`` per event (on disk as it happens) on append.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from replaykit.core.trace.ir import LLMResponse, Message, TextPart, ToolCallPart
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.testing.sample_runs import WEATHER_TOOLS, sample_header

N = 5000


def _events(n: int) -> list[dict]:
    recorder = Recorder(sample_header("proto"))
    messages = [Message(role="user", parts=[TextPart(text="hello")])]
    for i in range(n // 2):
        call = ToolCallPart(id=f"c{i}", name="get_weather", arguments={"city": f"c{i}"})
        event = recorder.llm_call(messages, LLMResponse(message=Message(role="assistant", parts=[call])),
                                  tools=WEATHER_TOOLS)
        recorder.tool_call(call.id, call.name, call.arguments, result="r" * 200, llm_call_id=event.id)
        messages = [*messages, event.response.message]
    return [e.model_dump(mode="json", exclude_none=True) for e in recorder.events]


def bench() -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        docs = _events(N)
        from replaykit.core.trace.ir import EVENT_ADAPTER

        events = [EVENT_ADAPTER.validate_python(d) for d in docs]

        naive = root / "naive.jsonl"
        t0 = time.perf_counter()
        for doc in docs:
            line = json.dumps(doc)
            with open(naive, "a") as handle:
                handle.write(line + "\n")
        naive_append = time.perf_counter() - t0

        store = RunStore(root / "store")
        header = sample_header("bench")
        writer = store.create(header)
        t0 = time.perf_counter()
        for event in events:
            writer.append(event)
        writer.close()
        rk_append = time.perf_counter() - t0
        rows.append({"bench": "store append (events/s)", "replaykit": len(events) / rk_append,
                     "baseline": len(docs) / naive_append, "ratio": naive_append / rk_append,
                     "note": "one write per event, on disk as it happens"})

        t0 = time.perf_counter()
        with open(naive) as handle:
            loaded = [json.loads(line) for line in handle]
        naive_load = time.perf_counter() - t0
        assert len(loaded) == len(docs)
        t0 = time.perf_counter()
        run = Run.load(store.path_for("bench"))
        rk_load = time.perf_counter() - t0
        assert len(run.events) == len(events)
        rows.append({"bench": "store load (events/s)", "replaykit": len(events) / rk_load,
                     "baseline": len(docs) / naive_load, "ratio": naive_load / rk_load,
                     "note": "validated into IR models vs bare json.loads"})
    return rows


def main() -> None:
    rows = bench()
    for row in rows:
        print(f"{row['bench']:<34} replaykit {row['replaykit']:>12,.0f}  baseline {row['baseline']:>12,.0f}  "
              f"ratio {row['ratio']:.2f}x")
    if "--json" in sys.argv:
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
