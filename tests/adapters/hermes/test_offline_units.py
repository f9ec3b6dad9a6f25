"""Hermes adapter parts that need no Hermes: wire round trips on recorded fixtures, importers, install,
the slash command, the store location rule, and the capture engine driven in Hermes's firing order."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from replaykit.adapters.hermes import wire
from replaykit.adapters.hermes.capture import HermesCapture, safe_base_url
from replaykit.adapters.hermes.command import handle_command
from replaykit.adapters.hermes.home import resolve_store_root
from replaykit.adapters.hermes.install import install_plugin
from replaykit.adapters.hermes.plugin import make_llm_execution, make_tool_execution
from replaykit.adapters.hermes.reconstruct import attempt_bodies
from replaykit.core.trace import codecs
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "hermes"
ROOT = Path(__file__).resolve().parents[3]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "replaykit", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.parametrize("name", ["tools_sequence", "two_turns", "parallel_tools", "retry_500"])
def test_fixture_recordings_reconstruct_every_request(name):
    run = Run.load(FIX / f"{name}.jsonl")
    bodies = json.loads((FIX / f"{name}.requests.json").read_text())
    assert attempt_bodies(run) == bodies


def test_subagent_fixture_links_child_to_parent():
    parent, child = Run.load(FIX / "subagent.jsonl"), Run.load(FIX / "subagent.child.jsonl")
    assert child.header.lineage.parent_run_id == parent.run_id
    bodies = json.loads((FIX / "subagent.requests.json").read_text())
    rebuilt = attempt_bodies(parent) + attempt_bodies(child)
    assert sorted(json.dumps(b, sort_keys=True) for b in rebuilt) == sorted(json.dumps(b, sort_keys=True) for b in bodies)


def test_wire_round_trip_for_all_three_apis():
    chat = {"model": "m", "messages": [
        {"role": "system", "content": "s"}, {"role": "user", "content": [{"type": "text", "text": "hi"},
                                                                          {"type": "image_url", "image_url": {"url": "data:x"}}]},
        {"role": "assistant", "content": None, "reasoning_content": "think",
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\": 1}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "r", "name": "f"},
        {"role": "assistant", "content": "", "weird_key": [1, 2]}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
        "max_tokens": 5, "temperature": 0.2}
    responses = {"model": "m", "instructions": "sys", "input": [
        {"role": "user", "content": "hi"}, {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c", "output": "ok"},
        {"type": "reasoning", "id": "rs", "encrypted_content": "xx", "summary": []}],
        "tools": [{"type": "function", "name": "f", "parameters": {}, "strict": False}], "store": False}
    anthropic = {"model": "c", "system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
                 "messages": [{"role": "user", "content": "hi"},
                              {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "sig"},
                                                                {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}}]},
                              {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok",
                                                            "is_error": False}]}],
                 "tools": [{"name": "f", "input_schema": {"type": "object"}}], "max_tokens": 100}
    for api, body in (("openai-chat", chat), ("openai-responses", responses), ("anthropic-messages", anthropic)):
        model, _tools, params, sdk = wire.split_request(api, {**body, "timeout": 30.0, "extra_body": {"top_k": 3}})
        assert sdk == {"timeout": 30.0, "extra_body": {"top_k": 3}} and params.pop("top_k") == 3
        decoded = codecs.decode_request(api, {k: v for k, v in body.items() if k not in params and k != "model"})
        rebuilt = codecs.encode_request(api, decoded.messages, decoded.tools, {**params, "model": model}).body
        assert rebuilt == body, api


def test_safe_base_url_strips_credentials():
    assert safe_base_url("https://user:sk-secret@host:8443/v1?key=sk-2#x") == "https://host:8443/v1"
    assert safe_base_url(None) is None


def test_store_root_override_must_stay_inside_hermes_home(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    assert resolve_store_root(home, {}) == home / "replaykit"
    assert resolve_store_root(home, {"REPLAYKIT_HOME": str(home / "runs")}) == (home / "runs").resolve()
    assert resolve_store_root(home, {"REPLAYKIT_HOME": "rel"}) == (home / "rel").resolve()
    assert resolve_store_root(home, {"REPLAYKIT_HOME": str(tmp_path / "elsewhere")}) == home / "replaykit"
    assert resolve_store_root(home, {"REPLAYKIT_HOME": str(home / ".." / "escape")}) == home / "replaykit"


def test_install_is_idempotent_and_keeps_the_rest_of_the_config(tmp_path):
    home = tmp_path / "hh"
    home.mkdir()
    original = "# my settings\nmodel:\n  default: gpt-x  # keep me\nplugins:\n  enabled: [other]\n  disabled: [replaykit]\n"
    (home / "config.yaml").write_text(original)
    first = install_plugin(home)
    text = (home / "config.yaml").read_text()
    assert first["config_changed"] and "# keep me" in text and "# my settings" in text
    import yaml

    data = yaml.safe_load(text)
    assert data["plugins"]["enabled"] == ["other", "replaykit"] and data["plugins"]["disabled"] == []
    assert data["model"]["default"] == "gpt-x"
    assert (home / "plugins" / "replaykit" / "plugin.yaml").is_file()
    second = install_plugin(home)
    assert not second["config_changed"] and second["files_written"] == []
    assert (home / "config.yaml").read_text() == text


def test_install_cli_and_bad_config(tmp_path):
    fresh = tmp_path / "fresh"
    result = cli("hermes", "install", "--hermes-home", str(fresh), "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["enabled"] is True
    assert "replaykit" in (fresh / "config.yaml").read_text()
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.yaml").write_text("plugins: [unclosed\n")
    bad = cli("hermes", "install", "--hermes-home", str(broken))
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    assert (broken / "config.yaml").read_text() == "plugins: [unclosed\n"


def test_import_hermes_session_state_db_and_snapshot(tmp_path):
    store = tmp_path / "store"
    result = cli("import", str(FIX / "state.db"), "--format", "hermes-session", "--store", str(store), "--json")
    assert result.returncode == 0, result.stderr
    run = Run.load(Path(json.loads(result.stdout)["runs"][0]["path"]))
    recorded = Run.load(FIX / "two_turns.jsonl")
    assert {e.provenance for e in run.events} == {"reconstructed"}
    assert [(c.call_id, c.name, c.result) for c in run.tool_calls()] == [
        (c.call_id, c.name, c.result) for c in recorded.tool_calls()]
    assert [t.message.text for t in run.user_turns()] == [t.message.text for t in recorded.user_turns()]
    assert run.final_answer == recorded.final_answer
    # The reconstructed conversation of the last call equals the recorded one, message by message.
    mine = codecs.encode_request("openai-chat", run.request_messages(run.llm_calls()[-1])).body["messages"]
    theirs = json.loads((FIX / "two_turns.requests.json").read_text())[-1]["messages"]
    assert [m["role"] for m in mine] == [m["role"] for m in theirs]
    assert mine[1:] == [m for m in theirs[1:]] or [m.get("content") for m in mine[1:]] == [m.get("content") for m in theirs[1:]]
    snap = cli("import", str(FIX / "session_snapshot.json"), "--format", "hermes-session", "--store", str(tmp_path / "s2"), "--json")
    assert snap.returncode == 0, snap.stderr
    snap_run = Run.load(Path(json.loads(snap.stdout)["runs"][0]["path"]))
    assert {t.name for t in next(iter(snap_run.tool_sets.values()))} >= {"harness_echo", "todo"}


def test_import_hermes_session_bad_input(tmp_path):
    junk = tmp_path / "state.db"
    junk.write_text("not sqlite")
    result = cli("import", str(junk), "--format", "hermes-session", "--store", str(tmp_path / "s"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    missing = cli("import", str(FIX / "state.db"), "--format", "hermes-session", "--session", "nope", "--store", str(tmp_path / "s"))
    assert missing.returncode == 2 and "no session" in missing.stderr


def test_import_hermes_unroll(tmp_path):
    result = cli("import", str(FIX / "unroll_session.py"), "--format", "hermes-unroll", "--store", str(tmp_path), "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    run = Run.load(Path(doc["runs"][0]["path"]))
    assert run.header.session_id == "20261130_101500_abc123" and run.model == "hermes-4-70b"
    assert [(c.name, c.call_id) for c in run.tool_calls()] == [("read_file", "call_a1"), ("todo", "call_a2")]
    assert run.tool_calls()[0].arguments == {"path": "notes.txt"} and run.tool_calls()[0].result == "one\ntwo\nthree\n"
    assert run.final_answer == "The file has 3 lines; I saved a todo."
    assert run.request_messages(run.llm_calls()[0])[0].text.startswith("You are Hermes Agent")
    assert run.llm_calls()[1].t == 2.1 and doc["runs"][0]["warnings"]


def test_import_hermes_unroll_never_executes_the_file(tmp_path):
    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.py"
    evil.write_text(f"open({str(marker)!r}, 'w').write('x')\nSESSION_ID = __import__('os').system('touch {marker}')\n"
                    "def replay():\n    messages = []\n    messages.append({'role': 'user', 'content': 'hi'})\n")
    result = cli("import", str(evil), "--format", "hermes-unroll", "--store", str(tmp_path / "s"))
    assert not marker.exists()
    assert result.returncode == 2 and "not a hermes-unroll file" in result.stderr
    notpy = tmp_path / "x.py"
    notpy.write_text("def (:\n")
    bad = cli("import", str(notpy), "--format", "hermes-unroll", "--store", str(tmp_path / "s"))
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_slash_command_lists_and_inspects(tmp_path):
    store = RunStore(tmp_path)
    store.ensure()
    ids = []
    for name in ("tools_sequence", "retry_500"):
        run_id = Run.load(FIX / f"{name}.jsonl").run_id
        ids.append(run_id)
        (tmp_path / f"{run_id}.jsonl").write_bytes((FIX / f"{name}.jsonl").read_bytes())
    listing = handle_command("runs", store=store)
    assert all(run_id in listing for run_id in ids)
    detail = handle_command(f"inspect {ids[0]}", store=store)
    assert "harness_echo" in detail and "llm_call" in detail
    assert "error" in handle_command("inspect ../../etc/passwd", store=store)
    assert handle_command("bogus", store=store).startswith("usage")


def _chat_result(text=None, calls=()):
    tcs = [SimpleNamespace(id=cid, function=SimpleNamespace(name=n, arguments=a)) for cid, n, a in calls] or None
    msg = SimpleNamespace(content=text, tool_calls=tcs)
    return SimpleNamespace(id="stream-x", model="m", choices=[SimpleNamespace(message=msg, finish_reason="tool_calls" if calls else "stop")],
                           usage=SimpleNamespace(prompt_tokens=3, completion_tokens=1, total_tokens=4))


def test_capture_threads_parallel_tools_and_broken_payloads(tmp_path):
    cap = HermesCapture(RunStore(tmp_path))
    llm, tool = make_llm_execution(cap), make_tool_execution(cap)
    ids = {"session_id": "S1", "task_id": "t", "turn_id": "S1:t:1", "api_mode": "chat_completions", "platform": "cli",
           "model": "m", "provider": "custom", "base_url": "http://127.0.0.1:1/v1"}
    cap.session_start({"session_id": "S1", "model": "m", "platform": "cli"})
    cap.turn_start({**ids, "user_message": "go"})
    calls = [(f"c{i}", "echo", json.dumps({"i": i})) for i in range(8)]
    req = {"model": "m", "messages": [{"role": "user", "content": "go"}], "timeout": 5.0}
    result = llm(request=req, next_call=lambda: _chat_result(calls=calls), api_request_id="S1:t:1:api:1", **ids)
    assert result.choices[0].message.tool_calls[0].id == "c0"

    def run_tool(i):  # nested chain on a worker thread, like Hermes's thread-pool path
        kw = {**ids, "tool_name": "echo", "args": {"i": i}, "tool_call_id": f"c{i}", "api_request_id": "S1:t:1:api:1"}
        out = tool(**kw, next_call=lambda: tool(**kw, next_call=lambda: f"r{i}"))
        cap.post_tool_call({**kw, "result": out, "status": "ok"})
        cap.post_tool_call({**kw, "result": out, "status": "ok"})

    threads = [threading.Thread(target=run_tool, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Downstream errors propagate unchanged; garbage payloads never raise.
    with pytest.raises(RuntimeError):
        llm(request=req, next_call=lambda: (_ for _ in ()).throw(RuntimeError("boom")), api_request_id="S1:t:1:api:2", **ids)
    assert llm(request="not a dict", next_call=lambda: 42, **ids) == 42
    assert tool(next_call=lambda: "ok") == "ok"
    cap.turn_end({**ids, "completed": True})
    cap.close_all()
    run = Run.load(tmp_path / "hermes-S1.jsonl")
    assert sorted(e.call_id for e in run.tool_calls()) == [f"c{i}" for i in range(8)]
    assert all(e.llm_call_id == run.llm_calls()[0].id for e in run.tool_calls())
    assert [e.message for e in run.errors] == ["boom"]
    assert len({e.seq for e in run.events}) == len(run.events)


def test_resumed_session_appends_after_a_torn_tail(tmp_path):
    cap = HermesCapture(RunStore(tmp_path))
    cap.turn_start({"session_id": "S2", "user_message": "one"})
    cap.turn_end({"session_id": "S2", "completed": True})
    cap.close_all()
    path = tmp_path / "hermes-S2.jsonl"
    with open(path, "ab") as fh:
        fh.write(b'{"seq": 99, "kind": "tur')  # a crash mid-write
    cap2 = HermesCapture(RunStore(tmp_path))
    cap2.turn_start({"session_id": "S2", "user_message": "two"})
    cap2.turn_end({"session_id": "S2", "completed": True})
    cap2.close_all()
    run = Run.load(path)
    assert [t.message.text for t in run.user_turns()] == ["one", "two"]
    assert [e.seq for e in run.events] == list(range(len(run.events)))
    assert run.report is None or not run.report.torn_tail
