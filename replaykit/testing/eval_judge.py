"""A scripted judge and a scripted sometimes-right candidate for ``replaykit eval`` tests and benchmarks.

    policy = judge_policy(runs, {"corpus-00003": grade(0.2, "misses the date"), "corpus-00004": MALFORMED})
    with ScriptedServer(policy) as judge: ...   # --judge-base-url judge.base_url

A grading request is matched to its run by the run's first user message, which the grader puts in the
task it sends. ``sometimes_right(runs, wrong={run_id: {3, 4}})``: a candidate that answers a run from its
record, except in the plays numbered in ``wrong`` (0-based, counted per run by its first request), where
its final answer differs. Stdlib and replaykit only.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping

from replaykit.core.trace.run import Run
from replaykit.testing.eval_candidate import Plant, _assistant_turns, _key, mirror_policy
from replaykit.testing.script import Policy, Reply, ScriptRequest, text

#: A judge answer that is not a grade.
MALFORMED = text("I think this answer is quite good overall, maybe 8/10.")


def grade(score: float, reason: str) -> Reply:
    return text(json.dumps({"score": score, "reason": reason}))


def _first_user(run: Run) -> str:
    calls = run.llm_calls()
    if not calls:
        return ""
    return next((m.text for m in run.request_messages(calls[0]) if m.role == "user" and m.text), "")


def judge_policy(runs: Iterable[Run], grades: Mapping[str, Reply], default: Reply | None = None) -> Policy:
    """Answer each grading request with the grade planted for its run (``default``: full marks)."""
    by_task = sorted(((_first_user(r), grades.get(r.run_id)) for r in runs), key=lambda kv: -len(kv[0]))
    fallback = default or grade(1.0, "The candidate answer gives the same outcome as the reference.")

    def policy(request: ScriptRequest) -> Reply:
        asked = request.last_user_text
        task = asked.split("REFERENCE ANSWER", 1)[0]
        for first_user, planted in by_task:
            if first_user and first_user in task:
                return planted or fallback
        return fallback

    return policy


def sometimes_right(runs: Iterable[Run], wrong: Mapping[str, set[int]]) -> Policy:
    runs = list(runs)
    right = mirror_policy(runs)
    off = mirror_policy(runs, {run_id: Plant("final_answer") for run_id in wrong})
    keys = {}
    for run in runs:
        calls = run.llm_calls()
        if calls:
            messages = run.request_messages(calls[0])
            system = next((m.text for m in messages if m.role in ("system", "developer")), "")
            keys[_key(system, next((m.text for m in messages if m.role == "user"), ""))] = run.run_id
    plays: dict[str, int] = {}
    lock = threading.Lock()

    def policy(request: ScriptRequest) -> Reply:
        run_id = keys.get(_key(request.system_text, request.first_user_text))
        if run_id is None or run_id not in wrong:
            return right(request)
        with lock:
            if _assistant_turns(request.body)[0] == 0:
                plays[run_id] = plays.get(run_id, -1) + 1
            play = plays.get(run_id, 0)
        return off(request) if play in wrong[run_id] else right(request)

    return policy
