"""Commands at real size: ``replaykit runs``, ``inspect`` and ``import`` on long-session runs of about 2,500 and
10,000 steps as ``inspect`` counts them (bench/long_session.py: N = 1190 and 4770 tool-using steps, i.e.
2,499 and 10,017 steps), each in a fresh process, CPU time and peak memory.

Baselines, measured in the same run: a bare interpreter (``python -c pass``) for start-up, and for
``inspect`` / ``import`` a process that only ``json.loads`` every line of the same file (what any reader
must at least do). Growth: the log-log slope of CPU from 2,500 to 10,000 steps (1.0 = linear).

    PYTHONPATH=$PWD python bench/bench_scale.py [--sizes 1190 4770] [--json]   (N: tool-using steps)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from long_session import openai_chat_conversation, write_long_session_run  # noqa: E402

# Runs ARGV in this interpreter: the replaykit CLI (argv[0] == "replaykit") or a baseline snippet; prints
# the child's own CPU seconds and peak RSS to stderr as JSON.
WRAPPER = """
import json, resource, sys
argv = sys.argv[1:]
if argv[0] == "replaykit":
    from replaykit.cli.main import main
    code = main(argv[1:])
else:
    exec(argv[0], {"__name__": "__main__", "ARGS": argv[1:]})
    code = 0
usage = resource.getrusage(resource.RUSAGE_SELF)
peak = usage.ru_maxrss / 1024  # (Linux keeps the forking parent's peak across exec: prefer VmHWM)
try:
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            peak = int(line.split()[1]) / 1024
except OSError:
    pass
sys.stderr.write(json.dumps({"code": code, "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": peak}) + "\\n")
"""
READ_LINES = "import json\nfor line in open(ARGS[0], 'rb'): json.loads(line)"
READ_DOC = "import json\njson.load(open(ARGS[0], 'rb'))"


def measure(*argv: str, repeat: int = 3) -> dict[str, float]:
    """Best-of-``repeat`` CPU seconds and peak RSS (MB) of one fresh process."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    best: dict[str, float] | None = None
    for _ in range(repeat):
        proc = subprocess.run([sys.executable, "-c", WRAPPER, *argv], capture_output=True, text=True, env=env,
                              check=False, timeout=1800)
        report = json.loads(proc.stderr.strip().splitlines()[-1])
        if report["code"] != 0:
            raise SystemExit(f"{argv}: exit {report['code']}: {proc.stderr[-500:]}")
        if best is None or report["cpu"] < best["cpu"]:
            best = {"cpu": round(report["cpu"], 4), "rss_mb": round(report["rss_mb"], 1)}
    assert best is not None
    return best


def steps_of(n_tool_steps: int) -> int:
    """Steps as ``inspect`` counts them: per user turn ten tool-asking LLM calls, their ten tool calls and
    the final answer (long_session.py)."""
    return 2 * n_tool_steps + n_tool_steps // 10


def slope(small: float, big: float, ratio: float) -> float:
    return round(math.log(big / small) / math.log(ratio), 3) if small > 0 and big > 0 else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs=2, default=[1190, 4770], help="N, tool-using steps")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    small, big = args.sizes
    report: dict[str, Any] = {"sizes": args.sizes}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        empty = root / "empty"
        empty.mkdir()
        report["bare_python"] = measure("pass", repeat=args.repeat)
        report["runs_empty"] = measure("replaykit", "runs", "--store", str(empty), "--json", repeat=args.repeat)
        for n in args.sizes:
            store = root / f"store{n}"
            store.mkdir()
            run = write_long_session_run(store / f"long{n}.jsonl", n)
            chat = root / f"chat{n}.json"
            chat.write_text(json.dumps(openai_chat_conversation(n)))
            imported = root / f"imported{n}"
            report[f"runs_{n}"] = measure("replaykit", "runs", "--store", str(store), "--json", repeat=args.repeat)
            report[f"inspect_{n}"] = measure("replaykit", "inspect", str(run), "--json", repeat=args.repeat)
            report[f"inspect_text_{n}"] = measure("replaykit", "inspect", str(run), repeat=1)
            report[f"read_lines_{n}"] = measure(READ_LINES, str(run), repeat=args.repeat)
            report[f"import_{n}"] = measure("replaykit", "import", str(chat), "--format", "openai-chat", "--store",
                                            str(imported), "--json", repeat=1)
            report[f"read_doc_{n}"] = measure(READ_DOC, str(chat), repeat=args.repeat)
            report[f"trace_mb_{n}"] = round(run.stat().st_size / 1e6, 2)
    ratio = big / small
    report["slopes"] = {k: slope(report[f"{k}_{small}"]["cpu"], report[f"{k}_{big}"]["cpu"], ratio)
                        for k in ("inspect", "inspect_text", "import", "read_lines")}
    print(json.dumps(report, indent=2))
    if args.json:
        bare, empty_runs = report["bare_python"], report["runs_empty"]
        ins, read = report[f"inspect_{big}"], report[f"read_lines_{big}"]
        imp, doc = report[f"import_{big}"], report[f"read_doc_{big}"]
        steps = steps_of(big)
        rate = steps / imp["cpu"]
        rows = [
            {"bench": "runs --json, empty store (CPU s)", "replaykit": empty_runs["cpu"], "baseline": bare["cpu"],
             "ratio": round(empty_runs["cpu"] / bare["cpu"], 2),
             "note": f"vs a bare interpreter (target <= 0.25 s): {'OK' if empty_runs['cpu'] <= 0.25 else 'MISS'}"},
            {"bench": f"runs --json, store with a {steps}-step run (CPU s)", "replaykit": report[f"runs_{big}"]["cpu"],
             "baseline": bare["cpu"], "ratio": round(report[f"runs_{big}"]["cpu"] / bare["cpu"], 2),
             "note": f"reads the header line only (target <= 1 s): {'OK' if report[f'runs_{big}']['cpu'] <= 1 else 'MISS'}"},
            {"bench": f"inspect --json, {steps} steps (CPU s)", "replaykit": ins["cpu"], "baseline": read["cpu"],
             "ratio": round(ins["cpu"] / read["cpu"], 2),
             "note": f"{ins['rss_mb']} MB peak (json.loads of every line: {read['rss_mb']} MB); slope "
                     f"{report['slopes']['inspect']} (target <= 1 s): {'OK' if ins['cpu'] <= 1 else 'MISS'}"},
            {"bench": f"inspect (terminal), {steps} steps (CPU s)", "replaykit": report[f"inspect_text_{big}"]["cpu"],
             "baseline": read["cpu"], "ratio": round(report[f"inspect_text_{big}"]["cpu"] / read["cpu"], 2),
             "note": f"slope {report['slopes']['inspect_text']} (target <= 1 s): "
                     f"{'OK' if report[f'inspect_text_{big}']['cpu'] <= 1 else 'MISS'}"},
            {"bench": f"import openai-chat, {steps} steps (steps/s)", "replaykit": round(rate),
             "baseline": round(steps / doc["cpu"]), "ratio": round(doc["cpu"] / imp["cpu"], 3),
             "note": f"{imp['cpu']} s CPU, {imp['rss_mb']} MB; slope {report['slopes']['import']} "
                     f"(target >= 5,000 steps/s): {'OK' if rate >= 5000 else 'MISS'}"},
        ]
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
