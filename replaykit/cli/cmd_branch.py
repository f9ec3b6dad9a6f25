"""replaykit branch RUN --at N (--args JSON | --result TEXT | --response TEXT): prints the new run id."""

from __future__ import annotations

import argparse

from replaykit.cli._common import add_json, add_store, load_run, open_store, print_json
from replaykit.core.trace import jsonsafe


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("branch", help="new run: the prefix before step N served, step N edited")
    parser.add_argument("run", metavar="RUN", help="run id in the store, or path to a trace file")
    parser.add_argument("--at", type=int, required=True, metavar="N", help="the step to edit")
    edit = parser.add_mutually_exclusive_group(required=True)
    edit.add_argument("--args", metavar="JSON", help="new arguments of tool step N (JSON)")
    edit.add_argument("--result", metavar="TEXT", help="new result of tool step N")
    edit.add_argument("--response", metavar="TEXT",
                      help="new answer of LLM step N: text, or tool calls as JSON "
                           '([{"name": ..., "arguments": {...}}] or {"content": ..., "tool_calls": [...]})')
    add_store(parser)
    add_json(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from replaykit.core.replay.branch import branch

    parent = load_run(args)
    store = open_store(args)
    child = branch(store, parent, args.at, args=args.args, result=args.result, response=args.response)
    lineage = child.header.lineage
    assert lineage is not None and lineage.edit is not None
    if args.json:
        print_json({
            "run_id": child.run_id,
            "parent_run_id": parent.run_id,
            "at": args.at,
            "edit": jsonsafe.model_data(lineage.edit, exclude_none=True),
            "live_from": (lineage.details or {}).get("live_from"),
            "steps": len(child.steps),
            "path": str(store.path_for(child.run_id)),
        })
    else:
        print(child.run_id)
    return 0
