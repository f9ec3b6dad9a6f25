"""The corpus flags shared by ``export``, ``redact`` and ``stats`` (one definition, one reading)."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def add_corpus_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("corpus (many runs)")
    engine = group.add_mutually_exclusive_group()
    engine.add_argument("--workers", type=int, default=None, metavar="N",
                        help="local worker processes (default: every core)")
    engine.add_argument("--cluster", default=None, metavar="ray[://ADDR]|dask[://ADDR]",
                        help="run on Ray or Dask: a local instance, or an existing cluster at ADDR")
    group.add_argument("--partition-size", type=int, default=None, metavar="RUNS",
                       help="runs per partition (default 64); part of the job's identity for resuming")


def corpus_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    from replaykit.core.corpus import DEFAULT_PARTITION_RUNS

    return {
        "workers": args.workers,
        "cluster": args.cluster,
        "partition_runs": args.partition_size or DEFAULT_PARTITION_RUNS,
    }


def report_damaged(damaged: list[dict[str, str]]) -> None:
    """Damaged runs were skipped: say which, on stderr (stdout may be a JSON document)."""
    for item in damaged:
        print(f"replaykit: warning: skipped damaged run {item['source']}: {item['error']}", file=sys.stderr)
