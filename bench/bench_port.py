"""Benchmark: ``replaykit export RUN --format pydantic-ai|langgraph -o DIR`` (the port project) next to the
single-file exports of the same run (``-o agent.py`` / ``-o graph.py``), on the long-session workload.

The run is a ``bench/long_session.py`` recording (a real-shaped Hermes session recorded by replaykit's own
plugin: 10 tool-using steps per user turn, a 6 KB system prompt, 8 tools, all history kept) of N steps
(``--steps``, default 1000: 2,100 steps, 100 user turns).

Measured, in one session, for each framework:

- the export as a whole process, the way a user runs it (``python -m replaykit.cli.main export TRACE
  --format F -o OUT --force`` as a child: CPU from ``os.wait4`` rusage, and wall), best of ``--repeat``;
  the port (``-o DIR``) and the single-file export (``-o F.py``) side by side;
- sizes: the port's code bytes (its ``.py`` files), data bytes (``recordings/``) and other bytes
  (prompts, tool schemas, README, manifest); the single file's bytes (code and the embedded run in one);
- baselines: interpreter start-up (``python -c "import json"``) and a child that ``json.loads`` every
  line of the trace (the floor of any exporter that reads it).

What to expect: the port's code does not grow with the run (its recordings are a copy of the trace
file), so its export is about the floor plus the spec; the single-file exports embed the run and, for
PydanticAI, replay it through the engine to record the history.

    PYTHONPATH=. python bench/bench_port.py [--steps 250 1000] [--repeat 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_python_export import best_child, median_child  # noqa: E402
from long_session import write_long_session_run  # noqa: E402

FRAMEWORKS = {"pydantic-ai": "agent.py", "langgraph": "graph.py"}
_PARSE_EVERY_LINE = "import json, sys\nwith open(sys.argv[1], 'rb') as f:\n    for line in f: json.loads(line)\n"


def port_sizes(port: Path) -> dict[str, int]:
    """Bytes of the port's code (``.py``), recorded data (``recordings/``) and everything else."""
    sizes = {"code_bytes": 0, "data_bytes": 0, "other_bytes": 0}
    for path in port.rglob("*"):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        size = path.stat().st_size
        if path.parent.name == "recordings":
            sizes["data_bytes"] += size
        elif path.suffix == ".py":
            sizes["code_bytes"] += size
        else:
            sizes["other_bytes"] += size
    return sizes


def bench(steps_list: list[int], repeat: int) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               "PYTHONPYCACHEPREFIX": str(Path(tmp) / "pycache")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        startup_cpu, _ = median_child([sys.executable, "-c", "import json"], repeat)
        for steps in steps_list:
            trace = write_long_session_run(Path(tmp) / f"long{steps}.jsonl", steps)
            parse_cpu, parse_wall = best_child([sys.executable, "-c", _PARSE_EVERY_LINE, str(trace)], repeat)
            for fmt, filename in FRAMEWORKS.items():
                port, single = Path(tmp) / f"port-{fmt}-{steps}", Path(tmp) / f"{steps}-{filename}"
                base = [sys.executable, "-m", "replaykit.cli.main", "export", str(trace), "--format", fmt, "--force"]
                best_child([*base, "-o", str(port)], 1, env)  # warm: the bytecode cache
                port_cpu, port_wall = best_child([*base, "-o", str(port)], repeat, env)
                single_cpu, single_wall = best_child([*base, "-o", str(single)], repeat, env)
                rows.append({
                    "framework": fmt, "steps": steps, "trace_bytes": trace.stat().st_size,
                    "port_export_cpu_s": round(port_cpu, 3), "port_export_wall_s": round(port_wall, 3),
                    **port_sizes(port),
                    "single_file_export_cpu_s": round(single_cpu, 3), "single_file_export_wall_s": round(single_wall, 3),
                    "single_file_bytes": single.stat().st_size,
                    "baseline_parse_every_line_cpu_s": round(parse_cpu, 3),
                    "baseline_parse_every_line_wall_s": round(parse_wall, 3),
                    "baseline_python_startup_cpu_s": round(startup_cpu, 3),
                })
    return {"benchmark": "port-export", "python": sys.version.split()[0], "rows": rows}


COLUMNS = ("framework", "steps", "trace_bytes", "port_export_cpu_s", "port_export_wall_s", "code_bytes", "data_bytes",
           "other_bytes", "single_file_export_cpu_s", "single_file_export_wall_s", "single_file_bytes",
           "baseline_parse_every_line_cpu_s", "baseline_python_startup_cpu_s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, nargs="+", default=[1000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = bench(args.steps, args.repeat)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(" | ".join(COLUMNS))
        for row in result["rows"]:
            print(" | ".join(str(row[k]) for k in COLUMNS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
