"""Benchmark: ``replaykit export RUN --format pydantic-ai|langgraph -o DIR`` (the port project) beside the
old single-file export (``-o agent.py`` / ``-o graph.py``: the recording embedded in the module), on the
long-session workload, for both frameworks in one session (``--formats``).

The run is ``bench/long_session.py``'s recording (a real-shaped Hermes session: 10 steps per user turn, a
6 KB system prompt, 8 tools, all history kept) of N = 1000 steps (``--steps``).

Measured in the same session, each export as a whole ``replaykit export`` process (wall time):
- old export: ``-o agent.py`` (PydanticAI: it replays the run through the PydanticAI engine to embed the
  history) / ``-o graph.py`` (LangGraph: the run and the graph runtime embedded); given up after
  ``--old-timeout`` seconds;
- port: ``-o DIR``, best of ``--repeat``;
- sizes: the old module's bytes (code and data are one file); the port's code bytes (``*.py``) and data
  bytes (the recordings copied), plus prompts and schemas;
- the port's conformance suite in process, for the last user turn of the session (one case: how long a
  test of a late turn takes), against the baseline of loading the run.

The claim: the port's code does not grow with the recording (compare N = 250 and 1000 with --steps).

    PYTHONPATH=. python bench/bench_port.py [--steps 1000] [--repeat 3] [--formats pydantic-ai langgraph] [--json]
"""

from __future__ import annotations

import argparse
import json
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

#: the framework -> the old single-file export's file name
SINGLE_FILE = {"pydantic-ai": "agent.py", "langgraph": "graph.py"}


def _export_process(trace: Path, out: Path, timeout: float, fmt: str = "pydantic-ai") -> float | None:
    """``replaykit export TRACE --format FMT -o OUT --force`` as a child process: wall seconds, or None
    when it did not finish within ``timeout``."""
    import os
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    try:
        subprocess.run([sys.executable, "-m", "replaykit.cli.main", "export", str(trace), "--format", fmt,
                        "-o", str(out), "--force"], check=True, capture_output=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    return time.perf_counter() - started


def measure(steps: int, repeat: int, old_timeout: float, formats: list[str]) -> list[dict[str, Any]]:
    """One row per framework, all on the same recording in the same session."""
    import importlib

    from replaykit.exporters.port import conformance

    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="rk-port-bench-") as tmp:
        root = Path(tmp)
        trace = write_long_session_run(root / "long.jsonl", steps)
        started = time.perf_counter()
        Run.load(trace)
        load_s = time.perf_counter() - started
        for fmt in formats:
            framework = importlib.import_module(f"replaykit.exporters.port.{fmt.replace('-', '_')}")
            port = root / f"port-{fmt}"
            port_runs = [_export_process(trace, port, 600, fmt) for _ in range(repeat)]
            port_s = min(t for t in port_runs if t is not None)
            manifest = json.loads((port / "port.json").read_text(encoding="utf-8"))
            code = sum((port / n).stat().st_size for n in manifest["files"] if n.endswith(".py"))
            other = sum((port / n).stat().st_size for n in manifest["files"] if not n.endswith(".py"))
            data = sum(p.stat().st_size for p in (port / "recordings").iterdir())
            old = root / SINGLE_FILE[fmt]
            old_s = _export_process(trace, old, old_timeout, fmt)
            cases = conformance.cases(port)
            saved = list(sys.path)
            started = time.perf_counter()
            conformance.run_case(cases[-1], port, framework)
            case_s = time.perf_counter() - started
            sys.path[:] = saved
            sys.modules.pop(conformance.TOOLS_MODULE, None)
            rows.append({
                "format": fmt, "steps": steps, "turns": len(cases), "load_run_s": round(load_s, 3),
                "old_export_s": None if old_s is None else round(old_s, 3),
                "old_file_bytes": old.stat().st_size if old_s is not None else None, "old_timeout_s": old_timeout,
                "port_export_s": round(port_s, 3), "port_code_bytes": code, "port_data_bytes": data,
                "port_other_bytes": other, "last_turn_case_s": round(case_s, 3),
            })
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, nargs="+", default=[1000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--old-timeout", type=float, default=300.0,
                        help="give up on the old single-file export after this many seconds")
    parser.add_argument("--formats", nargs="+", default=list(SINGLE_FILE), choices=list(SINGLE_FILE))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [row for n in args.steps for row in measure(n, args.repeat, args.old_timeout, args.formats)]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for row in rows:
        print(f"{row['format']}: N = {row['steps']} steps, {row['turns']} user turns (load the run: {row['load_run_s']} s)")
        if row["old_export_s"] is None:
            print(f"  old single-file export : did not finish in {row['old_timeout_s']:.0f} s")
        else:
            print(f"  old single-file export : {row['old_export_s']:7.3f} s  {row['old_file_bytes']:>10,} bytes "
                  "(code and recording in one module)")
        print(f"  port project           : {row['port_export_s']:7.3f} s  code {row['port_code_bytes']:>8,} bytes, "
              f"recordings {row['port_data_bytes']:>10,} bytes, prompts+schemas {row['port_other_bytes']:,} bytes")
        print(f"  conformance, last turn : {row['last_turn_case_s']:7.3f} s (one case, in process)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
