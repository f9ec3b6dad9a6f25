"""replaykit hermes install [--hermes-home DIR]: install and enable the Hermes plugin."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from replaykit.cli._common import add_json, console, print_json


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser("hermes", help="Hermes Agent integration (install the recording plugin)")
    sub = parser.add_subparsers(dest="hermes_command", metavar="ACTION")
    install = sub.add_parser("install", help="install and enable the replaykit plugin in a Hermes home")
    install.add_argument("--hermes-home", metavar="DIR", default=None,
                         help="Hermes home (default: $HERMES_HOME, else ~/.hermes)")
    add_json(install)
    install.set_defaults(handler=handle_install)
    parser.set_defaults(handler=handle_missing)


def handle_missing(args: argparse.Namespace) -> int:
    from replaykit.core.errors import BadInput

    raise BadInput("missing action: use 'replaykit hermes install [--hermes-home DIR]'")


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
