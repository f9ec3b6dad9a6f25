"""replaykit schema: print the trace JSON Schema."""

from __future__ import annotations

import argparse

from replaykit.cli._common import add_json, print_json


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("schema", help="print the JSON Schema of the trace format")
    add_json(parser)  # accepted for uniformity: the output is always JSON
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from replaykit.core.trace.ir import json_schema

    print_json(json_schema())
    return 0
