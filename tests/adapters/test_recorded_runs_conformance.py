"""Runs recorded by the HTTP-level adapters behave like any run: validate, replay, branch, diff, export,
inspect.

One run per source (raw openai Chat, openai Responses, PydanticAI, LangGraph), each put through the
public command line the way a Hermes run is."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from replaykit.adapters.cassette import Cassette
from replaykit.core.trace.run import Run
from replaykit.testing.scripted_server import ScriptedServer, ToolCall, sequence_policy
from tests.adapters.recorder_support import FINAL, chat_agent, cli, responses_agent, weather_policy

openai = pytest.importorskip("openai")


def _pydantic_ai(url: str) -> str:
    pytest.importorskip("pydantic_ai")
    from tests.adapters.test_pydantic_ai_recorder import make_agent

    return str(make_agent(url).run_sync("Weather in Paris?").output)


def _langgraph(url: str) -> str:
    pytest.importorskip("langgraph")
    from tests.adapters.test_langgraph_recorder import build_graph, run_graph

    return run_graph(build_graph(url))[0][-1]


SOURCES: dict[str, tuple[Callable[[str], str], str]] = {
    "openai-chat": (lambda url: chat_agent(url, stream=True), "weather"),
    "openai-responses": (responses_agent, "weather"),
    "pydantic-ai": (_pydantic_ai, "get_weather"),
    "langgraph": (_langgraph, "weather"),
}


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_recorded_run_replays_branches_diffs_and_exports(tmp_path: Path, source: str) -> None:
    agent, tool = SOURCES[source]
    path = tmp_path / f"{source}.jsonl"
    policy = sequence_policy([ToolCall(tool, {"city": "Paris"})], final_text=FINAL) if tool != "weather" \
        else weather_policy()
    with ScriptedServer(policy) as srv, Cassette(path, "once", framework=source):
        assert agent(srv.base_url) == FINAL
    run = Run.load(path)
    assert [s.kind for s in run.steps][:3] == ["llm", "tool", "llm"]

    code, out, _ = cli("validate", str(path), "--json")
    assert code == 0 and json.loads(out)["valid"]
    code, out, _ = cli("replay", str(path), "--json")
    assert code == 0 and json.loads(out)["counters"]["provider_calls"] == 0
    store = tmp_path / "store"
    code, out, err = cli("branch", str(path), "--at", "1", "--result", '{"temp_c": -5}', "--store", str(store),
                         "--json")
    assert code == 0, err
    branch_id = json.loads(out)["run_id"]
    code, out, _ = cli("diff", str(path), branch_id, "--store", str(store), "--json")
    first = json.loads(out)["first_divergence"]
    assert code == 1 and first["step"] == 1 and first["cause"] == "edit"
    code, out, _ = cli("inspect", str(path), "--json")
    assert code == 0 and json.loads(out)["run_id"] == run.run_id
    script = tmp_path / "run.py"
    code, _, err = cli("export", str(path), "--format", "python", "-o", str(script))
    assert code == 0, err
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert FINAL in done.stdout
