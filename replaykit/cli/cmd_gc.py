"""replaykit gc [--older-than D] [--lineage RUN] [--originals] [--yes]: clear derived runs from the store.

A dry run unless ``--yes``: ``gc`` selects many runs at once, so it first shows what it would remove.
Only derived runs (branches, plays) are selected; original recordings are kept (``--keep-originals``,
the default) unless ``--originals`` asks for them, and then everything made from them goes too.
"""

from __future__ import annotations

import argparse

from replaykit.cli._common import add_json, add_store


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("gc", help="remove branches and plays (dry run unless --yes)")
    parser.add_argument("--older-than", metavar="D", default=None,
                        help="only runs created more than D ago: 30m, 12h, 7d, 2w")
    parser.add_argument("--lineage", metavar="RUN", default=None, help="only runs made from RUN (transitively)")
    keep = parser.add_mutually_exclusive_group()
    keep.add_argument("--keep-originals", action="store_true", help="keep original recordings (the default)")
    keep.add_argument("--originals", action="store_true",
                      help="also remove matching original recordings, and every run made from them")
    parser.add_argument("--yes", action="store_true", help="remove them (without it: list only)")
    add_store(parser)
    add_json(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from replaykit.cli.cmd_rm import finish, store_root
    from replaykit.core.trace.store_prune import parse_duration, plan_gc

    older = parse_duration(args.older_than) if args.older_than is not None else None
    plan = plan_gc(store_root(args), older_than=older, lineage=args.lineage, originals=args.originals)
    return finish(args, plan, apply=args.yes)
