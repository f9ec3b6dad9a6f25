"""``replaykit eval`` / ``replaykit.evaluate``: select, play every run through the corpus executors,
fold the records into the report, write it.

Resumable: ``DIR`` holds the corpus manifest (``core.corpus``: one partition per run, so a finished run
is never played again) and ``.eval-selection.json``, the run list of the first start (a resumed eval
keeps it, whatever was added to the store since). ``DIR/.limiter`` is the endpoint limiter every worker
shares (``core.resilience.EndpointLimiter``: requests in flight, the Retry-After pause, the budgets).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from replaykit.core.corpus import PartitionResult, run_corpus, shard_name
from replaykit.core.errors import BadInput, ReplaykitError
from replaykit.core.files import write_private
from replaykit.core.replay.play import PlayOptions
from replaykit.core.replay.resilience import EndpointLimiter
from replaykit.core.trace.store import RunStore
from replaykit.engines import engine_info

from .judge import PROVIDER_FAILURE, eval_task
from .registry import record_eval
from .report import EvalReport
from .select import select_runs

SELECTION = ".eval-selection.json"
LIMITER = ".limiter"
REPORT = "report.json"
#: The first candidate plays all failing at the endpoint (none succeeding) stop the eval: it is down or
#: refuses this key, and every further run would fail the same way.
REFUSED_STOP = 3


class EndpointRefused(ReplaykitError):
    exit_code = 1


def parse_at(at: str | int) -> str | int:
    if isinstance(at, int) or (isinstance(at, str) and at.isdigit()):
        return int(at)
    if at in ("first", "turn"):
        return at
    raise BadInput(f"--at must be first, turn or a step number, not {at!r}")


def _selection(out: Path, store: RunStore, runs: list[str], all_runs: bool, filter_expr: str | None) -> list[Path]:
    saved = out / SELECTION
    if saved.is_file() and (out / "manifest.jsonl").is_file():
        try:
            return [Path(p) for p in json.loads(saved.read_text(encoding="utf-8"))["paths"]]
        except (OSError, ValueError, KeyError, TypeError):
            raise BadInput(f"{saved} is damaged; use another -o DIR") from None
    paths = select_runs(store, runs, all_runs=all_runs, filter_expr=filter_expr)
    out.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_private(saved, json.dumps({"paths": [str(p.resolve()) for p in paths]}))
    return [p.resolve() for p in paths]


def _read_record(out: Path, index: int) -> dict[str, Any] | None:
    path = out / shard_name(index)
    try:
        line = path.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return json.loads(line) if line else None


def evaluate(
    runs: list[str] | None = None,
    *,
    all_runs: bool = False,
    filter: str | None = None,
    engine: str,
    base_url: str,
    model: str,
    out: str | Path,
    api_key_env: str | None = None,
    api: str | None = None,
    at: str | int = "first",
    workers: int | None = None,
    cluster: str | None = None,
    max_concurrency: int | None = None,
    max_cost: float | None = None,
    max_calls: int | None = None,
    stale_timeout: float | None = 60.0,
    fail_below: float | None = None,
    max_regressed: int | None = None,
    scorer: str | None = None,
    allow_destructive: bool = False,
    store: RunStore | str | Path | None = None,
    progress: bool | None = False,
    play_extra: Mapping[str, Any] | None = None,
) -> EvalReport:
    """Play ``runs`` (ids, files, directories, globs) or every original recording (``all_runs``) against
    the candidate and report; see docs/eval.md. ``play_extra``: engine knobs (``PlayOptions.extra``)."""
    engine_info(engine)  # an unknown engine is bad input before anything starts
    at = parse_at(at)
    if max_concurrency is not None and max_concurrency < 1:
        raise BadInput("--max-concurrency must be at least 1")
    if max_calls is not None and max_calls < 0:
        raise BadInput("--max-calls must be 0 or more")
    if max_cost is not None and max_cost < 0:
        raise BadInput("--max-cost must be 0 or more")
    if stale_timeout is not None and stale_timeout <= 0:
        raise BadInput("--stale-timeout must be a positive number of seconds")
    if fail_below is not None and not 0 <= fail_below <= 1:
        raise BadInput("--fail-below is a score in [0, 1]")
    if scorer is not None and (scorer.count(":") != 1 or not all(scorer.split(":"))):
        raise BadInput(f"--scorer must be MODULE:FUNCTION, not {scorer!r}")
    probe = PlayOptions(base_url=base_url, model=model, api_key_env=api_key_env, api=api)
    if not model:
        raise BadInput("eval needs --model NAME (the candidate)")
    wire = probe.wire()  # API, model name and endpoint resolved: one line when incomplete
    safe_url = probe.safe_base_url()
    probe.live_credentials()  # a named but unset variable (or none named for a native host): one line, before any work
    store = store if isinstance(store, RunStore) else RunStore(store)
    out = Path(out).expanduser()
    if out.exists() and not out.is_dir():
        raise BadInput(f"-o {out} exists and is not a directory")
    sources = _selection(out, store, list(runs or []), all_runs, filter)
    limiter_dir = (out / LIMITER).resolve()
    options: dict[str, Any] = {
        "engine": engine, "base_url": base_url, "model": model, "api_key_env": api_key_env, "at": at,
        "api": probe.api,
        "stale_timeout": stale_timeout, "store": str(store.root.resolve()), "scorer": scorer,
        "allow_destructive": allow_destructive, "limiter": str(limiter_dir),
        "play_extra": dict(play_extra or {}),
    }
    options["eval_id"] = hashlib.sha256(json.dumps([str(out.resolve()), options], sort_keys=True,
                                                   default=str).encode()).hexdigest()[:10]
    EndpointLimiter.create(str(limiter_dir), max_concurrency)
    write_private(limiter_dir / "budget.json", json.dumps({"max_calls": max_calls, "max_cost": max_cost}))

    refused: list[str] = []
    succeeded = [0]
    left: dict[str, int] = {}

    def watch(result: PartitionResult) -> None:
        for run in result.runs:
            if not run.lines:
                continue
            record = json.loads(run.lines[0])
            if "left" in record:  # not played: forget it, so a rerun with more budget plays it
                (out / shard_name(result.index)).unlink(missing_ok=True)
                left[record["left"]] = left.get(record["left"], 0) + 1
                continue
            if record["result"].get("failure") == PROVIDER_FAILURE:
                refused.append(record["result"].get("reason", ""))
            elif record["result"]["verdict"] != "not replayable":
                succeeded[0] += 1
        if len(refused) >= REFUSED_STOP and not succeeded[0]:
            raise EndpointRefused(f"the endpoint failed the first {len(refused)} candidate plays, eval stopped "
                                  f"(resume with the same command): {refused[-1]}")

    summary = run_corpus(sources, eval_task, options, command="eval", out=out, sink="shards", workers=workers,
                         cluster=cluster, partition_runs=1, progress=progress, label="evaluating",
                         on_partition=watch)
    records = [r for r in (_read_record(out, i) for i in range(len(sources))) if r is not None]
    for record in records:
        record["result"]["run_id"] = record["run_id"]
    report = EvalReport(
        candidate={"engine": engine, "model": wire.model, "base_url": safe_url, "at": at, "scorer": scorer,
                   "api": wire.api.name},
        runs=[r["result"] for r in records],
        selected=len(sources),
        damaged=summary.damaged,
        left=left,
        execution={"eval_id": options["eval_id"], "executor": summary.executor, "workers": summary.workers, "seconds": round(summary.seconds, 3),
                   "resumed_runs": summary.resumed_partitions, "out": str(out),
                   "runs": [{"run_id": r["run_id"], **r["execution"]} for r in records]},
    )
    report.check(fail_below, max_regressed)
    document = report.to_json()
    write_private(out / REPORT, json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    record_eval(store, options["eval_id"], out / REPORT, document["totals"], model)  # for ``replaykit view``
    return report


def report_path(out: str | Path) -> Path:
    return Path(os.fspath(out)) / REPORT
