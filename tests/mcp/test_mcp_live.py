"""``replaykit mcp --allow-live``: a live play of a branch against the scripted provider on 127.0.0.1,
with the key from the variable the operator named; the key never reaches the client. And the command
line's refusals (one line, exit 2) for live flags that do not fit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from replaykit.testing.script import sequence_policy
from replaykit.testing.scripted_server import ScriptedServer
from tests.mcp.support import (
    FAILING_RUN,
    ROOT,
    SECRET,
    failing_store,
    server_args,
    server_env,
    stdio_params,
    wire_text,
)

pytest.importorskip("mcp")

#: The live play's key: in the server's environment only (the recorded run does not hold this one).
LIVE_VAR, LIVE_KEY = "RK_TEST_LIVE_KEY", "sk-live-5e1d7c9b3a2f4e6d8c0b1a9f"

from mcp import Client  # noqa: E402


def test_live_play_only_with_allow_live(tmp_path: Path) -> None:
    store = tmp_path / "store"
    failing_store(store)
    texts: list[str] = []
    with ScriptedServer(sequence_policy([], final_text="Saved the summary to out.txt.")) as provider:
        flags = ("--allow-live", "--base-url", provider.base_url, "--model", "scripted-model",
                 "--api-key-env", LIVE_VAR)

        async def session() -> None:
            params = stdio_params(store, *flags, **{LIVE_VAR: LIVE_KEY})
            async with Client(params, read_timeout_seconds=120) as client:
                made = await client.call_tool("branch_run", {"run_id": FAILING_RUN, "at": 4, "result": "written"})
                assert not made.is_error
                branch_id = made.structured_content["run_id"]  # type: ignore[index]
                played = await client.call_tool("play_run", {"run_id": branch_id, "live": True})
                texts.append(wire_text(played))
                assert not played.is_error, played.content
                doc = played.structured_content or {}
                assert doc["live"] is True and doc["status"] == "completed"
                assert doc["counters"]["provider_calls"] >= 1
                assert doc["final_answer"] == "Saved the summary to out.txt."
                diff = await client.call_tool("diff_runs", {"run_a": FAILING_RUN, "run_b": doc["run_id"]})
                texts.append(wire_text(diff))
                assert diff.structured_content["first_divergence"]["cause"] == "edit"  # type: ignore[index]

        anyio.run(session)
        assert provider.llm_requests, "the live play called no provider"
    assert not [t for t in texts if LIVE_KEY in t or SECRET in t]
    # the key was used (the engine read it from the named variable) but no file of the store holds it
    assert sum(1 for p in store.rglob("*.jsonl")) == 3
    for path in store.rglob("*"):
        if path.is_file():
            assert LIVE_KEY.encode() not in path.read_bytes(), path


@pytest.mark.parametrize(("flags", "message"), [
    (("--base-url", "http://127.0.0.1:9/v1"), "add --allow-live"),
    (("--allow-live",), "--allow-live needs --base-url URL and --model NAME"),
    (("--allow-live", "--base-url", "ftp://x", "--model", "m"), "--base-url must be an http(s) URL"),
    (("--allow-live", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--api-key-env", "RK_UNSET_VAR"),
     "RK_UNSET_VAR: that environment variable is not set"),
    (("--port", "8000"), "--port applies to --http"),
    (("--http", "--port", "70000"), "not a TCP port"),
])
def test_bad_flags_are_one_line_exit_2(tmp_path: Path, flags: tuple[str, ...], message: str,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    from replaykit.cli.main import main

    assert main(["mcp", "--store", str(tmp_path), *flags]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_the_command_starts_and_answers(tmp_path: Path) -> None:
    """The installed-style entry point: ``python -m replaykit.cli.main mcp`` answers an initialize."""
    import json

    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    out = subprocess.run([sys.executable, *server_args(tmp_path)], input=json.dumps(init) + "\n",
                         capture_output=True, text=True, env={**server_env(), "PATH": "/usr/bin:/bin"}, cwd=ROOT,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout.splitlines()[0])
    assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"] == "replaykit"


def test_without_the_sdk_the_command_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from replaykit.cli.main import main

    monkeypatch.setitem(sys.modules, "mcp.server.mcpserver", None)  # as if the extra were not installed
    assert main(["mcp", "--store", str(tmp_path)]) == 2
    assert "pip install 'replaykit[mcp]'" in capsys.readouterr().err
