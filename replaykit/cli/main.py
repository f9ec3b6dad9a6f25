"""The ``replaykit`` command line.

argparse (stdlib) rather than typer/click: the CLI contract fixes exit codes (0 ok, 1 differs, 2 bad
input or usage) and one-line errors, which argparse gives with a two-method subclass; it adds no
dependency inside a Hermes environment and starts fast. Each command lives in ``cmd_<name>.py`` with
``register(subparsers)``; heavy imports happen inside handlers so ``replaykit --help`` stays instant.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from replaykit import __version__
from replaykit.cli._common import fail, run_handler

#: The fixed command contract (product.md). Order is the order of ``--help``.
COMMANDS = (
    "demo", "runs", "inspect", "replay", "branch", "play", "diff", "export", "redact",
    "import", "cost", "validate", "schema", "hermes", "stats", "view", "eval", "mcp", "compact", "rm", "gc",
)


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, sized to the terminal without ``shutil`` (argparse makes one per argument
    added, and ``shutil`` imports bz2, lzma and fnmatch: a few ms of every command's start-up)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        if width is None:
            width = _terminal_columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width)


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``: ``$COLUMNS``, else the terminal of stdout, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (exit 2) instead of a usage dump."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        fail(f"{message} (see '{self.prog} --help')", code=2)


def build_parser(only: str | None = None) -> Parser:
    """The whole command line, or with ``only`` (a command name) just that command: a command's module is
    imported only to register it, and some import their engines' or importers' tables (``replaykit export``
    then pays for what ``replaykit play`` needs)."""
    parser = Parser(prog="replaykit", description="Record, replay, branch, diff and export agent runs.")
    parser.add_argument("--version", action="version", version=f"replaykit {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name in COMMANDS if only is None else (only,):
        importlib.import_module(f"replaykit.cli.cmd_{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(argv) if argv is not None else sys.argv[1:]
    # The command is the first argument (there are no options before it but --help and --version, which
    # need the whole parser): register only that one.
    parser = build_parser(arguments[0] if arguments and arguments[0] in COMMANDS else None)
    args = parser.parse_args(arguments)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    return run_handler(handler, args, debug=bool(os.environ.get("REPLAYKIT_DEBUG")))


def entrypoint() -> None:
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    entrypoint()
