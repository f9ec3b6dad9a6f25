"""replaykit runs: list recorded runs in the store."""

from __future__ import annotations

import argparse

from replaykit.cli._common import add_json, add_store, console, open_store, print_json


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("runs", help="list recorded runs")
    add_store(parser)
    add_json(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    store = open_store(args)
    summaries = sorted(store.iter_summaries(), key=lambda s: s.created_at)
    if args.json:
        print_json({"store": str(store.root), "runs": [s.to_json() for s in summaries]})
        return 0
    from rich.table import Table

    out = console()
    if not summaries:
        out.print(f"no runs in {store.root}")
        return 0
    table = Table(title=f"runs in {store.root}", title_justify="left")
    for column in ("run id", "created", "source", "model", "lineage", "size"):
        table.add_column(column)
    for s in summaries:
        lineage = f"{s.relation} of {s.parent_run_id}" if s.parent_run_id else ""
        table.add_row(s.run_id, s.created_at[:19], s.framework, s.model or "", lineage, f"{s.size_bytes:,} B")
    out.print(table)
    return 0
