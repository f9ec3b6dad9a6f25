"""replaykit inspect RUN: the timeline, failing step highlighted."""

from __future__ import annotations

import argparse
from typing import Any

from replaykit.cli._common import add_json, add_store, console, load_run, print_json


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser("inspect", help="show a run's timeline (failing step highlighted)")
    parser.add_argument("run", metavar="RUN", help="run id in the store, or path to a trace file")
    parser.add_argument("--all", action="store_true", help="also show bookkeeping events (tools, meta)")
    add_store(parser)
    add_json(parser)
    parser.set_defaults(handler=handle)


def summary(run: Any) -> dict[str, Any]:
    header = run.header
    return {
        "run_id": run.run_id,
        "created_at": header.created_at,
        "source": header.source.model_dump(exclude_none=True),
        "model": run.model,
        "provider": header.provider,
        "base_url": header.base_url,
        "api_mode": header.api_mode,
        "lineage": header.lineage.model_dump(mode="json", exclude_none=True) if header.lineage else None,
        "status": run.status,
        "steps": len(run.steps),
        "events": len(run.events),
        "failing_step": run.failing_step,
        "final_answer": run.final_answer,
        "duration": round(run.duration, 6),
    }


def handle(args: argparse.Namespace) -> int:
    from replaykit.core.timeline import timeline_rows

    run = load_run(args)
    rows = timeline_rows(run, include_bookkeeping=args.all)
    # The Mermaid drawing needs LangGraph and walks the whole run: only on request (``--graph``).
    extras = _extras(run) if getattr(args, "graph", False) else {}
    from replaykit.core.health import run_health

    health = run_health(run)
    extras["health"] = health.to_json()
    if args.json:
        print_json({**summary(run), "timeline": rows, **extras})
        return 0
    from rich.text import Text

    out = console()
    info = summary(run)
    out.print(f"[bold]run[/] {info['run_id']}  [dim]{info['created_at']}[/]")
    out.print(
        Text(
            f"source {info['source'].get('framework')}  model {info['model'] or '?'}  "
            f"status {info['status']}  steps {info['steps']}  duration {info['duration']:.3f}s"
        )
    )
    out.print(Text(f"health {health.summary()}"), style="bold red" if health.score < 50 else None)
    if info["lineage"]:
        lin = info["lineage"]
        out.print(Text(f"{lin['relation']} of {lin['parent_run_id']} at step {lin.get('parent_step')}"))
    if len(rows) > TABLE_ROWS_MAX:
        _print_lines(out, rows)
    else:
        _print_table(out, rows)
    if info["final_answer"] is not None:
        out.print(Text("final answer: " + info["final_answer"]))
    if "graph_mermaid" in extras:
        out.print("[bold]graph (mermaid)[/]")
        out.print(Text(extras["graph_mermaid"]))
    return 0


# rich lays a Table out by measuring every cell: seconds of CPU for a 10,000-step run. Longer timelines
# are printed as aligned lines, only the failing and error rows styled.
TABLE_ROWS_MAX = 500


def _print_lines(out: Any, rows: list[dict[str, Any]]) -> None:
    from rich.text import Text

    pending = [f"{'step':>6}  {'t (s)':>9}  {'kind':<11} {'provenance':<10} {'status':<10} what"]
    for row in rows:
        step = "" if row["step"] is None else str(row["step"])
        marker = " ✗ FAILING STEP" if row["failing"] else ""
        line = (f"{step:>6}  {row['t']:>9.3f}  {row['kind']:<11} {row['provenance']:<10} {row['status']:<10} "
                f"{row['summary']}{marker}")
        if row["failing"] or row["kind"] == "error":
            out.file.write("\n".join(pending) + "\n" if pending else "")
            pending = []
            out.print(Text(line, style="bold red"), soft_wrap=True)
        else:
            pending.append(line)
    if pending:
        out.file.write("\n".join(pending) + "\n")


def _print_table(out: Any, rows: list[dict[str, Any]]) -> None:
    from rich.table import Table
    from rich.text import Text

    table = Table(show_lines=False)
    for column in ("step", "t (s)", "kind", "provenance", "status", "what"):
        table.add_column(column, overflow="fold")
    for row in rows:
        style = "bold red" if row["failing"] or row["kind"] == "error" else None
        step = "" if row["step"] is None else str(row["step"])
        marker = " ✗ FAILING STEP" if row["failing"] else ""
        table.add_row(
            Text(step), Text(f"{row['t']:.3f}"), Text(row["kind"]), Text(row["provenance"]),
            Text(row["status"]), Text(row["summary"] + marker), style=style,
        )
    out.print(table)


def _extras(run: Any) -> dict[str, Any]:
    """Optional sections contributed by installed exporters (the LangGraph drawing); imports LangGraph."""
    try:
        from replaykit.engines.langgraph.graph import mermaid_for_run  # type: ignore[import-not-found]
    except ImportError:
        return {}
    try:
        return {"graph_mermaid": mermaid_for_run(run)}
    except Exception:
        return {}
