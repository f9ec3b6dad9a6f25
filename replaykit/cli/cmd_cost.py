"""replaykit cost RUN: the cost ledger (per step, per run, and a branch against its original)."""

from __future__ import annotations

import argparse
from decimal import Decimal
from typing import Any

from replaykit.cli._common import add_json, add_store, console, load_run, open_store, print_json


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "cost", help="cost ledger: per LLM step, per run, and a branch against its original",
    )
    parser.add_argument("run", metavar="RUN", help="run id in the store, or path to a trace file")
    parser.add_argument(
        "--provider", metavar="ID", default=None,
        help="price every call as this genai-prices provider (e.g. openai, anthropic, openrouter); "
             "needed for runs sent to a local endpoint",
    )
    add_store(parser)
    add_json(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from replaykit.core.analysis.cost import run_cost, to_json

    run = load_run(args)
    parent, note = _parent(args, run)
    ledger = run_cost(run, parent=parent, price_as=args.provider, parent_note=note)
    if args.json:
        print_json(to_json(ledger))
        return 0
    _print(ledger)
    return 0


def _parent(args: argparse.Namespace, run: Any) -> tuple[Any, str | None]:
    """The run this one was branched / replayed / played from, when the store still has it."""
    from replaykit.core.errors import ReplaykitError

    lineage = run.header.lineage
    if lineage is None or lineage.relation not in ("branch", "replay", "play"):
        return None, None
    try:
        store = open_store(args)
        if not store.exists(lineage.parent_run_id):
            return None, f"original run {lineage.parent_run_id} is not in the store"
        return store.load(lineage.parent_run_id), None
    except ReplaykitError as exc:
        return None, f"original run {lineage.parent_run_id} could not be read ({exc})"


def money(value: Decimal | None) -> str:
    if value is None:
        return "unknown"
    if value == 0:
        return "$0"
    return f"${value:,.6f}".rstrip("0").rstrip(".") if value < 1 else f"${value:,.4f}"


def total_text(total: Any) -> str:
    if total.steps == 0:
        return "$0 (no steps)"
    if total.unknown_steps == 0:
        return f"{money(total.known)} ({total.steps} step{'s' if total.steps != 1 else ''})"
    if total.unknown_steps == total.steps:
        return f"unknown ({total.steps} step{'s' if total.steps != 1 else ''})"
    return f"unknown: {money(total.known)} known + {total.unknown_steps} of {total.steps} steps unknown"


def _print(ledger: Any) -> None:
    from rich.table import Table
    from rich.text import Text

    out = console()
    out.print(Text(f"cost of {ledger.run_id}  model {ledger.model or '?'}  "
                   f"prices: {ledger.source or 'unavailable (genai-prices not installed)'}"))
    table = Table(show_lines=False)
    for column in ("step", "provenance", "model", "in", "out", "cache", "cost"):
        table.add_column(column, overflow="fold", justify="right" if column in ("in", "out", "cache") else "left")
    for s in ledger.steps:
        usage = s.usage
        cache = "" if usage is None else str((usage.cache_read_tokens or 0) + (usage.cache_write_tokens or 0) or "")
        if s.provenance == "served":
            cost = f"free (served; {money(s.price.total)} saved)"
        elif s.cost is None:
            cost = "unknown"  # the reasons are listed under the table
        else:
            cost = money(s.cost)
        table.add_row(
            Text(str(s.step)), Text(s.provenance), Text(s.model or "?"),
            Text("" if usage is None or usage.input_tokens is None else str(usage.input_tokens)),
            Text("" if usage is None or usage.output_tokens is None else str(usage.output_tokens)),
            Text(cache), Text(cost), style="dim" if s.cost is None else None,
        )
    out.print(table)
    reasons = sorted({s.price.reason for s in ledger.steps if s.price.reason})
    for reason in reasons:
        out.print(Text(f"unknown because: {reason}", style="dim"))
    out.print(Text(f"paid by this run: {total_text(ledger.paid)}"))
    if ledger.live.steps or ledger.served.steps:
        out.print(Text(f"  live part: {total_text(ledger.live)}"))
        out.print(Text(f"  served from the record for free: {total_text(ledger.served)}"))
    if ledger.no_call:
        out.print(Text(f"  {ledger.no_call} step(s) made no provider call (synthetic or edited): $0"))
    if ledger.branch is not None:
        b = ledger.branch
        out.print(Text(f"original run {b.parent_run_id}: {total_text(b.original_total)}"))
        out.print(Text(f"  original from step {b.cut_step or 0} on (re-run live here): "
                       f"{total_text(b.original_after_cut)}"))
    if ledger.parent_note:
        out.print(Text(f"note: {ledger.parent_note}"))
