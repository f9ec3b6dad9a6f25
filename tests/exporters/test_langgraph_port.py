"""``replaykit export RUN... --format langgraph -o DIR``: the LangGraph port and its conformance suite.

For every Hermes fixture, a selection of real-world files with tool calls and generated runs (nested
object and enum parameters, optional arguments, a tool no run calls, two runs whose prompts differ in
the date): the port is written, is the graph a LangGraph user writes (``@tool`` tools, a model node on
``init_chat_model(...).bind_tools``, ``ToolNode``, ``tools_condition``, ``StateGraph(MessagesState)``), its
suite passes as exported, passes after a correct tool body (saying it ran for real) and fails naming
recording, turn, step, tool, expected and actual after a wrong one. Slow: ``pytest DIR`` in a subprocess,
live runs against the scripted server with replaykit blocked, a checkpointed two-turn conversation.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph")
pytest.importorskip("langchain")
pytest.importorskip("langchain_openai")

from replaykit.core.trace.run import Run
from replaykit.core.trace.store import write_run_file
from tests.exporters import port_runs
from tests.exporters.port_support import (
    FIXTURES,
    HERMES_FIXTURES,
    export,
    run_pytest,
    set_body,
    suite_failures,
)
from tests.exporters.test_port_project import _BLOCK_REPLAYKIT

ECHO = '    import json\n    return json.dumps({"echo": text.upper()})\n'
ECHO_WRONG = '    import json\n    return json.dumps({"echo": text.lower()})\n'
LG = "langgraph"

# ``../shared/realworld/data`` from the project root (read where it lies; never copied)
REALWORLD = next((d / "shared" / "realworld" / "data" for d in Path(__file__).resolve().parents[2].parents
                  if (d / "shared" / "realworld" / "data" / "MANIFEST.json").is_file()), None)
#: real-world recordings with tool calls: every API, parallel calls, thinking, tools never declared, a
#: recording that stops after a tool step (the heavier half is marked slow)
REALWORLD_FILES = [
    ("openai-chat/pydantic-ai-test_multiple_agent_tool_calls.json", "openai-chat", False),
    ("openai-responses/openinference-agent-framework-test_multiple_tools.json", "openai-responses", False),
    ("anthropic/pydantic-ai-test_multiple_parallel_tool_calls.json", "anthropic", False),
    ("otel/genai-interlingua-raw-openai-v2.in.json", "otel", False),
    ("openai-chat/otelcontrib-openai-v2-test_chat_completion_tool_calls_with_content.json", "openai-chat", True),
    ("openai-chat/pydantic-ai-test_compatible_api_with_tool_calls_without_id.json", "openai-chat", True),
    ("openai-chat/pydantic-ai-test_openai_tool_output.json", "openai-chat", True),
    ("openai-chat/pydantic-ai-test_image_url_tool_response.json", "openai-chat", True),
    ("openai-responses/otelcontrib-openai-v2-test_responses_create_captures_tool_call_content.json",
     "openai-responses", True),
    ("anthropic/pydantic-ai-test_anthropic_tool_with_thinking.json", "anthropic", True),
    ("anthropic/openinference-anthropic-test_anthropic_instrumentation_multiple_tool_calling.json", "anthropic", True),
    ("anthropic/otelcontrib-botocore-test_invoke_model_with_content_tool_call-anthropic.claude.json", "anthropic",
     True),
    ("otel/agentevals-kagent-tempo-batches.json", "otel", True),
]

def _import_agent(port: Path) -> Any:
    """The port's agent.py imported as a module (its directory on sys.path, as `python agent.py` has it)."""
    import importlib.util

    sys.path.insert(0, str(port))
    try:
        spec = importlib.util.spec_from_file_location("lg_port_agent_under_test", port / "agent.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(port))
        sys.modules.pop("agent_tools", None)


def _port(tmp_path: Path, sources: list[Path]) -> Path:
    port = tmp_path / "port"
    export(sources, port, LG)
    return port


@pytest.mark.parametrize("name", HERMES_FIXTURES)
def test_hermes_fixture_port_conforms_as_exported(tmp_path: Path, name: str) -> None:
    port = _port(tmp_path, [FIXTURES / f"{name}.jsonl"])
    failures, drivers = suite_failures(port, LG)
    assert failures == []
    assert drivers and all(not d.ran for d in drivers)  # every tool is a stub: answered from the recording
    assert any(d.stubbed for d in drivers)


@pytest.mark.parametrize("name", [n for n in HERMES_FIXTURES if n != "subagent"])
def test_correct_body_passes_and_runs_for_real_wrong_body_fails(tmp_path: Path, name: str) -> None:
    port = _port(tmp_path, [FIXTURES / f"{name}.jsonl"])
    set_body(port, "harness_echo", ECHO)
    failures, drivers = suite_failures(port, LG)
    assert failures == []
    assert any("harness_echo" in d.ran for d in drivers)

    text = (port / "agent_tools.py").read_text(encoding="utf-8").replace(ECHO, ECHO_WRONG)
    (port / "agent_tools.py").write_text(text, encoding="utf-8")
    failures, _ = suite_failures(port, LG)
    assert failures
    first = failures[0]
    assert first.startswith("conformance: recordings/") and ", turn 0 (" in first and ", step " in first
    assert "tool harness_echo: the tool's result differs from the recorded one" in first
    assert "expected:" in first and "actual:" in first and "Traceback" not in first
    assert "HELLO" in first or "ALPHA" in first


def test_agent_is_the_graph_a_langgraph_user_writes(tmp_path: Path) -> None:
    port = _port(tmp_path, [FIXTURES / "two_turns.jsonl"])
    agent = (port / "agent.py").read_text(encoding="utf-8")
    tree = ast.parse(agent)
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert {"init_chat_model", "tool", "StateGraph", "MessagesState", "ToolNode", "tools_condition", "TOOLS"} <= imported
    for piece in ("init_chat_model(model, **", ".bind_tools(tools, **bind)", "StateGraph(MessagesState)",
                  "ToolNode(tools)", 'add_conditional_edges("model", tools_condition)',
                  "compile(checkpointer=checkpointer)", "SystemMessage(system_prompt)"):
        assert piece in agent, piece
    assert 'SETTINGS: dict[str, Any] = {"max_tokens": 65536}' in agent
    assert 'MODEL = os.environ.get("PORT_MODEL", "openai:scripted-model")' in agent
    assert "replaykit" not in agent.replace("replaykit export", "")
    assert "python agent.py --model openai:gpt-4o-mini" in (port / "README.md").read_text(encoding="utf-8")
    # the typed tools live in the framework-neutral module (keyword arguments)
    tools = (port / "agent_tools.py").read_text(encoding="utf-8")
    assert "def harness_echo(text: str) -> str:" in tools
    assert "def todo(todos: list[TodoTodosItem] | None = None, merge: bool = False) -> str:" in tools


def test_subagent_is_a_subgraph_with_its_own_recordings(tmp_path: Path) -> None:
    port = _port(tmp_path, [FIXTURES / "subagent.jsonl"])
    manifest = json.loads((port / "port.json").read_text(encoding="utf-8"))
    assert [r["agent"] for r in manifest["recordings"]] == ["agent", "subagent"]
    agent = (port / "agent.py").read_text(encoding="utf-8")
    assert "def build_subagent(" in agent and "def delegate_task_tool(subagent: Any) -> BaseTool:" in agent
    assert "tools.append(delegate_task_tool(build_subagent(subagent_model)))" in agent
    assert 'prompt("subagent", variables)' in agent and (port / "prompts" / "subagent.md").is_file()
    failures, drivers = suite_failures(port, LG)
    assert failures == [] and len(drivers) == 2
    # the subagent's case drives the subagent's graph: its todo call is answered from its own recording
    assert drivers[1].case.agent == "subagent" and drivers[1].stubbed == ["todo"]


def test_generated_runs_typed_tools_dated_prompt_and_bodies(tmp_path: Path) -> None:
    runs = port_runs.write_ops_runs(tmp_path / "runs")
    port = tmp_path / "port"
    summary = export(runs, port, LG)
    assert summary["variables"] == ["date"] and summary["tools"] == ["create_ticket", "lookup", "archive"]
    agent = (port / "agent.py").read_text(encoding="utf-8")
    assert 'SETTINGS: dict[str, Any] = {"max_tokens": 2048, "temperature": 0.2}' in agent
    assert 'BIND_SETTINGS: dict[str, Any] = {"parallel_tool_calls": False, "tool_choice": "auto"}' in agent
    # the template's values live beside the prompt, read by the one reader every port carries: no
    # recorded value in the code, and a live run gets today's date
    assert "2026-12-01" not in agent and "2026-12-05" not in agent
    assert "Login page broken" not in agent and "Docs typo" not in agent  # no recorded data in the code
    assert json.loads((port / "prompts" / "system.variables.json").read_text(encoding="utf-8")) == {
        "date": {"today": "%Y-%m-%d"}}
    module = _import_agent(port)
    assert module.prompt("system") == ("You are an ops bot. Today is " + date.today().isoformat()
                                       + ". Work in /srv/ops and keep tickets tidy.")
    (port / "prompts" / "system.variables.json").write_text('{"date": "2030-01-02"}', encoding="utf-8")
    assert "Today is 2030-01-02." in module.prompt("system")  # the team edits the value, not the code
    assert "Today is 2026-12-05." in module.prompt("system", {"date": "2026-12-05"})  # the suite's values
    tools = (port / "agent_tools.py").read_text(encoding="utf-8")
    assert 'priority: Literal["low", "medium", "high"]' in tools and "def archive(reason: str)" in tools

    failures, drivers = suite_failures(port, LG)
    assert failures == [] and len(drivers) == 3
    for tool, body in port_runs.CORRECT_BODIES.items():
        set_body(port, tool, body)
    failures, drivers = suite_failures(port, LG)
    assert failures == []
    assert {"create_ticket", "lookup"} <= {name for d in drivers for name in d.ran}

    tools = (port / "agent_tools.py").read_text(encoding="utf-8")
    (port / "agent_tools.py").write_text(
        tools.replace(port_runs.CORRECT_BODIES["lookup"], port_runs.WRONG_BODIES["lookup"]), encoding="utf-8")
    failures, _ = suite_failures(port, LG)
    assert len(failures) == 2 and all("tool lookup: the tool's result differs" in f for f in failures)
    assert any("recordings/ops-1.jsonl, turn 1 ('And look up ticket 18.'), step 0" in f for f in failures)
    assert any('"status": "closed"' in f and '"status": "open"' in f for f in failures)


def test_agent_code_does_not_grow_with_the_recordings(tmp_path: Path) -> None:
    runs = port_runs.write_ops_runs(tmp_path / "runs")
    small, large = tmp_path / "small", tmp_path / "large"
    export(runs[:1], small, LG)
    export(runs, large, LG)
    # the same agent code for one recording or many: only prompts/ differs (a template and its values)
    assert (small / "agent.py").read_bytes() == (large / "agent.py").read_bytes()
    assert not (small / "prompts" / "system.variables.json").exists()
    assert (large / "prompts" / "system.variables.json").is_file()


@pytest.mark.skipif(REALWORLD is None, reason="the real-world corpus is not beside this checkout")
@pytest.mark.parametrize("path,fmt", [pytest.param(p, f, id=Path(p).stem, marks=[pytest.mark.slow] if slow else [])
                                      for p, f, slow in REALWORLD_FILES])
def test_realworld_recording_port_conforms(tmp_path: Path, path: str, fmt: str) -> None:
    from replaykit.adapters import import_file

    assert REALWORLD is not None
    sources = []
    for n, imported in enumerate(import_file(REALWORLD / path, fmt)):
        run = Run(imported.header, imported.events)
        if run.llm_calls() and any(c.response.message.tool_calls for c in run.llm_calls()):
            sources.append(write_run_file(tmp_path / f"run-{n}.jsonl", run.header, run.events))
    assert sources
    port = _port(tmp_path, sources[-1:])
    failures, drivers = suite_failures(port, LG)
    assert failures == [] and drivers and any(d.stubbed for d in drivers)


# ----------------------------------------------------------------------------------------- slow


@pytest.mark.slow
def test_pytest_dir_as_a_user_runs_it(tmp_path: Path) -> None:
    port = _port(tmp_path, [FIXTURES / "two_turns.jsonl"])
    proc = run_pytest(port)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout and "harness_echo: not ported yet" in proc.stdout
    set_body(port, "harness_echo", ECHO)
    proc = run_pytest(port)
    assert proc.returncode == 0 and "harness_echo: ran for real" in proc.stdout, proc.stdout
    text = (port / "agent_tools.py").read_text(encoding="utf-8").replace(ECHO, ECHO_WRONG)
    (port / "agent_tools.py").write_text(text, encoding="utf-8")
    proc = run_pytest(port)
    assert proc.returncode == 1
    assert "tool harness_echo: the tool's result differs" in proc.stdout
    assert "replaykit/exporters" not in proc.stdout and "Traceback" not in proc.stdout


def _live(port: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-I", "-c", _BLOCK_REPLAYKIT, *args], cwd=port, capture_output=True,
                          text=True, env=env, timeout=300)


@pytest.mark.slow
def test_live_run_sends_recorded_prompt_tools_and_settings_without_replaykit(tmp_path: Path) -> None:
    """`python agent.py` with replaykit blocked: the first request carries the recorded system prompt
    (today's date in its template variable), the recorded tools (names and parameter schemas equal to
    the recorded ones) and the recorded settings; a ported tool runs for real in the live loop."""
    import datetime

    from replaykit.testing.script import ReplyList, call, text
    from replaykit.testing.scripted_server import ScriptedServer

    runs = port_runs.write_ops_runs(tmp_path / "runs")
    port = tmp_path / "port"
    export(runs, port, LG)
    set_body(port, "lookup", port_runs.CORRECT_BODIES["lookup"])
    with ScriptedServer(ReplyList([call("lookup", {"id": 7}), text("Ticket 7 is open.")])) as server:
        env = {"PATH": os.environ.get("PATH", ""), "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": server.base_url,
               "HOME": str(tmp_path)}
        proc = _live(port, env=env)
        requests = [r for r in server.llm_requests]
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "Ticket 7 is open."
    assert requests[0].path.endswith("/chat/completions")
    body = requests[0].body
    assert body["model"] == "desk-model"
    assert body["messages"][0] == {"role": "system",
                                   "content": port_runs.PROMPT.format(date=datetime.date.today().isoformat())}
    assert body["messages"][1] == {"role": "user",
                                   "content": "File a ticket for the broken login page, high priority, for Ana."}
    declared = {t["function"]["name"]: t["function"] for t in body["tools"]}
    assert set(declared) == {t.name for t in port_runs.TOOLS}
    for spec in port_runs.TOOLS:
        assert declared[spec.name]["parameters"] == spec.parameters
        assert declared[spec.name]["description"] == spec.description
    # max_tokens goes out as Chat Completions' max_completion_tokens (langchain-openai's choice)
    assert body.get("max_completion_tokens", body.get("max_tokens")) == 2048 and body["temperature"] == 0.2
    assert body["parallel_tool_calls"] is False and body["tool_choice"] == "auto"
    tool_message = requests[1].body["messages"][-1]
    assert tool_message["role"] == "tool" and json.loads(tool_message["content"]) == {"id": 7, "status": "open"}


@pytest.mark.slow
def test_live_prompt_and_model_override_and_an_unported_tool(tmp_path: Path) -> None:
    from replaykit.testing.script import ReplyList, call, text
    from replaykit.testing.scripted_server import ScriptedServer

    port = _port(tmp_path, [FIXTURES / "two_turns.jsonl"])
    recorded = (port / "prompts" / "system.md").read_text(encoding="utf-8")
    env_base = {"PATH": os.environ.get("PATH", ""), "OPENAI_API_KEY": "sk-test", "HOME": str(tmp_path)}
    with ScriptedServer(ReplyList([text("Hi.")])) as server:
        proc = _live(port, "Say hi.", "--model", "openai:other-model", env={**env_base, "OPENAI_BASE_URL": server.base_url})
        body = server.llm_requests[0].body
    assert proc.returncode == 0 and proc.stdout.strip() == "Hi.", proc.stderr[-2000:]
    assert body["model"] == "other-model" and body.get("max_completion_tokens", body.get("max_tokens")) == 65536
    assert body["messages"] == [{"role": "system", "content": recorded}, {"role": "user", "content": "Say hi."}]
    with ScriptedServer(ReplyList([call("harness_echo", {"text": "x"}), text("never")])) as server:
        proc = _live(port, env={**env_base, "OPENAI_BASE_URL": server.base_url})
    assert proc.returncode == 1 and "port the harness_echo tool" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_checkpointer_keeps_the_conversation_by_thread(tmp_path: Path) -> None:
    """build_agent(checkpointer=InMemorySaver()): a second turn on the same thread sends the first."""
    from replaykit.testing.script import ReplyList, text
    from replaykit.testing.scripted_server import ScriptedServer

    port = _port(tmp_path, [FIXTURES / "two_turns.jsonl"])
    script = (
        "import sys\nsys.path.insert(0, '.')\nimport agent\n"
        "from langchain_core.messages import HumanMessage\nfrom langgraph.checkpoint.memory import InMemorySaver\n"
        "graph = agent.build_agent(checkpointer=InMemorySaver())\n"
        "config = {'configurable': {'thread_id': 't1'}}\n"
        "for user in ('one', 'two'):\n"
        "    out = graph.invoke({'messages': [HumanMessage(user)]}, config)\n"
        "    print(agent.answer_of(out['messages']))\n")
    with ScriptedServer(ReplyList([text("first"), text("second")])) as server:
        env = {"PATH": os.environ.get("PATH", ""), "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": server.base_url,
               "HOME": str(tmp_path)}
        proc = subprocess.run([sys.executable, "-I", "-c", script], cwd=port, capture_output=True, text=True,
                              env=env, timeout=300)
        second = server.llm_requests[1].body["messages"]
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["first", "second"]
    assert [m["content"] for m in second[1:]] == ["one", "first", "two"]


@pytest.mark.slow
def test_the_ports_tool_module_serves_play_and_the_standalone_script(tmp_path: Path) -> None:
    """One tool-module convention: a port's agent_tools.py (which imports its neighbour hermes_tools.py)
    with a ported body is the --tools-module of `replaykit play --engine langgraph` and of the
    standalone script, unchanged."""
    from replaykit.exporters import export as export_file
    from replaykit.testing.script import ReplyList, call, text
    from replaykit.testing.scripted_server import ScriptedServer

    trace = FIXTURES / "two_turns.jsonl"
    port = _port(tmp_path, [trace])
    set_body(port, "harness_echo", ECHO)
    tools = str(port / "agent_tools.py")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    with ScriptedServer(ReplyList([call("harness_echo", {"text": "live one"}), text("done")])) as server:
        play = subprocess.run([sys.executable, "-m", "replaykit", "play", str(trace), "--engine", "langgraph",
                               "--base-url", server.base_url, "--model", "m", "--at", "0", "--tools-module", tools,
                               "--store", str(tmp_path / "s"), "--json"], capture_output=True, text=True, env=env,
                              timeout=300)
        played = [m["content"] for m in server.llm_requests[1].body["messages"] if m["role"] == "tool"]
    assert play.returncode == 0, play.stderr[-2000:]
    assert played[-1] == '{"echo": "LIVE ONE"}'
    script = tmp_path / "run.py"
    export_file(Run.load(trace), "python", script)
    with ScriptedServer(ReplyList([call("harness_echo", {"text": "live two"}), text("done")])) as server:
        proc = subprocess.run([sys.executable, str(script), "--live", "--base-url", server.base_url, "--model", "m",
                               "--quiet", "--tools-module", tools], capture_output=True, text=True, timeout=300,
                              env={"PATH": os.environ.get("PATH", "")})
        scripted = [m["content"] for m in server.llm_requests[1].body["messages"] if m["role"] == "tool"]
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert scripted[-1] == '{"echo": "LIVE TWO"}'
    assert json.loads(proc.stdout)["counters"]["tool_executions"] == 1


def test_live_run_without_a_usable_model_is_one_line(tmp_path: Path) -> None:
    port = _port(tmp_path, [FIXTURES / "anthropic_messages.jsonl"])
    assert 'MODEL = os.environ.get("PORT_MODEL", "anthropic:' in (port / "agent.py").read_text(encoding="utf-8")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}
    for args in (["--model", "nosuchprovider:x"], ["--model", "openai:m"]):  # unknown provider; no API key
        proc = _live(port, "hi", *args, env=env)
        assert proc.returncode == 2, proc.stderr[-2000:]
        assert proc.stderr.startswith("agent.py: cannot create the chat model") and "Traceback" not in proc.stderr
