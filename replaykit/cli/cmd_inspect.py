"""replaykit inspect RUN [--step N] [--graph]: the timeline (failing step highlighted), or one step whole.

The timeline is one line per event, clipped to the terminal's width (it reads in 80 columns); the
structured fields of each entry are in ``--json``. ``--step N`` shows the request exactly as the
provider received it and the whole response (``replaykit.core.step_detail``). The LangGraph drawing
(Mermaid source) appears only with ``--graph``, so a plain inspect never imports LangGraph.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from replaykit.cli._common import add_json, add_store, console, load_run, print_json
from replaykit.core import jsonsafe


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser("inspect", help="show a run's timeline (failing step highlighted)")
    parser.add_argument("run", metavar="RUN", help="run id in the store, or path to a trace file")
    parser.add_argument("--all", action="store_true", help="also show bookkeeping events (tools, meta)")
    parser.add_argument("--step", type=int, default=None, metavar="N",
                        help="show step N whole: the request as the provider received it, the response")
    parser.add_argument("--graph", action="store_true", help="also print the LangGraph drawing (Mermaid source)")
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
        "tags": list(header.tags),
        "status": run.status,
        "steps": len(run.steps),
        "events": len(run.events),
        "failing_step": run.failing_step,
        "final_answer": run.final_answer,
        "duration": round(run.duration, 6),
    }


def handle(args: argparse.Namespace) -> int:
    run = load_run(args)
    if args.step is not None:
        return _show_step(run, args.step, as_json=args.json)
    from replaykit.core.timeline import timeline_rows

    rows = timeline_rows(run, include_bookkeeping=args.all)
    extras = _graph(run) if args.graph else {}
    from replaykit.core.health import run_health

    health = run_health(run)
    extras["health"] = health.to_json()
    if args.json:
        print_json({**summary(run), "timeline": rows, **extras})
        return 0
    from rich.text import Text

    out = console()
    width = max(60, out.width)
    info = summary(run)
    out.print(Text(f"run {info['run_id']}  {info['created_at']}", style="bold"))
    out.print(Text(f"{info['source'].get('framework')} · model {info['model'] or '?'} · {info['status']} · "
                   f"{info['steps']} steps · {info['duration']:.3f}s"))
    out.print(Text(f"health {health.summary()}"), style="bold red" if health.score < 50 else None)
    if info["lineage"]:
        lin = info["lineage"]
        out.print(Text(f"{lin['relation']} of {lin['parent_run_id']} at step {lin.get('parent_step')}"))
    if info["failing_step"] is not None:
        out.print(Text(f"FAILING STEP {info['failing_step']}  (replaykit inspect {info['run_id']} "
                       f"--step {info['failing_step']})", style="bold red"))
    _print_lines(out, rows, width)
    if info["final_answer"] is not None:
        out.print(Text("final answer: " + info["final_answer"]))
    if "graph_mermaid" in extras:
        out.print(Text("graph (mermaid)", style="bold"))
        out.print(Text(extras["graph_mermaid"]))
    return 0


_SHORT_KINDS = {"llm_call": "llm", "tool_call": "tool"}


def _print_lines(out: Any, rows: list[dict[str, Any]], width: int) -> None:
    """One line per event, clipped to ``width``. Plain lines go straight to the console's file in
    batches; only the failing and error rows go through rich for their colour (rich per line costs
    seconds on a 10,000-step run)."""
    from rich.text import Text

    out.print(Text(f"{'step':>5} {'t(s)':>7} {'kind':<10} {'prov':<9} {'status':<10} what", style="dim"))
    pending: list[str] = []
    for row in rows:
        step = "" if row["step"] is None else str(row["step"])
        mark = "✗ " if row["failing"] else ""
        kind = _SHORT_KINDS.get(row["kind"], row["kind"])[:10]
        head = f"{step:>5} {row['t']:>7.2f} {kind:<10} {row['provenance'][:9]:<9} {row['status'][:10]:<10} "
        line = head + _clip(mark + " ".join(row["summary"].split()), width - len(head))
        if row["failing"] or row["kind"] == "error":
            if pending:
                out.file.write("\n".join(pending) + "\n")
                pending = []
            out.print(Text(line, style="bold red"), overflow="crop", no_wrap=True)
        else:
            pending.append(line)
    if pending:
        out.file.write("\n".join(pending) + "\n")


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(1, width - 1)] + "…"


def _block(out: Any, title: str, body: str, style: str = "") -> None:
    """A heading, then the body indented by two (wrapped lines too: it stays readable in 80 columns)."""
    from rich.padding import Padding
    from rich.text import Text

    out.print(Text(title, style=style or "bold"))
    out.print(Padding(Text(body or ""), (0, 0, 0, 2), expand=False))


def _pretty(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2, default=str)


def _show_step(run: Any, index: int, *, as_json: bool) -> int:
    from rich.text import Text

    from replaykit.core.step_detail import step_detail

    detail = step_detail(run, index)
    if as_json:
        print_json(detail)
        return 0
    out = console()
    flag = "  ✗ FAILING STEP" if detail["failing"] else ""
    duration = "" if detail["duration"] is None else f", took {detail['duration']:.3f}s"
    out.print(Text(f"run {detail['run_id']} · step {index} · {detail['kind']} · {detail['provenance']}{flag}",
                   style="bold red" if detail["failing"] else "bold"))
    out.print(Text(f"t={detail['t']:.3f}s{duration} · event {detail['event_id']} (seq {detail['seq']})"))
    if detail["kind"] == "tool":
        out.print(Text(f"tool {detail['tool']} · call id {detail['call_id']} · status {detail['status']}"))
        _block(out, "arguments", _pretty(detail["arguments"]))
        if detail["error"]:
            _block(out, "error", detail["error"], "bold red")
        _block(out, "result", detail["result"] if detail["result"] is not None else "(none)")
        return 0
    request, response = detail["request"], detail["response"]
    out.print(Text(f"api {detail['api']} · model {detail['model'] or '?'} · {len(request['messages'])} messages "
                   f"({request['new_messages']} new) · tools {', '.join(request['tools']) or 'none'}"))
    if request["params"]:
        out.print(Text("params " + json.dumps(request["params"], ensure_ascii=False, sort_keys=True)))
    provider = request["provider_messages"]
    if provider is not None:
        out.print(Text(f"request messages as the provider received them ({detail['api']})", style="bold"))
        for n, item in enumerate(provider):
            _provider_message(out, n, item)
    else:
        from replaykit.core.step_detail import message_text

        out.print(Text("request messages (IR)", style="bold"))
        for n, message in enumerate(request["messages"]):
            _block(out, f"[{n}] {message['role']}", message_text(message), "cyan")
    for loss in request["losses"]:
        out.print(Text("lost in encoding: " + loss, style="yellow"))
    out.print(Text(f"response · finish {response['finish_reason']} · model {response['model'] or '?'}", style="bold"))
    if response["text"]:
        _block(out, "text", response["text"], "cyan")
    for call in response["tool_calls"]:
        _block(out, f"tool call {call['name']} ({call['id']})", _pretty(call["arguments"]), "cyan")
    if response["usage"]:
        out.print(Text("usage " + json.dumps(response["usage"], sort_keys=True)))
    cost = detail["cost"]
    if cost is not None:
        shown = "unknown" + (f" ({cost['unknown_reason']})" if cost["unknown_reason"] else "") \
            if cost["cost"] is None else f"${cost['cost']:.6f}"
        out.print(Text("cost " + shown))
    return 0


def _provider_message(out: Any, index: int, item: Any) -> None:
    """One provider message: its role (or item type) as a heading, its text raw, the rest as JSON."""
    if not isinstance(item, dict):
        _block(out, f"[{index}]", _pretty(item), "cyan")
        return
    role = item.get("role") or item.get("type") or "?"
    content = item.get("content")
    rest = {k: v for k, v in item.items() if k not in ("role", "content", "_from")}
    body = content if isinstance(content, str) else ("" if content is None else _pretty(content))
    if rest:
        body = (body + "\n" if body else "") + _pretty(rest)
    _block(out, f"[{index}] {role}", body, "cyan")


def _graph(run: Any) -> dict[str, Any]:
    """The LangGraph drawing, when that exporter and LangGraph are installed."""
    try:
        from replaykit.engines.langgraph.graph import mermaid_for_run  # type: ignore[import-not-found]
    except ImportError:
        return {}
    try:
        return {"graph_mermaid": mermaid_for_run(run)}
    except Exception:
        return {}
