"""The run health score on hand-made runs whose trouble is known, and on a real Hermes run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replaykit.cli.main import main
from replaykit.core.analysis.health import HealthLimits, run_health
from replaykit.core.trace.ir import LLMResponse, Message, TextPart, Usage
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.testing.sample_runs import sample_header
from tests.conftest import FIXTURES


def _run(build: object, **header: object) -> Run:
    rec = Recorder(sample_header("h-run", **header))
    rec.turn_start(Message(role="user", parts=[TextPart(text="go")]))
    status = build(rec)  # type: ignore[operator]
    rec.run_end("ok", status=status or "completed")
    return Run(rec.header, rec.events)


def _answer(rec: Recorder, text: str = "done", finish: str = "stop", attempt: int = 1, tokens: int = 10) -> None:
    rec.llm_call([Message(role="user", parts=[TextPart(text="go")])],
                 LLMResponse(message=Message(role="assistant", parts=[TextPart(text=text)]), finish_reason=finish,
                             usage=Usage(input_tokens=tokens, output_tokens=1)),
                 model="gpt-4o-mini", attempt=attempt)


def _codes(run: Run) -> dict[str, int]:
    return {r.code: r.count for r in run_health(run, with_cost=False).reasons}


def test_a_clean_run_scores_100() -> None:
    health = run_health(_run(lambda rec: _answer(rec)), with_cost=False)
    assert health.score == 100 and health.reasons == [] and health.tokens == 11


def test_a_loop_is_the_same_tool_with_the_same_arguments() -> None:
    def build(rec: Recorder) -> None:
        for i in range(4):
            rec.tool_call(f"c{i}", "read_file", {"path": "a.txt"})  # the loop: 4 identical calls
        rec.tool_call("d1", "read_file", {"path": "b.txt"})
        rec.tool_call("d2", "read_file", {"path": "b.txt"})  # twice is not a loop
        rec.tool_call("r1", "search", None, raw_arguments='{"q": 1, "n": 2}')
        rec.tool_call("r2", "search", None, raw_arguments='{"n":2,"q":1}')  # same arguments, other spelling
        rec.tool_call("r3", "search", {"n": 2, "q": 1})
        _answer(rec)

    health = run_health(_run(build), with_cost=False)
    loop = [r for r in health.reasons if r.code == "loop"]
    assert [(r.count, r.penalty) for r in loop] == [(5, 25)]  # 3 + 2 repeats beyond the first call
    assert "read_file x4" in loop[0].detail and "search x3" in loop[0].detail
    assert health.score == 75


def test_retries_errors_and_tool_failures() -> None:
    def build(rec: Recorder) -> None:
        rec.error("Error code: 500", where="llm", status_code=500, retryable=True, attempt=1)
        rec.error("Error code: 429", where="llm", status_code=429, retryable=True, attempt=2)
        _answer(rec, attempt=3)
        rec.tool_call("t1", "terminal", {"cmd": "ls"}, result="denied", status="error", error="denied")
        rec.tool_call("t2", "write_file", {"path": "x"}, result="denied", status="error", error="denied")
        _answer(rec)

    run = _run(build)
    assert _codes(run) == {"errors": 2, "retries": 1, "tool_failures": 2}
    health = run_health(run, with_cost=False)
    assert health.score == 100 - 10 - 3 - 12
    assert "terminal x1" in health.summary() and "write_file x1" in health.summary()


def test_truncation_budget_subagent_failure_and_desync() -> None:
    def build(rec: Recorder) -> str:
        _answer(rec, finish="length")
        rec.subagent("start", child_run_id="kid", goal="look")
        rec.subagent("stop", child_run_id="kid", status="failed")
        rec.subagent("stop", child_run_id="kid2", status="completed")
        rec.desync(1, reason="request changed")
        rec.turn_end(None, status="interrupted", reason="max_iterations_reached (90)")
        return "interrupted"

    run = _run(build)
    assert _codes(run) == {"failed": 1, "truncated": 1, "budget_exhausted": 1, "subagent_failures": 1,
                           "desyncs": 1}
    health = run_health(run, with_cost=False)
    assert health.score == max(0, 100 - 30 - 8 - 25 - 10 - 8) == 19


def test_penalties_are_capped_per_signal_and_the_score_floors_at_0() -> None:
    def build(rec: Recorder) -> str:
        for i in range(40):
            rec.tool_call(f"t{i}", "terminal", {"i": i}, status="error", error="x")
        for _ in range(10):
            rec.error("boom", where="llm")
        return "failed"

    health = run_health(_run(build), with_cost=False)
    penalties = {r.code: r.penalty for r in health.reasons}
    assert penalties == {"failed": 30, "errors": 20, "tool_failures": 30}
    assert health.score == 20


def test_tokens_and_cost_above_the_limits() -> None:
    run = _run(lambda rec: _answer(rec, tokens=2_000_000))
    run.header.base_url = "https://api.openai.com/v1"  # a priced endpoint (the sample's is local)
    health = run_health(run, limits=HealthLimits(tokens=1_000_000, cost_usd=0.01), cost_usd=0.5)
    assert {r.code for r in health.reasons} == {"tokens", "cost"} and health.score == 80
    priced = run_health(run, limits=HealthLimits(tokens=10**9, cost_usd=0.01))  # priced by genai-prices
    assert priced.cost_usd is not None and priced.cost_usd > 0.01 and [r.code for r in priced.reasons] == ["cost"]


def test_a_real_hermes_run_with_a_retried_500() -> None:
    health = run_health(Run.load(FIXTURES / "hermes" / "retry_500.jsonl"))
    assert {r.code for r in health.reasons} == {"errors", "retries"} and health.score == 92


def test_inspect_and_html_report_show_the_health(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def build(rec: Recorder) -> None:
        for i in range(3):
            rec.tool_call(f"c{i}", "read_file", {"path": "same"})
        _answer(rec)

    run = _run(build)
    store = RunStore(tmp_path / "s")
    store.write_run(run.header, run.events)
    assert main(["inspect", "h-run", "--store", str(store.root), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["run_id"] == "h-run" and doc["health"]["score"] == 90
    assert doc["health"]["reasons"][0]["code"] == "loop"
    assert main(["inspect", "h-run", "--store", str(store.root)]) == 0
    text = capsys.readouterr().out
    assert "health 90/100: loop: same tool with same arguments (read_file x3)" in " ".join(text.split())
    out = tmp_path / "r.html"
    assert main(["export", "h-run", "--store", str(store.root), "--format", "html", "-o", str(out)]) == 0
    page = out.read_text()
    assert "<h2>Health</h2>" in page and "90/100" in page and "read_file x3" in page
