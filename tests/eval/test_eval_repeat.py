"""``--repeat K`` against a candidate that is right 3 times in 5 for planted runs: per run the pass rate,
the spread and the instability; the verdict by the written rule (docs/eval.md), at two thresholds; the
offline control is played once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replaykit.cli.main import main
from replaykit.testing.eval_judge import sometimes_right
from replaykit.testing.scripted_server import ScriptedServer

from .corpus import OPENAI_FINISH, Corpus, build

pytest.importorskip("openai")
K = 5
WRONG = {3, 4}  # the 4th and 5th plays of a planted run answer differently


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    return build(tmp_path_factory.mktemp("evalrepeat") / "store", 8, hermes=False, plant=False)


def _eval(corpus: Corpus, out: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, dict, int]:
    eligible = [r for r in corpus.runs if r.status == "completed"
                and all(e.response.finish_reason in OPENAI_FINISH for e in r.llm_calls())]
    planted = {r.run_id: WRONG for r in eligible[:3]}
    with ScriptedServer(sometimes_right(corpus.runs, planted)) as srv:
        code = main(["eval", "--all", "--engine", "openai", "--base-url", srv.base_url, "--model", "candidate",
                     "--store", str(corpus.store.root), "-o", str(out), "--workers", "1", "--repeat", str(K),
                     "--json", *extra])
        sent = len(srv.llm_requests)
    report = json.loads(capsys.readouterr().out)
    report["planted"] = sorted(planted)
    return code, report, sent


def test_repeat_5_with_a_candidate_right_3_times_in_5(corpus: Corpus, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    code, report, sent = _eval(corpus, tmp_path / "r", capsys)
    assert code == 0
    runs = {r["run_id"]: r for r in report["runs"]}
    for rid in report["planted"]:
        run = runs[rid]
        assert run["pass_rate"] == 0.6 and run["unstable"] is True
        assert [s["verdict"] for s in run["samples"]] == ["same", "same", "same", "regressed", "regressed"]
        assert run["verdict"] == "same"  # 3 of 5 pass >= 0.5: the most frequent passing verdict
        assert run["score"] == 0.6 and run["spread"] == {"min": 0.0, "max": 1.0, "stdev": 0.489898}
    steady = [r for r in report["runs"] if r["run_id"] not in report["planted"] and r["verdict"] != "not replayable"]
    assert steady and all(r["pass_rate"] == 1.0 and r["unstable"] is False and len(r["samples"]) == K
                          for r in steady)
    assert report["totals"]["unstable"] == len(report["planted"])
    # each run's candidate played K times (K new runs in the store), the offline control once: it calls
    # nothing, so every request the server saw belongs to one of the K plays
    plays = {r["run_id"]: r["candidate_runs"] for r in report["execution"]["runs"]}
    for rid, run in runs.items():
        if run["verdict"] != "not replayable":
            assert len(plays[rid]) == len(set(plays[rid])) == K
    recorded_calls = sum(len(r.llm_calls()) for r in corpus.runs if r.run_id in runs
                         and runs[r.run_id]["verdict"] != "not replayable")
    assert sent == K * recorded_calls
    # the pass rate and the instability reach JUnit and the HTML run table
    from replaykit.eval.html import render_eval
    from replaykit.eval.junit import render_junit

    assert "pass rate 0.6 (unstable" in render_junit(report)
    page = render_eval(report)
    assert "<th" in page and ">pass rate<" in page and ">unstable<" in page


def test_a_stricter_pass_rate_makes_the_unstable_runs_regress(corpus: Corpus, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    code, report, _ = _eval(corpus, tmp_path / "strict", capsys, "--pass-rate", "0.8", "--max-regressed", "0")
    runs = {r["run_id"]: r for r in report["runs"]}
    assert code == 1  # the gate counts the runs regressed by the rule
    for rid in report["planted"]:
        assert runs[rid]["verdict"] == "regressed" and runs[rid]["unstable"]
        assert "3 of 5" not in runs[rid]["reason"] and "2 of 5 samples did not pass" in runs[rid]["reason"]
    assert report["totals"]["verdicts"]["regressed"] == len(report["planted"])
    assert report["candidate"]["repeat"] == K and report["candidate"]["pass_rate"] == 0.8
