"""``replaykit demo`` end to end: the real CLI in a subprocess, its outputs checked independently of the
demo's own checks (the exported script is run again, training records validated, HTML scanned)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from replaykit.cli.demo_flow import MARKER, prepare_out, strip_volatile
from replaykit.core.errors import BadInput
from replaykit.core.trace.run import Run
from replaykit.testing.demo_data import EDITED_ECHO, demo_policy, echo_of, edited_result, recording_path
from replaykit.testing.scripted_server import ScriptedServer

ROOT = Path(__file__).resolve().parents[2]
# A step may be skipped only because a part is missing from this installation, never for another reason.
SKIP_REASONS = ("not in this build", "extra (", "not available in this build")


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("REPLAYKIT_HOME", "HERMES_HOME")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["REPLAYKIT_HOME"] = str(tmp / "default-store")  # must stay untouched
    env["HOME"] = str(tmp / "home")
    env.update(extra)
    return env


def _demo(tmp: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "replaykit", "demo", *args], capture_output=True, text=True,
                          env=_env(tmp, **env), cwd=tmp, timeout=240)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], dict, Path]:
    tmp = tmp_path_factory.mktemp("demo")
    proc = _demo(tmp, "--out", "out", "--json")
    assert proc.stdout.strip(), proc.stderr
    document = json.loads(proc.stdout)
    return proc, document, tmp


def _step(document: dict, name: str) -> dict:
    return next(s for s in document["steps"] if s["name"] == name)


def test_every_available_step_succeeds(demo):
    proc, document, _ = demo
    failed = [(s["name"], s["summary"]) for s in document["steps"] if s["status"] == "failed"]
    assert not failed
    assert proc.returncode == 0 and document["ok"] is True
    for step in document["steps"]:
        if step["status"] == "skipped":
            assert any(r in step["summary"] for r in SKIP_REASONS), step
    core = ["load", "inspect", "replay", "branch", "play", "export python", "export html", "redact", "run script"]
    assert [_step(document, n)["status"] for n in core] == ["ok"] * len(core)


def test_stays_in_its_out_dir(demo):
    _, document, tmp = demo
    out = tmp / "out"
    assert Path(document["out"]) == out and Path(document["store"]) == out / "store"
    assert (out / MARKER).is_file()
    assert not (tmp / "default-store").exists() and not (tmp / "home" / ".replaykit").exists()
    ids = {document["run_id"], document["branch_run_id"], document["play_run_id"]}
    assert {p.stem for p in (out / "store").glob("*.jsonl")} == ids


def test_replay_is_pure(demo):
    _, document, _ = demo
    counters = _step(document, "replay")["data"]["counters"]
    assert counters["provider_calls"] == 0 and counters["tool_executions"] == 0
    assert counters["trace_bytes_changed"] == 0 and counters["served_llm_steps"] == 3


def test_branch_is_played_live_and_reacts_to_the_edit(demo):
    _, document, tmp = demo
    store = tmp / "out" / "store"
    original = Run.load(store / f"{document['run_id']}.jsonl")
    played = Run.load(store / f"{document['play_run_id']}.jsonl")
    assert played.header.lineage.parent_run_id == document["branch_run_id"]
    branch = Run.load(store / f"{document['branch_run_id']}.jsonl")
    assert branch.header.lineage.parent_run_id == document["run_id"]
    at = _step(document, "inspect")["data"]["branch_at"]
    assert original.steps[at].event.name == "harness_echo"
    assert json.loads(played.steps[at].event.result)["echo"] == EDITED_ECHO
    assert original.final_answer == "All done: HELLO REPLAYKIT."
    assert played.final_answer == f"All done: {EDITED_ECHO}."
    counters = _step(document, "play")["data"]["counters"]
    assert counters["provider_calls"] == counters["live_llm_steps"] == 2
    assert [e.provenance.value for e in played.llm_calls()][-1] == "live"


def test_diff_reports_the_edit(demo):
    _, document, tmp = demo
    step = _step(document, "diff")
    assert step["status"] == "ok"
    first = step["data"]["first"]
    assert first["step"] == _step(document, "inspect")["data"]["branch_at"] and first["cause"] == "edit"
    assert json.loads(first["b"])["echo"] == EDITED_ECHO and step["data"]["equal"] is False
    html = (tmp / "out" / "diff.html").read_text(encoding="utf-8")
    assert "<script" not in html.lower()


def test_cost_ledger_says_unknown_never_zero(demo):
    _, document, tmp = demo
    step = _step(document, "cost")
    assert step["status"] == "ok", step
    # The live part went to the scripted model on 127.0.0.1: no price is known, and it must say so.
    assert step["data"]["live"]["steps"] == 2 and step["data"]["served_free"]["steps"] == 1
    assert step["data"]["paid"]["cost"] is None and "unknown" in step["summary"]
    assert json.loads((tmp / "out" / "cost.json").read_text())["run_id"] == document["play_run_id"]


def test_exported_script_reproduces_the_replay(demo):
    _, document, tmp = demo
    out = tmp / "out"
    script = out / "exports" / "run.py"
    # Run it again here, with nothing of replaykit importable, and compare with a fresh `replaykit replay`.
    ran = subprocess.run([sys.executable, "-I", str(script)], capture_output=True, text=True, timeout=60, cwd=tmp)
    assert ran.returncode == 0, ran.stderr
    replay = subprocess.run([sys.executable, "-m", "replaykit", "replay", document["run_id"], "--store",
                             str(out / "store"), "--json"], capture_output=True, text=True, env=_env(tmp), timeout=60)
    assert replay.returncode == 0, replay.stderr
    mine, theirs = json.loads(ran.stdout), json.loads(replay.stdout)
    assert strip_volatile(mine) == strip_volatile(theirs)
    assert mine["final_answer"] == "All done: HELLO REPLAYKIT." and mine["step_count"] == 5


def test_training_files_validate(demo):
    from replaykit.exporters._training_validate import validate_record

    _, document, tmp = demo
    for fmt, name in (("openai-jsonl", "openai.jsonl"), ("sharegpt", "sharegpt.jsonl"), ("trl", "trl.jsonl")):
        step = _step(document, f"export {fmt}")
        if step["status"] == "skipped":
            continue
        assert step["status"] == "ok", step
        records = [json.loads(line) for line in (tmp / "out" / "training" / name).read_text().splitlines()]
        assert len(records) == 2
        for record in records:
            assert validate_record(record, fmt) == []
        assert "HELLO REPLAYKIT" in json.dumps(records)


def test_html_reports_are_inert(demo):
    _, _, tmp = demo
    reports = sorted((tmp / "out" / "exports").glob("*.html"))
    assert [p.name for p in reports] == ["branch-report.html", "report.html"]
    for path in reports:
        html = path.read_text(encoding="utf-8")
        assert "<script" not in html.lower() and "http://" not in html.split("</head>")[0]
        assert "harness_echo" in html
    assert EDITED_ECHO in (tmp / "out" / "exports" / "branch-report.html").read_text(encoding="utf-8")


def test_redacted_trace_is_a_valid_separate_run(demo):
    _, document, tmp = demo
    path = tmp / "out" / "redacted" / f"{document['run_id']}.redacted.jsonl"
    run = Run.load(path)
    assert run.run_id != document["run_id"] and len(run.steps) == 5


def test_human_output_against_a_named_provider_keeps_the_key_out(tmp_path):
    # The "real provider" path (--base-url/--model/--api-key-env), here served by a local scripted server.
    secret = "sk-demo-test-0123456789abcdef"
    with ScriptedServer(demo_policy, model="other-model") as server:
        proc = _demo(tmp_path, "--out", "o2", "--base-url", server.base_url, "--model", "other-model",
                     "--api-key-env", "DEMO_TEST_KEY", DEMO_TEST_KEY=secret)
        seen = server.llm_requests
    assert "Where everything went" in proc.stdout, proc.stderr
    assert "other-model" in proc.stdout and "HELLO FROM A BRANCH" in proc.stdout
    assert len(seen) == 2 and all(r.body["model"] == "other-model" for r in seen)
    for path in (tmp_path / "o2").rglob("*"):
        if path.is_file():
            assert secret not in path.read_text(encoding="utf-8", errors="replace"), path


def test_bad_input_is_one_line_exit_2(tmp_path):
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "keep.txt").write_text("mine")
    proc = _demo(tmp_path, "--out", "busy")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "not empty" in proc.stderr
    assert (tmp_path / "busy" / "keep.txt").read_text() == "mine"
    proc = _demo(tmp_path, "--out", "x", "--base-url", "http://127.0.0.1:9/v1")
    assert proc.returncode == 2 and "--model" in proc.stderr and "Traceback" not in proc.stderr
    proc = _demo(tmp_path, "--out", "x", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
                 "--api-key-env", "REPLAYKIT_DEMO_UNSET_VAR")
    assert proc.returncode == 2 and "not set" in proc.stderr


def test_prepare_out_replaces_only_a_previous_demo(tmp_path):
    out = tmp_path / "d"
    prepare_out(out)
    (out / "old.txt").write_text("stale")
    prepare_out(out)
    assert not (out / "old.txt").exists() and (out / MARKER).is_file()
    (out / MARKER).unlink()
    (out / "x").write_text("user file")
    with pytest.raises(BadInput):
        prepare_out(out)
    assert (out / "x").exists()


def test_policy_reproduces_the_recording_and_reacts_to_edits():
    with recording_path() as path:
        run = Run.load(path)
    # A real Hermes recording (the plugin inside hermes-agent 0.19.0), with Hermes's own system prompt.
    assert run.header.source.framework == "hermes" and run.header.source.framework_version == "0.19.0"
    assert run.header.source.adapter == "replaykit.adapters.hermes"
    assert run.request_messages(run.llm_calls()[0])[0].text.startswith("You are Hermes Agent")
    echo = next(e for e in run.tool_calls() if e.name == "harness_echo")
    assert echo_of(echo.result) == "HELLO REPLAYKIT" and run.final_answer == f"All done: {echo_of(echo.result)}."
    assert json.loads(edited_result(echo.result)) == {"echo": EDITED_ECHO}
    assert echo_of("not json") == "not json"


def test_missing_parts_are_skips_other_errors_are_failures():
    from replaykit.cli.demo_flow import CliCall, _not_available
    from replaykit.core.errors import MissingExtra

    missing = CliCall(["play"], 2, "", f"replaykit: error: {MissingExtra('openai', 'openai')}\n")
    assert "pip install 'replaykit[openai]'" in _not_available(missing)
    broken = CliCall(["export"], 2, "", "replaykit: error: internal error (ValueError: boom)\n")
    assert _not_available(broken) is None
    assert _not_available(CliCall(["diff"], 1, "{}", "")) is None
