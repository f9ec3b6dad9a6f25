"""replaykit replay RUN [--from N] [--to N] [--stream-timing fast|recorded]: deterministic replay, 0 provider
calls, 0 tool calls; a step recorded as a stream is served frame by frame, at once or at the recorded pace."""

from __future__ import annotations

import argparse

from replaykit.cli._common import (
    add_json,
    add_store,
    add_stream_timing,
    console,
    open_store,
    print_json,
    stream_timing,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "replay", help="replay a run from the record (0 provider calls, 0 tool executions)"
    )
    parser.add_argument("run", metavar="RUN", help="run id in the store, or path to a trace file")
    parser.add_argument("--from", dest="start", type=int, default=None, metavar="N",
                        help="first step to replay (earlier steps stay as conversation context)")
    parser.add_argument("--to", dest="stop", type=int, default=None, metavar="N",
                        help="last step to replay (inclusive)")
    add_stream_timing(parser)
    add_store(parser)
    add_json(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    import sys

    from replaykit.core.replay.replay import replay_path

    timing = stream_timing(args)
    path = open_store(args).resolve(args.run)
    document = replay_path(path, start=args.start, stop=args.stop, stream_timing=timing)
    if args.json:
        print_json(document)
        return 0
    from rich.table import Table
    from rich.text import Text

    out = console()
    counters = document["counters"]
    rng = document["range"]
    out.print(Text(f"replay {document['run_id']}  steps {rng['from']}..{rng['to']} of {document['step_count']}"
                   f"  model {document['model'] or '?'}  source {document['source_framework']}"))
    table = Table(show_lines=False)
    for column in ("step", "kind", "provenance", "status", "t orig (s)", "what"):
        table.add_column(column, overflow="fold")
    for step in document["steps"]:
        table.add_row(Text(str(step["step"])), Text(step["kind"]), Text(step["provenance"]),
                      Text(str(step["status"])), Text(f"{step['t_original']:.3f}"), Text(step["summary"]))
    out.print(table)
    for note in document["notes"]:
        out.print(Text(f"{note['kind']} at step {note['step']}: {note['reason']}"), style="yellow")
    out.print(Text(
        f"provider calls {counters['provider_calls']}  tool executions {counters['tool_executions']}  "
        f"served llm {counters['served_llm_steps']}  served tools {counters['served_tool_steps']}  "
        f"trace bytes changed {counters['trace_bytes_changed']}"
    ))
    out.print(Text(f"original {document['original_duration']:.3f}s  replay {document['replay_duration']:.4f}s  "
                   f"messages {document['message_count']}"))
    if document["final_answer"] is not None:
        out.print(Text("final answer: " + document["final_answer"]))
    sys.stdout.flush()
    return 0
