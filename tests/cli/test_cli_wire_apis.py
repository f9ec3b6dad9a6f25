"""--api on the command line: play, eval and mcp on another wire API; every bad input a one-line error
(exit 2) before anything is sent: an unknown API or provider prefix, a provider extra not installed, a
recording the target API cannot express, a key variable not set, no key variable for a native host,
Bedrock without its AWS variables. The key reaches the provider and is written nowhere."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from replaykit.cli.main import main
from replaykit.core.errors import BadInput
from replaykit.core.replay.play import PlayOptions
from replaykit.core.replay.wire_apis import resolve_wire, split_model
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.testing.script import hermes_default_policy
from replaykit.testing.scripted_server import ScriptedServer

pytest.importorskip("openai")
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hermes"
SECRET = "sk-test-WIRESECRET-0123456789abcdef"


def _store(tmp_path: Path, *names: str) -> Path:
    store = RunStore(tmp_path / "store")
    for name in names:
        run = Run.load(FIXTURES / f"{name}.jsonl")
        store.write_run(run.header, list(run.events))
    return tmp_path / "store"


def _one_line(capsys: pytest.CaptureFixture[str], code: int, expected: str) -> None:
    err = capsys.readouterr().err
    assert code == 2 and expected in err and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err


def _run_id(name: str) -> str:
    return Run.load(FIXTURES / f"{name}.jsonl").run_id


# ----------------------------------------------------------------------------------- selection

def test_provider_prefixes_select_the_api() -> None:
    assert split_model("anthropic:claude-x") == ("anthropic-messages", "claude-x")
    assert split_model("openai-responses:gpt-5") == ("openai-responses", "gpt-5")
    assert split_model("google:gemini-2.5-pro") == ("google-gemini", "gemini-2.5-pro")
    assert split_model("bedrock:anthropic.claude-3-5-sonnet-20240620-v1:0") == \
        ("bedrock-converse", "anthropic.claude-3-5-sonnet-20240620-v1:0")
    # a colon in a model name that is no provider: the name stays whole
    assert split_model("llama3:8b") == (None, "llama3:8b")
    assert split_model("anthropic.claude-3-5-sonnet-20240620-v1:0") == (None, "anthropic.claude-3-5-sonnet-20240620-v1:0")
    assert resolve_wire(None, "gpt-oss:20b", "http://127.0.0.1:9/v1").model == "gpt-oss:20b"
    options = PlayOptions(model="anthropic:claude-x")
    assert (options.api, options.model) == ("anthropic-messages", "claude-x")
    native = resolve_wire("anthropic-messages", "claude-x", None)
    assert native.base_url is None and native.api.default_base_url == "https://api.anthropic.com"
    with pytest.raises(BadInput, match="names the anthropic-messages API but --api is openai-chat"):
        PlayOptions(model="anthropic:claude-x", api="openai-chat")


# ---------------------------------------------------------------------------------- bad input

@pytest.mark.parametrize(("flags", "expected"), [
    (("--api", "nope", "--model", "m", "--base-url", "http://127.0.0.1:9/v1"), "unknown --api 'nope'"),
    (("--model", "foo:bar"), "unknown provider prefix 'foo'"),
    (("--model", "m"), "--base-url is required unless --api or a provider:model string selects a native provider"),
    (("--api", "anthropic-messages", "--model", "m", "--base-url", "http://127.0.0.1:9", "--api-key-env",
      "RK_SURELY_UNSET_VAR"), "RK_SURELY_UNSET_VAR: that environment variable is not set"),
    (("--model", "anthropic:claude-x"), "name the environment variable holding its key with --api-key-env"),
    (("--api", "bedrock-converse", "--model", "m"), "reads AWS credentials from the environment only"),
    (("--offline", "--api", "openai-chat"), "--offline calls no endpoint"),
])
def test_bad_wire_flags_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: tuple[str, ...],
                                     expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    store = _store(tmp_path, "tools_sequence")
    code = main(["play", _run_id("tools_sequence"), "--engine", "openai", "--store", str(store), *flags])
    _one_line(capsys, code, expected)
    assert len(list(store.glob("play-*"))) == 0  # nothing started


def test_a_missing_provider_extra_is_one_line_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)  # as if the extra were not installed
    store = _store(tmp_path, "tools_sequence")
    with ScriptedServer(hermes_default_policy()) as srv:
        code = main(["play", _run_id("tools_sequence"), "--engine", "openai", "--store", str(store), "--api",
                     "anthropic-messages", "--model", "m", "--base-url", srv.base_url])
        assert srv.llm_requests == []
    _one_line(capsys, code, "pip install 'replaykit[anthropic]'")


def test_a_recording_the_api_cannot_express_names_the_step(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("anthropic")
    body = tmp_path / "system-only.json"
    body.write_text(json.dumps({"model": "gpt-x", "messages": [{"role": "system", "content": "You answer."},
                                                              {"role": "assistant", "content": "Hello."}]}))
    store = tmp_path / "store"
    assert main(["import", str(body), "--format", "openai-chat", "--store", str(store), "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out)["runs"][0]["run_id"]
    with ScriptedServer(hermes_default_policy()) as srv:
        code = main(["play", run_id, "--engine", "openai", "--store", str(store), "--api", "anthropic-messages",
                     "--model", "m", "--base-url", srv.base_url])
        assert srv.llm_requests == []
    _one_line(capsys, code, "step 0: the recorded request holds no message but a system prompt; Anthropic "
                            "Messages cannot express it")


# ------------------------------------------------------------------------------ play, eval, mcp

@pytest.mark.parametrize("api", ["openai-responses", "anthropic-messages"])
def test_cli_play_on_another_api_and_the_key_is_written_nowhere(api: str, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("anthropic")
    monkeypatch.setenv("RK_WIRE_KEY", SECRET)
    store = _store(tmp_path, "parallel_tools")
    with ScriptedServer(hermes_default_policy(), strict=True) as srv:
        code = main(["play", _run_id("parallel_tools"), "--engine", "openai", "--store", str(store), "--api", api,
                     "--model", "candidate", "--base-url", srv.base_url, "--api-key-env", "RK_WIRE_KEY", "--at", "1",
                     "--json"])
        assert srv.violations == [] and srv.llm_requests
    assert code == 0
    played = json.loads(capsys.readouterr().out)
    step = next(s.index for s in RunStore(store).load(played["run_id"]).steps
                if s.kind == "llm" and s.event.provenance == "live")
    assert main(["inspect", played["run_id"], "--store", str(store), "--step", str(step), "--json"]) == 0
    detail = json.loads(capsys.readouterr().out)
    assert detail["provenance"] == "live" and detail["api"] == api
    assert detail["request"]["wire"] == {"api": api, "from": "openai-chat"}
    assert main(["inspect", played["run_id"], "--store", str(store), "--step", str(step)]) == 0
    assert f"sent live on {api}, translated from the recording's openai-chat" in capsys.readouterr().out
    assert main(["diff", _run_id("parallel_tools"), played["run_id"], "--store", str(store), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["translation_losses"] == {"a": 0, "b": 0}
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_translation_losses_are_shown_by_inspect_and_counted_by_diff(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A Responses recording (reasoning params, strict tools) played on Chat: each live step lists what
    did not cross."""
    store = _store(tmp_path, "codex_responses")
    with ScriptedServer(hermes_default_policy(), strict=True) as srv:
        code = main(["play", _run_id("codex_responses"), "--engine", "openai", "--store", str(store), "--api",
                     "openai-chat", "--model", "candidate", "--base-url", srv.base_url, "--json"])
    assert code == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    played = RunStore(store).load(run_id)
    assert main(["inspect", run_id, "--store", str(store), "--step", "0", "--json"]) == 0
    losses = json.loads(capsys.readouterr().out)["request"]["translation_losses"]
    assert any("'prompt_cache_key' dropped" in loss for loss in losses)
    assert main(["inspect", run_id, "--store", str(store), "--step", "0"]) == 0
    assert "lost in translation: parameter 'prompt_cache_key' dropped" in capsys.readouterr().out
    assert main(["diff", _run_id("codex_responses"), run_id, "--store", str(store), "--json"]) in (0, 1)
    document = json.loads(capsys.readouterr().out)
    counted = document["translation_losses"]["b"]
    assert sum(row.get("losses_b", 0) for row in document["steps"]) == counted
    assert counted == sum(len(e.request.provider_details["replaykit"]["wire"].get("losses", []))
                          for e in played.llm_calls()) > 0
    main(["diff", _run_id("codex_responses"), run_id, "--store", str(store)])
    text = capsys.readouterr().out
    assert f"translation losses (cross-API live steps): A 0, B {counted}" in text and "lost in translation] " in text


def test_eval_with_api_over_a_small_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("anthropic")
    store = _store(tmp_path, "tools_sequence", "two_turns", "parallel_tools")
    with ScriptedServer(hermes_default_policy(), strict=True) as srv:
        code = main(["eval", "--all", "--engine", "openai", "--api", "anthropic-messages", "--model", "candidate",
                     "--base-url", srv.base_url, "-o", str(tmp_path / "ev"), "--store", str(store), "--json"])
        paths = {r.path for r in srv.llm_requests}
        assert srv.violations == []
    assert code in (0, 1)
    report = json.loads(capsys.readouterr().out)
    assert report["candidate"]["api"] == "anthropic-messages" and paths == {"/v1/messages"}
    played = [RunStore(store).load(c) for r in report["execution"]["runs"] for c in r["candidate_runs"]]
    assert len(played) == 3
    for run in played:
        live = [e for e in run.llm_calls() if e.provenance == "live"]
        assert live and all(e.request.api == "anthropic-messages" for e in live)


def test_mcp_allow_live_takes_the_api(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    from replaykit.cli.cmd_mcp import live_endpoint

    args = argparse.Namespace(allow_live=True, base_url="http://127.0.0.1:9/v1", model="anthropic:claude-x",
                              api=None, api_key_env=None)
    assert live_endpoint(args).api is None  # the prefix travels in the model string: PlayOptions resolves it
    args.api = "nope"
    with pytest.raises(BadInput, match="unknown --api 'nope'"):
        live_endpoint(args)
