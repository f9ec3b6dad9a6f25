"""replaykit compact RUN...|--all: write closed runs gzip-compressed in place (every reader reads both forms)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from replaykit.cli._common import add_json, add_store, print_json


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "compact", help="compress closed runs in place (a live or unfinished run is never touched)")
    parser.add_argument("runs", metavar="RUN", nargs="*", help="run id in the store, or a trace file path")
    parser.add_argument("--all", action="store_true", help="every closed run in the store")
    add_store(parser)
    add_json(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    # stdlib only (no pydantic): the listing, the reference rules and the compaction itself.
    from replaykit.core.errors import BadInput
    from replaykit.core.trace.compact import RunNotClosed, compact_run
    from replaykit.core.trace.store_index import default_store_root, iter_summaries, resolve_ref

    if bool(args.runs) == bool(args.all):
        raise BadInput("compact: name RUN... or --all (not both)")
    root = Path(args.store).expanduser() if args.store is not None else default_store_root()
    paths = [s.path for s in iter_summaries(root)] if args.all else [resolve_ref(root, ref) for ref in args.runs]
    rows: list[dict[str, Any]] = []
    refused = 0
    for path in paths:
        try:
            done = compact_run(path)
        except RunNotClosed as exc:
            refused += not args.all  # --all skips live runs; a named one that cannot be compacted is a failure
            rows.append({"path": str(path), "status": "skipped", "reason": str(exc)})
            continue
        rows.append({"path": str(path), "status": "already" if done.already else "compacted",
                     "bytes_before": done.before, "bytes_after": done.after})
    if args.json:
        print_json({"store": str(root), "runs": rows})
    else:
        for row in rows:
            if row["status"] == "compacted":
                ratio = row["bytes_after"] / row["bytes_before"] if row["bytes_before"] else 1.0
                print(f"{row['path']}: {row['bytes_before']:,} -> {row['bytes_after']:,} bytes ({ratio:.0%})")
            elif row["status"] == "already":
                print(f"{row['path']}: already compacted")
            else:
                print(f"{row['path']}: skipped: {row['reason']}")
        if not rows:
            print(f"no runs in {root}")
    return 1 if refused else 0
