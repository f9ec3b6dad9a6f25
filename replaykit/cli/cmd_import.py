"""replaykit import PATH --format ...: turn provider logs or Hermes data into runs in the store."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from replaykit.adapters import IMPORTERS
from replaykit.cli._common import add_json, add_store, console, open_store, print_json


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("import", help="import provider logs, Hermes data, ATIF, OTLP spans or platform exports (Langfuse, LangSmith, Inspect AI) as runs")
    parser.add_argument("path", metavar="PATH")
    parser.add_argument("--format", required=True, choices=sorted(IMPORTERS))
    parser.add_argument("--session", default=None, help="hermes-session, hermes-export: which session id (default: all)")
    add_store(parser)
    add_json(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from replaykit.adapters import import_file

    options: dict[str, Any] = {}
    if args.format in ("hermes-session", "hermes-export") and args.session:
        options["session_id"] = args.session
    imported = import_file(args.path, args.format, **options)
    store = open_store(args)
    written: list[dict[str, Any]] = []
    try:
        for item in imported:
            path = store.path_for(item.header.run_id)
            existed = path.exists()
            try:
                store.write_run(item.header, item.events)
            except BaseException:
                if not existed:
                    path.unlink(missing_ok=True)  # never a partial run
                raise
            written.append({"run_id": item.header.run_id, "path": str(path),
                            "events": len(item.events), "warnings": item.warnings})
    except BaseException:
        for entry in written:  # all of the import or nothing
            Path(entry["path"]).unlink(missing_ok=True)
        raise
    if args.json:
        document: dict[str, Any] = {"runs": written, "run_ids": [w["run_id"] for w in written]}
        if len(written) == 1 or _parent_of_the_rest(imported):  # a trajectory and its subagent runs
            document["run_id"] = written[0]["run_id"]
        print_json(document)
        return 0
    out = console()
    for entry in written:
        out.print(f"imported {entry['run_id']} ({entry['events']} events) -> {entry['path']}")
        for warning in entry["warnings"]:
            out.print(f"  note: {warning}")
    return 0


def _parent_of_the_rest(imported: list[Any]) -> bool:
    """True when every run after the first descends (as a subagent) from a run of this import."""
    ids = {item.header.run_id for item in imported}
    return len(imported) > 1 and imported[0].header.lineage is None and all(
        item.header.lineage is not None and item.header.lineage.relation == "subagent"
        and item.header.lineage.parent_run_id in ids for item in imported[1:])
