"""replaykit redact RUN [-o PATH] [--mode ner|patterns]: a redacted copy as a new run.

By default the copy goes into the store and its run id is printed; ``-o PATH`` writes a trace file
instead. The original is never modified. Several RUNs (or ``--all``) are redacted in parallel.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from replaykit.cli._common import add_json, add_store, console, open_store, print_json


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
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
    parser.add_argument("--workers", type=int, default=None, help="processes for several runs (default: cores)")
    add_store(parser)
    add_json(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from replaykit.core.errors import BadInput
    from replaykit.core.redaction import redact_corpus, redact_trace_file
    from replaykit.core.store import new_run_id

    store = open_store(args)
    if args.all:
        sources = [s.path for s in store.iter_summaries() if s.relation != "redaction"]
    else:
        sources = [store.resolve(ref) for ref in args.runs]
    if not sources:
        raise BadInput("give at least one RUN (or --all with a non-empty store)")
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
