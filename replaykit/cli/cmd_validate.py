"""replaykit validate PATH: check a trace file (streamed; bounded memory)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from replaykit.cli._common import add_json, add_store, open_store, print_json


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("validate", help="check a trace file; exit 1 if it is invalid")
    parser.add_argument("path", metavar="PATH", help="trace file (or a run id in the store)")
    add_store(parser)
    add_json(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from replaykit.core.errors import RunNotFound, TraceError
    from replaykit.core.trace.validate import validate_trace

    path: Path = open_store(args).resolve(args.path)
    try:
        result = validate_trace(path)
    except RunNotFound:
        raise
    except TraceError as exc:
        result = {"path": str(path), "valid": False, "errors": [str(exc)], "warnings": []}
    _report(args, result)
    return 0 if result["valid"] else 1


def _report(args: argparse.Namespace, result: dict[str, Any]) -> None:
    if args.json:
        print_json(result)
        return
    status = "valid" if result["valid"] else "INVALID"
    counts = ""
    if "events" in result:
        counts = f" ({result['events']} events, {result['steps']} steps, schema v{result['schema_version']})"
    print(f"{result['path']}: {status}{counts}")
    for error in result["errors"]:
        print(f"  error: {error}")
    for warning in result["warnings"]:
        print(f"  warning: {warning}")
