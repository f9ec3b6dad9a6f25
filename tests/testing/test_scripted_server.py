"""The scripted server against real clients (the openai SDK) and raw HTTP for Anthropic and faults."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from replaykit.testing.scripted_server import (
    Reply,
    ScriptedServer,
    ToolCall,
    call,
    calls,
    fail_first,
    fault,
    hermes_default_policy,
    routed_policy,
    sequence_policy,
    text,
)

openai = pytest.importorskip("openai")

TOOLS = [{"type": "function", "function": {"name": "lookup", "description": "d",
                                            "parameters": {"type": "object", "properties": {}}}}]


def client(srv: ScriptedServer, **kw):
    return openai.OpenAI(base_url=srv.base_url, api_key="sk-test-secret", max_retries=0, **kw)


def post(srv: ScriptedServer, path: str, body: dict, headers: dict | None = None):
    req = urllib.request.Request(srv.base_url.removesuffix("/v1") + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json", **(headers or {})}, method="POST")
    return urllib.request.urlopen(req, timeout=10)


def sse_events(raw: str) -> list[dict]:
    out = []
    for block in raw.split("\n\n"):
        for line in block.splitlines():
            if line.startswith("data: ") and line != "data: [DONE]":
                out.append(json.loads(line[6:]))
    return out


def test_chat_json_and_request_log_strips_credentials():
    with ScriptedServer([call("lookup", {"q": "x"}), text("final")]) as srv:
        c = client(srv)
        r1 = c.chat.completions.create(model="m1", messages=[{"role": "user", "content": "hi"}], tools=TOOLS)
        assert r1.choices[0].finish_reason == "tool_calls"
        tc = r1.choices[0].message.tool_calls[0]
        assert tc.function.name == "lookup" and json.loads(tc.function.arguments) == {"q": "x"}
        r2 = c.chat.completions.create(model="m1", messages=[{"role": "user", "content": "hi"}])
        assert r2.choices[0].message.content == "final" and r2.model == "m1"
        reqs = srv.requests
    assert [r.path for r in reqs] == ["/v1/chat/completions"] * 2
    assert reqs[0].body["messages"] == [{"role": "user", "content": "hi"}]
    assert reqs[0]["body"]["tools"] == TOOLS
    assert "authorization" not in reqs[0].headers and "sk-test-secret" not in json.dumps(dict(reqs[0].headers))
    assert reqs[1].index == 1 and reqs[1].reply == text("final")


def test_chat_stream_reassembles_fragmented_parallel_tool_calls_and_usage():
    reply = calls(ToolCall("lookup", {"query": "alpha beta gamma"}), ToolCall("lookup", {"query": "delta"}))
    with ScriptedServer([reply]) as srv:
        stream = client(srv).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "go"}], tools=TOOLS, stream=True,
            stream_options={"include_usage": True})
        chunks = list(stream)
    arg_frags: dict[int, list[str]] = {}
    ids: dict[int, str] = {}
    for ch in chunks:
        for choice in ch.choices:
            for d in choice.delta.tool_calls or []:
                if d.id:
                    ids[d.index] = d.id
                arg_frags.setdefault(d.index, []).append(d.function.arguments or "")
    assert sorted(arg_frags) == [0, 1]
    assert sum(1 for f in arg_frags[0] if f) >= 2, "arguments must be split across chunks"
    assert json.loads("".join(arg_frags[0])) == {"query": "alpha beta gamma"}
    assert json.loads("".join(arg_frags[1])) == {"query": "delta"}
    assert ids[0] != ids[1]
    assert chunks[-2].choices[0].finish_reason == "tool_calls"
    assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens > 0


def test_chat_stream_without_include_usage_has_no_usage_chunk():
    with ScriptedServer([text("hello world, streaming")]) as srv:
        chunks = list(client(srv).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "go"}], stream=True))
    assert all(ch.usage is None for ch in chunks)
    assert "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices) == "hello world, streaming"


def test_responses_json_and_stream_with_openai_sdk():
    with ScriptedServer([call("lookup", {"q": 1}), text("the answer")]) as srv:
        c = client(srv)
        r = c.responses.create(model="m", input="hi", tools=[{"type": "function", "name": "lookup",
                                                               "parameters": {"type": "object"}}])
        fc = next(o for o in r.output if o.type == "function_call")
        assert fc.name == "lookup" and json.loads(fc.arguments) == {"q": 1}
        with c.responses.stream(model="m", input=[{"role": "user", "content": "again"}]) as s:
            deltas = [e.delta for e in s if e.type == "response.output_text.delta"]
            final = s.get_final_response()
        assert len(deltas) >= 2 and "".join(deltas) == "the answer"
        assert final.output_text == "the answer" and final.usage.total_tokens > 0
        assert [r.api for r in srv.requests] == ["responses", "responses"]


def test_anthropic_json_and_stream():
    body = {"model": "claude-x", "max_tokens": 100, "system": "sys",
            "tools": [{"name": "lookup", "input_schema": {"type": "object"}}],
            "messages": [{"role": "user", "content": "hi"}]}
    with ScriptedServer([call("lookup", {"q": "z"}), Reply(text="done", reasoning="thinking hard")]) as srv:
        out = json.load(post(srv, "/v1/messages", body, {"x-api-key": "sk-ant-secret"}))
        assert out["stop_reason"] == "tool_use" and out["content"][0]["input"] == {"q": "z"}
        assert out["content"][0]["id"].startswith("toolu_")
        follow = {**body, "stream": True, "messages": body["messages"] + [
            {"role": "assistant", "content": out["content"]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": out["content"][0]["id"], "content": "ok"}]}]}
        raw = post(srv, "/v1/messages", follow).read().decode()
        reqs = srv.requests
    events = sse_events(raw)
    kinds = [e["type"] for e in events]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    thinking = "".join(e["delta"].get("thinking", "") for e in events if e["type"] == "content_block_delta")
    texts = "".join(e["delta"].get("text", "") for e in events if e["type"] == "content_block_delta")
    assert thinking == "thinking hard" and texts == "done"
    assert next(e for e in events if e["type"] == "message_delta")["delta"]["stop_reason"] == "end_turn"
    assert "x-api-key" not in reqs[0].headers


def test_models_endpoint_and_fast_404_probes():
    with ScriptedServer(model="my-model") as srv:
        models = client(srv).models.list()
        assert [m.id for m in models.data] == ["my-model"]
        t0 = time.perf_counter()
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(srv.base_url.removesuffix("/v1") + "/api/v1/models", timeout=5)
        assert err.value.code == 404 and time.perf_counter() - t0 < 1.0
        assert [r.api for r in srv.requests] == [None, None]


@pytest.mark.parametrize("status", ["429", "500", "401"])
def test_http_error_faults(status):
    with ScriptedServer([fault(status, retry_after=7)]) as srv:
        with pytest.raises(urllib.error.HTTPError) as err:
            post(srv, "/v1/chat/completions", {"model": "m", "messages": []})
    assert err.value.code == int(status)
    assert ("error" in json.load(err.value))
    if status == "429":
        assert err.value.headers["Retry-After"] == "7"


def test_openai_sdk_retries_a_500_then_succeeds():
    with ScriptedServer(fail_first(1, sequence_policy([], "recovered"))) as srv:
        c = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=2)
        r = c.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        assert r.choices[0].message.content == "recovered"
        assert [x.reply.fault for x in srv.requests] == ["500", None]


def test_length_truncation_all_apis():
    long = "one two three four five six seven eight"
    with ScriptedServer(lambda req: Reply(text=long, fault="length")) as srv:
        r = client(srv).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        assert r.choices[0].finish_reason == "length" and long.startswith(r.choices[0].message.content)
        assert len(r.choices[0].message.content) < len(long)
        resp = client(srv).responses.create(model="m", input="x")
        assert resp.status == "incomplete" and resp.incomplete_details.reason == "max_output_tokens"
        out = json.load(post(srv, "/v1/messages", {"model": "c", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]}))
        assert out["stop_reason"] == "max_tokens"


def test_malformed_json_fault():
    with ScriptedServer([fault("malformed"), fault("malformed")]) as srv:
        raw = post(srv, "/v1/chat/completions", {"model": "m", "messages": []}).read()
        with pytest.raises(ValueError):
            json.loads(raw)
        stream_raw = post(srv, "/v1/chat/completions", {"model": "m", "messages": [], "stream": True}).read().decode()
        with pytest.raises(ValueError):
            sse_events(stream_raw)


def test_stalled_stream_sends_some_chunks_then_goes_silent():
    with ScriptedServer([Reply(text="a b c d e f g h", fault="stall", stall_seconds=1.5, stall_after_chunks=2)]) as srv:
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
        conn.request("POST", "/v1/chat/completions", json.dumps({"model": "m", "messages": [], "stream": True}),
                     {"Content-Type": "application/json"})
        resp = conn.getresponse()
        assert resp.status == 200
        t0 = time.perf_counter()
        first = resp.fp.readline()
        assert first.startswith(b"data: ")
        rest = resp.read()  # blocks through the silence, then the server closes
        waited = time.perf_counter() - t0
        conn.close()
    assert waited >= 1.2
    assert b"[DONE]" not in rest and b"finish_reason\":\"stop" not in rest


def test_stalled_stream_trips_client_read_timeout():
    with ScriptedServer([fault("stall", stall_seconds=10)]) as srv:
        c = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0, timeout=openai.Timeout(5, read=0.5))
        t0 = time.perf_counter()
        import httpx

        with pytest.raises((openai.APITimeoutError, httpx.ReadTimeout)):
            list(c.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}], stream=True))
        assert time.perf_counter() - t0 < 5
    # stop() woke the stalled handler: the context exit did not wait 10 s
    assert time.perf_counter() - t0 < 8


def test_sequence_policy_is_keyed_on_tool_results_since_last_user_message():
    pol = sequence_policy([ToolCall("lookup", {"n": 1}), [ToolCall("lookup", {"n": 2}), ToolCall("lookup", {"n": 3})]], "fin")
    with ScriptedServer(pol) as srv:
        c = client(srv)
        msgs = [{"role": "user", "content": "q"}]
        names = []
        for _ in range(6):
            r = c.chat.completions.create(model="m", messages=msgs, tools=TOOLS).choices[0]
            if not r.message.tool_calls:
                names.append(r.message.content)
                break
            names.append(len(r.message.tool_calls))
            msgs.append(r.message.model_dump(exclude_none=True))
            for tc in r.message.tool_calls:
                msgs.append({"role": "tool", "tool_call_id": tc.id, "content": "r"})
        assert names == [1, 2, "fin"]
        # a new user turn starts the sequence again; a request without tools gets text
        msgs.append({"role": "user", "content": "second"})
        assert c.chat.completions.create(model="m", messages=msgs, tools=TOOLS).choices[0].message.tool_calls
        assert c.chat.completions.create(model="m", messages=msgs).choices[0].message.content == "fin"


def test_routed_and_hermes_default_policy():
    pol = routed_policy([("CHILD", sequence_policy([], "child done"))], hermes_default_policy("parent done"))
    todo_tools = [{"type": "function", "function": {"name": "todo", "parameters": {"type": "object"}}}]
    with ScriptedServer(pol) as srv:
        c = client(srv)
        a = c.chat.completions.create(model="m", messages=[{"role": "user", "content": "CHILD task"}], tools=todo_tools)
        assert a.choices[0].message.content == "child done"
        b = c.chat.completions.create(model="m", messages=[{"role": "user", "content": "parent"}], tools=todo_tools)
        assert b.choices[0].message.tool_calls[0].function.name == "todo"


def test_request_log_is_thread_safe_under_concurrency():
    with ScriptedServer(lambda req: text(f"r{req.index}")) as srv:
        c = client(srv)
        errors = []

        def worker():
            try:
                for _ in range(10):
                    c.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=worker) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        reqs = srv.requests
    assert not errors
    assert sorted(r.index for r in reqs) == list(range(60))


def test_bad_request_body_and_unknown_route():
    with ScriptedServer() as srv:
        req = urllib.request.Request(srv.base_url + "/chat/completions", data=b"{not json", method="POST",
                                     headers={"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req, timeout=5)
        assert err.value.code == 400
        with pytest.raises(urllib.error.HTTPError) as err2:
            post(srv, "/v1/embeddings", {"input": "x"})
        assert err2.value.code == 404


def test_reply_validation():
    with pytest.raises(ValueError):
        Reply(fault="418")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Reply.from_dict({"txt": "typo"})
    assert Reply.from_dict({"tool_calls": [{"name": "a", "arguments": {"x": 1}}]}).tool_calls[0].name == "a"


def test_port_is_os_picked_and_freed():
    with ScriptedServer() as srv:
        port = srv.port
        assert port > 0
    s = socket.socket()
    s.bind(("127.0.0.1", port))
    s.close()


def test_command_line_serves_a_script_file(tmp_path: Path):
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"text": "from file"}]))
    log = tmp_path / "log.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "replaykit.testing.scripted_server", "--script", str(script),
                             "--log", str(log)], stdout=subprocess.PIPE, text=True,
                            env={"PYTHONPATH": str(Path(__file__).resolve().parents[2]), "PATH": "/usr/bin:/bin"})
    try:
        base = proc.stdout.readline().strip()
        assert base.startswith("http://127.0.0.1:") and base.endswith("/v1")
        c = openai.OpenAI(base_url=base, api_key="k", max_retries=0)
        assert c.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}]).choices[0].message.content == "from file"
        deadline = time.time() + 5
        while time.time() < deadline and not (log.exists() and log.read_text().strip()):
            time.sleep(0.1)
        entry = json.loads(log.read_text().splitlines()[0])
        assert entry["path"] == "/v1/chat/completions" and entry["body"]["messages"][0]["content"] == "x"
    finally:
        proc.terminate()
        proc.wait(timeout=5)


def test_command_line_rejects_a_bad_script(tmp_path: Path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"text": 1}')
    r = subprocess.run([sys.executable, "-m", "replaykit.testing.scripted_server", "--script", str(bad)],
                       capture_output=True, text=True, timeout=20,
                       env={"PYTHONPATH": str(Path(__file__).resolve().parents[2]), "PATH": "/usr/bin:/bin"})
    assert r.returncode != 0 and "list of replies" in r.stderr
