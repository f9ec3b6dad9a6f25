"""replaykit demo [--out DIR] [--base-url URL --model NAME [--api-key-env VAR]] [--json]: the whole
product on a bundled real Hermes recording, offline (the flow is in ``replaykit.cli.demo_flow``).

Exit 0 when every available step succeeded, 1 when one failed (a failed check), 2 for bad input.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from replaykit.cli._common import add_json, print_json

_MARKS = {"ok": ("ok  ", "green"), "skipped": ("skip", "yellow"), "failed": ("FAIL", "bold red")}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo", help="the whole product on a bundled Hermes recording, offline",
        description="Inspect, replay, branch, play live (a scripted local server by default), diff, export "
                    "to every format, redact and run the exported script, all under --out.")
    parser.add_argument("--out", metavar="DIR", default="replaykit-demo",
                        help="output directory with its own store (default: ./replaykit-demo)")
    parser.add_argument("--base-url", metavar="URL", default=None,
                        help="play the branch against this OpenAI-compatible endpoint instead of the scripted one")
    parser.add_argument("--model", metavar="NAME", default=None, help="model name at --base-url")
    parser.add_argument("--api-key-env", metavar="VAR", default=None,
                        help="name of the environment variable holding the API key (never stored)")
    add_json(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from replaykit.cli.demo_flow import DemoOptions, StepResult, run_demo

    options = DemoOptions(out=Path(args.out).expanduser().absolute(), base_url=args.base_url, model=args.model,
                          api_key_env=args.api_key_env)
    out = None if args.json else _console()

    def show(step: StepResult) -> None:
        if out is None:
            return
        from rich.text import Text

        mark, style = _MARKS[step.status]
        line = Text()
        line.append(f"[{mark}] ", style=style)
        line.append(f"{step.name:<20}", style="bold")
        line.append(f" {step.summary}")  # Text, not markup: trace content is never interpreted
        line.append(f"  ({step.seconds:.2f}s)", style="dim")
        out.print(line)

    if out is not None:
        from rich.text import Text

        out.print(Text(f"replaykit demo -> {options.out}", style="bold"))
    report = run_demo(options, on_step=show)
    if args.json:
        print_json(report.to_json())
    else:
        _summary(out, report)
    return 0 if report.ok else 1


def _console() -> Any:
    from rich.console import Console

    # soft_wrap: long paths stay on one line (copy-pastable) instead of being cut at 80 columns.
    return Console(highlight=False, soft_wrap=True)


def _shown(path: str | Path) -> str:
    """``path`` relative to the current directory when it is below it (shorter to read and paste)."""
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _summary(out: Any, report: Any) -> None:
    from rich.text import Text

    doc = report.to_json()
    counts = doc["counts"]
    out.print()
    out.print(Text(f"{counts['ok']} steps ok, {counts['skipped']} skipped, {counts['failed']} failed",
                   style="bold green" if report.ok else "bold red"))
    out.print(Text("Where everything went:", style="bold"))
    for step in report.steps:
        for label, path in step.paths.items():
            out.print(Text(f"  {label:<18} {_shown(path)}"))
    store = _shown(report.store)
    out.print(Text("Try next:", style="bold"))
    if report.run_id:
        out.print(Text(f"  replaykit inspect {report.run_id} --store {store}"))
    if report.run_id and report.play_run_id:
        out.print(Text(f"  replaykit diff {report.run_id} {report.play_run_id} --store {store}"))
    out.print(Text(f"  python {_shown(report.out / 'exports' / 'run.py')} --edit 1 '{{\"result\": \"...\"}}'"))
    out.print(Text(f"  open {_shown(report.out / 'exports' / 'report.html')} in a browser"))
