"""One run of an eval, on a worker: the offline control, the candidate play(s), the comparison.

``eval_task(path, options)`` is the corpus task (``core.corpus``: module-level, sent by reference to
local, Ray or Dask workers). It returns one JSON line, the run's eval record:

- ``result``: everything that must be the same whatever the executor (verdict, counts, divergence,
  answers, deltas);
- ``execution``: what may differ between two evals of the same corpus (the new run ids, seconds,
  provider attempts, the latency of the live calls next to the record's).

A candidate play has a run id derived from the eval and the run, so a resumed eval finds a play that
already completed in the store and judges it again instead of calling the endpoint a second time.
"""

from __future__ import annotations

import importlib
import json
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from replaykit.core.analysis.diff import diff_runs, lineage_edits
from replaykit.core.corpus import RunResult
from replaykit.core.errors import ReplaykitError
from replaykit.core.replay.play import PlayOptions, PlayResult
from replaykit.core.replay.resilience import EndpointLimiter
from replaykit.core.trace.ir import LLMCallEvent, TurnStartEvent
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.engines import play

from . import compare
from .select import CANDIDATE_TAG

#: A play that ended with one of these errors failed because of the endpoint (not the run).
PROVIDER_FAILURE = "provider"


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:300]
    return text if isinstance(exc, ReplaykitError) else f"{type(exc).__name__}: {text}"


def cuts(run: Run, at: str | int) -> list[tuple[int, int | None]]:
    """(cut step, turn or None) of each candidate play: ``first`` -> the first LLM call; ``N`` -> step N;
    ``turn`` -> the first LLM call of every user turn."""
    llm_steps = [s for s in run.steps if isinstance(s.event, LLMCallEvent)]
    if at == "first":
        return [(llm_steps[0].index if llm_steps else 0, None)]
    if at == "turn":
        starts = [e.seq for e in run.events if isinstance(e, TurnStartEvent)]
        out: list[tuple[int, int | None]] = []
        for turn, seq in enumerate(starts):
            first = next((s.index for s in llm_steps if s.event.seq > seq), None)
            if first is not None:
                out.append((first, turn))
        return out or [(llm_steps[0].index if llm_steps else 0, None)]
    step = int(at)
    if not 0 <= step < len(run.steps):
        raise ReplaykitError(f"--at {step} is past the end of run {run.run_id} ({len(run.steps)} steps)")
    return [(step, None)]


def control(run: Run, engine: str) -> str | None:
    """Play ``run`` offline in ``engine``; None when it reproduces the record, else why not (one line).

    A recording that did not complete has no recorded answer to judge a candidate against (an offline play
    reproduces its failure, but "same answer" means nothing there): it is not replayable as an eval case."""
    if run.status != "completed":
        return f"the recording ended {run.status}: no recorded answer to judge a candidate against"
    with tempfile.TemporaryDirectory(prefix="replaykit-eval-control-") as scratch:
        store = RunStore(Path(scratch), durable=False)
        try:
            result = play(run, engine, PlayOptions(serve_only=True, store=store))
        except ReplaykitError as exc:
            return f"the offline play failed: {_one_line(exc)}"
        diff = diff_runs(run, store.load(result.run_id))
    first = diff.first
    if first is None:
        return None
    return f"the offline play differs at step {first.step} ({first.field}, {first.cause})"


def load_scorer(spec: str | None) -> Callable[[Run, Run], Any] | None:
    if spec is None:
        return None
    module, _, name = spec.partition(":")
    function = getattr(importlib.import_module(module), name)
    if not callable(function):
        raise TypeError(f"{spec} is not a function")
    return function  # type: ignore[no-any-return]


def _candidate_id(run: Run, options: Mapping[str, Any], turn: int | None, attempt: int) -> str:
    turn_part = "" if turn is None else f"-t{turn}"
    again = "" if attempt == 0 else f"-r{attempt}"
    return f"{run.run_id[:90]}.eval-{options['eval_id']}{turn_part}{again}"


def _play_candidate(run: Run, cut: int, turn: int | None, store: RunStore,
                    options: Mapping[str, Any]) -> tuple[str, PlayResult | None, str | None]:
    """(new run id, result or None, error or None). A completed play already in the store is reused."""
    for attempt in range(100):
        run_id = _candidate_id(run, options, turn, attempt)
        if not store.path_for(run_id).exists():
            break
        try:
            earlier = store.load(run_id)
        except ReplaykitError:
            continue
        if earlier.status == "completed":
            return run_id, None, None  # finished before the eval was stopped: judged, not played again
    limiter = options.get("limiter")
    extra = {**dict(options.get("play_extra") or {}), **({"endpoint_limiter": limiter} if limiter else {})}
    play_options = PlayOptions(
        base_url=options["base_url"], model=options["model"], api_key_env=options.get("api_key_env"),
        api=options.get("api"),
        allow_destructive=bool(options.get("allow_destructive")), stale_timeout=options.get("stale_timeout"),
        store=store, cut=cut, run_id=run_id, extra=extra, tags=(CANDIDATE_TAG,),
        lineage_details={"eval": options["eval_id"], **({} if turn is None else {"turn": turn})})
    try:
        return run_id, play(run, options["engine"], play_options), None
    except ReplaykitError as exc:  # the new run's id is in execution, not in the result's reason
        return run_id, None, _one_line(exc).removeprefix(f"play {run_id}: ")


def _judge_play(run: Run, candidate: Run, cut: int, turn: int | None, store: RunStore,
                scorer: Callable[[Run, Run], Any] | None, scorer_error: str | None) -> dict[str, Any]:
    diff = diff_runs(run, candidate, edits=lineage_edits(store, [candidate]))
    answer = compare.answers(compare.turn_answer(run, turn), compare.turn_answer(candidate, turn))
    deltas = compare.deltas(run, candidate, cut)
    latency = deltas.pop("latency_s")  # a timing: reported under execution, never part of the result
    out: dict[str, Any] = {
        "latency_s": latency,
        "cut": cut, "turn": turn, "fidelity": compare.fidelity(diff, cut),
        "first_divergence": diff.first.to_json() if diff.first else None,
        "tool_agreement": compare.tool_agreement(run, candidate, cut), "answer": answer, "deltas": deltas,
        "tools": compare.per_tool(diff, candidate, cut),
    }
    score: float = 1.0 if answer["normalised"] else 0.0
    if scorer_error is None and scorer is not None:
        try:
            value = float(scorer(run, candidate))
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"returned {value}, not a number in [0, 1]")
            score = value
        except Exception as exc:  # the user's code: any failure is that run's, never the eval's
            scorer_error = _one_line(exc)
    out["score"] = score
    if scorer_error is not None:
        out.update(verdict="failed", reason=f"scorer-failed: {scorer_error}", score=0.0, scorer_failed=True)
    elif candidate.status != "completed":
        out.update(verdict="failed", reason=f"the candidate play ended {candidate.status}", score=0.0)
    else:
        out["verdict"] = compare.verdict(equal=diff.equal, score=score, health_delta=deltas["health"]["delta"])
    return out


def _budget_left(options: Mapping[str, Any]) -> str | None:
    """Why no new play may start (``--max-calls`` / ``--max-cost`` reached), or None."""
    limiter = options.get("limiter")
    if not limiter:
        return None
    try:
        budget = json.loads((Path(limiter) / "budget.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    shared = EndpointLimiter(limiter)
    if budget.get("max_calls") is not None and shared.calls() >= budget["max_calls"]:
        return "max-calls"
    if budget.get("max_cost") is not None and shared.spent() >= budget["max_cost"]:
        return "max-cost"
    return None


def judge(path: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The eval record of one run (see the module docstring)."""
    started = time.perf_counter()
    run = Run.load(path)
    store = RunStore(Path(options["store"]))
    facts = {"run_id": run.run_id, "model": run.model or "unknown", "framework": run.header.source.framework}
    execution: dict[str, Any] = {"candidate_runs": [], "provider_calls": 0}
    record: dict[str, Any] = {"run_id": run.run_id, "result": facts, "execution": execution}
    why_not = control(run, options["engine"])
    if why_not is not None:
        facts.update(verdict="not replayable", reason=why_not)
        execution["seconds"] = round(time.perf_counter() - started, 3)
        return record
    scorer, scorer_error = None, None
    try:
        scorer = load_scorer(options.get("scorer"))
    except Exception as exc:  # cannot be imported: every run reports scorer-failed, the eval goes on
        scorer_error = _one_line(exc)
    plays: list[dict[str, Any]] = []
    for cut, turn in cuts(run, options["at"]):
        left = _budget_left(options)
        if left is not None:
            record["left"] = left
            return record
        run_id, result, error = _play_candidate(run, cut, turn, store, options)
        execution["candidate_runs"].append(run_id)
        if result is not None:
            execution["provider_calls"] += result.counters.provider_calls
        try:
            candidate = store.load(run_id)
        except ReplaykitError:
            candidate = None
        if error is not None or candidate is None:
            plays.append({"cut": cut, "turn": turn, "verdict": "failed", "score": 0.0,
                          "reason": error or "the candidate play left no run", "failure": PROVIDER_FAILURE})
            continue
        judged = _judge_play(run, candidate, cut, turn, store, scorer, scorer_error)
        if result is not None and judged["deltas"]["cost_usd"]["candidate"] is not None and options.get("limiter"):
            EndpointLimiter(options["limiter"]).note_cost(judged["deltas"]["cost_usd"]["candidate"])
        plays.append(judged)
    latencies = [p.pop("latency_s") for p in plays if "latency_s" in p]
    if latencies:
        execution["latency_s"] = _sum_deltas([{"latency_s": x} for x in latencies])["latency_s"]
    facts.update(_fold(plays))
    execution["seconds"] = round(time.perf_counter() - started, 3)
    return record


def _fold(plays: list[dict[str, Any]]) -> dict[str, Any]:
    """One run's result from its plays (one, or one per turn): the worst verdict, summed counts."""
    verdict = compare.worst([p["verdict"] for p in plays])
    first = next((p for p in plays if p["verdict"] == verdict), plays[0])
    out: dict[str, Any] = {"verdict": verdict, "score": round(min(p["score"] for p in plays), 6)}
    if "reason" in first:
        out["reason"] = first["reason"]
    if any(p.get("failure") for p in plays):
        out["failure"] = PROVIDER_FAILURE
    if any(p.get("scorer_failed") for p in plays):
        out["scorer_failed"] = True
    judged = [p for p in plays if "fidelity" in p]
    if judged:
        out["fidelity"] = {k: sum(p["fidelity"][k] for p in judged) for k in judged[0]["fidelity"]}
        out["first_divergence"] = next((p["first_divergence"] for p in judged if p["first_divergence"]), None)
        out["tool_agreement"] = {"same": all(p["tool_agreement"]["same"] for p in judged),
                                 **{k: sum(p["tool_agreement"][k] for p in judged)
                                    for k in ("recorded", "candidate", "agreeing_prefix")}}
        out["answer"] = {"exact": all(p["answer"]["exact"] for p in judged),
                         "normalised": all(p["answer"]["normalised"] for p in judged),
                         "original": judged[-1]["answer"]["original"], "candidate": judged[-1]["answer"]["candidate"]}
        out["deltas"] = _sum_deltas([p["deltas"] for p in judged])
        tools: dict[str, dict[str, int]] = {}
        for p in judged:
            for name, counts in p["tools"].items():
                entry = tools.setdefault(name, {"calls": 0, "divergent": 0, "unmatched": 0})
                for k, v in counts.items():
                    entry[k] += v
        out["tools"] = dict(sorted(tools.items()))
    if len(plays) > 1:
        out["turns"] = [{"turn": p["turn"], "cut": p["cut"], "verdict": p["verdict"]} for p in plays]
    out["cut"] = plays[0]["cut"]
    return out


def _sum_deltas(items: list[dict[str, Any]]) -> dict[str, Any]:
    if len(items) == 1:
        return items[0]
    out: dict[str, Any] = {}
    for key in items[0]:
        if key == "health":
            out[key] = items[-1][key]  # a whole-run score, not a sum
            continue
        row: dict[str, Any] = {}
        for part in ("original", "candidate", "delta"):
            values = [i[key][part] for i in items]
            row[part] = None if any(v is None for v in values) else round(sum(values), 6)
        out[key] = row
    return out


def eval_task(path: str, options: Mapping[str, Any]) -> RunResult:
    """The corpus task: one run -> one JSON line (its eval record)."""
    record = judge(path, options)
    return RunResult(source=path, run_id=record["run_id"], lines=[json.dumps(record, sort_keys=True)])
