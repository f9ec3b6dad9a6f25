"""The corpus pipeline: redact, export and analyse many runs with local processes, Ray or Dask.

    from replaykit.core.corpus import corpus_sources, run_corpus
    summary = run_corpus(corpus_sources(store, [], all_runs=True), task, options,
                         command="export", out=Path("out"), sink="shards", workers=4)

See docs/corpus.md.
"""

from __future__ import annotations

from ._executors import Executor, make_executor, parse_cluster
from ._pipeline import CorpusSummary, run_corpus, shard_name
from ._sources import (
    DEFAULT_PARTITION_RUNS,
    DERIVED_KINDS,
    Partition,
    corpus_sources,
    make_partitions,
    parse_include,
)
from ._stats import corpus_report, stats_task
from ._task import PartitionResult, RunResult, run_partition

__all__ = [
    "DEFAULT_PARTITION_RUNS",
    "DERIVED_KINDS",
    "CorpusSummary",
    "Executor",
    "Partition",
    "PartitionResult",
    "RunResult",
    "corpus_report",
    "corpus_sources",
    "make_executor",
    "make_partitions",
    "parse_cluster",
    "parse_include",
    "run_corpus",
    "run_partition",
    "shard_name",
    "stats_task",
]
