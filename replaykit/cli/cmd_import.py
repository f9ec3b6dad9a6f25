"""replaykit import PATH --format ...: turn provider logs or Hermes data into runs in the store."""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path
from typing import Any

from replaykit.cli._common import add_json, add_store, console, open_store, print_json

#: format -> "module:function"; each function takes (path) and returns a list of ImportedRun.
IMPORTERS = {
    "openai-chat": "replaykit.adapters.provider_logs:import_openai_chat",
    "openai-responses": "replaykit.adapters.provider_logs:import_openai_responses",
    "anthropic": "replaykit.adapters.provider_logs:import_anthropic",
    "hermes-unroll": "replaykit.adapters.hermes.import_unroll:import_unroll",
    "hermes-session": "replaykit.adapters.hermes.import_session:import_session",
    "atif": "replaykit.adapters.atif:import_atif",
    "otel": "replaykit.adapters.otel:import_otel",
    "hermes-trajectory": "replaykit.adapters.hermes.import_trajectory:import_trajectory",
}


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser("import", help="import provider logs or Hermes data as runs")
    parser.add_argument("path", metavar="PATH")
    parser.add_argument("--format", required=True, choices=sorted(IMPORTERS))
    parser.add_argument("--session", default=None, help="hermes-session: which session id (default: all)")
    add_store(parser)
    add_json(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from replaykit.core.errors import BadInput

    path = Path(args.path).expanduser()
    if not path.exists():
        raise BadInput(f"no such file: {args.path}")
    module_name, _, func_name = IMPORTERS[args.format].partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            raise BadInput(f"import format {args.format!r} is not available in this build") from exc
        raise
    options: dict[str, Any] = {}
    if args.format == "hermes-session" and args.session:
        options["session_id"] = args.session
    imported = getattr(module, func_name)(path, **options)
    store = open_store(args)
    written = []
    for item in imported:
        store.write_run(item.header, item.events)
        written.append({"run_id": item.header.run_id, "path": str(store.path_for(item.header.run_id)),
                        "events": len(item.events), "warnings": item.warnings})
    if args.json:
        document: dict[str, Any] = {"runs": written}
        if len(written) == 1:
            document["run_id"] = written[0]["run_id"]
        print_json(document)
        return 0
    out = console()
    for entry in written:
        out.print(f"imported {entry['run_id']} ({entry['events']} events) -> {entry['path']}")
        for warning in entry["warnings"]:
            out.print(f"  note: {warning}")
    return 0
