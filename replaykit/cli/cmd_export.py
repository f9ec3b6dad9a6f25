"""replaykit export RUN --format ... -o PATH: the command line over ``replaykit.exporters``.

Single-run formats go through ``replaykit.exporters.export`` (the format table lives there).
Training-data formats take several runs (or ``--all``) and are handled by
``replaykit.cli.cmd_export_training.export_training(args)``.
"""

from __future__ import annotations

import argparse

from replaykit.cli._common import add_json, add_store, console, load_run, print_json
from replaykit.exporters import FORMATS, TRAINING_FORMATS


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser("export", help="export a run (script, graph, agent, training data, html)")
    parser.add_argument("runs", metavar="RUN", nargs="*", help="run id(s) or trace file(s)")
    parser.add_argument("--format", required=True, choices=sorted([*FORMATS, *TRAINING_FORMATS]))
    parser.add_argument("-o", "--output", required=True, metavar="PATH")
    parser.add_argument("--force", action="store_true", help="overwrite PATH if it exists")
    parser.add_argument("--all", action="store_true", help="training formats: every run in the store")
    parser.add_argument("--no-redact", action="store_true", help="training formats: do not redact")
    parser.add_argument("--mode", choices=("ner", "patterns"), default=None, help="redaction mode")
    parser.add_argument("--fail-closed", action="store_true",
                        help="training formats: replace a string that cannot be analysed whole")
    parser.add_argument("--preference-chosen", choices=("original", "branch"), default=None,
                        help="training formats: write preference pairs; which side is 'chosen'")
    add_store(parser)
    add_json(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from replaykit.cli.cmd_export_training import export_training
    from replaykit.core.errors import BadInput
    from replaykit.exporters import export

    if args.format in TRAINING_FORMATS:
        return export_training(args)
    if len(args.runs) != 1 or args.all:
        raise BadInput(f"--format {args.format} exports exactly one RUN")
    run = load_run(args, args.runs[0])
    document = export(run, args.format, args.output, force=args.force)
    if args.json:
        print_json(document)
    else:
        console().print(f"exported {run.run_id} as {args.format} -> {document['path']}")
    return 0
