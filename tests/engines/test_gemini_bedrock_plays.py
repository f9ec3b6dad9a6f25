"""Live plays on Google Gemini and AWS Bedrock Converse through the real SDKs (google-genai, boto3) against
the scripted server, what is particular to these two APIs: signatures sent back byte for byte on a
same-API replay, the provider's wait hint and 503s, a stalled stream closed at once, the answers' finish
words in a diff, credentials from the environment only, a missing extra. (The Hermes fixtures, the
real-world recordings with tool calls and the common faults run on every API in test_wire_apis.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from replaykit.core.analysis.diff import diff_runs
from replaykit.core.errors import BadInput, MissingExtra
from replaykit.core.replay.play import PlayOptions
from replaykit.core.trace.codecs.gemini import SKIP_SIGNATURE
from replaykit.core.trace.ir import Provenance
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.engines import play
from replaykit.testing.script import Reply, ScriptRequest, ToolCall, fail_first, fault, sequence_policy
from replaykit.testing.scripted_server import ScriptedServer

pytest.importorskip("google.genai")
pytest.importorskip("boto3")

ROOT = Path(__file__).resolve().parents[2]
DATA = next((d / "shared" / "realworld" / "data" for d in ROOT.parents
             if (d / "shared" / "realworld" / "data" / "MANIFEST.json").is_file()), None)
MODELS = {"google-gemini": "gemini-3-pro-preview", "bedrock-converse": "anthropic.claude-sonnet-4-20250514-v1:0"}
KEYS = {"RK_TEST_GEMINI_KEY": "gemini-key-must-not-leak", "AWS_ACCESS_KEY_ID": "AKIDREPLAYKITTEST",
        "AWS_SECRET_ACCESS_KEY": "aws-secret-must-not-leak", "AWS_REGION": "us-east-1"}


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)


def _options(store: RunStore, srv: ScriptedServer, api: str, cut: int, **kw: Any) -> PlayOptions:
    kw.setdefault("stale_timeout", 5.0)
    return PlayOptions(base_url=srv.root_url, model=MODELS[api], api=api, api_key_env="RK_TEST_GEMINI_KEY",
                       store=store, cut=cut, extra={"retry_base_delay": 0.01, "retry_max_delay": 0.05}, **kw)


@pytest.mark.parametrize("api", sorted(MODELS))
@pytest.mark.parametrize("kind", ["429", "503", "stall"])
def test_faults_are_retried_and_recorded(api: str, kind: str, tmp_path: Path) -> None:
    run = Run.load(ROOT / "tests" / "fixtures" / "hermes" / "tools_sequence.jsonl")
    store = RunStore(tmp_path / "store")
    store.write_run(run.header, list(run.events))
    # The failed attempt had started an answer: a stall or an in-stream error cuts it after one chunk.
    policy = fail_first(1, sequence_policy([], "Recovered."), kind, retry_after=0.05, stall_seconds=5,
                        stall_after_chunks=1, text="An answer that never finishes.")
    with ScriptedServer(policy) as srv:
        result = play(store.load(run.run_id), "openai", _options(store, srv, api, 0, stale_timeout=0.5))
        requests = srv.llm_requests
    assert len(requests) >= 2 and result.counters.provider_calls == len(requests)
    new = store.load(result.run_id)
    errors = [e for e in new.events if e.kind == "error"]
    expected = {"429": "rate_limit", "500": "server", "503": "server", "stall": "stale",
                "stream_error": "server"}[kind]
    assert errors and errors[0].error_type == expected and errors[0].retryable
    assert new.final_answer == "Recovered."


def test_rate_limit_wait_honours_the_provider_hint(tmp_path: Path) -> None:
    """Gemini sends its wait in a RetryInfo detail (``retryDelay``); Bedrock in Retry-After."""
    from replaykit.core.replay.resilience import classify

    genai_errors = pytest.importorskip("google.genai.errors")
    error = genai_errors.ClientError(429, {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "quota",
                                                     "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                                                                  "retryDelay": "7s"}]}})
    named = classify(error)
    assert named.kind == "rate_limit" and named.retry_after == 7.0


def test_a_missing_extra_is_one_line_naming_it() -> None:
    code = textwrap.dedent("""
        import sys
        sys.modules["google.genai"] = None
        sys.modules["boto3"] = None
        from replaykit.core.replay.wire_apis import WIRE_APIS, Endpoint, open_transport
        for api in ("google-gemini", "bedrock-converse"):
            try:
                open_transport(WIRE_APIS[api], Endpoint(api, "http://127.0.0.1:9"))
            except Exception as exc:
                print(type(exc).__name__, "|", exc)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True).stdout.splitlines()
    assert len(out) == 2 and all(line.startswith("MissingExtra |") for line in out)
    assert "replaykit[google]" in out[0] and "replaykit[bedrock]" in out[1]
    assert MissingExtra is not None


def test_bedrock_reads_no_aws_file_and_signs_with_the_environment_keys(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text("[default]\naws_access_key_id = AKIAFROMFILE\n"
                                               "aws_secret_access_key = from-file\n[foo]\naws_access_key_id = X\n")
    (home / ".aws" / "config").write_text("[default]\nregion = eu-west-3\n[profile foo]\nregion = ap-south-1\n")
    code = textwrap.dedent("""
        import json, sys
        opened = []
        sys.addaudithook(lambda ev, args: opened.append(str(args[0])) if ev == "open" and ".aws" in str(args[0]) else None)
        from replaykit.core.replay.play import PlayOptions
        from replaykit.core.replay.wire_apis import WIRE_APIS, Endpoint, open_transport
        creds = PlayOptions(api="bedrock-converse", model="m").aws_env()
        transport = open_transport(WIRE_APIS["bedrock-converse"], Endpoint("bedrock-converse", "http://127.0.0.1:9",
                                                                          credentials=creds))
        signer = transport.client._request_signer
        print(json.dumps({"opened": opened, "key": signer._credentials.access_key, "region": transport.client.meta.region_name}))
    """)
    env = {**os.environ, "HOME": str(home), "AWS_PROFILE": "foo", "AWS_CONFIG_FILE": str(home / ".aws" / "config"),
           "AWS_SHARED_CREDENTIALS_FILE": str(home / ".aws" / "credentials"), "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env, check=True)
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen == {"opened": [], "key": KEYS["AWS_ACCESS_KEY_ID"], "region": "us-east-1"}


def test_missing_aws_variables_are_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(BadInput, match="AWS_SECRET_ACCESS_KEY not set"):
        PlayOptions(api="bedrock-converse", model="m").aws_env()


@pytest.mark.parametrize("api", sorted(MODELS))
def test_a_stalled_stream_is_closed_at_once(api: str) -> None:
    """The stale guard gives up on a silent stream; closing it must not wait for the read to time out."""
    import time

    from replaykit.core.replay.resilience import StaleStream, stale_guard
    from replaykit.core.replay.wire_apis import WIRE_APIS, Endpoint, open_transport

    creds = {"aws_access_key_id": "AKIDX", "aws_secret_access_key": "s", "region_name": "us-east-1"}
    body = ({"model": MODELS[api], "contents": [{"role": "user", "parts": [{"text": "hi"}]}]} if api == "google-gemini"
            else {"model": MODELS[api], "messages": [{"role": "user", "content": [{"text": "hi"}]}]})
    with ScriptedServer([fault("stall", stall_seconds=20, stall_after_chunks=1, text="one two three four")]) as srv:
        transport = open_transport(WIRE_APIS[api], Endpoint(api, srv.root_url, api_key="k", credentials=creds))
        stream = transport.open_stream(body)
        got = []
        with pytest.raises(StaleStream):
            got.extend(stale_guard(stream, 0.5))
        started = time.monotonic()
        stream.close()
        assert time.monotonic() - started < 2.0
    assert len(got) == 1  # the chunk sent before the stall arrived at once


@pytest.mark.parametrize("api", sorted(MODELS))
def test_a_run_played_on_the_api_plays_again_on_it_with_its_signatures_exact(api: str, tmp_path: Path) -> None:
    """Gemini 3 thought signatures (standard base64, with + and /) and Bedrock reasoning signatures come
    back byte for byte when a run recorded on that API is played on it again."""
    import base64

    from replaykit.testing import wire_gemini

    run = Run.load(ROOT / "tests" / "fixtures" / "hermes" / "tools_sequence.jsonl")
    store = RunStore(tmp_path / "store")
    store.write_run(run.header, list(run.events))

    def thinking(req: ScriptRequest) -> Reply:
        reply = sequence_policy([ToolCall(req.tool_names[0], {}), ToolCall(req.tool_names[0], {"n": 2})],
                                "All done.")(req)
        return Reply(text=reply.text, tool_calls=reply.tool_calls, reasoning="Thinking it over.")

    with ScriptedServer(thinking) as srv:
        first = play(store.load(run.run_id), "openai", _options(store, srv, api, 0))
    on_api = store.load(first.run_id)
    live = [e for e in on_api.llm_calls() if e.provenance == Provenance.LIVE]
    assert len(live) >= 3 and all(e.request.api == api for e in live)
    cut = next(i for i, s in enumerate(on_api.steps) if s.event is live[2])
    with ScriptedServer(thinking, strict=True) as srv:
        again = play(on_api, "openai", _options(store, srv, api, cut))
        requests = srv.llm_requests
    assert again.status == "completed" and srv.violations == []
    body = requests[0].body
    replayed = store.load(again.run_id)
    assert replayed.llm_calls()[-1].request.provider_details["replaykit"]["wire"].get("from") is None  # same API
    if api == "google-gemini":
        signatures = [p["thoughtSignature"] for c in body["contents"] if c["role"] == "model" for p in c["parts"]
                      if "thoughtSignature" in p]
        expected = {wire_gemini.signature(f"resp-{n:03d}", k) for n in range(1, 10) for k in (0, 1)}
        assert len(signatures) >= 4 and set(signatures) <= expected  # the server's own, none re-encoded
        assert any("+" in s or "/" in s for s in signatures) and SKIP_SIGNATURE not in signatures
        assert all(base64.b64decode(s) for s in signatures)
    else:
        reasoning = [b["reasoningContent"] for m in body["messages"] if m["role"] == "assistant" for b in m["content"]
                     if "reasoningContent" in b]
        assert len(reasoning) >= 2
        assert all(r["reasoningText"] == {"text": "Thinking it over.", "signature": "EqQBCkYIBxgCKkDscripted"}
                   for r in reasoning)



@pytest.mark.parametrize("api", sorted(MODELS))
def test_the_same_answers_on_another_api_diff_equal(api: str, tmp_path: Path) -> None:
    """A play whose model answers as the record did is equal to it, whatever the API's words for how an
    answer ended (Chat ``tool_calls``, Bedrock ``tool_use``, Gemini ``STOP`` with calls)."""
    from replaykit.testing.script import hermes_default_policy

    run = Run.load(ROOT / "tests" / "fixtures" / "hermes" / "tools_sequence.jsonl")
    store = RunStore(tmp_path / "store")
    store.write_run(run.header, list(run.events))
    with ScriptedServer(hermes_default_policy(), strict=True) as srv:
        result = play(store.load(run.run_id), "openai", _options(store, srv, api, 0))
    played = store.load(result.run_id)
    finishes = {e.response.finish_reason for e in played.llm_calls()}
    assert finishes & {"STOP", "tool_use", "end_turn"}  # the API's own words are kept in the trace
    report = diff_runs(run, played)
    assert report.equal, [d.to_json() for d in report.differences]
    with ScriptedServer(sequence_policy([ToolCall("todo", {"todos": []})], "Something else."), strict=True) as srv:
        other = play(store.load(run.run_id), "openai", _options(store, srv, api, 0))
    assert not diff_runs(run, store.load(other.run_id)).equal
