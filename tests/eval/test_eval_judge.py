"""The judge scorer against a scripted judge on 127.0.0.1: judged verdicts equal the planted grades, a
malformed grade fails its run only, a 429 storm is ridden out under the limiter, a judge that is down
fails the runs' scoring but not the eval, answers are cached (a resumed eval never asks again), judge
calls count in --max-calls, and the reason reaches the JSON, the JUnit and the HTML reports."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from replaykit.cli.main import main
from replaykit.core.analysis.health import run_health
from replaykit.eval import evaluate
from replaykit.eval.runner import EndpointRefused
from replaykit.testing.eval_candidate import Plant, mirror_policy
from replaykit.testing.eval_judge import MALFORMED, grade, judge_policy
from replaykit.testing.script import Reply, ScriptRequest, fault
from replaykit.testing.scripted_server import ScriptedServer

from .corpus import FAST, Corpus, build

pytest.importorskip("openai")
HEALTH_MARGIN = 10  # docs/eval.md


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    return build(tmp_path_factory.mktemp("evaljudge") / "store", 12, hermes=False, plant=False)


def _plan(corpus: Corpus) -> tuple[dict[str, Plant], dict[str, Reply], dict[str, float | None]]:
    """Six runs answer differently (final_answer plant); the judge grades them as planted."""
    eligible = [r for r in corpus.runs if r.status == "completed"
                and all(e.response.finish_reason in ("stop", "tool_calls") for e in r.llm_calls())]
    planted = [r.run_id for r in eligible[:6]]
    plants = {rid: Plant("final_answer") for rid in planted}
    scores: list[float | None] = [0.9, 0.1, None, 0.65, None, 0.3]  # None: not a grade
    grades = {}
    for rid, score in zip(planted, scores, strict=True):
        grades[rid] = grade(score, f"planted grade {score} for {rid}") if score is not None else MALFORMED
    grades[planted[4]] = grade(1.5, "a score out of range")
    return plants, grades, dict(zip(planted, scores, strict=True))


def _expected(corpus: Corpus, report: dict, scores: dict[str, float | None]) -> dict[str, str]:
    played = {r["run_id"]: r["candidate_runs"] for r in report["execution"]["runs"]}
    out = {}
    for rid, score in scores.items():
        if score is None:
            out[rid] = "failed"
            continue
        moved = (run_health(corpus.store.load(played[rid][0]), with_cost=False).score
                 - run_health(corpus.store.load(rid), with_cost=False).score)
        if score < 0.5 or moved <= -HEALTH_MARGIN:
            out[rid] = "regressed"
        else:
            out[rid] = "improved" if moved >= HEALTH_MARGIN else "changed"
    return out


def _eval(corpus: Corpus, candidate: ScriptedServer, judge_url: str, out: Path, **extra: object):
    return evaluate(all_runs=True, engine="openai", base_url=candidate.base_url, model="candidate", out=out,
                    store=corpus.store, workers=1, stale_timeout=2.0, play_extra=FAST,
                    scorer=["judge", "normalized", "tools"], judge_model="grader", judge_base_url=judge_url,
                    **extra)


def test_judged_verdicts_equal_the_planted_grades_and_reasons_reach_every_report(
        corpus: Corpus, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plants, grades, scores = _plan(corpus)
    with ScriptedServer(mirror_policy(corpus.runs, plants)) as cand, \
            ScriptedServer(judge_policy(corpus.runs, grades)) as judge:
        report = _eval(corpus, cand, judge.base_url, tmp_path / "j").to_json()
        judged_requests = len(judge.llm_requests)
    runs = {r["run_id"]: r for r in report["runs"]}
    assert {rid: runs[rid]["verdict"] for rid in scores} == _expected(corpus, report, scores)
    for rid, score in scores.items():
        run = runs[rid]
        assert run["scores"]["normalized"] == 0.0 or score is None  # the answers differ in wording
        if score is None:
            assert run["scorer_failed"] and run["reason"].startswith("scorer-failed: judge:")
        else:
            assert run["score"] == run["scores"]["judge"] == score  # the judge gates (the first scorer)
            assert run["reasons"]["judge"] == f"planted grade {score} for {rid}"
    same = [r for r in report["runs"] if r["run_id"] not in scores and r["verdict"] != "not replayable"]
    assert same and all(r["scores"] == {"judge": 1.0, "normalized": 1.0, "tools": 1.0} for r in same)
    assert judged_requests == len(same) + len(scores)  # one grading call per play
    assert report["candidate"]["judge"] == {"model": "grader", "api": "openai-chat",
                                            "base_url": judge.base_url, "rubric": "built-in"}
    # the grading request holds the rubric, the task, the recorded and the candidate answer
    asked = judge.requests[-1].body["messages"]
    assert "REFERENCE ANSWER" in asked[-1]["content"] and "CANDIDATE ANSWER" in asked[-1]["content"]
    # the reason in JUnit and HTML
    from replaykit.eval.html import render_eval
    from replaykit.eval.junit import render_junit

    low = next(rid for rid, s in scores.items() if s == 0.1)
    assert f"planted grade 0.1 for {low}" in render_junit(report)
    assert "planted grade 0.9 for" in render_eval(report)


def test_resumed_eval_never_asks_the_judge_again(corpus: Corpus, tmp_path: Path) -> None:
    plants, grades, _ = _plan(corpus)
    out = tmp_path / "cache"
    with ScriptedServer(mirror_policy(corpus.runs, plants)) as cand, \
            ScriptedServer(judge_policy(corpus.runs, grades)) as judge:
        first = _eval(corpus, cand, judge.base_url, out).to_json()
        asked = len(judge.llm_requests)
        for shard in out.glob("*"):  # forget which runs finished: every run is judged again from the store
            if shard.is_file() and shard.name != ".eval-selection.json":
                shard.unlink()
        played = len(cand.llm_requests)
        again = _eval(corpus, cand, judge.base_url, out).to_json()
        assert len(judge.llm_requests) == asked  # every grade came from DIR/.judge-cache
        assert len(cand.llm_requests) == played  # and every candidate play from the store
    assert again["execution"]["resumed_runs"] == 0  # every run was judged again
    assert [(r["run_id"], r["verdict"], r.get("score")) for r in first["runs"]] == \
        [(r["run_id"], r["verdict"], r.get("score")) for r in again["runs"]]


def test_a_429_storm_is_ridden_out_under_the_limiter(corpus: Corpus, tmp_path: Path) -> None:
    plants, grades, scores = _plan(corpus)
    inner = judge_policy(corpus.runs, grades)
    seen = {"n": 0}
    lock = threading.Lock()

    def storm(request: ScriptRequest) -> Reply:
        with lock:
            seen["n"] += 1
            n = seen["n"]
        # a burst of four refusals, then every other request refused: a play's 4 tries would not last it
        return fault("429", retry_after=0.05) if n <= 4 or n % 2 == 1 else inner(request)

    with ScriptedServer(mirror_policy(corpus.runs, plants)) as cand, ScriptedServer(storm) as judge:
        report = _eval(corpus, cand, judge.base_url, tmp_path / "storm", max_concurrency=2).to_json()
        sent = len(judge.llm_requests)
    runs = {r["run_id"]: r for r in report["runs"]}
    assert {rid: runs[rid]["verdict"] for rid in scores} == _expected(corpus, report, scores)
    from replaykit.core.replay.resilience import EndpointLimiter

    assert EndpointLimiter(str(tmp_path / "storm" / ".limiter-judge")).calls() == sent  # every try went through it


def test_a_judge_that_is_down_stops_the_eval_and_a_rerun_grades_without_replaying(
        corpus: Corpus, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    down = ScriptedServer(lambda r: fault("500"))
    url, port = down.base_url, down.port  # the port is closed once the server is gone
    down.stop()
    out = tmp_path / "down"
    with ScriptedServer(mirror_policy(corpus.runs)) as cand:
        def again() -> dict:
            return evaluate(all_runs=True, engine="openai", base_url=cand.base_url, model="candidate", out=out,
                            store=corpus.store, workers=1, scorer="judge", judge_model="grader", judge_base_url=url,
                            play_extra=FAST).to_json()

        with pytest.raises(EndpointRefused) as stopped:
            again()
        message = str(stopped.value)
        assert "the judge's endpoint failed the first 3 grades" in message and "cannot reach" in message
        assert len(message.splitlines()) == 1
        played = {r.body["messages"][1]["content"] for r in cand.llm_requests}
        assert len(played) <= 4  # stopped after the first grades failed, not after the whole corpus
        with ScriptedServer(judge_policy(corpus.runs, {}), port=port):  # the judge is back: the same command
            before = len(cand.llm_requests)
            report = again()
            replayed = {r.body["messages"][1]["content"] for r in cand.llm_requests[before:]}
    judged = [r for r in report["runs"] if r["verdict"] != "not replayable"]
    assert judged and all(r["scores"]["judge"] == 1.0 and not r.get("scorer_failed") for r in judged)
    assert not replayed & played  # the candidate plays of the stopped eval came from the store


def test_judge_calls_count_in_max_calls(corpus: Corpus, tmp_path: Path) -> None:
    with ScriptedServer(mirror_policy(corpus.runs)) as cand, \
            ScriptedServer(judge_policy(corpus.runs, {})) as judge:
        limited = _eval(corpus, cand, judge.base_url, tmp_path / "budget", max_calls=12).to_json()
        candidate_calls, judge_calls = len(cand.llm_requests), len(judge.llm_requests)
    assert judge_calls > 0 and candidate_calls < 12 <= candidate_calls + judge_calls + 6
    assert limited["totals"]["left"] > 0


def test_a_rubric_file_replaces_the_built_in_one(corpus: Corpus, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    rubric = tmp_path / "rubric.txt"
    rubric.write_text("RUBRIC-38: grade harshly, only the date matters.\n")
    with ScriptedServer(mirror_policy(corpus.runs)) as cand, \
            ScriptedServer(judge_policy(corpus.runs, {})) as judge:
        code = main(["eval", "--all", "--engine", "openai", "--base-url", cand.base_url, "--model", "candidate",
                     "--store", str(corpus.store.root), "-o", str(tmp_path / "rubric"), "--workers", "1",
                     "--scorer", "judge", "--scorer", "tools", "--gate-scorer", "tools", "--judge-model", "grader",
                     "--judge-base-url", judge.base_url, "--rubric", str(rubric), "--json"])
        system = judge.llm_requests[0].body["messages"][0]["content"]
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    assert system.startswith("RUBRIC-38") and '"score"' in system
    assert report["candidate"]["judge"]["rubric"] == str(rubric)
    assert report["candidate"]["scorers"] == ["judge", "tools"] and report["candidate"]["gate_scorer"] == "tools"
