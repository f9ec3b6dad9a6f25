"""The eval tests' corpus: generated runs plus the real Hermes fixtures, and the behaviour planted per run
with what each plant must produce (computed from the record, independently of the eval's code)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replaykit.core.trace.codecs import neutral_finish_reason
from replaykit.core.trace.ir import LLMCallEvent, ToolCallEvent
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.testing.corpus_runs import write_corpus
from replaykit.testing.eval_candidate import Plant

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hermes"
PLANTS = ("identical", "tool_argument", "final_answer", "extra_tool", "429", "stall", "401")
FAST = {"retry_base_delay": 0.01, "retry_max_delay": 0.05}


@dataclass
class Corpus:
    store: RunStore
    runs: list[Run]
    plants: dict[str, Plant]
    expected: dict[str, dict[str, Any]]  # run id -> verdict and fidelity counts


def _llm_index_with_tools(run: Run) -> int | None:
    for index, event in enumerate(run.llm_calls()):
        if event.response.message.tool_calls:
            return index
    return None


def _truncated(run: Run) -> bool:
    return any(e.response.finish_reason == "length" for e in run.llm_calls())


#: The finish reasons an OpenAI-compatible candidate gives for a whole answer; a recorded step that ended
#: otherwise (cut by the length limit) differs in that field. A step recorded on another API is compared in
#: the words every API shares (diff: an Anthropic ``end_turn`` is Chat's ``stop``).
OPENAI_FINISH = ("stop", "tool_calls")


def _finish_differs(event: LLMCallEvent) -> bool:
    reason = event.response.finish_reason
    if event.request.api != "openai-chat":
        reason = neutral_finish_reason(reason, bool(event.response.message.tool_calls))
    return reason not in OPENAI_FINISH


def expected_for(run: Run, plant: Plant) -> dict[str, Any]:
    steps = run.steps
    n = len(steps)
    if run.status != "completed":
        return {"verdict": "not replayable"}
    if plant.kind == "401":
        return {"verdict": "failed"}
    if plant.kind == "final_answer":
        return {"verdict": "regressed", "fidelity": {"reused": 0, "exact": n - 1, "divergent": 1, "unmatched": 0,
                                                      "missing": 0}, "field": "response.text"}
    if plant.kind == "extra_tool":
        return {"verdict": "changed", "fidelity": {"reused": 0, "exact": n - 1, "divergent": 1, "unmatched": 2,
                                                    "missing": 0}, "field": "step"}
    if plant.kind == "tool_argument":
        llm_steps = [s for s in steps if isinstance(s.event, LLMCallEvent)]
        at = llm_steps[plant.step].index  # the LLM step whose tool call changed, then its tool step
        after = [s for s in steps if s.index > at + 1]
        exact = at + sum(isinstance(s.event, ToolCallEvent) for s in after)
        divergent = 2 + sum(isinstance(s.event, LLMCallEvent) for s in after)
        return {"verdict": "changed", "fidelity": {"reused": 0, "exact": exact, "divergent": divergent,
                                                    "unmatched": 0, "missing": 0}, "field": "response.tool_calls"}
    other = sum(_finish_differs(e) for e in run.llm_calls())
    if other:  # the scripted answer is whole (an OpenAI finish reason) where the record's ended otherwise
        return {"verdict": "changed", "fidelity": {"reused": 0, "exact": n - other, "divergent": other,
                                                    "unmatched": 0, "missing": 0}, "field": "response.finish_reason"}
    return {"verdict": "same", "fidelity": {"reused": 0, "exact": n, "divergent": 0, "unmatched": 0, "missing": 0},
            "field": None}


def build(root: Path, n: int, *, hermes: bool = True, plant: bool = True, steps: int = 4) -> Corpus:
    store = RunStore(root)
    write_corpus(store, n, steps=steps)
    if hermes:
        for path in sorted(FIXTURES.glob("*.jsonl")):
            run = Run.load(path)
            shutil.copyfile(path, store.path_for(run.run_id))
    runs = [Run.load(p) for p in sorted(store.root.glob("*.jsonl"))]
    plants: dict[str, Plant] = {}
    if plant:
        eligible = [r for r in runs if r.run_id.startswith("corpus-") and r.status == "completed"
                    and not _truncated(r) and _llm_index_with_tools(r) is not None]
        for kind, run in zip(PLANTS, eligible, strict=False):
            step = _llm_index_with_tools(run) or 0
            plants[run.run_id] = Plant(kind, step=step, retry_after=0.3, stall_seconds=2.0)  # type: ignore[arg-type]
    expected = {r.run_id: expected_for(r, plants.get(r.run_id, Plant())) for r in runs}
    return Corpus(store, runs, plants, expected)


#: docs/eval.md: a changed run whose health score moved by 10 or more improved or regressed.
HEALTH_MARGIN = 10


def settle_health(corpus: Corpus, report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The expected verdicts with the health rule applied: a run expected 'changed' is 'improved' or
    'regressed' when its candidate's health score (``core.health``, the oracle) moved by the margin."""
    from replaykit.core.analysis.health import run_health

    played = {r["run_id"]: r["candidate_runs"] for r in report["execution"]["runs"]}
    out = {}
    for run_id, want in corpus.expected.items():
        want = dict(want)
        if want["verdict"] == "changed" and played.get(run_id):
            before = run_health(corpus.store.load(run_id), with_cost=False).score
            after = run_health(corpus.store.load(played[run_id][0]), with_cost=False).score
            if after - before >= HEALTH_MARGIN:
                want["verdict"] = "improved"
            elif after - before <= -HEALTH_MARGIN:
                want["verdict"] = "regressed"
        out[run_id] = want
    return out


def observed(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out = {}
    for run in report["runs"]:
        got: dict[str, Any] = {"verdict": run["verdict"]}
        if "fidelity" in run and run["verdict"] != "failed":
            got["fidelity"] = run["fidelity"]
            got["field"] = (run.get("first_divergence") or {}).get("field")
        out[run["run_id"]] = got
    return out
