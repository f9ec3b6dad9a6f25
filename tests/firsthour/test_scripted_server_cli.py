"""Issue 28, item 11: the scripted server is a user tool: ``--help`` describes the reply script, and
``--loop`` replays a script for every run (without it, running out is said on stderr)."""

from __future__ import annotations

import json
import subprocess
import urllib.request
from pathlib import Path

from tests.conftest import PYTHON, subprocess_env

SCRIPT = [{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}, {"text": "Sunny."}]


def _ask(base_url: str) -> dict:
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "Weather?"}]}).encode()
    request = urllib.request.Request(f"{base_url}/chat/completions", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())["choices"][0]["message"]


def _serve(script: Path, *flags: str) -> subprocess.Popen[str]:
    return subprocess.Popen([PYTHON, "-m", "replaykit.testing.scripted_server", "--script", str(script), *flags],
                            env=subprocess_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_help_describes_the_script_format() -> None:
    done = subprocess.run([PYTHON, "-m", "replaykit.testing.scripted_server", "--help"], env=subprocess_env(),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    for word in ("tool_calls", "arguments", "fault", "--loop", "/v1/chat/completions", "JSON list"):
        assert word in done.stdout, word


def test_loop_replays_the_script_and_exhaustion_is_said(tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(SCRIPT))
    looped = _serve(script, "--loop")
    try:
        assert looped.stdout is not None
        base_url = looped.stdout.readline().strip()
        names = [(_ask(base_url).get("tool_calls") or [{"function": {"name": None}}])[0]["function"]["name"]
                 for _ in range(4)]
        assert names == ["get_weather", None, "get_weather", None]
    finally:
        looped.terminate()
        looped.communicate(timeout=10)
    once = _serve(script)
    try:
        assert once.stdout is not None
        base_url = once.stdout.readline().strip()
        for _ in range(3):
            _ask(base_url)
    finally:
        once.terminate()
        _, err = once.communicate(timeout=10)
    assert "used up" in err and "--loop" in err


def test_a_bad_script_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"text": "not a list"}')
    done = subprocess.run([PYTHON, "-m", "replaykit.testing.scripted_server", "--script", str(bad)],
                          env=subprocess_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "JSON list" in done.stderr and "Traceback" not in done.stderr


def test_per_turn_gives_every_conversation_the_script_from_the_top(tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(SCRIPT))
    server = _serve(script, "--per-turn")
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        first = [_ask(base_url) for _ in range(3)]  # three fresh conversations: each asks for the tool first
        assert all(m["tool_calls"][0]["function"]["name"] == "get_weather" for m in first)
        body = json.dumps({"model": "m", "messages": [
            {"role": "user", "content": "Weather?"}, {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "sunny"}]}).encode()
        request = urllib.request.Request(f"{base_url}/chat/completions", body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            assert json.loads(response.read())["choices"][0]["message"]["content"] == "Sunny."
    finally:
        server.terminate()
        server.communicate(timeout=10)
