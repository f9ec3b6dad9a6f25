"""Benchmark: ``replaykit export --format python`` and ``python run.py`` on the long-session workload.

The runs are ``bench/long_session.py`` recordings (a real-shaped Hermes session recorded by replaykit's
own plugin: 10 steps per user turn, a 6 KB system prompt, 8 tools, tool results of 250-2,000
characters, all history kept) of N = 250 and 1000 steps (``--steps``).

Measured, side by side in the same session:
- export as a whole process, the way a user runs it: ``python -m replaykit.cli.main export TRACE --format
  python -o OUT --force`` as a child (CPU = user + system from ``os.wait4`` rusage, and wall), best of
  ``--repeat``; the CLI streams the trace file (stdlib only, no pydantic);
- export through the Python API on a loaded run (``replaykit.exporters.export(run, "python", path)``:
  render + compile check + atomic 0600 write), best of ``--repeat``;
- file size;
- ``python run.py`` as a child process: CPU time and peak memory (``ru_maxrss``), median;
- baselines: ``python -c "import json"`` (interpreter start-up); a stdlib floor of any exporter that
  validates the trace, a child that ``json.loads`` every line of it (``parse every line``); and a naive
  exporter that pastes ``repr()`` of every event into a script that prints them as JSON (what an unsafe
  "unroll" does), with that script run the same way.

Targets for N = 1000 (issue 27): export <= 0.15 s as a whole process, run <= 0.15 s CPU, <= 60 MB peak,
file <= 2 MB.

    PYTHONPATH=. python bench/bench_python_export.py [--steps 250 1000] [--repeat 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from long_session import write_long_session_run  # noqa: E402

from replaykit.core.trace.run import Run  # noqa: E402
from replaykit.exporters import export  # noqa: E402

TARGETS = {"export_process_cpu_s": 0.15, "run_cpu_s": 0.15, "run_peak_mb": 60.0, "file_mb": 2.0}
_PARSE_EVERY_LINE = "import json, sys\nwith open(sys.argv[1], 'rb') as f:\n    for line in f: json.loads(line)\n"


def naive_export(run: Run, path: Path) -> None:
    """The baseline: repr() of every event pasted into the source (unsafe: NaN, and it is code)."""
    lines = ["import json", "EVENTS = ["]
    lines += [f"    {event.model_dump(mode='json', exclude_none=True)!r}," for event in run.events]
    lines += ["]", "print(json.dumps({'events': len(EVENTS), 'last': EVENTS[-1]}))"]
    path.write_text("\n".join(lines) + "\n")


# The child is started by a lean launcher (python -S, no imports beyond os/sys/json): a child forked from
# this process would report this process's resident memory (pydantic and all) as its own peak.
_LAUNCHER = """
import json, os, sys
pid = os.fork()
if pid == 0:
    fd = os.open(os.devnull, os.O_WRONLY)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(json.dumps([os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime, usage.ru_maxrss]))
"""
_LAUNCHER = _LAUNCHER.replace("pid = os.fork()", "import time\nstart = time.perf_counter()\npid = os.fork()").replace(
    "usage.ru_maxrss]", "usage.ru_maxrss, time.perf_counter() - start]")


def child(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """(CPU seconds, peak MB, wall seconds) of one child process (``os.wait4`` rusage)."""
    # cwd: this checkout (``python -m`` imports replaykit from the current directory before PYTHONPATH)
    out = subprocess.run([sys.executable, "-S", "-c", _LAUNCHER, *argv], capture_output=True, text=True,
                         check=True, env=env, cwd=ROOT).stdout
    code, cpu, maxrss_kb, wall = json.loads(out)
    if code != 0:
        raise SystemExit(f"{argv} failed with exit code {code}")
    return float(cpu), maxrss_kb / 1024.0, float(wall)


def median_child(argv: list[str], repeat: int) -> tuple[float, float]:
    runs = [child(argv) for _ in range(repeat)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def best_child(argv: list[str], repeat: int, env: dict[str, str] | None = None) -> tuple[float, float]:
    """(best CPU seconds, best wall seconds) over ``repeat`` children."""
    runs = [child(argv, env) for _ in range(repeat)]
    return min(r[0] for r in runs), min(r[2] for r in runs)


def timed(fn: Any, repeat: int) -> tuple[float, float]:
    """(best wall seconds, best CPU seconds) over ``repeat`` calls: the minimum is the least noisy
    estimate on a shared machine."""
    walls, cpus = [], []
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus)


def bench(steps_list: list[int], repeat: int) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        # As an installed package runs: bytecode cached (in a private prefix, written on the first run),
        # even where the environment says PYTHONDONTWRITEBYTECODE (every module compiled on every run).
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               "PYTHONPYCACHEPREFIX": str(Path(tmp) / "pycache")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        startup_cpu, startup_mb = median_child([sys.executable, "-c", "import json"], repeat)
        startup_best, _ = best_child([sys.executable, "-c", "import json"], repeat)
        for steps in steps_list:
            trace = write_long_session_run(Path(tmp) / f"long{steps}.jsonl", steps)
            run = Run.load(trace)
            out, naive = Path(tmp) / f"run{steps}.py", Path(tmp) / f"naive{steps}.py"
            cli = [sys.executable, "-m", "replaykit.cli.main", "export", str(trace), "--format", "python",
                   "-o", str(out), "--force"]
            best_child(cli, 1, env)  # warm: the bytecode cache
            process_cpu, process_wall = best_child(cli, repeat, env)
            parse_cpu, parse_wall = best_child([sys.executable, "-c", _PARSE_EVERY_LINE, str(trace)], repeat)
            export_s, export_cpu = timed(lambda run=run, out=out: export(run, "python", out, force=True), repeat)
            best_child(cli, 1, env)  # the file measured below is the CLI's
            naive_s, _ = timed(lambda run=run, naive=naive: naive_export(run, naive), repeat)
            run_cpu, run_mb = median_child([sys.executable, str(out)], repeat)
            naive_cpu, naive_mb = median_child([sys.executable, str(naive)], repeat)
            rows.append({
                "steps": len(run.steps), "events": len(run.events), "trace_mb": round(trace.stat().st_size / 1e6, 3),
                "export_process_cpu_s": round(process_cpu, 4), "export_process_wall_s": round(process_wall, 4),
                "baseline_parse_every_line_cpu_s": round(parse_cpu, 4),
                "baseline_parse_every_line_wall_s": round(parse_wall, 4),
                "baseline_python_startup_best_cpu_s": round(startup_best, 4),
                "export_s": round(export_s, 4), "export_cpu_s": round(export_cpu, 4), "file_mb": round(out.stat().st_size / 1e6, 3),
                "run_cpu_s": round(run_cpu, 4), "run_peak_mb": round(run_mb, 1),
                "baseline_naive_export_s": round(naive_s, 4),
                "baseline_naive_file_mb": round(naive.stat().st_size / 1e6, 3),
                "baseline_naive_run_cpu_s": round(naive_cpu, 4), "baseline_naive_run_peak_mb": round(naive_mb, 1),
                "baseline_python_startup_cpu_s": round(startup_cpu, 4),
                "baseline_python_startup_peak_mb": round(startup_mb, 1),
            })
    largest = max(rows, key=lambda r: r["steps"])
    checks = {k: {"value": largest[k], "target": v, "ok": largest[k] <= v} for k, v in TARGETS.items()}
    per_step = [r["file_mb"] / r["steps"] for r in rows]
    return {"benchmark": "python-export", "python": sys.version.split()[0], "rows": rows,
            "targets_at_steps": largest["steps"], "targets": checks,
            "file_mb_per_step": [round(x, 5) for x in per_step]}


def _verdict(value: float, limit: float | None) -> str:
    return "" if limit is None else f" (target <= {limit:g}: {'OK' if value <= limit else 'MISS'})"


def contract_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """run_all.py rows, per run length: costs (lower is better), ratio = replaykit / baseline."""
    out: list[dict[str, Any]] = []
    largest = max(r["steps"] for r in result["rows"])
    for r in result["rows"]:
        big = r["steps"] == largest
        for what, mine, base, note, target in (
            ("export process CPU (s)", r["export_process_cpu_s"], r["baseline_parse_every_line_cpu_s"],
             f"vs a process that json.loads every line (python start-up alone {r['baseline_python_startup_best_cpu_s']}; "
             f"wall {r['export_process_wall_s']} vs {r['baseline_parse_every_line_wall_s']})", "export_process_cpu_s"),
            ("export API on a loaded run (s)", r["export_s"], r["baseline_naive_export_s"], "vs a naive repr() exporter",
             None),
            ("run.py CPU (s)", r["run_cpu_s"], r["baseline_naive_run_cpu_s"], "vs the naive script", "run_cpu_s"),
            ("run.py peak (MB)", r["run_peak_mb"], r["baseline_python_startup_peak_mb"],
             "vs python -c 'import json'", "run_peak_mb"),
            ("file (MB)", r["file_mb"], r["baseline_naive_file_mb"], "vs the naive script", "file_mb"),
        ):
            limit = TARGETS[target] if big and target is not None else None
            out.append({"bench": f"python export {r['steps']} steps: {what}", "replaykit": mine, "baseline": base,
                        "ratio": mine / base if base else None, "note": note + _verdict(mine, limit)})
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, nargs="+", default=[250, 1000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = bench(args.steps, args.repeat)
    if args.json:
        print(json.dumps(result, indent=2))
        print(json.dumps(contract_rows(result)))  # last line: the rows bench/run_all.py reads
    else:
        head = ("steps", "export process CPU s", "export process wall s", "parse-every-line CPU s", "export API s",
                "export API CPU s", "file MB", "run CPU s", "peak MB", "naive exp s", "naive MB", "naive CPU s",
                "naive MB peak", "py start CPU s")
        print(" | ".join(head))
        for r in result["rows"]:
            print(" | ".join(str(r[k]) for k in (
                "steps", "export_process_cpu_s", "export_process_wall_s", "baseline_parse_every_line_cpu_s",
                "export_s", "export_cpu_s", "file_mb", "run_cpu_s", "run_peak_mb", "baseline_naive_export_s",
                "baseline_naive_file_mb", "baseline_naive_run_cpu_s", "baseline_naive_run_peak_mb",
                "baseline_python_startup_cpu_s")))
        for name, check in result["targets"].items():
            print(f"{name}: {check['value']} (target <= {check['target']}) {'ok' if check['ok'] else 'MISSED'}")
    return 0 if all(c["ok"] for c in result["targets"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
