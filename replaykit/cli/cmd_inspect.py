"""replaykit inspect RUN [--step N] [--graph]: the timeline (failing step highlighted), or one step whole.

The timeline is one line per event, clipped to the terminal's width (it reads in 80 columns); the
structured fields of each entry are in ``--json``. ``--step N`` shows the request exactly as the
provider received it and the whole response (``replaykit.core.analysis.step_detail``). The LangGraph drawing
(Mermaid source) appears only with ``--graph``, so a plain inspect never imports LangGraph.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from replaykit.cli._common import add_json, add_store, console, load_run, print_json, warn_read_report


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


def handle(args: argparse.Namespace) -> int:
    if args.step is not None:
        return _show_step(load_run(args), args.step, as_json=args.json)
    view = _view(args)
    if args.json:
        print_json(view.to_json())
        return 0
    from rich.text import Text

    out = console()
    width = max(60, out.width)
    info, health = view.summary, view.health
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
    _print_lines(out, view.rows, width)
    if info["final_answer"] is not None:
        out.print(Text("final answer: " + info["final_answer"]))
    if "graph_mermaid" in view.extras:
        out.print(Text("graph (mermaid)", style="bold"))
        out.print(Text(view.extras["graph_mermaid"]))
    return 0


def _view(args: argparse.Namespace) -> Any:
    """The run's summary, timeline and health: one streaming pass over the file (no pydantic, memory
    O(rows)); the validating reader only for ``--graph`` (it needs the run) or when the streaming pass
    meets something it cannot vouch for (that reader then words the error)."""
    from replaykit.core.analysis.inspect_view import NeedsFullReader, inspect_run, inspect_trace

    if not args.graph:
        from replaykit.core.trace.store_index import default_store_root, resolve_ref

        root = Path(args.store).expanduser() if args.store is not None else default_store_root()
        path = resolve_ref(root, args.run)
        try:
            view = inspect_trace(path, include_bookkeeping=args.all)
        except NeedsFullReader:
            pass
        else:
            warn_read_report(view.report)
            return view
    run = load_run(args)
    view = inspect_run(run, include_bookkeeping=args.all)
    if args.graph:
        view.extras.update(_graph(run))
    return view


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

    from replaykit.core.analysis.step_detail import step_detail

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
    wire = request.get("wire") or {}
    if wire.get("from"):
        out.print(Text(f"sent live on {wire['api']}, translated from the recording's {wire['from']}: "
                       f"{len(request['translation_losses'])} translation loss(es)", style="yellow"))
    for loss in request.get("translation_losses") or []:
        out.print(Text("lost in translation: " + loss, style="yellow"))
    provider = request["provider_messages"]
    if provider is not None:
        out.print(Text(f"request messages as the provider received them ({detail['api']})", style="bold"))
        for n, item in enumerate(provider):
            _provider_message(out, n, item)
    else:
        from replaykit.core.analysis.step_detail import message_text

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
