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

import json
import tempfile
import time
from collections.abc import Mapping
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

from . import compare, repeats, scorers
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


def _candidate_id(run: Run, options: Mapping[str, Any], turn: int | None, attempt: int, sample: int = 0) -> str:
    turn_part = "" if turn is None else f"-t{turn}"
    sample_part = "" if sample == 0 else f"-k{sample}"  # --repeat: sample 0 keeps the single play's id
    again = "" if attempt == 0 else f"-r{attempt}"
    return f"{run.run_id[:90]}.eval-{options['eval_id']}{turn_part}{sample_part}{again}"


def _play_candidate(run: Run, cut: int, turn: int | None, store: RunStore, options: Mapping[str, Any],
                    sample: int = 0) -> tuple[str, PlayResult | None, str | None]:
    """(new run id, result or None, error or None). A completed play already in the store is reused."""
    for attempt in range(100):
        run_id = _candidate_id(run, options, turn, attempt, sample)
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
        lineage_details={"eval": options["eval_id"], **({} if turn is None else {"turn": turn}),
                         **({"sample": sample} if sample else {})})
    try:
        return run_id, play(run, options["engine"], play_options), None
    except ReplaykitError as exc:  # the new run's id is in execution, not in the result's reason
        return run_id, None, _one_line(exc).removeprefix(f"play {run_id}: ")


def _judge_play(run: Run, candidate: Run, cut: int, turn: int | None, store: RunStore,
                options: Mapping[str, Any]) -> dict[str, Any]:
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
    scores: dict[str, float] = {}
    reasons: dict[str, str] = {}
    scorer_error: str | None = None
    # A play that did not complete fails whatever its scores: nothing is scored (no judge call is paid for it).
    for name in options["scorers"] if candidate.status == "completed" else ():
        try:
            value, why = scorers.score(name, run, candidate, cut, turn, options.get("judge"))
        except scorers.ScorerFailed as exc:
            scorer_error = scorer_error or str(exc)
            if exc.unreachable:
                out["judge_unreachable"] = True
            continue
        scores[name] = round(value, 6)
        if why is not None:
            reasons[name] = why
    out["scores"] = scores
    if reasons:
        out["reasons"] = reasons
    out["score"] = scores.get(options["gate_scorer"], 0.0)
    if candidate.status != "completed":
        out.update(verdict="failed", reason=f"the candidate play ended {candidate.status}", score=0.0)
    elif scorer_error is not None:
        out.update(verdict="failed", reason=f"scorer-failed: {scorer_error}", score=0.0, scorer_failed=True)
    else:
        out["verdict"] = compare.verdict(equal=diff.equal, score=out["score"], health_delta=deltas["health"]["delta"])
    return out


def _limiters(options: Mapping[str, Any]) -> list[EndpointLimiter]:
    """The candidate's endpoint limiter, and the judge's when it has one of its own."""
    dirs = [options.get("limiter"), (options.get("judge") or {}).get("limiter")]
    return [EndpointLimiter(d) for d in dict.fromkeys(d for d in dirs if d)]


def _budget_left(options: Mapping[str, Any]) -> str | None:
    """Why no new play may start (``--max-calls`` / ``--max-cost`` reached: candidate and judge calls
    together), or None."""
    limiter = options.get("limiter")
    if not limiter:
        return None
    try:
        budget = json.loads((Path(limiter) / "budget.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    shared = _limiters(options)
    if budget.get("max_calls") is not None and sum(s.calls() for s in shared) >= budget["max_calls"]:
        return "max-calls"
    if budget.get("max_cost") is not None and sum(s.spent() for s in shared) >= budget["max_cost"]:
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
    samples: list[dict[str, Any]] = []
    latencies: list[dict[str, Any]] = []
    for sample in range(int(options.get("repeat") or 1)):  # the control above is played once, not K times
        plays: list[dict[str, Any]] = []
        for cut, turn in cuts(run, options["at"]):
            left = _budget_left(options)
            if left is not None:
                record["left"] = left
                return record
            run_id, result, error = _play_candidate(run, cut, turn, store, options, sample)
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
            judged = _judge_play(run, candidate, cut, turn, store, options)
            if result is not None and judged["deltas"]["cost_usd"]["candidate"] is not None and options.get("limiter"):
                EndpointLimiter(options["limiter"]).note_cost(judged["deltas"]["cost_usd"]["candidate"])
            plays.append(judged)
        latencies += [{"latency_s": p.pop("latency_s")} for p in plays if "latency_s" in p]
        samples.append(_fold(plays))
    if latencies:
        execution["latency_s"] = _sum_deltas(latencies)["latency_s"]
    facts.update(repeats.fold_samples(samples, float(options.get("pass_rate", repeats.PASS_RATE))))
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
    if any(p.get("judge_unreachable") for p in plays):
        out["judge_unreachable"] = True
    scored = [p for p in plays if p.get("scores")]
    if scored:  # per scorer, the worst turn (as the score); a reason from the turn that scored lowest
        names = list(dict.fromkeys(n for p in scored for n in p["scores"]))
        out["scores"] = {n: round(min(p["scores"][n] for p in scored if n in p["scores"]), 6) for n in names}
        reasons = {}
        for name in names:
            lowest = min((p for p in scored if name in p.get("reasons", {})), key=lambda p: p["scores"][name],
                         default=None)
            if lowest is not None:
                reasons[name] = lowest["reasons"][name]
        if reasons:
            out["reasons"] = reasons
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
