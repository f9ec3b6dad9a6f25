"""replaykit play RUN --engine hermes|pydantic-ai|langgraph|openai --base-url URL --model NAME: serve the
prefix from the record, then run live from the cut, recording a new run (lineage ``play``).
``--offline`` (no endpoint, no key): the engine's loop runs with every step served from the record."""

from __future__ import annotations

import argparse
from typing import Any

from replaykit.cli._common import (
    add_json,
    add_store,
    add_stream_timing,
    add_wire_options,
    load_run,
    open_store,
    print_json,
    stream_timing,
)
from replaykit.engines import ENGINES


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("play", help="serve the recorded prefix, then run live from the cut")
    parser.add_argument("run", metavar="RUN", help="run id in the store, or path to a trace file")
    parser.add_argument("--engine", required=True, choices=sorted(ENGINES), help="engine that runs live")
    add_wire_options(parser)
    parser.add_argument("--offline", action="store_true",
                        help="serve every step from the record: no endpoint, no key, 0 provider calls, "
                             "0 tool executions; a request past the record's end gets a synthetic answer")
    parser.add_argument("--api-key-env", metavar="VAR", default=None,
                        help="name of the environment variable holding the API key (never stored)")
    parser.add_argument("--allow-destructive", action="store_true",
                        help="let destructive tool calls run for real (default: dry-run)")
    parser.add_argument("--stale-timeout", type=float, default=60.0, metavar="S",
                        help="seconds without data on a stream before it is retried (default 60)")
    parser.add_argument("--at", type=int, default=None, metavar="N",
                        help="go live from step N (default: after a branch's edit, else step 0)")
    parser.add_argument("--max-iterations", type=int, default=50, metavar="N",
                        help="LLM calls per user turn before one grace call (default 50)")
    parser.add_argument("--tools-module", metavar="PATH", default=None,
                        help="Python file with your real tool implementations (a function per tool name, or "
                             "TOOLS = {name: fn}); live calls run them through the destructive-tool guard "
                             "(--engine openai, pydantic-ai, langgraph)")
    add_stream_timing(parser)
    add_store(parser)
    add_json(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from replaykit.core.errors import BadInput
    from replaykit.core.replay.play import PlayOptions
    from replaykit.engines import play

    timing = stream_timing(args)
    if args.stale_timeout is not None and args.stale_timeout <= 0:
        raise BadInput("--stale-timeout must be a positive number of seconds")
    if args.max_iterations < 1:
        raise BadInput("--max-iterations must be at least 1")
    if args.offline and (args.base_url is not None or args.api_key_env is not None or args.api is not None):
        raise BadInput("--offline calls no endpoint: drop --base-url / --api / --api-key-env (or drop --offline)")
    if args.offline and args.at is not None:
        raise BadInput("--offline serves every step: --at does not apply")
    if not args.offline and args.model is None:
        raise BadInput("play needs --model NAME (and --base-url URL unless --api or a provider:model string "
                       "selects a native provider), or --offline to serve the whole record")
    extra: dict[str, Any] = {}
    if args.tools_module is not None:
        able = sorted(name for name, info in ENGINES.items() if info.tools_module)
        if not ENGINES[args.engine].tools_module:
            raise BadInput(f"--tools-module is supported by --engine {', '.join(able)}")
        from pathlib import Path

        if not Path(args.tools_module).expanduser().is_file():
            raise BadInput(f"--tools-module {args.tools_module}: no such file")
        extra["tools_module"] = args.tools_module
    run = load_run(args)
    options = PlayOptions(base_url=args.base_url or "", model=args.model or "", api=args.api,
                          api_key_env=args.api_key_env,
                          allow_destructive=args.allow_destructive, stale_timeout=args.stale_timeout,
                          store=open_store(args), cut=args.at, serve_only=args.offline,
                          max_iterations=args.max_iterations, extra=extra, stream_timing=timing)
    if not args.offline:
        options.wire()  # API, model and endpoint resolved (one-line errors) before anything starts
    options.safe_base_url()  # validate before anything starts
    if args.offline:
        options.api_key()
    else:  # the key (or Bedrock's AWS variables) read now: a one-line error before any work
        options.live_credentials()
    result = play(run, args.engine, options)
    if args.json:
        print_json(result.to_json())
        return 0
    counters = result.counters.to_json()
    print(result.run_id)
    import sys

    print(f"{result.engine}: {result.status}, live from step {result.cut}; provider calls "
          f"{counters['provider_calls']}, served llm {counters['served_llm_steps']}, served tools "
          f"{counters['served_tool_steps']}, live llm {counters['live_llm_steps']}, desyncs {counters['desyncs']}",
          file=sys.stderr)
    return 0
