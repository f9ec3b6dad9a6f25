"""The viewer at size (issue 27, item 6): a store of 10,000 runs, one of them a 10,000-tool-step long session.

The store is written straight through the recorder (``replaykit.testing.long_runs``; the long run with
``bench/long_session.py``'s Hermes-shaped content: its system prompt, tools and tool results), then copies
of a few short runs are stamped with new ids, dates, tags and lineage until the store holds ``--runs``
runs. ``replaykit view`` runs as its own process; each page is fetched over HTTP and timed end to end
(wall clock, first byte to last), cold (the first request after start) and warm (the same again).

Baselines, measured in the same run: ``json.loads`` of the same files (every line of every run for the
runs list, what opening every run costs; every line of the long run for its pages). Targets: runs list and
run page at most 1 s, step page at most 0.2 s, viewer process under 400 MB resident.

    PYTHONPATH=$PWD python bench/bench_viewer.py [--runs 10000] [--steps 10000] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

LONG_ID = "long-session"


def write_store(root: Path, n_runs: int, n_steps: int) -> tuple[Path, float]:
    """The store: the long run, then ``n_runs - 1`` stamped copies of short runs; returns the long run's
    file and the seconds it took to write everything."""
    from long_session import SYSTEM_PROMPT, TOOLS, tool_result

    from replaykit.core.trace.ir import ToolSpec
    from replaykit.core.trace.store import RunStore
    from replaykit.testing.long_runs import stamp_copies, write_tool_loop_run

    started = time.perf_counter()
    store = RunStore(root)
    tools = [ToolSpec(name=t["function"]["name"], description=t["function"]["description"],
                      parameters=t["function"]["parameters"]) for t in TOOLS]
    long_path = write_tool_loop_run(store, LONG_ID, n_steps, result_of=tool_result, system_prompt=SYSTEM_PROMPT,
                                    tools=tools, failing_step=n_steps - 7, framework="hermes",
                                    model="long-session-model")
    scratch = RunStore(root.parent / "templates")
    per_template = (n_runs - 1) // 12 + 1
    made = 0
    for k in range(12):  # short runs of 2-7 tool steps, three frameworks, some failing; one in ten a branch
        path = write_tool_loop_run(scratch, f"t{k}", 2 + k % 6, per_turn=3, failing_step=1 if k % 4 == 0 else None,
                                   framework=("hermes", "openai-agents", "langgraph")[k % 3], model=f"model-{k % 4}")
        count = min(per_template, n_runs - 1 - made)
        stamp_copies(root, path, count, branch_every=10, start=made)
        made += count
    return long_path, time.perf_counter() - started


def loads_every_line(paths: list[Path], *, first_only: bool = False) -> tuple[float, float]:
    """(wall, CPU) seconds of ``json.loads`` of every line (or only the first line) of each file."""
    started, cpu = time.perf_counter(), time.process_time()
    for path in paths:
        with open(path, "rb") as handle:
            if first_only:
                json.loads(handle.readline())
                continue
            for line in handle:
                json.loads(line)
    return time.perf_counter() - started, time.process_time() - cpu


class Viewer:
    """``replaykit view`` as a child process."""

    def __init__(self, store: Path) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        self.proc = subprocess.Popen([sys.executable, "-m", "replaykit.cli.main", "view", "--store", str(store),
                                      "--no-open"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
        assert self.proc.stdout is not None
        url = self.proc.stdout.readline().strip()
        match = re.match(r"(http://127\.0\.0\.1:\d+)/\?token=(\S+)", url)
        if not match:
            self.proc.kill()
            raise SystemExit(f"replaykit view printed {url!r}")
        self.origin, self.token = match.group(1), match.group(2)

    def cpu(self) -> float:
        """CPU seconds (user + system) the viewer process has used so far."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def get(self, path: str, **params: Any) -> tuple[float, int, int, float]:
        """(seconds, HTTP status, bytes, the viewer's CPU seconds) of one page."""
        from urllib.parse import urlencode

        query = urlencode([*params.items(), ("token", self.token)])
        cpu = self.cpu()
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(f"{self.origin}{path}?{query}", timeout=600) as response:
                body = response.read()
                status = response.status
        except urllib.error.HTTPError as exc:
            body, status = exc.read(), exc.code
        return time.perf_counter() - started, status, len(body), self.cpu() - cpu

    def memory_mb(self) -> tuple[float, float]:
        """(resident now, peak resident) of the viewer process, MB."""
        now = peak = 0.0
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                now = int(line.split()[1]) / 1024
            elif line.startswith("VmHWM:"):
                peak = int(line.split()[1]) / 1024
        return round(now, 1), round(peak, 1)

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=20)


def verdict(value: float, target: float) -> str:
    return f"(target <= {target:g}): {'OK' if value <= target else 'MISS'}"


def bench(n_runs: int, n_steps: int) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="rk-viewer-") as tmp:
        root = Path(tmp) / "store"
        long_path, wrote = write_store(root, n_runs, n_steps)
        files = sorted(root.glob("*.jsonl"))
        print(f"store: {len(files)} runs, {sum(p.stat().st_size for p in files) / 1e6:.1f} MB, written in {wrote:.1f} s; "
              f"long run {long_path.stat().st_size / 1e6:.1f} MB", file=sys.stderr)
        (base_store, base_store_cpu), (heads, heads_cpu) = loads_every_line(files), loads_every_line(files, first_only=True)
        base_long, base_long_cpu = loads_every_line([long_path])
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", file=sys.stderr)
        viewer = Viewer(root)
        try:
            steps = None
            measured: dict[str, tuple[float, int, int, float]] = {}
            time.sleep(2)  # the server's background imports (server.WARM_MODULES) are done
            measured["runs cold"] = viewer.get("/")
            measured["runs warm"] = viewer.get("/")
            measured["runs page 50"] = viewer.get("/", page="50")
            measured["run cold"] = viewer.get(f"/run/{LONG_ID}")
            measured["run warm"] = viewer.get(f"/run/{LONG_ID}")
            measured["run page 40"] = viewer.get(f"/run/{LONG_ID}", page="40")
            from replaykit.core.analysis.inspect_view import inspect_trace

            steps = inspect_trace(long_path, with_cost=False, window=(0, 0)).summary["steps"]
            last = steps - 1
            measured["last LLM step"] = viewer.get(f"/run/{LONG_ID}/step/{last}")  # the final answer
            measured["last tool step"] = viewer.get(f"/run/{LONG_ID}/step/{last - 1}")
            measured["first step"] = viewer.get(f"/run/{LONG_ID}/step/0")
            measured["whole request"] = viewer.get(f"/run/{LONG_ID}/step/{last}/request")
            measured["bad page"] = viewer.get("/", page="0")
            measured["page past the end"] = viewer.get(f"/run/{LONG_ID}", page="99999")
            now, peak = viewer.memory_mb()
            measured["runs by health, every run counted"] = viewer.get("/", sort="health")
            after_now, after_peak = viewer.memory_mb()
        finally:
            viewer.close()
    for name, (seconds, status, size, cpu) in measured.items():
        print(f"  {name:<36} {seconds:8.3f} s wall {cpu:7.3f} s CPU  HTTP {status}  {size / 1e3:9.1f} kB",
              file=sys.stderr)
    assert measured["bad page"][1] == 400 and measured["page past the end"][1] == 404
    for name in ("runs cold", "runs warm", "runs page 50", "run cold", "run warm", "run page 40", "last LLM step",
                 "last tool step", "first step"):
        assert measured[name][1] == 200, (name, measured[name])

    def row(what: str, key: str, baseline: float, base_name: str, target: float | None) -> None:
        seconds, _status, size, cpu = measured[key]
        note = f"{size / 1e3:.1f} kB page, {cpu:.3f} s of the viewer's CPU; baseline {base_name}"
        if target is not None:
            note += " " + verdict(seconds, target)
        rows.append({"bench": what, "replaykit": round(seconds, 4), "baseline": round(baseline, 4),
                     "ratio": round(seconds / baseline, 3), "note": note})

    every = (f"json.loads of every line of the {len(files)} runs ({base_store_cpu:.3f} s CPU; of their first lines "
             f"only: {heads:.3f} s, {heads_cpu:.3f} s CPU)")
    row(f"viewer runs list, {len(files)} runs, first request (s)", "runs cold", base_store, every, 1.0)
    row(f"viewer runs list, {len(files)} runs, again (s)", "runs warm", base_store, every, 1.0)
    row(f"viewer runs list page 50, {len(files)} runs (s)", "runs page 50", base_store, every, 1.0)
    long = f"json.loads of every line of the long run ({steps} steps; {base_long_cpu:.3f} s CPU)"
    row(f"viewer run page, {n_steps} tool steps, first visit (s)", "run cold", base_long, long, 1.0)
    row(f"viewer run page, {n_steps} tool steps, again (s)", "run warm", base_long, long, 1.0)
    row(f"viewer run page 40, {n_steps} tool steps (s)", "run page 40", base_long, long, 1.0)
    row(f"viewer last LLM step page, {n_steps} tool steps (s)", "last LLM step", base_long, long, 0.2)
    row(f"viewer last tool step page, {n_steps} tool steps (s)", "last tool step", base_long, long, 0.2)
    row(f"viewer first step page, {n_steps} tool steps (s)", "first step", base_long, long, 0.2)
    row("viewer whole request of the last step, page 1 (s)", "whole request", base_long, long, None)
    row(f"viewer runs list sorted by health, {len(files)} runs counted (s)", "runs by health, every run counted",
        base_store, every, None)
    rows.append({"bench": "viewer process resident (MB)", "replaykit": after_now, "baseline": now,
                 "ratio": round(after_now / now, 3) if now else None,
                 "note": f"after every page; baseline: after the pages before the every-run sort; peak {after_peak} MB "
                         f"(before it {peak}) " + verdict(max(after_now, after_peak), 400.0)})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = bench(args.runs, args.steps)
    for r in rows:
        print(f"{r['bench']:<64} {r['replaykit']:>10} {r['baseline']:>10} {r['ratio']!s:>8}  {r['note']}")
    if args.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
