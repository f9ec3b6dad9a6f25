"""The command line on Google Gemini and AWS Bedrock Converse: play with --api or a provider:model
string, inspect the live step, eval over a corpus; keys never written; the server checks every request."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replaykit.cli.main import main
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.testing.script import hermes_default_policy
from replaykit.testing.scripted_server import ScriptedServer

pytest.importorskip("google.genai")
pytest.importorskip("boto3")
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hermes"
GEMINI_KEY = "AIzaSy-test-WIRESECRET-gemini-0123456789"
AWS_SECRET = "aws-test-WIRESECRET-bedrock-0123456789"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RK_GEMINI_KEY", GEMINI_KEY)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDREPLAYKITCLI")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
    monkeypatch.setenv("AWS_REGION", "us-west-2")
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)


def _store(tmp_path: Path, *names: str) -> tuple[Path, list[str]]:
    store = RunStore(tmp_path / "store")
    ids = []
    for name in names:
        run = Run.load(FIXTURES / f"{name}.jsonl")
        store.write_run(run.header, list(run.events))
        ids.append(run.run_id)
    return tmp_path / "store", ids


@pytest.mark.parametrize(("flags", "api", "route"), [
    (["--model", "google:gemini-3-pro-preview", "--api-key-env", "RK_GEMINI_KEY"], "google-gemini",
     "/v1beta/models/gemini-3-pro-preview:streamGenerateContent"),
    (["--api", "bedrock-converse", "--model", "anthropic.claude-sonnet-4-20250514-v1:0"], "bedrock-converse",
     "/model/anthropic.claude-sonnet-4-20250514-v1%3A0/converse-stream"),
])
def test_cli_play_inspect_diff(flags: list[str], api: str, route: str, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    store, (run_id,) = _store(tmp_path, "parallel_tools")
    with ScriptedServer(hermes_default_policy(), strict=True) as srv:
        code = main(["play", run_id, "--engine", "openai", "--store", str(store), *flags, "--base-url", srv.root_url,
                     "--at", "1", "--json"])
        paths = {r.path for r in srv.llm_requests}
        assert srv.violations == []
    assert code == 0, capsys.readouterr().err
    assert paths == {route}
    played = json.loads(capsys.readouterr().out)["run_id"]
    step = next(s.index for s in RunStore(store).load(played).steps if s.kind == "llm" and s.event.provenance == "live")
    assert main(["inspect", played, "--store", str(store), "--step", str(step), "--json"]) == 0
    detail = json.loads(capsys.readouterr().out)
    assert detail["api"] == api and detail["request"]["wire"] == {"api": api, "from": "openai-chat"}
    body = detail["request"]["body"]
    assert ("contents" in body) if api == "google-gemini" else ("messages" in body and "toolConfig" in body)
    assert main(["diff", run_id, played, "--store", str(store), "--json"]) in (0, 1)
    assert "translation_losses" in json.loads(capsys.readouterr().out)
    for path in tmp_path.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert GEMINI_KEY.encode() not in data and AWS_SECRET.encode() not in data, path


def test_eval_on_bedrock_over_a_small_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store, _ = _store(tmp_path, "tools_sequence", "two_turns", "parallel_tools")
    with ScriptedServer(hermes_default_policy(), strict=True) as srv:
        code = main(["eval", "--all", "--engine", "openai", "--model", "bedrock:anthropic.claude-sonnet-4-v1:0",
                     "--base-url", srv.root_url, "-o", str(tmp_path / "ev"), "--store", str(store), "--json"])
        apis = {r.api for r in srv.llm_requests}
        assert srv.violations == []
    assert code in (0, 1), capsys.readouterr().err
    report = json.loads(capsys.readouterr().out)
    assert report["candidate"]["api"] == "bedrock-converse" and apis == {"bedrock"}
    played = [RunStore(store).load(c) for r in report["execution"]["runs"] for c in r["candidate_runs"]]
    assert len(played) == 3
    assert all(e.request.api == "bedrock-converse" for run in played for e in run.llm_calls() if e.provenance == "live")


def test_cli_bedrock_without_aws_variables_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    store, (run_id,) = _store(tmp_path, "parallel_tools")
    code = main(["play", run_id, "--engine", "openai", "--store", str(store), "--api", "bedrock-converse",
                 "--model", "m", "--base-url", "http://127.0.0.1:9"])
    err = capsys.readouterr().err
    assert code == 2 and "AWS_ACCESS_KEY_ID" in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
