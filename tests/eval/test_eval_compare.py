"""``replaykit eval --compare DIR_A DIR_B``: two candidate evals over one corpus with planted per-run
differences: the verdict changes run by run, the paired differences and their bootstrap interval
(reproducible), the gate's exit code by the margin, JSON / HTML / JUnit, and two directories over
different corpora (the runs both hold are compared, the others counted)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replaykit.cli.main import main
from replaykit.eval.pairwise import bootstrap
from replaykit.testing.eval_candidate import Plant, mirror_policy
from replaykit.testing.scripted_server import ScriptedServer

from .corpus import OPENAI_FINISH, Corpus, build

pytest.importorskip("openai")


@pytest.fixture(scope="module")
def evals(tmp_path_factory: pytest.TempPathFactory) -> tuple[Corpus, Path, Path, Path, list[str]]:
    root = tmp_path_factory.mktemp("evalcompare")
    corpus = build(root / "store", 16, hermes=False, plant=False)
    eligible = [r for r in corpus.runs if r.status == "completed"
                and all(e.response.finish_reason in OPENAI_FINISH for e in r.llm_calls())]
    worse = [r.run_id for r in eligible[:6]]
    subset = [r.run_id for r in corpus.runs[:7]]

    def run(out: Path, plants: dict[str, Plant], refs: list[str] | None = None) -> None:
        with ScriptedServer(mirror_policy(corpus.runs, plants)) as srv:
            assert main(["eval", *(refs or ["--all"]), "--engine", "openai", "--base-url", srv.base_url,
                         "--model", "cand-" + out.name, "--store", str(corpus.store.root), "-o", str(out),
                         "--workers", "1", "--stale-timeout", "2"]) == 0

    run(root / "a", {})
    run(root / "b", {rid: Plant("final_answer") for rid in worse})
    run(root / "c", {}, subset)
    return corpus, root / "a", root / "b", root / "c", worse


def _compare(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict, str]:
    code = main(["eval", "--compare", *argv, "--json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


def test_b_worse_than_a_run_by_run_and_by_the_interval(evals, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    corpus, a, b, _, worse = evals
    code, doc, err = _compare(capsys, str(a), str(b), "--fail-worse-by", "0",
                              "--html", str(tmp_path / "cmp.html"), "--junit", str(tmp_path / "cmp.xml"))
    assert code == 1 and "worse than A on the mean score" in err
    changed = {r["run_id"] for r in doc["runs"] if r["change"] == "worse"}
    assert changed == set(worse)  # exactly the planted runs
    assert all(r["verdict_b"] == "regressed" for r in doc["runs"] if r["run_id"] in changed)
    assert doc["changes"]["better"] == 0
    n = doc["compared"]
    assert n == sum(1 for r in corpus.runs if r.status == "completed")
    assert doc["left_out"] == {"only_in_a": 0, "only_in_b": 0, "not_replayable": len(corpus.runs) - n}
    score = doc["differences"]["score"]
    # the same numbers from the run pairs, independently of the comparison's code
    a_runs = {r["run_id"]: r for r in json.loads((a / "report.json").read_text())["runs"]}
    b_runs = {r["run_id"]: r for r in json.loads((b / "report.json").read_text())["runs"]}
    deltas = [b_runs[r["run_id"]]["score"] - a_runs[r["run_id"]]["score"] for r in doc["runs"]]
    assert score["mean"] == pytest.approx(-len(worse) / n, abs=1e-6) == pytest.approx(sum(deltas) / n, abs=1e-6)
    assert score["low"] <= score["mean"] <= score["high"] < 0
    assert doc["differences"]["pass_rate"]["high"] < 0
    # reproducible: the same reports, the same interval
    assert _compare(capsys, str(a), str(b))[1]["differences"] == doc["differences"]
    # a margin wider than the interval's far end: not significantly worse by that much
    code, doc2, _ = _compare(capsys, str(a), str(b), "--fail-worse-by", str(-score["low"] + 0.01))
    assert code == 0 and doc2["gate"]["passed"]
    # B against itself, and the other way round: nothing worse
    assert _compare(capsys, str(b), str(a), "--fail-worse-by", "0")[0] == 0
    code, same, _ = _compare(capsys, str(a), str(a), "--fail-worse-by", "0")
    assert code == 0 and same["differences"]["score"] == {"mean": 0.0, "low": 0.0, "high": 0.0}
    # JUnit: a failure per worse run and per failing difference
    junitparser = pytest.importorskip("junitparser")
    cases = [c for suite in junitparser.JUnitXml.fromfile(str(tmp_path / "cmp.xml")) for c in suite]
    failing = {c.name for c in cases if not c.is_passed}
    assert set(worse) <= failing and len(failing) == len(worse) + 2
    html = (tmp_path / "cmp.html").read_text()
    assert all(rid in html for rid in worse) and "significantly worse" in html


def test_different_corpora_compare_the_runs_both_hold(evals, capsys: pytest.CaptureFixture[str]) -> None:
    corpus, a, _, c, _ = evals
    code, doc, _ = _compare(capsys, str(a), str(c))
    c_runs = json.loads((c / "report.json").read_text())["runs"]
    judged_in_c = [r for r in c_runs if r["verdict"] != "not replayable"]
    assert code == 0 and doc["compared"] == len(judged_in_c)
    assert doc["left_out"]["only_in_a"] == len(corpus.runs) - len(c_runs) and doc["left_out"]["only_in_b"] == 0
    assert "left out" in main_summary(a, c, capsys)


def main_summary(a: Path, c: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["eval", "--compare", str(a), str(c)]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["--compare", "/nonexistent-a", "/nonexistent-b"], "no report.json"),
    (["--compare", "A", "B", "--fail-worse-by", "-1"], "--fail-worse-by"),
    (["--compare", "A", "B", "--engine", "openai"], "give no RUNs"),
])
def test_compare_bad_input(evals, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    _, a, b, _, _ = evals
    argv = [str(a) if x == "A" else str(b) if x == "B" else x for x in argv]
    assert main(["eval", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_bootstrap_is_seeded_and_brackets_the_mean() -> None:
    values = [0.0] * 30 + [-1.0] * 10
    first, second = bootstrap(values), bootstrap(values)
    assert first == second and first["mean"] == -0.25
    assert first["low"] < -0.25 < first["high"] < 0
    assert bootstrap([]) == {"mean": None, "low": None, "high": None}


def test_reports_with_no_run_in_common_are_bad_input() -> None:
    from replaykit.core.errors import BadInput
    from replaykit.eval.pairwise import compare_reports

    a = {"runs": [{"run_id": "x", "verdict": "same", "score": 1.0}]}
    b = {"runs": [{"run_id": "y", "verdict": "same", "score": 1.0}]}
    with pytest.raises(BadInput, match="no run in common"):
        compare_reports(a, b)
