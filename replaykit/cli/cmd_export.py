"""replaykit export RUN --format ... -o PATH: one dispatcher for every exporter.

Single-run formats call ``<module>.export(run, path, **options) -> dict`` (a summary of what was
written). Training-data formats take several runs (or ``--all``) and are handled by
``replaykit.cli.cmd_export_training.export_training(args)``.
"""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path
from typing import Any

from replaykit.cli._common import add_json, add_store, console, load_run, print_json
from replaykit.cli._corpus_flags import add_corpus_flags

SINGLE_RUN = {
    "python": "replaykit.exporters.python_script",
    "langgraph": "replaykit.exporters.langgraph_source",
    "pydantic-ai": "replaykit.exporters.pydantic_ai_source",
    "html": "replaykit.exporters.html_report",
}
TRAINING = ("openai-jsonl", "sharegpt", "trl")


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser("export", help="export a run (script, graph, agent, training data, html)")
    parser.add_argument("runs", metavar="RUN", nargs="*", help="run id(s) or trace file(s)")
    parser.add_argument("--format", required=True, choices=sorted([*SINGLE_RUN, *TRAINING]))
    parser.add_argument("-o", "--output", required=True, metavar="PATH")
    parser.add_argument("--force", action="store_true", help="overwrite PATH if it exists")
    parser.add_argument("--all", action="store_true", help="training formats: every run in the store")
    parser.add_argument("--no-redact", action="store_true", help="training formats: do not redact")
    parser.add_argument("--mode", choices=("ner", "patterns"), default=None, help="redaction mode")
    parser.add_argument("--preference-chosen", choices=("original", "branch"), default=None,
                        help="training formats: write preference pairs; which side is 'chosen'")
    parser.add_argument("--min-health", type=int, default=None, metavar="S",
                        help="training formats: leave out runs whose health score is below S (0-100)")
    parser.add_argument("--parquet", action="store_true", help="training formats, -o DIR: Parquet shards too")
    add_corpus_flags(parser)
    add_store(parser)
    add_json(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from replaykit.core.errors import BadInput

    if args.format in TRAINING:
        try:
            module = importlib.import_module("replaykit.cli.cmd_export_training")
        except ModuleNotFoundError as exc:
            if exc.name != "replaykit.cli.cmd_export_training":
                raise
            raise BadInput(f"export format {args.format!r} is not available in this build") from exc
        return int(module.export_training(args))
    if len(args.runs) != 1 or args.all:
        raise BadInput(f"--format {args.format} exports exactly one RUN")
    module_name = SINGLE_RUN[args.format]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        raise BadInput(f"export format {args.format!r} is not available in this build") from exc
    out = Path(args.output).expanduser()
    if out.exists() and not args.force:
        raise BadInput(f"{out} exists; pass --force to overwrite")
    if out.is_dir():
        raise BadInput(f"{out} is a directory")
    run = load_run(args, args.runs[0])
    info: dict[str, Any] = module.export(run, out)
    document = {"run_id": run.run_id, "format": args.format, "path": str(out), **info}
    if args.json:
        print_json(document)
    else:
        console().print(f"exported {run.run_id} as {args.format} -> {out}")
    return 0
