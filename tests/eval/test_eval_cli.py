"""replaykit eval from the command line on a small corpus: the gate and its exit codes, JUnit read by a
JUnit parser, the HTML page, bad input, selection, scorers, budgets, the shared endpoint limits, resuming
after SIGKILL, and the API key written nowhere."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from replaykit.cli.main import main
from replaykit.testing.eval_candidate import mirror_policy
from replaykit.testing.script import Policy, Reply, ScriptRequest, fault
from replaykit.testing.scripted_server import ScriptedServer

from .corpus import Corpus, build, settle_health

pytest.importorskip("openai")
ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-test-EVALSECRET-0123456789abcdef"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    return build(tmp_path_factory.mktemp("evalcli") / "store", 16, hermes=False)


@pytest.fixture()
def server(corpus: Corpus) -> Iterator[ScriptedServer]:
    with ScriptedServer(mirror_policy(corpus.runs, corpus.plants)) as srv:
        yield srv


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _args(corpus: Corpus, srv: ScriptedServer, out: Path, *extra: str) -> list[str]:
    return ["eval", "--all", "--engine", "openai", "--base-url", srv.base_url, "--model", "candidate",
            "--store", str(corpus.store.root), "-o", str(out), "--stale-timeout", "0.5", "--workers", "1", *extra]


def test_gate_exit_codes_and_report(corpus: Corpus, server: ScriptedServer, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(_args(corpus, server, tmp_path / "a", "--json"), capsys)
    assert code == 0  # no threshold: the report is the answer
    report = json.loads(out)
    assert report == json.loads((tmp_path / "a" / "report.json").read_text())
    expected = settle_health(corpus, report)  # the planted verdicts, with health moves judged by core.health
    regressed = sum(1 for want in expected.values() if want["verdict"] == "regressed")
    assert regressed >= 1
    assert report["passed"] and report["totals"]["verdicts"]["regressed"] == regressed
    # --max-regressed 0 fails (exit 1, the report says which); the count itself holds
    code, _, err = _run(_args(corpus, server, tmp_path / "a", "--max-regressed", "0"), capsys)
    assert code == 1 and "--max-regressed 0" in err
    saved = json.loads((tmp_path / "a" / "report.json").read_text())
    assert saved["passed"] is False and "regressed" in saved["thresholds"]["failed"][0]
    assert _run(_args(corpus, server, tmp_path / "a", "--max-regressed", str(regressed)), capsys)[0] == 0
    mean = report["totals"]["score"]["mean"]
    assert 0 < mean < 1
    assert _run(_args(corpus, server, tmp_path / "a", "--fail-below", str(mean - 0.01)), capsys)[0] == 0
    code, _, err = _run(_args(corpus, server, tmp_path / "a", "--fail-below", str(mean + 0.01)), capsys)
    assert code == 1 and "--fail-below" in err
    # the resumed eval (same DIR) played nothing again
    assert json.loads((tmp_path / "a" / "report.json").read_text())["execution"]["resumed_runs"] == len(corpus.runs)


@pytest.mark.parametrize("argv, message", [
    (["--engine", "nope"], "invalid choice"),
    (["--offline"], "--offline"),
    (["--filter", "model=no-such-model*"], "selects nothing"),
    (["--filter", "colour=red"], "unknown key"),
    (["--filter", "health<abc"], "number"),
    (["--at", "sometimes"], "--at"),
    (["--scorer", "nocolon"], "unknown scorer"),
    (["--scorer", "a:b:c"], "MODULE:FUNCTION"),
    (["--scorer", "json:no_such_function"], "cannot import"),
    (["--scorer", "judge"], "--judge-model"),
    (["--scorer", "judge", "--judge-model", "j", "--rubric", "/nonexistent/rubric.txt"], "--rubric"),
    (["--scorer", "judge", "--judge-model", "j", "--judge-base-url", "ftp://x"], "--judge-base-url"),
    (["--scorer", "judge", "--judge-model", "j", "--judge-api-key-env", "REPLAYKIT_EVAL_UNSET_VAR"], "not set"),
    (["--judge-model", "j"], "--scorer judge"),
    (["--scorer", "exact", "--gate-scorer", "tools"], "--gate-scorer"),
    (["--repeat", "0"], "--repeat"),
    (["--repeat", "3", "--pass-rate", "1.5"], "--pass-rate"),
    (["--fail-worse-by", "0.1"], "--compare"),
    (["--max-concurrency", "0"], "--max-concurrency"),
    (["--api-key-env", "REPLAYKIT_EVAL_UNSET_VAR"], "not set"),
])
def test_bad_input_is_one_line_and_exit_2(corpus: Corpus, server: ScriptedServer, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    args = _args(corpus, server, tmp_path / "bad", *argv)
    if "--engine" in argv:  # the later --engine wins in argparse; put the bad one alone
        args[args.index("openai")] = "nope"
    try:
        code, _, err = _run(args, capsys)
    except SystemExit as exc:  # argparse's own usage errors
        code, err = int(exc.code or 0), capsys.readouterr().err
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert server.llm_requests == []  # found before any candidate call


def test_junit_is_read_by_a_junit_parser(corpus: Corpus, server: ScriptedServer, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    junitparser = pytest.importorskip("junitparser")
    junit = tmp_path / "eval.xml"
    assert _run(_args(corpus, server, tmp_path / "j", "--junit", str(junit)), capsys)[0] == 0
    report = json.loads((tmp_path / "j" / "report.json").read_text())
    xml = junitparser.JUnitXml.fromfile(str(junit))
    cases = [case for suite in xml for case in suite]
    assert len(cases) == len(corpus.runs)
    by_name = {case.name: case for case in cases}
    for run in report["runs"]:
        case = by_name[run["run_id"]]
        kinds = [type(r).__name__ for r in case.result]
        if run["verdict"] in ("regressed", "failed"):
            assert kinds == ["Failure"]
            if run.get("first_divergence"):
                assert f"step {run['first_divergence']['step']}" in case.result[0].message
        elif run["verdict"] == "not replayable":
            assert kinds == ["Skipped"]
        else:
            assert case.is_passed
    failing = sum(r["verdict"] in ("regressed", "failed") for r in report["runs"])
    planted = sum(w["verdict"] in ("regressed", "failed") for w in settle_health(corpus, report).values())
    assert sum(1 for c in cases if not c.is_passed and not c.is_skipped) == failing == planted >= 2


def test_html_is_escaped_self_contained_and_links_each_diff(corpus: Corpus, server: ScriptedServer,
                                                          tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "eval.html"
    assert _run(_args(corpus, server, tmp_path / "h", "--html", str(page)), capsys)[0] == 0
    text = page.read_text()
    report = json.loads((tmp_path / "h" / "report.json").read_text())
    assert "<svg" in text
    # one script, ours, allowed by its hash alone (no other script could run)
    import base64
    import hashlib

    from replaykit.eval.html_table import SCRIPT

    assert text.count("<script") == 1 and f"<script>{SCRIPT}</script>" in text
    digest = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in text and "unsafe-eval" not in text
    assert not re.search(r"""(src|href|url)\s*[=(]\s*["']?(https?:)?//""", text)  # nothing from the network
    assert "Content-Security-Policy" in text
    judged = [r["run_id"] for r in report["runs"] if r["verdict"] != "not replayable"]
    played = {r["run_id"] for r in report["execution"]["runs"] if r["candidate_runs"]}
    reachable = [rid for rid in judged if corpus.store.path_for(f"{rid}").exists() and rid in played
                 and any(corpus.store.path_for(c).exists() for c in next(
                     r["candidate_runs"] for r in report["execution"]["runs"] if r["run_id"] == rid))]
    assert len(reachable) >= len(judged) - 1  # all but the run whose candidate the endpoint refused (401)
    for run_id in reachable:  # every judged run with a candidate play links to its diff, 'same' ones too
        link = f'href="eval-diffs/{run_id}.html"'
        assert link in text
        assert (tmp_path / "eval-diffs" / f"{run_id}.html").is_file()
    for run in report["runs"]:  # and every run is a row of the table
        assert f">{run['run_id']}<" in text
    assert oct(page.stat().st_mode & 0o777) == "0o600"
    from replaykit.eval.html import render_eval

    hostile = json.loads(json.dumps(report))
    hostile["runs"][0]["reason"] = "<script>alert(1)</script>"
    hostile["candidate"]["model"] = "<img src=x onerror=alert(1)>"
    rendered = render_eval(hostile)
    assert "<script>alert" not in rendered and "<img src=x" not in rendered and "&lt;script&gt;" in rendered


def test_all_leaves_out_candidate_plays_and_filter_narrows(corpus: Corpus, server: ScriptedServer, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    first = json.loads(_run(_args(corpus, server, tmp_path / "one", "--json"), capsys)[1])
    second = json.loads(_run(_args(corpus, server, tmp_path / "two", "--json"), capsys)[1])
    # the store now holds the first eval's candidate plays; --all still selects the recordings only
    assert first["totals"]["selected"] == second["totals"]["selected"] == len(corpus.runs)
    models = [r.header.model for r in corpus.runs]
    want = sum(1 for m in models if m.startswith("gpt-4o"))
    third = json.loads(_run(_args(corpus, server, tmp_path / "three", "--json", "--filter", "model=gpt-4o*"),
                            capsys)[1])
    assert third["totals"]["selected"] == want and {r["model"] for r in third["runs"]} <= {"gpt-4o", "gpt-4o-mini"}
    fourth = json.loads(_run(_args(corpus, server, tmp_path / "four", "--json", "--filter",
                                   "framework=hermes,date>=2026-11-30"), capsys)[1])
    assert fourth["totals"]["selected"] == sum(1 for r in corpus.runs if r.header.source.framework == "hermes")


def test_scorer_scores_and_a_failing_scorer_fails_only_its_runs(corpus: Corpus, server: ScriptedServer,
                                                                tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_scorers.py").write_text(
        "def low(original, candidate):\n    return 0.2\n"
        "def picky(original, candidate):\n"
        "    if candidate.final_answer != original.final_answer:\n        raise RuntimeError('cannot score')\n"
        "    return 1.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    low = json.loads(_run(_args(corpus, server, tmp_path / "low", "--json", "--scorer", "my_scorers:low"), capsys)[1])
    changed = [r for r in low["runs"] if r["verdict"] not in ("same", "not replayable", "failed")]
    assert changed and all(r["verdict"] == "regressed" and r["score"] == 0.2 for r in changed)
    picky = json.loads(_run(_args(corpus, server, tmp_path / "picky", "--json", "--scorer", "my_scorers:picky"),
                            capsys)[1])
    scorer_failed = [r for r in picky["runs"] if r.get("scorer_failed")]
    assert [r["run_id"] for r in scorer_failed] == [next(k for k, p in corpus.plants.items() if p.kind == "final_answer")]
    assert scorer_failed[0]["verdict"] == "failed" and "scorer-failed" in scorer_failed[0]["reason"]
    # a scorer that cannot be imported is bad input, found before the first candidate call
    before = len(server.llm_requests)
    code, _, err = _run(_args(corpus, server, tmp_path / "missing", "--json", "--scorer", "no_such_mod:f"), capsys)
    assert code == 2 and "no_such_mod:f" in err and len(err.strip().splitlines()) == 1
    assert len(server.llm_requests) == before and not (tmp_path / "missing" / "manifest.jsonl").exists()


def test_at_turn_plays_each_turn_and_at_step(corpus: Corpus, server: ScriptedServer, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    multi = next(r for r in corpus.runs if len(r.user_turns()) >= 2 and r.status == "completed"
                 and r.run_id not in corpus.plants)
    args = _args(corpus, server, tmp_path / "turn", "--json", "--at", "turn")
    args[args.index("--all")] = multi.run_id
    report = json.loads(_run(args, capsys)[1])
    (run,) = report["runs"]
    assert len(report["execution"]["runs"][0]["candidate_runs"]) == len(multi.user_turns())
    assert [t["turn"] for t in run["turns"]] == list(range(len(multi.user_turns())))
    assert run["fidelity"]["reused"] > 0  # later turns serve the recorded history before them
    args = _args(corpus, server, tmp_path / "step", "--json", "--at", "2")
    args[args.index("--all")] = multi.run_id
    (run,) = json.loads(_run(args, capsys)[1])["runs"]
    assert run["cut"] == 2 and run["fidelity"]["reused"] == 2


def test_api_key_is_written_nowhere(corpus: Corpus, server: ScriptedServer, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPLAYKIT_EVAL_KEY", SECRET)
    out = tmp_path / "k"
    code, stdout, err = _run(_args(corpus, server, out, "--api-key-env", "REPLAYKIT_EVAL_KEY", "--json",
                                   "--html", str(tmp_path / "k.html"), "--junit", str(tmp_path / "k.xml")), capsys)
    assert code == 0
    assert any(r.headers.get("authorization") is None for r in server.requests)  # the server never logs it
    for path in [*tmp_path.rglob("*"), *corpus.store.root.rglob("*")]:
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in stdout + err


# ----------------------------------------------------------------------------- the endpoint's limits

def _tracking(inner: Policy, delay: float) -> tuple[Policy, Callable[[], int]]:
    lock = threading.Lock()
    state = {"now": 0, "max": 0}

    def policy(request: ScriptRequest) -> Reply:
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        try:
            time.sleep(delay)
            return inner(request)
        finally:
            with lock:
                state["now"] -= 1

    return policy, lambda: state["max"]


def test_max_concurrency_bounds_requests_in_flight_across_workers(corpus: Corpus, tmp_path: Path) -> None:
    from replaykit.eval import evaluate

    policy, peak = _tracking(mirror_policy(corpus.runs), 0.05)
    with ScriptedServer(policy) as srv:
        evaluate(all_runs=True, engine="openai", base_url=srv.base_url, model="candidate", out=tmp_path / "c",
                 store=corpus.store, workers=3, max_concurrency=2)
    assert peak() == 2  # reached, never exceeded
    policy, peak = _tracking(mirror_policy(corpus.runs), 0.05)
    with ScriptedServer(policy) as srv:
        evaluate(all_runs=True, engine="openai", base_url=srv.base_url, model="candidate", out=tmp_path / "d",
                 store=corpus.store, workers=3, max_concurrency=1)
    assert peak() == 1


def test_retry_after_slows_every_worker(corpus: Corpus, tmp_path: Path) -> None:
    from replaykit.eval import evaluate

    inner = mirror_policy(corpus.runs)
    sent: list[float] = []
    lock = threading.Lock()

    def policy(request: ScriptRequest) -> Reply:
        with lock:
            sent.append(time.time())
            first = len(sent) == 6
        return fault("429", retry_after=1.0) if first else inner(request)

    with ScriptedServer(policy) as srv:
        report = evaluate(all_runs=True, engine="openai", base_url=srv.base_url, model="candidate",
                          out=tmp_path / "r", store=corpus.store, workers=2)
    assert report.verdicts["failed"] == 0
    limited = sent[5]
    quiet = [t for t in sent if limited + 0.15 < t < limited + 0.9]
    assert quiet == []  # no worker sent anything while the endpoint asked to wait


def test_max_calls_leaves_runs_and_a_rerun_finishes_them(corpus: Corpus, server: ScriptedServer, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "b"
    first = json.loads(_run(_args(corpus, server, out, "--json", "--max-calls", "6"), capsys)[1])
    assert first["totals"]["left"] > 0 and first["totals"]["left_by"] == {"max-calls": first["totals"]["left"]}
    played = sum(len(r["candidate_runs"]) for r in first["execution"]["runs"])
    assert played < len(corpus.runs)
    done = {r["run_id"] for r in first["runs"]}
    second = json.loads(_run(_args(corpus, server, out, "--json", "--max-calls", "100000"), capsys)[1])
    ids = [r["run_id"] for r in second["runs"]]
    assert len(ids) == len(set(ids)) == len(corpus.runs) and second["totals"]["left"] == 0
    assert done <= set(ids)


def test_an_endpoint_refusing_everything_stops_the_eval_early(corpus: Corpus, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    with ScriptedServer(lambda request: fault("401")) as srv:
        code, _, err = _run(_args(corpus, srv, tmp_path / "down"), capsys)
        requests = len(srv.llm_requests)
    assert code == 1 and "the endpoint failed the first 3 candidate plays" in err
    assert len(err.strip().splitlines()) == 1 and requests <= 4


def test_sigkill_mid_eval_then_rerun_loses_nothing_and_replays_nothing(corpus: Corpus, tmp_path: Path) -> None:
    from replaykit.eval import evaluate

    policy, _ = _tracking(mirror_policy(corpus.runs, corpus.plants), 0.15)
    out = tmp_path / "killed"
    with ScriptedServer(policy) as srv:
        argv = [sys.executable, "-m", "replaykit", *_args(corpus, srv, out, "--json")]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        manifest = out / "manifest.jsonl"
        deadline = time.time() + 60
        while time.time() < deadline and proc.poll() is None:
            if manifest.is_file() and len(manifest.read_text().splitlines()) >= 5:
                break
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        port = srv.port  # the rerun is the same command: the same endpoint
    finished = {rid for line in manifest.read_text().splitlines()[1:] if line.strip()
                for rid in json.loads(line).get("run_ids", [])}
    assert 3 <= len(finished) < len(corpus.runs)
    keys = {}
    for run in corpus.runs:
        messages = run.request_messages(run.llm_calls()[0])
        keys[next(m.text for m in messages if m.role == "user")] = run.run_id
    with ScriptedServer(mirror_policy(corpus.runs, corpus.plants), port=port) as srv:
        report = evaluate(all_runs=True, engine="openai", base_url=srv.base_url, model="candidate", out=out,
                          store=corpus.store, stale_timeout=0.5, workers=1)
        asked = {keys.get(r.body["messages"][1]["content"]) for r in srv.llm_requests}
    ids = [r["run_id"] for r in report.runs]
    assert sorted(ids) == sorted(r.run_id for r in corpus.runs)  # none lost, none twice
    assert not asked & finished  # no finished run called live again
