"""replaykit inspect RUN: the timeline, failing step highlighted."""

from __future__ import annotations

import argparse
from typing import Any

from replaykit.cli._common import add_json, add_store, console, load_run, print_json
from replaykit.core import jsonsafe


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
        "lineage": jsonsafe.model_data(header.lineage, exclude_none=True) if header.lineage else None,
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
    extras = _extras(run)
    from replaykit.core.health import run_health

    health = run_health(run)
    extras["health"] = health.to_json()
    if args.json:
        print_json({**summary(run), "timeline": rows, **extras})
        return 0
    from rich.table import Table
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
    if info["final_answer"] is not None:
        out.print(Text("final answer: " + info["final_answer"]))
    if "graph_mermaid" in extras:
        out.print("[bold]graph (mermaid)[/]")
        out.print(Text(extras["graph_mermaid"]))
    return 0


def _extras(run: Any) -> dict[str, Any]:
    """Optional sections contributed by installed exporters (e.g. the LangGraph drawing)."""
    try:
        from replaykit.engines.langgraph.graph import mermaid_for_run  # type: ignore[import-not-found]
    except ImportError:
        return {}
    try:
        return {"graph_mermaid": mermaid_for_run(run)}
    except Exception:
        return {}
