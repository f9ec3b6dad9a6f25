"""``replaykit hermes resume-from``: a branch written into a Hermes home through Hermes's session store, then
continued by the real ``hermes chat --resume`` CLI, offline, against the scripted server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from replaykit.core.replay.branch import branch
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.testing.hermes_harness import HermesSandbox, hermes_available
from replaykit.testing.script import sequence_policy
from replaykit.testing.scripted_server import ScriptedServer
from tests.conftest import subprocess_env
from tests.interop.roundtrip import FIXTURES

needs_hermes = pytest.mark.skipif(not hermes_available(), reason="hermes-agent is not installed")


def _replaykit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "replaykit", *args], capture_output=True, text=True,
                          env=subprocess_env(), timeout=120, check=False)


@pytest.mark.hermes
@pytest.mark.slow
@needs_hermes
def test_hermes_resume_continues_from_a_branch(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    original = Run.load(FIXTURES / "hermes" / "two_turns.jsonl")
    store.write_run(original.header, original.events)
    # Branch at the first tool step with another result: the edit must reach Hermes.
    edited = branch(store, original, 1, result='{"echo": "EDITED BY REPLAYKIT"}')

    sandbox = HermesSandbox(tmp_path, plugin="none")
    proc = _replaykit("hermes", "resume-from", edited.run_id, "--hermes-home", str(sandbox.home),
                      "--store", str(store.root), "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["run_id"] == edited.run_id and result["losses"] == []
    session_id = result["session_id"]

    with ScriptedServer(sequence_policy([], "Resumed: the echo said EDITED.")) as srv:
        sandbox.write_config(srv.base_url, "scripted-model")
        chat = sandbox.run_cli(["chat", "-Q", "--ignore-rules", "--resume", session_id, "-q",
                                "What did the echo say?", "--toolsets", "todo"])
        # (Hermes 0.22 also titles the untitled session: an auxiliary request that offers no tools)
        requests = [r for r in srv.llm_requests if r.body.get("tools")]
    assert chat.returncode == 0, chat.stderr[-3000:]
    assert "Resumed: the echo said EDITED." in chat.stdout
    assert len(requests) == 1
    sent = requests[0].body["messages"]
    # Hermes sent the branch's conversation (with the edited tool result), then the new question.
    assert sent[-1] == {"role": "user", "content": "What did the echo say?"} or \
        (sent[-1]["role"] == "user" and "What did the echo say?" in json.dumps(sent[-1]))
    roles = [m["role"] for m in sent]
    assert roles[:4] == ["system", "user", "assistant", "tool"]
    assert sent[1]["content"] == "First: echo hello."
    assert sent[2]["tool_calls"][0]["function"]["name"] == "harness_echo"
    assert sent[3]["tool_call_id"] == "call_001" and "EDITED BY REPLAYKIT" in sent[3]["content"]
    assert "HELLO REPLAYKIT" not in json.dumps(sent)  # the original result is not in the branch


def test_resume_from_bad_input(tmp_path: Path) -> None:
    home = tmp_path / "home"
    proc = _replaykit("hermes", "resume-from", "no-such-run", "--hermes-home", str(home),
                      "--store", str(tmp_path / "store"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert not (home / "state.db").exists()
