"""``replaykit export --format openai-jsonl|sharegpt|trl``: the training-data half of ``export``.

``cmd_export`` parses the shared flags and calls ``export_training(args)``. Flags used:
RUN... (ids, files, directories, globs), ``--all`` (every original recording in the store: not redacted
copies, and not branches or plays unless ``--include branches,plays`` asks for them),
``-o PATH``, ``--force``, ``--no-redact``, ``--mode ner|patterns`` (default ner),
``--preference-chosen original|branch`` (preference pairs from branches), ``--min-health S``,
``--store DIR``, ``--json``, and the corpus flags (``--workers``, ``--cluster``, ``--parquet``,
``--partition-size``).

``-o FILE.jsonl`` (or ``.json``) writes one JSONL file, ``-o FILE.parquet --parquet`` one Parquet file
with its dataset card (``exporters.training_parquet``); any other ``-o DIR`` runs the corpus pipeline
(``replaykit.core.corpus``): JSONL shards (and with ``--parquet`` a Parquet shard beside each), a
manifest, resumable, on local processes, Ray or Dask.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from replaykit.cli._common import console, open_store, print_json
from replaykit.cli._corpus_flags import corpus_kwargs, report_damaged

SINGLE_FILE_SUFFIXES = (".jsonl", ".json", ".parquet")


def _check_min_health(value: int | None) -> None:
    from replaykit.core.errors import BadInput

    if value is not None and not 0 <= value <= 100:
        raise BadInput(f"--min-health must be between 0 and 100, not {value}")


def export_training(args: argparse.Namespace) -> int:
    from replaykit.core.corpus import corpus_sources, parse_include
    from replaykit.core.errors import BadInput

    store = open_store(args)
    if not getattr(args, "no_redact", False) and (getattr(args, "mode", None) or "ner") == "ner":
        from replaykit.core.redaction import choose_ner_model

        choose_ner_model(getattr(args, "ner_model", None), store.root)
    out = Path(args.output).expanduser()
    min_health = getattr(args, "min_health", None)
    _check_min_health(min_health)
    include = parse_include(getattr(args, "include", None))
    if getattr(args, "preference_chosen", None):
        include |= {"branches"}  # a preference pair is a branch beside its original
    sources = corpus_sources(store, list(getattr(args, "runs", []) or []), all_runs=getattr(args, "all", False),
                             include=include)
    if not out.name.endswith(SINGLE_FILE_SUFFIXES) or out.is_dir():
        return _export_corpus(args, store, sources, out, min_health)
    if getattr(args, "cluster", None):
        raise BadInput("--cluster writes shards: give -o DIR (not a single file)")
    options = {"redact": not getattr(args, "no_redact", False), "mode": getattr(args, "mode", None) or "ner",
               "fail_closed": getattr(args, "fail_closed", False),
               "preference_chosen": getattr(args, "preference_chosen", None), "store": store,
               "overwrite": getattr(args, "force", False), "total": len(sources),
               "workers": getattr(args, "workers", None), "min_health": min_health}
    card = None
    if getattr(args, "parquet", False):
        from replaykit.exporters.training_parquet import export_training_parquet

        summary, card = export_training_parquet(sources, out, args.format, **options)
    else:
        from replaykit.exporters.training import export_training as run_export

        summary = run_export(sources, out, args.format, **options)
    if getattr(args, "json", False):
        document = summary.to_json()
        if card is not None:
            document.update(parquet=True, card=str(card))
        print_json(document)
    else:
        skipped = ", ".join(f"{n} {why}" for why, n in summary.skipped.items()) or "none"
        red = f"redacted ({summary.mode})" if summary.redacted else "NOT redacted"
        console().print(f"wrote {summary.records} {args.format} records from {summary.runs} runs to "
                        f"{summary.path}, {red}; skipped: {skipped}")
    return 0


def _export_corpus(args: argparse.Namespace, store: Any, sources: list[Path], out: Path,
                   min_health: int | None) -> int:
    from replaykit.core.corpus import run_corpus
    from replaykit.exporters.training import FORMATS, corpus_task

    redact = not getattr(args, "no_redact", False)
    mode = getattr(args, "mode", None) or "ner"
    options = {
        "format": args.format,
        "redact": redact,
        "mode": mode if redact else None,
        "preference_chosen": getattr(args, "preference_chosen", None),
        "store": str(store.root) if getattr(args, "preference_chosen", None) else None,
        "min_health": min_health,
        "fail_closed": getattr(args, "fail_closed", False),
    }
    assert args.format in FORMATS
    parquet = None
    if getattr(args, "parquet", False):
        from replaykit.exporters.corpus_parquet import require_pyarrow, write_parquet

        require_pyarrow()
        parquet = write_parquet
    summary = run_corpus(sources, corpus_task, options, command="export", out=out, sink="shards",
                         parquet=parquet, force=getattr(args, "force", False),
                         label="exporting", **corpus_kwargs(args))
    report_damaged(summary.damaged)
    if getattr(args, "json", False):
        print_json({**summary.to_json(), "format": args.format, "redacted": redact,
                    "mode": mode if redact else None})
    else:
        skipped = ", ".join(f"{n} {why}" for why, n in sorted(summary.skipped.items())) or "none"
        red = f"redacted ({mode})" if redact else "NOT redacted"
        resumed = f" ({summary.resumed_partitions} partitions already done)" if summary.resumed_partitions else ""
        console().print(
            f"wrote {summary.records} {args.format} records from {summary.runs} runs to {out} "
            f"({summary.partitions} shards{resumed}), {red}; skipped: {skipped}; damaged: {len(summary.damaged)}"
        )
    return 0
