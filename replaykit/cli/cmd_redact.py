"""replaykit redact RUN [-o PATH] [--mode ner|patterns]: a redacted copy as a new run.

By default the copy goes into the store and its run id is printed; ``-o PATH`` writes a trace file
instead. The original is never modified. Several RUNs (or ``--all``) are redacted in parallel.

``redact --all -o DIR`` (or several RUNs with ``-o DIR``) runs the corpus pipeline
(``replaykit.core.corpus``): one redacted trace file per run in DIR (``redacted-<run id>``, so DIR is
a store), resumable through DIR's manifest, on local processes, Ray or Dask.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from replaykit.cli._common import add_json, add_store, console, open_store, print_json
from replaykit.cli._corpus_flags import add_corpus_flags, corpus_kwargs, report_damaged


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("redact", help="write a redacted copy of a run (PII and secrets)")
    parser.add_argument("runs", metavar="RUN", nargs="*", help="run id(s) or trace file(s)")
    parser.add_argument("-o", "--output", metavar="PATH", default=None, help="write a trace file (one RUN)")
    parser.add_argument("--mode", choices=("ner", "patterns"), default="ner",
                        help="ner: names and places too (spaCy); patterns: fast, no names (default: ner)")
    parser.add_argument("--allow", metavar="TERM", action="append", default=[],
                        help="a term never to redact (repeatable)")
    parser.add_argument("--all", action="store_true", help="redact every run in the store")
    parser.add_argument("--fail-closed", action="store_true",
                        help="replace a string that cannot be analysed (over 1M characters, undecodable) whole")
    add_corpus_flags(parser)
    parser.add_argument("--force", action="store_true", help="-o DIR: start the corpus job over")
    add_store(parser)
    add_json(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from replaykit.core.corpus import corpus_sources
    from replaykit.core.errors import BadInput
    from replaykit.core.redaction import redact_corpus, redact_trace_file
    from replaykit.core.trace.store import new_run_id

    store = open_store(args)
    sources = corpus_sources(store, list(args.runs), all_runs=args.all)
    if args.output is not None and (args.all or len(sources) > 1 or Path(args.output).expanduser().is_dir()):
        return _redact_corpus(args, sources, Path(args.output).expanduser())
    if args.cluster:
        raise BadInput("--cluster writes a directory: give -o DIR")
    if args.output is not None:
        if len(sources) != 1:
            raise BadInput("-o PATH takes exactly one RUN")
        out = Path(args.output).expanduser()
        if out.exists():
            raise BadInput(f"{out} exists; refusing to overwrite")
        results = [redact_trace_file(sources[0], out, args.mode, allow_list=args.allow, run_id=new_run_id("redacted"),
                                     fail_closed=args.fail_closed)]
    elif len(sources) == 1:
        store.ensure()
        rid = new_run_id("redacted")
        results = [redact_trace_file(sources[0], store.path_for(rid), args.mode, allow_list=args.allow, run_id=rid,
                                     fail_closed=args.fail_closed)]
    else:
        store.ensure()
        results = redact_corpus(sources, store.root, args.mode, allow_list=args.allow, workers=args.workers,
                                fail_closed=args.fail_closed)
    if args.json:
        docs = [{**r.to_json(), "mode": args.mode} for r in results]
        print_json(docs[0] if len(docs) == 1 else {"runs": docs, "run_id": [d["run_id"] for d in docs]})
    else:
        out_console = console()
        for r in results:
            if args.output is None and len(results) == 1:
                print(r.run_id)
            else:
                out_console.print(f"{r.source_run_id} -> {r.run_id} ({r.path}): {r.redactions} redactions")
    return 0


def _redact_corpus(args: argparse.Namespace, sources: list[Path], out: Path) -> int:
    from replaykit.core.corpus import run_corpus
    from replaykit.core.corpus.redaction_task import redaction_task

    options = {"mode": args.mode, "allow": sorted(args.allow), "fail_closed": args.fail_closed}
    summary = run_corpus(sources, redaction_task, options, command="redact", out=out, sink="runs",
                         force=args.force, label="redacting", **corpus_kwargs(args))
    report_damaged(summary.damaged)
    if args.json:
        # "records" counts trace lines here; "copies" the redacted runs written
        print_json({**summary.to_json(), "copies": len(summary.run_ids), "mode": args.mode})
    else:
        console().print(f"redacted {len(summary.run_ids)} of {summary.runs} runs into {out} "
                        f"({args.mode}); damaged: {len(summary.damaged)}")
    return 0
