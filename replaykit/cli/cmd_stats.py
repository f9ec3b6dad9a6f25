"""replaykit stats [RUN...] [--html PATH]: a corpus report (counts, tokens, cost, durations, health,
per model and per tool failure rates, the worst runs with their reasons).

Without RUNs it reads the whole store (redacted copies left out). The per-run work runs on the corpus
pipeline (``--workers`` / ``--cluster``); the HTML page draws its charts as inline SVG, no script.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from replaykit.cli._common import add_json, add_store, console, open_store, print_json
from replaykit.cli._corpus_flags import add_corpus_flags, corpus_kwargs, report_damaged


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser("stats", help="corpus report: counts, cost, health, failures per tool/model")
    parser.add_argument("runs", metavar="RUN", nargs="*", help="run ids, files, directories or globs (default: the store)")
    parser.add_argument("--html", metavar="PATH", default=None, help="also write an HTML report (inline SVG charts)")
    parser.add_argument("--force", action="store_true", help="overwrite the --html file")
    add_corpus_flags(parser)
    add_store(parser)
    add_json(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from replaykit.core.corpus import corpus_report, corpus_sources, run_corpus, stats_task
    from replaykit.core.errors import BadInput

    html_path = Path(args.html).expanduser() if args.html else None
    if html_path is not None and html_path.exists() and not args.force:
        raise BadInput(f"{html_path} exists; pass --force to overwrite")
    store = open_store(args)
    sources = corpus_sources(store, list(args.runs), all_runs=not args.runs)
    summary = run_corpus(sources, stats_task, {"cost": True}, command="stats", collect_info=True,
                         label="reading runs", **corpus_kwargs(args))
    report_damaged(summary.damaged)
    report = corpus_report(summary.infos, summary.damaged)
    if html_path is not None:
        from replaykit.exporters.stats_html import write_stats_html

        write_stats_html(report, html_path)
        report["html"] = str(html_path)
    if args.json:
        print_json(report)
    else:
        _print(report)
    return 0


def _print(report: dict[str, Any]) -> None:
    from rich.table import Table
    from rich.text import Text

    out = console()
    tokens, cost, dur, health = report["tokens"], report["cost_usd"], report["duration_s"], report["health"]
    unknown = f" (+{cost['runs_with_unknown_cost']} runs of unknown cost)" if cost["runs_with_unknown_cost"] else ""
    out.print(Text(f"{report['runs']} runs, {report['steps']} steps ({report['llm_calls']} LLM calls, "
                   f"{report['tool_calls']} tool calls), {len(report['damaged'])} damaged"))
    out.print(Text(f"tokens {tokens['input']} in / {tokens['output']} out; cost ${cost['known']:.4f}{unknown}; "
                   f"duration total {dur['total']}s, p50 {dur['p50']}s, p90 {dur['p90']}s"))
    out.print(Text(f"health mean {health['mean']}, min {health['min']}; "
                   + " ".join(f"{b}:{n}" for b, n in health["histogram"].items())))
    for title, rows, key in (("models", report["models"], "model"), ("tools", report["tools"], "tool")):
        table = Table(title=title)
        for column in (key, "calls", "failures", "failure rate"):
            table.add_column(column)
        for row in rows[:20]:
            table.add_row(Text(str(row[key])), str(row["calls"]), str(row["failures"]), f"{row['failure_rate']:.1%}")
        out.print(table)
    table = Table(title="worst runs")
    for column in ("run", "health", "reasons"):
        table.add_column(column, overflow="fold")
    for row in report["worst_runs"]:
        table.add_row(Text(row["run_id"]), str(row["health"]), Text("; ".join(row["reasons"]) or "-"))
    out.print(table)
