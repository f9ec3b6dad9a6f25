"""``--live``: the script's real agent loop over urllib against the scripted OpenAI-compatible server on
127.0.0.1 (a separate process talks HTTP to it), with a 429 and a 500 to retry through."""

from __future__ import annotations

import json
import os
from pathlib import Path

from replaykit.exporters.python_script import export
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
    export(make_run(2), out)
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
    export(make_run(2), out)
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
    export(make_run(1), out)
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
