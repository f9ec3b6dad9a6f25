"""replaykit rm RUN...: remove runs from the store (their subagent runs with them).

Named runs are removed at once, like ``rm``; a run that other runs were made from (branches, plays) is
refused unless ``--with-derived`` removes those too. ``--dry-run`` lists and removes nothing.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from replaykit.cli._common import add_json, add_store, console, print_json

if TYPE_CHECKING:
    from replaykit.core.trace.store_prune import Plan


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("rm", help="remove runs from the store")
    parser.add_argument("runs", metavar="RUN", nargs="+", help="run ids")
    parser.add_argument("--with-derived", action="store_true",
                        help="also remove every run made from these (branches, plays, their plays)")
    parser.add_argument("--dry-run", action="store_true", help="list what would be removed; remove nothing")
    add_store(parser)
    add_json(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from replaykit.core.trace.store_prune import plan_rm

    plan = plan_rm(store_root(args), list(dict.fromkeys(args.runs)), with_derived=args.with_derived)
    return finish(args, plan, apply=not args.dry_run)


def store_root(args: argparse.Namespace) -> Path:
    from replaykit.core.trace.store_index import default_store_root

    return Path(args.store).expanduser() if args.store is not None else default_store_root()


def finish(args: argparse.Namespace, plan: Plan, *, apply: bool) -> int:
    """Print the plan, remove it when ``apply``; shared with ``gc``."""
    from replaykit.core.trace.store_prune import remove

    removed = remove(plan) if apply else 0
    if args.json:
        print_json({**plan.to_json(), "removed": removed, "dry_run": not apply})
        return 0
    out = console()
    verb = "removed" if apply else "would remove"
    for s in plan.remove:
        what = f"{s.relation} of {s.parent_run_id}" if s.parent_run_id else "original"
        out.print(f"{verb} {s.run_id}  ({what}, {s.size_bytes:,} B)", markup=False, highlight=False)
    total = f"{len(plan.remove)} run{'s' if len(plan.remove) != 1 else ''}, {plan.bytes:,} B"
    if apply:
        out.print(f"removed {removed} of {total}", markup=False, highlight=False)
    elif plan.remove:
        out.print(f"dry run: {total} would be removed; run again with --yes to remove them", markup=False, highlight=False)
    else:
        out.print("nothing to remove", markup=False, highlight=False)
    if plan.kept and not plan.remove:
        out.print(f"kept {len(plan.kept)} original recording(s); --originals removes them too",
                  markup=False, highlight=False)
    return 0
