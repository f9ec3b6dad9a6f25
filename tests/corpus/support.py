"""Helpers for the corpus tests (importable by worker processes: ``tests.corpus.support``)."""

from __future__ import annotations

import os
import shutil
import signal
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from replaykit.core.corpus import RunResult
from replaykit.core.trace.store import RunStore
from replaykit.exporters.training import corpus_task
from replaykit.testing.corpus_runs import write_corpus

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hermes"
RAW = {"format": "openai-jsonl", "redact": False, "mode": None, "preference_chosen": None, "store": None,
       "min_health": None}
PATTERNS = {**RAW, "redact": True, "mode": "patterns"}


def make_corpus(root: Path, n: int, *, steps: int = 6, hermes: bool = True) -> RunStore:
    """``n`` generated runs plus (with ``hermes``) the real Hermes fixtures, in a store at ``root``."""
    store = RunStore(root)
    write_corpus(store, n, steps=steps, system_prompt_size=600)
    if hermes:
        for path in sorted(FIXTURES.glob("*.jsonl")):
            shutil.copy(path, root / path.name)
    return store


def slow_task(path: str, options: Mapping[str, Any]) -> RunResult:
    """The export task, slowed down so a test can kill a process while partitions are in flight."""
    time.sleep(float(options.get("delay", 0.15)))
    return corpus_task(path, {k: v for k, v in options.items() if k != "delay"})


def shard_bytes(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.name.startswith("part-")}


DRIVER = """
import sys
from pathlib import Path
from replaykit.core.corpus import corpus_sources, run_corpus
from replaykit.core.trace.store import RunStore
from tests.corpus.support import RAW, slow_task

if __name__ == "__main__":
    store = RunStore(sys.argv[1])
    summary = run_corpus(corpus_sources(store, [], all_runs=True), slow_task, {**RAW, "delay": 0.15},
                         command="export", out=Path(sys.argv[2]), sink="shards", workers=2, partition_runs=2,
                         progress=False)
    print(summary.resumed_partitions, summary.records)
"""


def killer_task(path: str, options: Mapping[str, Any]) -> RunResult:
    """The export task in a worker that SIGKILLs itself on chosen runs (a stand-in for the OOM killer or a
    segfault in a native library): ``kill_always`` names runs that kill every worker that touches them,
    ``kill_once`` runs that kill one worker only (a flag file in ``flags`` remembers the death). Never
    in the driver process (``driver_pid``), whose death would be the test's."""
    name = Path(path).name
    if os.getpid() != options["driver_pid"]:
        if name in options["kill_always"]:
            os.kill(os.getpid(), signal.SIGKILL)
        flag = Path(options["flags"]) / name
        if name in options["kill_once"] and not flag.exists():
            flag.touch()
            os.kill(os.getpid(), signal.SIGKILL)
    return corpus_task(path, {k: v for k, v in options.items() if k in RAW})
