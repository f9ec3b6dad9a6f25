"""replaykit eval RUN...|--all --engine E --base-url URL --model NAME -o DIR: play a corpus of recorded runs
against a candidate model, judge each run against its record, report, and gate (exit 1 when a threshold
fails). See docs/eval.md; the work is ``replaykit.eval``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from replaykit.cli._common import WIRE_API_NAMES, add_json, add_store, open_store, print_json
from replaykit.engines import ENGINES


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("eval", help="play recorded runs against a candidate model; report and gate")
    parser.add_argument("runs", nargs="*", metavar="RUN", help="run ids, trace files, directories or globs")
    parser.add_argument("--all", dest="all_runs", action="store_true",
                        help="every original recording in the store (not branches, plays, nor eval candidates)")
    parser.add_argument("--filter", metavar="EXPR", default=None,
                        help="keep runs matching all of KEY=VALUE,KEY<VALUE,... (model, framework, tag, status: "
                             "= != with * wildcards; health, date: = != < <= > >=)")
    parser.add_argument("--engine", required=True, choices=sorted(ENGINES), help="engine that plays each run")
    parser.add_argument("--base-url", metavar="URL", default=None, help="the candidate's OpenAI-compatible endpoint")
    parser.add_argument("--model", metavar="NAME", default=None, help="the candidate model at that endpoint")
    parser.add_argument("--api", metavar=WIRE_API_NAMES, default=None,
                        help="wire API of the candidate's calls (as for play; --base-url optional for a native provider)")
    parser.add_argument("--api-key-env", metavar="VAR", default=None,
                        help="name of the environment variable holding the API key (never written anywhere)")
    parser.add_argument("--offline", action="store_true", help=argparse.SUPPRESS)  # refused: an eval needs a candidate
    parser.add_argument("--at", default="first", metavar="first|N|turn",
                        help="where the candidate goes live: the first LLM call (default), step N, or each user turn")
    engine = parser.add_mutually_exclusive_group()
    engine.add_argument("--workers", type=int, default=None, metavar="N", help="local worker processes")
    engine.add_argument("--cluster", default=None, metavar="ray[://ADDR]|dask[://ADDR]",
                        help="run on Ray or Dask: a local instance, or an existing cluster at ADDR")
    parser.add_argument("--max-concurrency", type=int, default=None, metavar="N",
                        help="requests in flight to the endpoint at once, across all workers")
    parser.add_argument("--max-cost", type=float, default=None, metavar="USD",
                        help="start no new play once the candidate plays cost this much")
    parser.add_argument("--max-calls", type=int, default=None, metavar="N",
                        help="start no new play once this many requests were sent")
    parser.add_argument("--stale-timeout", type=float, default=60.0, metavar="S",
                        help="seconds without data on a stream before it is retried (default 60)")
    parser.add_argument("--fail-below", type=float, default=None, metavar="SCORE",
                        help="exit 1 when the mean score (0-1) is below SCORE")
    parser.add_argument("--max-regressed", type=int, default=None, metavar="N",
                        help="exit 1 when more than N runs regressed")
    parser.add_argument("--scorer", metavar="MODULE:FUNCTION", default=None,
                        help="your scorer: FUNCTION(original_run, candidate_run) -> float in [0, 1]")
    parser.add_argument("--allow-destructive", action="store_true",
                        help="let destructive tool calls run for real (default: dry-run)")
    parser.add_argument("-o", "--out", metavar="DIR", required=True,
                        help="directory for report.json and the resumable manifest")
    parser.add_argument("--html", metavar="PATH", default=None, help="also write the report as an HTML page")
    parser.add_argument("--junit", metavar="PATH", default=None, help="also write JUnit XML (one test case per run)")
    add_store(parser)
    add_json(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from replaykit.core.errors import BadInput
    from replaykit.eval import evaluate

    if args.offline:
        raise BadInput("eval plays a candidate model: --offline does not apply (give --base-url and --model)")
    if args.model is None:
        raise BadInput("eval needs --model NAME (the candidate) and --base-url URL unless --api selects a native provider")
    if not args.runs and not args.all_runs:
        raise BadInput("give RUNs or --all")
    store = open_store(args)
    report = evaluate(args.runs, all_runs=args.all_runs, filter=args.filter, engine=args.engine,
                      base_url=args.base_url or "", model=args.model, api=args.api, out=args.out,
                      api_key_env=args.api_key_env,
                      at=args.at, workers=args.workers, cluster=args.cluster, max_concurrency=args.max_concurrency,
                      max_cost=args.max_cost, max_calls=args.max_calls, stale_timeout=args.stale_timeout,
                      fail_below=args.fail_below, max_regressed=args.max_regressed, scorer=args.scorer,
                      allow_destructive=args.allow_destructive, store=store, progress=None if not args.json else False)
    document = report.to_json()
    if args.junit:
        from replaykit.eval.junit import write_junit

        write_junit(document, Path(args.junit))
    if args.html:
        from replaykit.eval.html import write_eval_html

        write_eval_html(document, Path(args.html), store)
    if args.json:
        print_json(document)
    else:
        totals = document["totals"]
        verdicts = ", ".join(f"{n} {v}" for v, n in totals["verdicts"].items() if n)
        print(f"{totals['selected']} runs: {verdicts or 'none judged'}; mean score {totals['score']['mean']}; "
              f"left {totals['left']}; report {Path(args.out) / 'report.json'}")
    for failed in report.failed_thresholds:
        print(f"replaykit: threshold failed: {failed}", file=sys.stderr)
    return 0 if report.passed else 1
