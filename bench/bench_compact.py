"""Compacted runs (``replaykit compact``) on the long session: size against the unique content, and what
reading a compacted run costs against reading the plain file, measured in the same run.

Rows: the plain trace and the compacted one over the session's unique content (issue 27: plain at most
2.5x, compacted at most 0.5x); lzma of the same file for scale (not used: slower to read); the CPU of
``json.loads`` of every line and of the streaming ``inspect`` pass, plain vs compacted; the compaction
itself.

    PYTHONPATH=$PWD python bench/bench_compact.py [--steps 1000] [--json]
"""

from __future__ import annotations

import argparse
import json
import lzma
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from long_session import SESSION_ID, unique_content_bytes, write_long_session_run

TARGET_PLAIN = 2.5
TARGET_COMPACT = 0.5


def _cpu(fn: Callable[[], Any], repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def _loads_every_line(path: Path) -> int:
    from replaykit.core.trace.store_index import open_trace_file

    handle = open_trace_file(path)
    try:
        return sum(1 for line in iter(handle.readline, b"") if json.loads(line))
    finally:
        handle.close()


def bench(steps: int) -> list[dict[str, Any]]:
    from replaykit.core.analysis.inspect_view import inspect_trace
    from replaykit.core.trace.compact import compact_run

    rows: list[dict[str, Any]] = []
    unique = unique_content_bytes(steps)
    with tempfile.TemporaryDirectory() as tmp:
        plain = write_long_session_run(Path(tmp) / "plain" / f"hermes-{SESSION_ID}.jsonl", steps)
        packed = Path(tmp) / "packed" / plain.name
        packed.parent.mkdir()
        shutil.copyfile(plain, packed)
        t0 = time.process_time()
        compact_run(packed)
        compact_s = time.process_time() - t0
        size, small = plain.stat().st_size, packed.stat().st_size
        xz = len(lzma.compress(plain.read_bytes(), preset=6))
        rows.append({"bench": f"trace bytes / unique content, plain, {steps} steps", "replaykit": size,
                     "baseline": unique, "ratio": round(size / unique, 3),
                     "note": f"target <= {TARGET_PLAIN}x: {'OK' if size / unique <= TARGET_PLAIN else 'MISS'}"})
        rows.append({"bench": f"trace bytes / unique content, compacted, {steps} steps", "replaykit": small,
                     "baseline": unique, "ratio": round(small / unique, 3),
                     "note": f"gzip -9 (lzma -6 would be {xz:,} B, {xz / unique:.3f}x); compaction {compact_s:.3f} s CPU "
                             f"(target <= {TARGET_COMPACT}x): {'OK' if small / unique <= TARGET_COMPACT else 'MISS'}"})
        lines_plain = _cpu(lambda: _loads_every_line(plain))
        lines_packed = _cpu(lambda: _loads_every_line(packed))
        rows.append({"bench": f"json.loads of every line, compacted vs plain, {steps} steps (CPU s)",
                     "replaykit": round(lines_packed, 4), "baseline": round(lines_plain, 4),
                     "ratio": round(lines_packed / lines_plain, 3), "note": "the decompression's share of the floor any reader pays"})
        view_plain = _cpu(lambda: inspect_trace(plain, with_cost=False))
        view_packed = _cpu(lambda: inspect_trace(packed, with_cost=False))
        rows.append({"bench": f"streaming inspect, compacted vs plain, {steps} steps (CPU s)",
                     "replaykit": round(view_packed, 4), "baseline": round(view_plain, 4),
                     "ratio": round(view_packed / view_plain, 3), "note": "core/inspect_view.py, one pass, no pricing"})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = bench(args.steps)
    for row in rows:
        print(f"{row['bench']:<72} {row['replaykit']:>12} {row['baseline']:>12} {row['ratio']:>7}x  {row['note']}")
    if args.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
