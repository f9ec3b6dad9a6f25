"""``replaykit export --format openai-jsonl|sharegpt|trl``: the training-data half of ``export``.

The lead's ``cmd_export`` parses the shared flags and calls ``export_training(args)``. Flags used:
RUN... (several), ``--all`` (every run in the store except redacted copies), ``-o PATH``, ``--force``,
``--no-redact``, ``--mode ner|patterns`` (default ner), ``--preference-chosen original|branch``
(preference pairs from branches), ``--store DIR``, ``--json``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from replaykit.cli._common import console, open_store, print_json


def export_training(args: argparse.Namespace) -> int:
    from replaykit.core.errors import BadInput
    from replaykit.exporters.training import export_training as run_export

    store = open_store(args)
    runs = list(getattr(args, "runs", []) or [])
    if getattr(args, "all", False):
        if runs:
            raise BadInput("give RUNs or --all, not both")
        sources = [s.path for s in store.iter_summaries() if s.relation != "redaction"]
    else:
        sources = [store.resolve(ref) for ref in runs]
    if not sources:
        raise BadInput("give at least one RUN (or --all with a non-empty store)")
    options = {"redact": not getattr(args, "no_redact", False), "mode": getattr(args, "mode", None) or "ner",
               "fail_closed": getattr(args, "fail_closed", False),
               "preference_chosen": getattr(args, "preference_chosen", None), "store": store,
               "overwrite": getattr(args, "force", False), "total": len(sources)}
    card = None
    if getattr(args, "parquet", False):
        from replaykit.exporters.training_parquet import export_training_parquet

        summary, card = export_training_parquet(sources, Path(args.output).expanduser(), args.format, **options)
    else:
        summary = run_export(sources, Path(args.output).expanduser(), args.format, **options)
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
