"""Issue 28, item 1: two tool calls are the same call when their parsed arguments are equal, wherever two
calls are compared (plan building, diff, serve matching, cassettes): one rule, ``canonical.arguments_key``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import replaykit
from replaykit.core.analysis.diff import diff_runs
from replaykit.core.analysis.message_diff import message_changes
from replaykit.core.replay import serve
from replaykit.core.trace import canonical
from replaykit.core.trace.ir import Message, TextPart, ToolCallPart
from replaykit.core.trace.store import RunStore
from tests.conftest import PYTHON, subprocess_env

SPACED = '{"city": "Paris", "units": "C"}'
COMPACT = '{"units":"C","city":"Paris"}'


def test_one_rule_for_arguments() -> None:
    assert serve.arguments_key is canonical.arguments_key
    assert canonical.arguments_key(None, SPACED) == canonical.arguments_key(None, COMPACT)
    assert canonical.arguments_key(SPACED) == canonical.arguments_key({"city": "Paris", "units": "C"})
    assert canonical.arguments_key(None, '{"city": "Rome"}') != canonical.arguments_key(None, SPACED)
    # an unparseable string is compared as it is
    assert canonical.arguments_key(None, "{oops") == canonical.arguments_key("{oops")


def _assistant(raw: str) -> Message:
    return Message(role="assistant", parts=[ToolCallPart(id="c1", name="get_weather", arguments={"city": "Paris",
                                                         "units": "C"}, raw_arguments=raw)])


def test_messages_differing_in_argument_whitespace_are_the_same() -> None:
    user = Message(role="user", parts=[TextPart(text="Weather?")])
    assert canonical.same_message(_assistant(SPACED), _assistant(COMPACT))
    assert canonical.fingerprint([user, _assistant(SPACED)]) == canonical.fingerprint([user, _assistant(COMPACT)])
    assert message_changes([user, _assistant(SPACED)], [user, _assistant(COMPACT)]) == []
    other = _assistant('{"city": "Rome"}')
    assert not canonical.same_message(_assistant(SPACED), other)
    assert message_changes([user, _assistant(SPACED)], [user, other])


pytest.importorskip("pydantic_ai")
from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.models.openai import OpenAIChatModel  # noqa: E402
from pydantic_ai.providers.openai import OpenAIProvider  # noqa: E402

from replaykit.testing.scripted_server import ScriptedServer, call, sequence_policy, text  # noqa: E402


def _record(run_id: str, raw_arguments: str, answer: str = "Sunny, 21 C.") -> str:
    """A real PydanticAI agent recorded with ``replaykit.record``: the scripted provider writes the call's
    arguments as ``raw_arguments``; PydanticAI sends them back compact in the next request."""
    with ScriptedServer(sequence_policy([call("get_weather", raw_arguments), text(answer)])) as srv:
        import openai

        client = openai.AsyncOpenAI(base_url=srv.base_url, api_key="sk-test", max_retries=0)
        agent: Agent[None, str] = Agent(OpenAIChatModel("scripted-model", provider=OpenAIProvider(openai_client=client)))

        @agent.tool_plain
        def get_weather(city: str, units: str = "C") -> str:
            return f"{city}: sunny, 21 {units}"

        with replaykit.record(run_id):
            assert agent.run_sync("What is the weather in Paris?").output == answer
    return run_id


def test_pydantic_ai_export_of_whitespace_arguments_runs_to_the_answer(tmp_path: Path) -> None:
    run_id = _record("pai-spaced", SPACED)
    out = tmp_path / "agent.py"
    cli = subprocess.run([PYTHON, "-m", "replaykit.cli.main", "export", run_id, "--format", "pydantic-ai", "-o", str(out)],
                         env=subprocess_env(), capture_output=True, text=True, timeout=120)
    assert cli.returncode == 0, cli.stderr
    agent = subprocess.run([PYTHON, str(out)], env=subprocess_env(), capture_output=True, text=True, timeout=120,
                           cwd=tmp_path)
    assert agent.returncode == 0, agent.stderr[-2000:]
    assert agent.stdout.strip().splitlines()[-1] == "Sunny, 21 C."
    assert "Traceback" not in agent.stderr


def test_diff_of_runs_differing_only_in_argument_whitespace_is_clean(tmp_path: Path) -> None:
    a, b = _record("ws-a", SPACED), _record("ws-b", COMPACT)
    store = RunStore()
    result = diff_runs(store.load(a), store.load(b))
    assert result.equal, [d.field for d in result.differences]
    cli = subprocess.run([PYTHON, "-m", "replaykit.cli.main", "diff", a, b, "--html", str(tmp_path / "d.html")],
                         env=subprocess_env(), capture_output=True, text=True, timeout=120)
    assert cli.returncode == 0, cli.stdout + cli.stderr
    assert "[-" not in (tmp_path / "d.html").read_text() and "<del>" not in (tmp_path / "d.html").read_text()
    # and a real argument change is still a difference
    c = _record("ws-c", '{"city": "Rome", "units": "C"}')
    assert subprocess.run([PYTHON, "-m", "replaykit.cli.main", "diff", a, c], env=subprocess_env(),
                          capture_output=True, text=True, timeout=120).returncode == 1
