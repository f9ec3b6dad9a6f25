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


def handle(args: argparse.Namespace) -> int:
    from replaykit.core.analysis.diff import diff_runs, lineage_edits

    run_a = load_run(args, args.run_a)
    run_b = load_run(args, args.run_b)
    result = diff_runs(run_a, run_b, edits=lineage_edits(open_store(args), [run_a, run_b]))
    if args.html:
        _write_html(result, args.html)
    if args.json:
        print_json(result.to_json())
        return 0 if result.equal else 1
    _print_text(result)
    return 0 if result.equal else 1


def _value(value: Any) -> str:
    import json

    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _print_text(result: Any) -> None:
    """The first divergence and its cause on top (with which messages changed), then the aligned steps
    as a unified diff: ``-`` only in A (or A's side), ``+`` only in B, one line each, clipped to the
    terminal's width."""
    from rich.text import Text

    from replaykit.core.analysis.message_diff import describe_change

    out = console()
    width = max(60, out.width)

    def line(text: str, style: str = "") -> None:
        out.print(Text(text if len(text) <= width else text[: width - 1] + "…", style=style), no_wrap=True,
                  overflow="crop")

    if result.equal:
        line(f"equal: {result.run_a} and {result.run_b} ({result.steps_a} steps)", "bold green")
    else:
        first = result.first
        where = f"A {first.step_a if first.step_a is not None else '-'} / B {first.step_b if first.step_b is not None else '-'}"
        line(f"differ: first divergence at step {first.step} ({where}), field {first.field}, cause {first.cause}",
             "bold red")
        if first.messages:
            for change in first.messages[:8]:
                line("  " + describe_change(change))
        else:
            line("  A: " + _value(first.a))
            line("  B: " + _value(first.b))
    counts = result.alignment()
    line(f"A {result.run_a} ({result.steps_a} steps) vs B {result.run_b} ({result.steps_b} steps): "
         f"{counts['equal']} equal, {counts['changed']} changed, {counts['removed']} only in A, "
         f"{counts['inserted']} only in B", "dim")
    for row in result.rows:
        a, b = row["a"] or {}, row["b"] or {}
        na = "" if row["step_a"] is None else str(row["step_a"])
        nb = "" if row["step_b"] is None else str(row["step_b"])
        head = f"{na:>3} {nb:>3} "
        why = f"{row['field']} differs ({row['cause']})"
        lost = f"[{row['losses_b']} lost in translation] " if row.get("losses_b") else ""
        if lost:
            b = {**b, "summary": lost + str(b.get("summary", ""))}
        if row["op"] == "equal":
            line(f"{head}  {lost}{a.get('summary', '')}")
        elif row["op"] == "removed":
            line(f"{head}- {a.get('summary', '')}", "red")
        elif row["op"] == "inserted":
            line(f"{head}+ {b.get('summary', '')}", "green")
        else:
            line(f"{head}~ {why}", "yellow")
            line(f"{'':>8}- {a.get('summary', '')}", "red")
            line(f"{'':>8}+ {b.get('summary', '')}", "green")
    shown: list[Any] = []
    for difference in result.differences[1:]:
        if difference.messages and difference.messages != shown:  # the same change again says nothing new
            shown = difference.messages
            line(f"step {difference.step}: the request differs ({difference.cause}):", "dim")
            for change in difference.messages[:4]:
                line("  " + describe_change(change))
    for note in result.notes:
        line(f"{note['kind']} in run {note['run'].upper()} at step {note['step']}: {note['reason']}", "yellow")
    if result.losses:
        line(f"translation losses (cross-API live steps): A {result.losses_a}, B {result.losses_b} "
             "(replaykit inspect RUN --step N lists them)", "yellow")
    line(f"{len(result.differences)} difference(s)")


def _write_html(result: Any, path: str) -> None:
    from pathlib import Path

    from replaykit.exporters.html_report import write_diff_html

    write_diff_html(result, Path(path))
