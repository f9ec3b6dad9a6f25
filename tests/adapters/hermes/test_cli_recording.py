"""The real `hermes chat -q` CLI with the plugin installed by `replaykit hermes install`."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from replaykit.testing.hermes_harness import HermesSandbox
from replaykit.testing.scripted_server import ScriptedServer, hermes_default_policy
from tests.adapters.hermes.helpers import (
    assert_requests_match,
    assert_tool_calls_match,
    only_run,
    todo_name,
    tool_names,
)

pytestmark = pytest.mark.hermes


def test_hermes_chat_cli_records_through_installed_directory_plugin(tmp_path):
    sandbox = HermesSandbox(tmp_path, plugin="none")
    with ScriptedServer(hermes_default_policy()) as srv:
        sandbox.write_config(srv.base_url, "scripted-model")
        install = subprocess.run([sys.executable, "-m", "replaykit", "hermes", "install", "--hermes-home", str(sandbox.home)],
                                 env={**os.environ, "PYTHONPATH": sandbox.env["PYTHONPATH"]}, capture_output=True, text=True,
                                 timeout=60)
        assert install.returncode == 0, install.stderr
        proc = sandbox.run_cli(["chat", "-Q", "--ignore-rules", "-q", "Please echo hello", "--toolsets", "todo"])
        reqs = srv.llm_requests
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "All done" in proc.stdout
    run = only_run(sandbox.store)
    assert_requests_match(run, [r.body for r in reqs])
    assert_tool_calls_match(run, [r.reply for r in reqs])
    assert tool_names(run) == [todo_name()]
    # The CLI fires on_session_finalize at exit: the run is closed with a run_end.
    assert run.events[-1].kind == "run_end" and run.status == "completed"
    assert run.header.platform == "cli"
