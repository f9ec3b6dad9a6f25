"""Run every benchmark of the project and print one table of figures against their baselines.

Each ``bench/bench_*.py`` runs in its own process (so imports and memory do not interfere) with
``--json``; its last stdout line is a JSON list of rows ``{"bench", "replaykit", "baseline", "ratio",
...}``. Ratios are measured against a baseline run in the same process, never against a stored number.

    python bench/run_all.py            # everything
    python bench/run_all.py store replay   # only benches whose file name contains one of these words
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def fmt(value: object) -> str:
    if isinstance(value, int | float):
        return f"{value:>14,.0f}" if abs(value) >= 1000 else f"{value:>14.4g}"
    return f"{value!s:>14}"


def main(argv: list[str]) -> int:
    wanted = [w for w in argv if not w.startswith("-")]
    benches = sorted(p for p in HERE.glob("bench_*.py") if not wanted or any(w in p.stem for w in wanted))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    rows: list[dict[str, object]] = []
    failed: list[str] = []
    for bench in benches:
        started = time.perf_counter()
        print(f"== {bench.stem}", file=sys.stderr, flush=True)
        proc = subprocess.run([sys.executable, str(bench), "--json"], capture_output=True, text=True, env=env,
                              cwd=ROOT, check=False)
        elapsed = time.perf_counter() - started
        sys.stderr.write(proc.stderr[-2000:] if proc.returncode else "")
        last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
        try:
            found = json.loads(last)
            assert isinstance(found, list)
        except (ValueError, AssertionError):
            failed.append(f"{bench.stem} (exit {proc.returncode}, no JSON rows)")
            continue
        for row in found:
            row.setdefault("file", bench.stem)
        rows.extend(found)
        print(f"   done in {elapsed:.1f}s", file=sys.stderr)
    print(f"{'benchmark':<52} {'replaykit':>14} {'baseline':>14} {'ratio':>8}  note")
    for row in rows:
        rk, base, ratio = row.get("replaykit"), row.get("baseline"), row.get("ratio")
        ratio_s = f"{ratio:>7.2f}x" if isinstance(ratio, int | float) else f"{ratio!s:>8}"
        print(f"{str(row.get('bench'))[:52]:<52} {fmt(rk)} {fmt(base)} {ratio_s}  {row.get('note', '')}")
    for name in failed:
        print(f"FAILED: {name}")
    if "--json" in argv:
        print(json.dumps(rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
