"""Shared CLI plumbing: store/json flags, one-line errors, JSON output, rich console."""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from replaykit.core.errors import ReplaykitError
from replaykit.core.trace import jsonsafe


def fail(message: str, *, code: int = 2) -> NoReturn:
    one_line = " ".join(str(message).split())
    print(f"replaykit: error: {one_line}", file=sys.stderr)
    raise SystemExit(code)


def run_handler(handler: Callable[[argparse.Namespace], int], args: argparse.Namespace, *, debug: bool) -> int:
    try:
        return int(handler(args) or 0)
    except ReplaykitError as exc:
        if debug:
            raise
        print(f"replaykit: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("replaykit: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except SystemExit:
        raise
    except Exception as exc:
        if debug:
            raise
        first = " ".join(str(exc).split())[:300]
        print(
            f"replaykit: error: internal error ({type(exc).__name__}: {first}); "
            "rerun with REPLAYKIT_DEBUG=1 for a traceback",
            file=sys.stderr,
        )
        return 2


def add_store(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store", metavar="DIR", default=None,
        help="run store directory (default: $REPLAYKIT_HOME, $HERMES_HOME/replaykit, ~/.replaykit)",
    )


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON document on stdout")


#: the --api names (checked by ``core/replay/wire_apis.py`` when the options are built: one-line error)
WIRE_API_NAMES = "openai-chat|openai-responses|anthropic-messages|google-gemini|bedrock-converse"


def add_wire_options(parser: argparse.ArgumentParser, *, required_note: str = "required unless --offline") -> None:
    """``--base-url``, ``--model`` and ``--api``: where live calls go and which wire API they speak."""
    parser.add_argument("--base-url", metavar="URL", default=None,
                        help="endpoint of live calls: a gateway, a local server or a test server; optional for a "
                             "native provider chosen by --api or a provider:model string (its SDK's default host)")
    parser.add_argument("--model", metavar="NAME", default=None,
                        help=f"model name ({required_note}); PROVIDER:NAME (openai:, anthropic:, google:, bedrock:, "
                             "or an API name such as openai-responses:) also selects the API")
    parser.add_argument("--api", metavar=WIRE_API_NAMES, default=None,
                        help="wire API of live calls, through the provider's own SDK (default: from the model's "
                             "provider: prefix, else openai-chat); a run recorded on another API is translated, "
                             "every loss recorded on its step")


def add_stream_timing(parser: argparse.ArgumentParser) -> None:
    # checked by the handler (``stream_timing``): the codecs are not imported to build the parser
    parser.add_argument("--stream-timing", metavar="fast|recorded", default="fast",
                        help="steps recorded as streams are served frame by frame: at once (fast, default) "
                             "or with the recorded gap before each frame (recorded)")


def stream_timing(args: argparse.Namespace) -> str:
    """``--stream-timing``'s value, or a one-line BadInput (exit 2) naming the two pacings."""
    from replaykit.core.trace.codecs.frames import check_timing

    return check_timing(args.stream_timing)


def open_store(args: argparse.Namespace) -> Any:
    from replaykit.core.trace.store import RunStore

    return RunStore(getattr(args, "store", None))


def load_run(args: argparse.Namespace, ref: str | None = None) -> Any:
    """Load RUN (a run id in the store or a trace file path); warnings go to stderr."""
    store = open_store(args)
    run = store.load(ref if ref is not None else args.run)
    # A loaded run is millions of long-lived acyclic objects; left to the cyclic GC, the next
    # allocations make it traverse them all, two or three times (a third of ``inspect``'s CPU on a
    # 10,000-step run). A command runs once and exits: move them out of the collector's sight.
    gc.freeze()
    warn_read_report(run.report)
    return run


def warn_read_report(report: Any) -> None:
    """What the reader skipped (a torn last line), one warning line each on stderr."""
    if report is not None:
        for warning in report.warnings:
            print(f"replaykit: warning: {report.path}: {warning}", file=sys.stderr)


def print_json(document: Any) -> None:
    # jsonsafe: a lone surrogate in trace data is printed as its \\u escape, never a UnicodeEncodeError
    sys.stdout.write(jsonsafe.dumps_indented(document) + "\n")


def console(stderr: bool = False) -> Any:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=False)

