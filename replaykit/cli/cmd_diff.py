"""replaykit diff RUN_A RUN_B [--json] [--html PATH]: first divergence and every later difference;
exit 0 when equal, 1 when they differ."""

from __future__ import annotations

import argparse
from typing import Any

from replaykit.cli._common import add_json, add_store, console, load_run, open_store, print_json


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("diff", help="compare two runs step by step (exit 1 when they differ)")
    parser.add_argument("run_a", metavar="RUN_A", help="run id in the store, or path to a trace file")
    parser.add_argument("run_b", metavar="RUN_B", help="run id in the store, or path to a trace file")
    parser.add_argument("--html", metavar="PATH", default=None, help="also write a side-by-side HTML report")
    add_store(parser)
    add_json(parser)
    parser.set_defaults(handler=handle)


def _edits(store: Any, runs: list[Any]) -> list[Any]:
    from replaykit.core.play import lineage_chain

    edits = []
    for run in runs:
        for ancestor in lineage_chain(store, run):
            if ancestor.header.lineage is not None and ancestor.header.lineage.edit is not None:
                edits.append(ancestor.header.lineage.edit)
    return edits


def handle(args: argparse.Namespace) -> int:
    from replaykit.core.diff import diff_runs

    run_a = load_run(args, args.run_a)
    run_b = load_run(args, args.run_b)
    result = diff_runs(run_a, run_b, edits=_edits(open_store(args), [run_a, run_b]))
    if args.html:
        _write_html(result, args.html)
    if args.json:
        print_json(result.to_json())
        return 0 if result.equal else 1
    from rich.table import Table
    from rich.text import Text

    out = console()
    if result.equal:
        out.print(Text(f"equal: {result.run_a} and {result.run_b} ({result.steps_a} steps)"))
    else:
        first = result.first
        assert first is not None
        out.print(Text(f"differ: first divergence at step {first.step}, field {first.field}, cause {first.cause}"),
                  style="bold red")
    table = Table(show_lines=False)
    for column in ("step", f"A {result.run_a}", "prov A", f"B {result.run_b}", "prov B", "difference"):
        table.add_column(column, overflow="fold")
    for row in result.rows:
        a, b = row["a"] or {}, row["b"] or {}
        diff_text = f"{row['field']} ({row['cause']})" if row["differs"] else ""
        table.add_row(Text(str(row["step"])), Text(a.get("summary", "—")), Text(a.get("provenance", "")),
                      Text(b.get("summary", "—")), Text(b.get("provenance", "")), Text(diff_text),
                      style="red" if row["differs"] else None)
    out.print(table)
    for note in result.notes:
        out.print(Text(f"{note['kind']} in run {note['run'].upper()} at step {note['step']}: {note['reason']}"),
                  style="yellow")
    out.print(Text(f"{len(result.differences)} difference(s)"))
    return 0 if result.equal else 1


def _write_html(result: Any, path: str) -> None:
    from pathlib import Path

    from replaykit.exporters.html_report import write_diff_html

    write_diff_html(result, Path(path))
