"""replaykit hermes install [--hermes-home DIR]: install and enable the Hermes plugin."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from replaykit.cli._common import add_json, add_store, console, load_run, print_json


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("hermes", help="Hermes Agent integration (install the recording plugin)")
    sub = parser.add_subparsers(dest="hermes_command", metavar="ACTION")
    install = sub.add_parser("install", help="install and enable the replaykit plugin in a Hermes home")
    install.add_argument("--hermes-home", metavar="DIR", default=None,
                         help="Hermes home (default: $HERMES_HOME, else ~/.hermes)")
    add_json(install)
    install.set_defaults(handler=handle_install)
    resume = sub.add_parser("resume-from", help="write a run (e.g. a branch) into a Hermes home as a new session "
                            "that `hermes --resume SESSION` continues")
    resume.add_argument("run", metavar="RUN", help="run id in the store, or path to a trace file")
    resume.add_argument("--hermes-home", metavar="DIR", default=None,
                        help="Hermes home (default: $HERMES_HOME, else ~/.hermes)")
    add_store(resume)
    add_json(resume)
    resume.set_defaults(handler=handle_resume_from)
    parser.set_defaults(handler=handle_missing)


def handle_missing(args: argparse.Namespace) -> int:
    from replaykit.core.errors import BadInput

    raise BadInput("missing action: use 'replaykit hermes install|resume-from ...'")


def handle_install(args: argparse.Namespace) -> int:
    from replaykit.adapters.hermes.install import install_plugin

    home = Path(args.hermes_home or os.environ.get("HERMES_HOME") or "~/.hermes").expanduser()
    result = install_plugin(home)
    if args.json:
        print_json(result)
        return 0
    out = console()
    out.print(f"replaykit plugin installed in {result['plugin_dir']} and enabled in {home / 'config.yaml'}")
    out.print(f"runs will be recorded under {home / 'replaykit'}")
    return 0


def handle_resume_from(args: argparse.Namespace) -> int:
    from replaykit.adapters.hermes.resume import resume_from

    home = Path(args.hermes_home or os.environ.get("HERMES_HOME") or "~/.hermes").expanduser()
    result = resume_from(load_run(args, args.run), home)
    if args.json:
        print_json(result)
        return 0
    out = console()
    out.print(f"run {result['run_id']} is Hermes session {result['session_id']} ({result['messages']} messages) "
              f"in {result['state_db']}")
    for loss in result["losses"]:
        out.print(f"  note: {loss}")
    out.print(f"continue it with: {result['resume_command']}")
    return 0
