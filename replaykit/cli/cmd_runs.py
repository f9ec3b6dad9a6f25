"""replaykit runs: list recorded runs in the store."""

from __future__ import annotations

import argparse
from pathlib import Path

from replaykit.cli._common import add_json, add_store, console, print_json


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("runs", help="list recorded runs")
    add_store(parser)
    add_json(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    # The stdlib-only listing: no pydantic import, each file's header line only (fast on any store).
    from replaykit.core.trace.store_index import default_store_root, iter_summaries

    root = Path(args.store).expanduser() if args.store is not None else default_store_root()
    summaries = sorted(iter_summaries(root), key=lambda s: s.created_at)
    if args.json:
        print_json({"store": str(root), "runs": [s.to_json() for s in summaries]})
        return 0
    from rich.table import Table

    out = console()
    if not summaries:
        out.print(f"no runs in {root}")
        return 0
    table = Table(title=f"runs in {root}", title_justify="left")
    for column in ("run id", "created", "source", "model", "lineage", "size"):
        table.add_column(column)
    for s in summaries:
        lineage = f"{s.relation} of {s.parent_run_id}" if s.parent_run_id else ""
        table.add_row(s.run_id, s.created_at[:19], s.framework, s.model or "", lineage, f"{s.size_bytes:,} B")
    out.print(table)
    return 0
