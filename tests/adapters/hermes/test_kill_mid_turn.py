"""SIGKILL of a real Hermes agent (the installed release) in the middle of a turn: the run file on disk is
a readable prefix of the session (every event written before the kill, the torn last line, if any,
skipped), and it validates."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from replaykit.core.trace.bridge import event_underlying
from replaykit.core.trace.run import Run
from replaykit.testing.hermes_harness import HermesSandbox
from replaykit.testing.scripted_server import Reply, ScriptedServer, hermes_default_policy

pytestmark = [pytest.mark.hermes, pytest.mark.slow]


def test_sigkill_mid_turn_leaves_a_readable_prefix(tmp_path):
    default = hermes_default_policy()

    def policy(req):  # the first tool runs; the next model call stalls mid-stream: the agent is killed there
        if req.has_tools and req.tool_results_since_user >= 1:
            return Reply(fault="stall", stall_seconds=60, stall_after_chunks=1)
        return default(req)

    sandbox = HermesSandbox(tmp_path)
    with ScriptedServer(policy) as srv:
        spec = tmp_path / "spec.json"
        spec.write_text(json.dumps({"base_url": srv.base_url, "turns": ["Please echo hello"]}))
        proc = subprocess.Popen([sys.executable, "-m", "replaykit.testing.hermes_driver", str(spec),
                                 str(tmp_path / "out.json")], cwd=sandbox.cwd, env=sandbox.env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 240
            while time.monotonic() < deadline and proc.poll() is None:
                if sum(1 for r in srv.llm_requests if r.body.get("tools")) >= 2:
                    break
                time.sleep(0.2)
            time.sleep(0.5)  # inside the stalled model call
            assert proc.poll() is None, "the agent ended before it could be killed"
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == -signal.SIGKILL
    (path,) = sandbox.store.glob("*.jsonl")
    run = Run.load(path)
    assert [e.kind for e in run.events][:1] == ["turn_start"]
    assert [s.kind for s in run.steps] == ["llm", "tool"]  # what happened before the kill, nothing after
    assert event_underlying(run.tool_calls()[0])[0] == "harness_echo"
    assert run.tool_calls()[0].result == '{"echo": "HELLO REPLAYKIT"}'
    done = subprocess.run([sys.executable, "-m", "replaykit", "validate", str(path)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": sandbox.env["PYTHONPATH"]})
    assert done.returncode == 0, done.stdout + done.stderr
