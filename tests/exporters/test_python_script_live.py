"""``--live``: the script's real agent loop over urllib against the scripted OpenAI-compatible server on
127.0.0.1 (a separate process talks HTTP to it), with a 429 and a 500 to retry through."""

from __future__ import annotations

import json
import os
from pathlib import Path

from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.exporters import export
from replaykit.testing.engine_runs import record_sample_run
from replaykit.testing.script import ReplyList, call, fault, text
from replaykit.testing.scripted_server import ScriptedServer
from tests.exporters.script_support import make_run, run_script

SECRET = "sk-test-DO-NOT-LEAK-4242"


def live(out: Path, srv: ScriptedServer, *args: str, key: str | None = SECRET):
    env = {"PATH": os.environ.get("PATH", "")}
    if key is not None:
        env["RK_TEST_KEY"] = key
    return run_script(out, "--live", "--base-url", srv.base_url, "--model", "scripted-model",
                      "--api-key-env", "RK_TEST_KEY", "--backoff", "0.01", *args, env=env)


def test_live_loop_retries_serves_matching_tools_and_marks_the_rest(tmp_path: Path) -> None:
    out = tmp_path / "run.py"
    export(make_run(2), "python", out)
    replies = ReplyList([
        fault("429", retry_after=0.05),
        fault("500"),
        call("search", {"q": "query 0"}),   # recorded: served from the record
        call("search", {"q": "brand new"}),  # not recorded: a synthetic "not available" result
        text("live answer"),
    ])
    with ScriptedServer(replies) as srv:
        proc = live(out, srv)
        requests = srv.llm_requests
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert SECRET not in proc.stdout and SECRET not in proc.stderr
    assert doc["mode"] == "live" and doc["final_answer"] == "live answer"
    assert doc["counters"]["provider_calls"] == 5 == len(requests)
    assert doc["counters"]["tool_executions"] == 0 and doc["counters"]["live_llm_steps"] == 3
    assert doc["counters"]["served_tool_steps"] == 1 and doc["counters"]["synthetic_steps"] == 1
    assert [r["error"] for r in doc["live"]["retries"]] == ["HTTP 429", "HTTP 500"]
    rows = [(s["kind"], s["provenance"], s["status"]) for s in doc["steps"]]
    assert rows == [("llm", "live", "tool_calls"), ("tool", "served", "ok"), ("llm", "live", "tool_calls"),
                    ("tool", "synthetic", "unavailable"), ("llm", "live", "stop")]
    assert [n["kind"] for n in doc["notes"]] == ["synthetic"] and doc["notes"][0]["step"] == 3
    # what the endpoint got: the recorded context (system + user) and the recorded tool declarations
    first = requests[0].body
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert first["tools"][0]["function"]["name"] == "search" and first["model"] == "scripted-model"
    last = requests[-1].body["messages"]
    assert last[-3]["content"] == "result 0"
    assert "not available" in last[-1]["content"]
    assert doc["message_count"] == len(doc["messages"]) == 7


def test_live_after_an_edit_starts_from_the_edited_conversation(tmp_path: Path) -> None:
    out = tmp_path / "run.py"
    export(make_run(2), "python", out)
    with ScriptedServer(ReplyList([text("answer from the edited context")])) as srv:
        proc = live(out, srv, "--edit", "1", json.dumps({"result": "EDITED"}))
        requests = srv.llm_requests
    doc = json.loads(proc.stdout)
    assert proc.returncode == 0, proc.stderr
    assert [(s["step"], s["provenance"]) for s in doc["steps"]] == [(0, "served"), (1, "edited"), (2, "live")]
    assert len(requests) == 1 and requests[0].body["messages"][-1] == {
        "role": "tool", "tool_call_id": "call_0", "content": "EDITED"}
    assert doc["final_answer"] == "answer from the edited context"
    assert doc["live"]["cut"] == 2


def test_live_errors_are_one_line(tmp_path: Path) -> None:
    out = tmp_path / "run.py"
    export(make_run(1), "python", out)
    with ScriptedServer(ReplyList([fault("401")])) as srv:
        refused = live(out, srv)
        unset = live(out, srv, key=None)
    assert refused.returncode == 2 and "HTTP 401" in refused.stderr and refused.stdout == ""
    assert unset.returncode == 2 and "RK_TEST_KEY" in unset.stderr and "is not set" in unset.stderr
    with ScriptedServer(ReplyList([fault("500")] * 3)) as srv:
        gave_up = live(out, srv, "--max-attempts", "3")
        assert len(srv.llm_requests) == 3
    assert gave_up.returncode == 2 and "after 3 attempts" in gave_up.stderr
    assert SECRET not in refused.stderr + unset.stderr + gave_up.stderr
    missing = run_script(out, "--live")
    assert missing.returncode == 2 and "--base-url" in missing.stderr


def test_live_sends_the_recordings_later_user_turns(tmp_path: Path, store_dir: Path) -> None:
    store = RunStore(store_dir)
    run = Run.load(store.resolve(record_sample_run(store)))
    out = tmp_path / "run.py"
    export(run, "python", out)
    with ScriptedServer(ReplyList([text("first answer"), text("second answer")])) as srv:
        proc = live(out, srv)
        requests = srv.llm_requests
    doc = json.loads(proc.stdout)
    assert proc.returncode == 0, proc.stderr
    assert len(requests) == 2 and doc["final_answer"] == "second answer"
    second = requests[1].body["messages"]
    assert second[-2] == {"role": "assistant", "content": "first answer"}
    assert second[-1] == {"role": "user", "content": "What does out.txt contain now?"}
    assert {t["function"]["name"] for t in requests[0].body["tools"]} == {"read_file", "web_search", "write_file"}


def test_live_after_a_response_edit_serves_the_new_tool_calls(tmp_path: Path) -> None:
    out = tmp_path / "run.py"
    export(make_run(2), "python", out)
    edit = {"response": [{"name": "search", "arguments": {"q": "query 1"}, "id": "mine"}]}
    with ScriptedServer(ReplyList([text("done live")])) as srv:
        proc = live(out, srv, "--edit", "0", json.dumps(edit))
        requests = srv.llm_requests
    doc = json.loads(proc.stdout)
    assert proc.returncode == 0, proc.stderr
    assert [(s["step"], s["provenance"], s["status"]) for s in doc["steps"]] == [
        (0, "edited", "tool_calls"), (1, "served", "ok"), (2, "live", "stop")]
    assert requests[0].body["messages"][-1] == {"role": "tool", "tool_call_id": "mine", "content": "result 1"}


def test_runnable_tools_go_through_the_destructive_guard(tmp_path: Path) -> None:
    out = tmp_path / "run.py"
    export(make_run(1), "python", out)
    # A user adds tool implementations to the generated script (the documented extension point).
    source = out.read_text().replace(
        "RUNNABLE_TOOLS: dict[str, Any] = {}",
        "RUNNABLE_TOOLS: dict[str, Any] = {'lookup': lambda q: 'looked up ' + q,"
        " 'write_note': lambda path: open(path, 'w').write('x') and 'written'}")
    out.write_text(source)
    note = tmp_path / "note.txt"
    replies = [call("lookup", {"q": "zebra"}), call("write_note", {"path": str(note)}), text("ok")]
    with ScriptedServer(ReplyList(list(replies))) as srv:
        dry = json.loads(live(out, srv).stdout)
    assert [(s["provenance"], s["status"]) for s in dry["steps"]] == [
        ("live", "tool_calls"), ("live", "ok"), ("live", "tool_calls"), ("live", "dry_run"), ("live", "stop")]
    assert not note.exists() and dry["counters"]["tool_executions"] == 1
    with ScriptedServer(ReplyList(list(replies))) as srv:
        allowed = json.loads(live(out, srv, "--allow-destructive").stdout)
    assert note.exists() and allowed["counters"]["tool_executions"] == 2


def test_live_times_out_a_stalled_response_and_retries_malformed_bodies(tmp_path: Path) -> None:
    out = tmp_path / "run.py"
    export(make_run(1), "python", out)
    replies = ReplyList([fault("stall", stall_seconds=2), fault("malformed"), text("finally")])
    with ScriptedServer(replies) as srv:
        proc = live(out, srv, "--timeout", "0.5")
        assert len(srv.llm_requests) == 3
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["final_answer"] == "finally" and doc["counters"]["provider_calls"] == 3
    errors = [r["error"] for r in doc["live"]["retries"]]
    assert "timed out" in errors[0].lower() and "JSONDecodeError" in errors[1]


TOOLS_MODULE = """
import json

def lookup(q: str) -> str:
    return "looked up " + q

def count_words(text: str, unique: bool = False) -> dict:
    words = text.split()
    return {"words": len(set(words) if unique else words)}

TOOLS = {"web-search": lambda query: "searched " + query}
"""


def test_one_tools_module_serves_the_script_and_play(tmp_path: Path) -> None:
    """One tool-module convention (keyword arguments, a TOOLS dict for names that are not identifiers):
    the file given to `replaykit play --tools-module` runs unchanged under the script's --tools-module."""
    from replaykit.core.replay.live_tools import load_tools_module

    module = tmp_path / "my_tools.py"
    module.write_text(TOOLS_MODULE)
    assert set(load_tools_module(module)) == {"lookup", "count_words", "web-search"}
    out = tmp_path / "run.py"
    export(make_run(1), "python", out)
    replies = [call("lookup", {"q": "zebra"}), call("count_words", {"text": "a b a", "unique": True}),
               call("web-search", {"query": "x"}), text("ok")]
    with ScriptedServer(ReplyList(list(replies))) as srv:
        proc = live(out, srv, "--tools-module", str(module))
        requests = srv.llm_requests
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["counters"]["tool_executions"] == 3
    results = [m["content"] for m in requests[-1].body["messages"] if m["role"] == "tool"]
    assert results == ["looked up zebra", '{"words": 2}', "searched x"]
    with ScriptedServer(ReplyList([])) as srv:
        bad = live(out, srv, "--tools-module", str(tmp_path / "missing.py"))
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--tools-module" in bad.stderr
