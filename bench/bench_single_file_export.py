"""Benchmark: the old single-file PydanticAI export (``replaykit export RUN --format pydantic-ai -o agent.py``)
against a baseline revision of replaykit, in the same session, on the long-session workload.

The export replays the run through the PydanticAI engine to embed its history; it was superlinear in the
run's length (every request's whole history converted again while planning, and the whole replay done a
second time for the summary). Each measurement is a whole ``replaykit export`` process (wall time) on the
same recording (``bench/long_session.py``, N steps), run once with this checkout and once with the
baseline (``--baseline REV``: its ``replaykit/`` taken with ``git archive`` into a temporary directory;
default: the commit before the fix). Both exports must give the same module up to timestamps and ids
PydanticAI draws at run time (checked). Given up after ``--timeout`` seconds.

    PYTHONPATH=. python bench/bench_single_file_export.py [--steps 100 200 1000] [--baseline REV] [--timeout 600]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from long_session import write_long_session_run  # noqa: E402

#: the commit before the fix (issue 35's follow-up): what "baseline" means by default
BASELINE = "245000f"
_VOLATILE = re.compile(rb"\d{4}-\d{2}-\d{2}T[0-9:.]+Z|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _export(src: Path, trace: Path, out: Path, timeout: float) -> float | None:
    env = {**os.environ, "PYTHONPATH": str(src)}
    started = time.perf_counter()
    try:
        subprocess.run([sys.executable, "-m", "replaykit.cli.main", "export", str(trace), "--format", "pydantic-ai",
                        "-o", str(out), "--force"], check=True, capture_output=True, env=env, timeout=timeout,
                       cwd=src)
    except subprocess.TimeoutExpired:
        return None
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, nargs="+", default=[100, 200, 1000])
    parser.add_argument("--baseline", default=BASELINE, help="the git revision to compare with")
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rk-single-file-bench-") as tmp:
        root = Path(tmp)
        base = root / "baseline"
        base.mkdir()
        archive = subprocess.run(["git", "archive", args.baseline, "replaykit"], cwd=ROOT, check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
        print(f"single-file PydanticAI export, this checkout vs {args.baseline} (wall s, one process each)")
        for steps in args.steps:
            trace = write_long_session_run(root / f"long-{steps}.jsonl", steps)
            new_s = _export(ROOT, trace, root / f"new-{steps}.py", args.timeout)
            old_s = _export(base, trace, root / f"old-{steps}.py", args.timeout)
            same = ""
            if new_s is not None and old_s is not None:
                new, old = (_VOLATILE.sub(b"", (root / f"{k}-{steps}.py").read_bytes()) for k in ("new", "old"))
                same = "  same module" if new == old else "  MODULES DIFFER"
            fmt = lambda s: f"{s:8.2f}" if s is not None else f"  > {args.timeout:.0f}"  # noqa: E731
            ratio = f"{old_s / new_s:6.1f}x" if new_s and old_s else "     -"
            print(f"  N = {steps:5}: baseline {fmt(old_s)}   now {fmt(new_s)}   speed-up {ratio}{same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
