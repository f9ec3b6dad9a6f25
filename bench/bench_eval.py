"""``replaykit eval`` throughput: runs per second with 1 and 2 workers against a local scripted endpoint,
next to the baseline a CI script would run today (one ``replaykit play`` process plus one ``replaykit diff``
process per run), in the same bench run; and the eval's own overhead per run over the plays themselves.

    PYTHONPATH=. python bench/bench_eval.py [--runs 24] [--steps 50] [--json]

The runs have the long-session shape (``replaykit.testing.corpus_runs`` with ``steps=50`` and a 6 KB
system prompt, as bench/long_session.py describes it: several turns, all history kept, tool results of
250-2,000 characters), each with its own content. The candidate is the shipped scripted server answering
every run from its record (``replaykit.testing.eval_candidate.mirror_policy``), so every play is a whole
live play of the run and the eval's verdicts are all known ("same" for every reproducible run).

Figures: wall seconds and runs/s of each way; ratio = eval runs/s / baseline runs/s. Overhead per run =
(eval wall time with 1 worker - the same plays run back to back in one process, nothing else) / runs:
what the control play, the diff, the cost and health figures and the manifest add to each play.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))


def _baseline(run_ids: list[str], store: Path, base_url: str) -> float:
    """One ``replaykit play`` process and one ``replaykit diff`` process per run, as a shell loop would."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    started = time.perf_counter()
    for run_id in run_ids:
        played = subprocess.run([sys.executable, "-m", "replaykit", "play", run_id, "--engine", "openai",
                                 "--base-url", base_url, "--model", "candidate", "--store", str(store), "--json"],
                                capture_output=True, text=True, env=env, check=True)
        new_id = json.loads(played.stdout)["run_id"]
        subprocess.run([sys.executable, "-m", "replaykit", "diff", run_id, new_id, "--store", str(store), "--json"],
                       capture_output=True, text=True, env=env, check=False)  # exit 1 when they differ
    return time.perf_counter() - started


def _plays_alone(run_ids: list[str], store: Path, base_url: str) -> float:
    from replaykit.core.replay.play import PlayOptions
    from replaykit.core.trace.store import RunStore
    from replaykit.engines import play

    runs = RunStore(store)
    started = time.perf_counter()
    for run_id in run_ids:
        play(runs.load(run_id), "openai", PlayOptions(base_url=base_url, model="candidate", store=runs))
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=24)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    from replaykit.core.trace.store import RunStore
    from replaykit.eval import evaluate
    from replaykit.testing.corpus_runs import write_corpus
    from replaykit.testing.eval_candidate import mirror_policy
    from replaykit.testing.scripted_server import ScriptedServer

    with tempfile.TemporaryDirectory(prefix="rk-bench-eval-") as tmp:
        work = Path(tmp)
        store = RunStore(work / "store")
        write_corpus(store, args.runs, steps=args.steps, system_prompt_size=6000, prefix="long")
        runs = [store.load(f"long-{i:05d}") for i in range(args.runs)]
        run_ids = [r.run_id for r in runs if r.status == "completed"]
        rows: list[dict[str, Any]] = []
        with ScriptedServer(mirror_policy(runs)) as srv:
            _plays_alone(run_ids[:1], store.root, srv.base_url)  # warm the imports of this process
            alone = _plays_alone(run_ids, store.root, srv.base_url)
            baseline = _baseline(run_ids, store.root, srv.base_url)
            walls: dict[int, float] = {}
            for workers in (1, 2):
                started = time.perf_counter()
                report = evaluate(run_ids, engine="openai", base_url=srv.base_url, model="candidate",
                                  out=work / f"eval-{workers}", store=store, workers=workers)
                walls[workers] = time.perf_counter() - started
                same = report.verdicts.get("same", 0)
                print(f"eval --workers {workers}: {walls[workers]:.2f}s, {same}/{len(run_ids)} same",
                      file=sys.stderr)
            alone = min(alone, _plays_alone(run_ids, store.root, srv.base_url))  # the machine's quieter moment
        n = len(run_ids)
        base_rate = n / baseline
        for workers, wall in walls.items():
            rows.append({"bench": f"eval runs/s, {workers} worker{'s' if workers > 1 else ''} vs play+diff processes",
                         "replaykit": round(n / wall, 3), "baseline": round(base_rate, 3),
                         "ratio": round((n / wall) / base_rate, 2), "note": f"{n} runs of {args.steps} steps"})
        overhead = (walls[1] - alone) / n
        rows.append({"bench": "eval overhead per run over the play (ms)", "replaykit": round(overhead * 1000, 1),
                     "baseline": round(alone / n * 1000, 1), "ratio": round(overhead / (alone / n), 2),
                     "note": "baseline: one play alone, in-process"})
    if args.json:
        print(json.dumps(rows))
    else:
        for row in rows:
            print(f"{row['bench']:<62} {row['replaykit']:>10} {row['baseline']:>10} {row['ratio']:>6}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
