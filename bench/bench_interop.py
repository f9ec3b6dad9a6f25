"""ATIF and OTLP export / import of the long-session workload, against loading the same run from the store.

Workload: ``bench/long_session.py`` (product.md's long session: 1000 steps, 100 user turns, a 6 KB system
prompt, 8 tools, tool results of 250-2,000 characters, all history kept), recorded by the Hermes plugin. Baseline: ``Run.load`` of its trace file (validated
read, measured in the same process). Sizes are compared with the trace file: ATIF stays linear (only
the difference of each request travels); OTLP with content repeats the whole history on every chat span,
as the GenAI conventions define ``gen_ai.input.messages``.

    python bench/bench_interop.py [--json]
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from replaykit.adapters.atif import import_atif
from replaykit.adapters.otel import import_otel
from replaykit.core.trace.run import Run
from replaykit.exporters import export

sys.path.insert(0, str(Path(__file__).resolve().parent))
from long_session import write_long_session_run  # the shared workload generator

STEPS = 1000

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
        trace = write_long_session_run(root / "long.jsonl", STEPS)
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
