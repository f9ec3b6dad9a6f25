"""replaykit view [--store DIR] [--port P] [--no-open]: the local web viewer on 127.0.0.1.

Prints the URL (it carries a random access token required on every request) and serves until
interrupted. Needs the ``view`` extra.
"""

from __future__ import annotations

import argparse

from replaykit.cli._common import add_store, open_store


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser("view", help="local web viewer on 127.0.0.1 (token-protected)")
    parser.add_argument("--port", type=int, default=0, metavar="P", help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--no-open", action="store_true", help="print the URL but do not open a browser")
    add_store(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    import sys

    from replaykit.viewer.server import ViewerServer

    server = ViewerServer(open_store(args), port=args.port)
    print(server.url, flush=True)
    print(f"replaykit view: serving {server.viewer.store.root} on {server.origin} (Ctrl-C to stop)",
          file=sys.stderr, flush=True)
    if not args.no_open:
        import webbrowser

        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0
