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
    from rich import box

    # A run id is what one copies into the next command: never cut or wrapped, whatever the width. On a
    # narrow terminal the table drops the size and source columns and shortens the date instead.
    id_width = max(len(s.run_id) for s in summaries)
    narrow = out.width < id_width + 70
    table = Table(title=f"runs in {root}", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("run id", no_wrap=True, min_width=id_width)
    columns = ("created", "model", "lineage") if narrow else ("created", "source", "model", "lineage", "size")
    for column in columns:
        table.add_column(column, overflow="fold", no_wrap=column == "created")
    for s in summaries:
        lineage = f"{s.relation} of {s.parent_run_id}" if s.parent_run_id else ""
        created = s.created_at[5:16].replace("T", " ") if narrow else s.created_at[:19]
        cells = {"created": created, "source": s.framework, "model": s.model or "", "lineage": lineage,
                 "size": f"{s.size_bytes:,} B"}
        table.add_row(s.run_id, *(cells[c] for c in columns))
    out.print(table)
    return 0
