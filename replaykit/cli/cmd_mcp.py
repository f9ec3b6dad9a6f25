"""replaykit mcp [--store DIR] [--allow-live [--base-url URL] --model NAME [--api A] --api-key-env VAR] [--http [--port P]]:
an MCP server over the run store for coding agents (stdio by default). Needs the ``mcp`` extra.

Live plays are off unless the operator starts the server with ``--allow-live``; the endpoint, model and
key variable are then fixed here, never chosen by the client. The key itself is read from the named
variable by the engine when a live play starts, and never leaves the server.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from replaykit.cli._common import add_store, add_wire_options, open_store

if TYPE_CHECKING:
    from replaykit.mcp.tools import LiveEndpoint


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser("mcp", help="MCP server for coding agents (stdio; --http on 127.0.0.1)")
    parser.add_argument("--allow-live", action="store_true",
                        help="let play_run go live against --base-url (default: offline plays only)")
    add_wire_options(parser, required_note="with --allow-live")
    parser.add_argument("--api-key-env", metavar="VAR", default=None,
                        help="name of the environment variable holding the API key (never sent to the client)")
    parser.add_argument("--http", action="store_true",
                        help="serve streamable HTTP on 127.0.0.1 (prints the URL and a bearer token) instead of stdio")
    parser.add_argument("--port", type=int, default=0, metavar="P", help="--http: port (default: a free one)")
    add_store(parser)
    parser.set_defaults(handler=handle)


def live_endpoint(args: argparse.Namespace) -> LiveEndpoint | None:
    """The endpoint ``--allow-live`` fixes, checked before the server starts (None without it)."""
    from replaykit.core.errors import BadInput
    from replaykit.core.replay.play import PlayOptions
    from replaykit.mcp.tools import LiveEndpoint

    given = [flag for flag, value in (("--base-url", args.base_url), ("--model", args.model), ("--api", args.api),
                                      ("--api-key-env", args.api_key_env)) if value is not None]
    if not args.allow_live:
        if given:
            raise BadInput(f"{', '.join(given)} configure live plays: add --allow-live (or drop them)")
        return None
    if args.model is None:
        raise BadInput("--allow-live needs --base-url URL and --model NAME (no --base-url for a native provider "
                       "chosen by --api or a provider:model string)")
    options = PlayOptions(base_url=args.base_url or "", model=args.model, api_key_env=args.api_key_env, api=args.api)
    options.wire()
    options.safe_base_url()
    options.live_credentials()  # API, endpoint, key variable resolved now: a one-line error, not at the first play
    return LiveEndpoint(base_url=args.base_url or "", model=args.model, api_key_env=args.api_key_env, api=args.api)


def handle(args: argparse.Namespace) -> int:
    from replaykit.core.errors import BadInput
    from replaykit.mcp.server import require_sdk

    if args.port and not args.http:
        raise BadInput("--port applies to --http")
    require_sdk()
    live = live_endpoint(args)
    store = open_store(args)
    try:
        if args.http:
            from replaykit.mcp.http import serve_http

            serve_http(store, port=args.port, live=live)
        else:
            from replaykit.mcp.server import serve_stdio

            serve_stdio(store, live=live)
    except KeyboardInterrupt:
        pass
    return 0
