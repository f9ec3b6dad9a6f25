"""``replaykit export RUN... --format pydantic-ai -o DIR``: the port project and its conformance suite.

For every Hermes fixture and for generated runs: the port is written, its suite passes as exported,
passes after a correct hand-written tool body (and says the tool ran for real), fails naming the
recording, turn, step, tool, expected and actual value after a wrong one. Heavier checks (``pytest DIR``
in a subprocess, a live run against the scripted server, the agent with replaykit blocked) are slow.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from replaykit.cli.main import main
from tests.exporters import port_runs
from tests.exporters.port_support import (
    FIXTURES,
    HERMES_FIXTURES,
    ROOT,
    export,
    run_pytest,
    set_body,
    suite_failures,
)

ECHO = '    import json\n    return json.dumps({"echo": text.upper()})\n'
ECHO_WRONG = '    import json\n    return json.dumps({"echo": text.lower()})\n'


@pytest.mark.parametrize("name", HERMES_FIXTURES)
def test_hermes_fixture_port_conforms_as_exported(tmp_path: Path, name: str) -> None:
    port = tmp_path / "port"
    export([FIXTURES / f"{name}.jsonl"], port)
    assert (port / "agent.py").is_file() and (port / "port.json").is_file()
    failures, drivers = suite_failures(port)
    assert failures == []
    assert drivers and all(not d.ran for d in drivers)  # every tool is a stub: answered from the recording
    assert any(d.stubbed for d in drivers)


@pytest.mark.parametrize("name", [n if n in ("two_turns", "anthropic_messages") else pytest.param(n, marks=pytest.mark.slow)
                                  for n in HERMES_FIXTURES if n != "subagent"])
def test_correct_body_passes_and_runs_for_real_wrong_body_fails(tmp_path: Path, name: str) -> None:
    port = tmp_path / "port"
    export([FIXTURES / f"{name}.jsonl"], port)
    set_body(port, "harness_echo", ECHO)
    failures, drivers = suite_failures(port)
    assert failures == []
    assert any("harness_echo" in d.ran for d in drivers)

    text = (port / "agent_tools.py").read_text(encoding="utf-8").replace(ECHO, ECHO_WRONG)
    (port / "agent_tools.py").write_text(text, encoding="utf-8")
    failures, _ = suite_failures(port)
    assert failures
    message = failures[0]
    assert message.startswith("conformance: recordings/") and ", turn 0 (" in message
    assert ", step " in message and "tool harness_echo" in message
    assert "expected:" in message and ("HELLO" in message or "ALPHA" in message) and "actual:" in message
    assert "Traceback" not in message


def test_subagent_becomes_a_nested_agent_with_its_own_recordings(tmp_path: Path) -> None:
    port = tmp_path / "port"
    summary = export([FIXTURES / "subagent.jsonl"], port)
    assert summary["subagent_runs"] == ["hermes-20261130_195854_47e295"]
    manifest = json.loads((port / "port.json").read_text(encoding="utf-8"))
    assert [r["agent"] for r in manifest["recordings"]] == ["agent", "subagent"]
    agent_py = (port / "agent.py").read_text(encoding="utf-8")
    assert "subagent = Agent(" in agent_py and "async def delegate_task(" in agent_py
    assert (port / "prompts" / "subagent.md").is_file()
    assert "delegate_task" not in (port / "agent_tools.py").read_text(encoding="utf-8")
    failures, drivers = suite_failures(port)
    assert failures == [] and len(drivers) == 2


def test_generated_runs_nested_enum_optional_unused_and_dated_prompts(tmp_path: Path) -> None:
    runs = port_runs.write_ops_runs(tmp_path / "runs")
    port = tmp_path / "port"
    summary = export(runs, port)
    assert summary["variables"] == ["date"]
    prompt = (port / "prompts" / "system.md").read_text(encoding="utf-8")
    assert prompt == "You are an ops bot. Today is {{date}}. Work in /srv/ops and keep tickets tidy."
    manifest = json.loads((port / "port.json").read_text(encoding="utf-8"))
    assert [r["variables"] for r in manifest["recordings"]] == [{"date": "2026-12-01"}, {"date": "2026-12-05"}]
    tools = (port / "agent_tools.py").read_text(encoding="utf-8")
    assert 'priority: Literal["low", "medium", "high"]' in tools
    assert "class CreateTicketAssignee(TypedDict):" in tools and "email: NotRequired[str]" in tools
    assert "labels: list[str] | None = None" in tools and 'due: str = "never"' in tools
    assert "verbose: bool = False" in tools and "def archive(reason: str)" in tools
    assert "archive`): no recording calls it" in (port / "README.md").read_text(encoding="utf-8") or \
        "no recording calls it" in (port / "README.md").read_text(encoding="utf-8")
    assert "Args:\n        title: One-line summary" in tools

    failures, drivers = suite_failures(port)
    assert failures == [] and len(drivers) == 3  # two turns + one turn

    for tool, body in port_runs.CORRECT_BODIES.items():
        set_body(port, tool, body)
    failures, drivers = suite_failures(port)
    assert failures == []
    assert {"create_ticket", "lookup"} <= {name for d in drivers for name in d.ran}

    tools = (port / "agent_tools.py").read_text(encoding="utf-8")
    (port / "agent_tools.py").write_text(tools.replace(port_runs.CORRECT_BODIES["lookup"], port_runs.WRONG_BODIES["lookup"]),
                                         encoding="utf-8")
    failures, _ = suite_failures(port)
    assert failures and all("tool lookup" in f for f in failures)
    assert any("recordings/ops-1.jsonl, turn 1 ('And look up ticket 18.')" in f for f in failures)
    assert any('"status": "closed"' in f and '"status": "open"' in f for f in failures)


def test_runs_of_different_agents_conflict_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = port_runs.write_ops_runs(tmp_path / "runs")
    other = tmp_path / "runs" / "other.jsonl"
    original = port_runs.TOOLS[1]
    try:
        port_runs.TOOLS[1] = original.model_copy(update={"parameters": {"type": "object", "properties": {
            "key": {"type": "string"}}}})
        port_runs.write_ops_run(other, "other", "2026-12-02", [("hi", [], "hello")])
    finally:
        port_runs.TOOLS[1] = original
    code = main(["export", str(runs[0]), str(other), "--format", "pydantic-ai", "-o", str(tmp_path / "p")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "'lookup'" in err and "ops-1" in err and "other" in err
    assert not (tmp_path / "p").exists()


def test_destination_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = str(FIXTURES / "two_turns.jsonl")
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine", encoding="utf-8")
    assert main(["export", run, "--format", "pydantic-ai", "-o", str(busy)]) == 2
    assert "not a replaykit port" in capsys.readouterr().err
    assert main(["export", run, "--format", "pydantic-ai", "-o", str(busy), "--force"]) == 0
    assert (busy / "notes.txt").read_text(encoding="utf-8") == "mine" and (busy / "agent.py").is_file()

    port = tmp_path / "port"
    assert main(["export", run, "--format", "pydantic-ai", "-o", str(port)]) == 0
    set_body(port, "harness_echo", ECHO)  # the user's edit survives a re-export
    assert main(["export", run, "--format", "pydantic-ai", "-o", str(port)]) == 0
    assert "kept your edited agent_tools.py" in capsys.readouterr().out
    assert ECHO in (port / "agent_tools.py").read_text(encoding="utf-8")
    assert (port / "agent_tools.py.new").is_file()
    assert main(["export", run, "--format", "pydantic-ai", "-o", str(port), "--force"]) == 0
    assert ECHO not in (port / "agent_tools.py").read_text(encoding="utf-8")

    single = tmp_path / "agent.py"  # one run to a .py path: the single-file module stays
    assert main(["export", run, "--format", "pydantic-ai", "-o", str(single)]) == 0
    assert single.is_file() and "DATA" in single.read_text(encoding="utf-8")


def test_agent_code_holds_no_recorded_data_and_no_replaykit(tmp_path: Path) -> None:
    small, large = tmp_path / "small", tmp_path / "large"
    runs = port_runs.write_ops_runs(tmp_path / "runs")
    export(runs[:1], small)
    export(runs, large)
    for port in (small, large):
        agent = (port / "agent.py").read_text(encoding="utf-8")
        assert "replaykit" not in agent.replace("replaykit export", "")
        assert "Login page broken" not in agent and "Docs typo" not in agent
        assert "replaykit" not in (port / "agent_tools.py").read_text(encoding="utf-8").replace(
            "replaykit play", "")
    # more recordings do not change the code: the prompt's template values (the recorded dates) live in
    # prompts/system.variables.json, read by agent.py's one prompt reader
    assert (small / "agent.py").read_bytes() == (large / "agent.py").read_bytes()
    agent = (large / "agent.py").read_text(encoding="utf-8")
    assert "2026-12-01" not in agent and "2026-12-05" not in agent
    assert not (small / "prompts" / "system.variables.json").exists()
    values = json.loads((large / "prompts" / "system.variables.json").read_text(encoding="utf-8"))
    assert values == {"date": {"today": "%Y-%m-%d"}}  # a live run gets today's date
    assert "def prompt_variables(name: str) -> dict[str, str]:" in agent


@pytest.mark.slow  # loads the redaction engine
def test_redacted_recordings(tmp_path: Path) -> None:
    port = tmp_path / "port"
    export([FIXTURES / "two_turns.jsonl"], port, redact=True)
    manifest = json.loads((port / "port.json").read_text(encoding="utf-8"))
    assert manifest["redacted"] is True
    copy = (port / manifest["recordings"][0]["file"]).read_text(encoding="utf-8")
    assert '"relation":"redaction"' in copy
    failures, _ = suite_failures(port)
    assert failures == []


# ----------------------------------------------------------------------------------------- slow

@pytest.mark.slow
def test_pytest_dir_as_a_user_runs_it(tmp_path: Path) -> None:
    port = tmp_path / "port"
    export([FIXTURES / "two_turns.jsonl"], port)
    proc = run_pytest(port)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout and "harness_echo: not ported yet" in proc.stdout
    set_body(port, "harness_echo", ECHO)
    proc = run_pytest(port)
    assert proc.returncode == 0 and "harness_echo: ran for real" in proc.stdout
    text = (port / "agent_tools.py").read_text(encoding="utf-8").replace(ECHO, ECHO_WRONG)
    (port / "agent_tools.py").write_text(text, encoding="utf-8")
    proc = run_pytest(port)
    assert proc.returncode == 1
    assert "tool harness_echo: the tool's result differs" in proc.stdout
    assert "replaykit/exporters" not in proc.stdout and "Traceback" not in proc.stdout


_BLOCK_REPLAYKIT = """
import os, runpy, sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "replaykit" or name.startswith("replaykit."):
            raise ImportError("replaykit is blocked in this test")
        return None
sys.meta_path.insert(0, Block())
sys.path[:] = [p for p in sys.path if "wt-" not in p and not p.endswith("/work/main")]
sys.path.insert(0, os.getcwd())  # as `python agent.py` puts the script's directory first
sys.argv = ["agent.py", *sys.argv[1:]]
runpy.run_path("agent.py", run_name="__main__")
"""


def _live(port: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-I", "-c", _BLOCK_REPLAYKIT, *args], cwd=port, capture_output=True,
                          text=True, env=env, timeout=300)


@pytest.mark.slow
def test_live_run_sends_recorded_prompt_tools_and_settings_without_replaykit(tmp_path: Path) -> None:
    from replaykit.testing.script import sequence_policy
    from replaykit.testing.scripted_server import ScriptedServer

    runs = port_runs.write_ops_runs(tmp_path / "runs")
    port = tmp_path / "port"
    export(runs, port)
    with ScriptedServer(sequence_policy([], final_text="Nothing to do.")) as server:
        env = {"PATH": os.environ.get("PATH", ""), "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": server.base_url,
               "HOME": str(tmp_path)}
        proc = _live(port, env=env)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert "Nothing to do." in proc.stdout
        body = server.llm_requests[0].body
    assert server.llm_requests[0].path.endswith("/chat/completions")
    assert body["model"] == "desk-model"
    import datetime

    system = body["messages"][0]
    assert system["role"] == "system"
    assert system["content"] == port_runs.PROMPT.format(date=datetime.date.today().isoformat())
    assert body["messages"][1] == {"role": "user",
                                   "content": "File a ticket for the broken login page, high priority, for Ana."}
    declared = {t["function"]["name"]: t["function"] for t in body["tools"]}
    assert set(declared) == {t.name for t in port_runs.TOOLS}
    for tool in port_runs.TOOLS:
        assert declared[tool.name]["parameters"] == tool.parameters
        assert declared[tool.name]["description"] == tool.description
    # ModelSettings(max_tokens=...): PydanticAI sends it as Chat Completions' max_completion_tokens
    assert body["max_completion_tokens"] == 2048 and body["temperature"] == 0.2
    assert body["parallel_tool_calls"] is False and body["tool_choice"] == "auto"


@pytest.mark.slow
def test_live_run_of_a_hermes_port_prompt_override(tmp_path: Path) -> None:
    from replaykit.testing.script import sequence_policy
    from replaykit.testing.scripted_server import ScriptedServer

    port = tmp_path / "port"
    export([FIXTURES / "two_turns.jsonl"], port)
    recorded = (port / "prompts" / "system.md").read_text(encoding="utf-8")
    with ScriptedServer(sequence_policy([], final_text="Hi.")) as server:
        env = {"PATH": os.environ.get("PATH", ""), "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": server.base_url,
               "HOME": str(tmp_path)}
        proc = _live(port, "Say hi.", "--model", "openai-chat:other-model", env=env)
        assert proc.returncode == 0, proc.stderr[-2000:]
        body = server.llm_requests[0].body
    assert body["model"] == "other-model" and body["max_completion_tokens"] == 65536
    assert body["messages"][0] == {"role": "system", "content": recorded}
    assert body["messages"][1]["content"] == "Say hi."


@pytest.mark.slow
def test_hermes_builtin_binding_runs_hermes_todo(tmp_path: Path) -> None:
    pytest.importorskip("model_tools")  # hermes-agent installed
    port = tmp_path / "port"
    export([FIXTURES / "tools_sequence.jsonl"], port)
    assert (port / "hermes_tools.py").is_file()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PORT_HERMES_TOOLS": "1"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", str(port)], cwd=port,
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "todo: ran for real" in proc.stdout


# ------------------------------------------------------------------------- real-world files (read in place)

REALWORLD = next((d / "shared" / "realworld" / "data" for d in ROOT.parents
                  if (d / "shared" / "realworld" / "data" / "MANIFEST.json").is_file()), Path("/nonexistent"))
#: real files holding tool calls (other projects' recordings): OpenAI Chat, Responses, Anthropic, OTLP
REALWORLD_WITH_TOOLS = [
    ("anthropic/pydantic-ai-test_multiple_parallel_tool_calls.json", "anthropic"),
    ("anthropic/pydantic-ai-test_anthropic_tool_with_thinking.json", "anthropic"),
    ("anthropic/openinference-anthropic-test_anthropic_instrumentation_multiple_tool_calling.json", "anthropic"),
    ("openai-chat/pydantic-ai-test_multiple_agent_tool_calls.json", "openai-chat"),
    ("openai-chat/pydantic-ai-test_openai_tool_output.json", "openai-chat"),
    ("openai-chat/pydantic-ai-test_image_url_tool_response.json", "openai-chat"),
    ("openai-responses/openinference-agent-framework-test_multiple_tools.json", "openai-responses"),
    ("otel/genai-interlingua-raw-openai-v2.in.json", "otel"),
]


@pytest.mark.slow
@pytest.mark.parametrize("path,fmt", REALWORLD_WITH_TOOLS, ids=[p for p, _ in REALWORLD_WITH_TOOLS])
def test_realworld_recording_ports_and_conforms(tmp_path: Path, path: str, fmt: str) -> None:
    if not (REALWORLD / path).is_file():
        pytest.skip(f"the real-world corpus is not beside this checkout ({REALWORLD})")
    from replaykit.adapters import import_file
    from replaykit.core.trace.run import Run
    from replaykit.core.trace.store import RunWriter

    runs = [Run(r.header, r.events) for r in import_file(REALWORLD / path, fmt)]
    with_tools = [r for r in runs if any(c.response.message.tool_calls for c in r.llm_calls())]
    assert with_tools
    trace = tmp_path / f"{with_tools[0].run_id}.jsonl"
    with RunWriter(trace, with_tools[0].header) as writer:
        for event in with_tools[0].events:
            writer.append(event)
    port = tmp_path / "port"
    export([trace], port)
    failures, drivers = suite_failures(port)
    assert failures == [] and drivers
    assert any(d.stubbed for d in drivers)


def _system_text(api_path: str, body: dict[str, Any]) -> str:
    if api_path.endswith("/messages"):
        system = body.get("system")
        return system if isinstance(system, str) else "".join(b.get("text", "") for b in system or [])
    if api_path.endswith("/responses"):
        if body.get("instructions"):
            return str(body["instructions"])
        first = body["input"][0]
        content = first["content"]
        return content if isinstance(content, str) else "".join(c.get("text", "") for c in content)
    return str(body["messages"][0]["content"])


@pytest.mark.slow
@pytest.mark.parametrize("name,path,settings", [
    ("codex_responses", "/v1/responses", {"parallel_tool_calls": True, "tool_choice": "auto",
                                          "reasoning": {"effort": "medium"}}),
    ("anthropic_messages", "/v1/messages", {"max_tokens": 128000, "tool_choice": {"type": "auto"}}),
])
def test_live_run_on_the_recorded_api(tmp_path: Path, name: str, path: str, settings: dict[str, Any]) -> None:
    from replaykit.core.trace.run import Run
    from replaykit.testing.script import sequence_policy
    from replaykit.testing.scripted_server import ScriptedServer

    if name == "anthropic_messages":
        pytest.importorskip("anthropic")
    port = tmp_path / "port"
    export([FIXTURES / f"{name}.jsonl"], port)
    run = Run.load(FIXTURES / f"{name}.jsonl")
    recorded_tools = {t.name: t for t in run.request_tools(run.llm_calls()[0].request) or []}
    with ScriptedServer(sequence_policy([], final_text="Hi.")) as server:
        env = {"PATH": os.environ.get("PATH", ""), "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": server.base_url,
               "ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": server.base_url.removesuffix("/v1"),
               "HOME": str(tmp_path)}
        proc = _live(port, "Say hi.", env=env)
        assert proc.returncode == 0, proc.stderr[-2000:]
        request = server.llm_requests[0]
    assert request.path == path and "Hi." in proc.stdout
    body = request.body
    assert _system_text(path, body) == (port / "prompts" / "system.md").read_text(encoding="utf-8")
    for key, value in settings.items():
        assert body[key] == value
    declared = {t.get("name") or t["function"]["name"]: t for t in body["tools"]}
    assert set(declared) == set(recorded_tools)
    for tool_name, tool in declared.items():
        schema = tool.get("input_schema") or tool.get("parameters") or tool.get("function", {}).get("parameters")
        assert schema == recorded_tools[tool_name].parameters


def test_a_signature_that_rejects_the_recorded_arguments_fails(tmp_path: Path) -> None:
    runs = port_runs.write_ops_runs(tmp_path / "runs")
    port = tmp_path / "port"
    export(runs, port)
    tools = port / "agent_tools.py"
    text = tools.read_text(encoding="utf-8")
    assert 'priority: Literal["low", "medium", "high"]' in text
    tools.write_text(text.replace('priority: Literal["low", "medium", "high"]', 'priority: Literal["low"]'),
                     encoding="utf-8")
    failures, _ = suite_failures(port)
    assert failures and "tool create_ticket: the port did not run the tool" in failures[0]
    assert '"priority": "high"' in failures[0]


def test_hostile_tool_and_property_names_port_and_conform(tmp_path: Path) -> None:
    from replaykit.core.trace.ir import (
        LLMResponse,
        Message,
        RunHeader,
        Source,
        TextPart,
        ToolCallPart,
        ToolSpec,
    )
    from replaykit.core.trace.recorder import Recorder
    from replaykit.core.trace.store import RunWriter

    tools = [ToolSpec(name="class", description='Say """hi""" \\ to "them"', parameters={
                 "type": "object", "properties": {"from": {"type": "string"}, "to-whom": {"type": "string"},
                                                  "n": {"type": "integer", "default": 2}}, "required": ["from"]}),
             ToolSpec(name="web.search", description="Search.\n\n    Indented.", parameters={
                 "type": "object", "properties": {"q": {"anyOf": [{"type": "string"}, {"$ref": "#/x"}]}}})]
    header = RunHeader(run_id="hostile", created_at="2026-12-01T00:00:00Z", model="m-1",
                       source=Source(framework="sample"))
    trace = tmp_path / "hostile.jsonl"
    writer = RunWriter(trace, header)
    recorder = Recorder(header, writer)
    messages = [Message(role="system", parts=[TextPart(text="S")]), Message(role="user", parts=[TextPart(text="go")])]
    calls = [ToolCallPart(id="c1", name="class", arguments={"from": "a", "to-whom": "b"}),
             ToolCallPart(id="c2", name="web.search", arguments={"q": "x"})]
    first = recorder.llm_call(messages, LLMResponse(message=Message(role="assistant", parts=calls)), tools=tools)
    results = []
    for call, result in zip(calls, ["hi b", "found x"], strict=True):
        recorder.tool_call(call.id, call.name, call.arguments, result=result, llm_call_id=first.id)
        results.append(Message(role="tool", parts=[{"type": "tool_result", "tool_call_id": call.id,  # type: ignore[list-item]
                                                    "name": call.name, "content": result}]))
    recorder.llm_call([*messages, first.response.message, *results],
                      LLMResponse(message=Message(role="assistant", parts=[TextPart(text="done")])), tools=tools)
    recorder.run_end("done")
    writer.close()
    port = tmp_path / "port"
    export([trace], port)
    text = (port / "agent_tools.py").read_text(encoding="utf-8")
    assert "def class_(n: int = 2, **extra: Any) -> str:" in text
    assert '"class": class_,' in text and '"web.search": web_search,' in text
    failures, drivers = suite_failures(port)
    assert failures == []
    assert sorted(drivers[0].stubbed) == ["class", "web.search"]
    set_body(port, "class", '    return "hi " + extra["to-whom"]\n')
    set_body(port, "web.search", '    return "found " + str(q)\n')
    failures, drivers = suite_failures(port)
    assert failures == [] and sorted(drivers[0].ran) == ["class", "web.search"]


def test_async_body_and_declared_normaliser(tmp_path: Path) -> None:
    from replaykit.exporters.port import conformance
    from replaykit.exporters.port import pydantic_ai as framework

    runs = port_runs.write_ops_runs(tmp_path / "runs")
    port = tmp_path / "port"
    export(runs, port)
    set_body(port, "lookup", '    import json, time\n    return json.dumps({"id": id, "status": "open", '
                             '**({"history": ["created"]} if verbose else {}), "at": time.time()})\n')
    text = (port / "agent_tools.py").read_text(encoding="utf-8").replace("def lookup(", "async def lookup(")
    (port / "agent_tools.py").write_text(text, encoding="utf-8")
    failures, _ = suite_failures(port)
    assert failures and '"at": ' in failures[0]  # a volatile field: differs without a normaliser

    def drop_time(result: str) -> str:
        import json

        data = json.loads(result)
        data.pop("at", None)
        return json.dumps(data)

    ran: list[str] = []
    saved = list(sys.path)
    try:
        for case in conformance.cases(port):
            ran += conformance.run_case(case, port, framework, {"lookup": drop_time}).ran
    finally:
        sys.path[:] = saved
        sys.modules.pop(conformance.TOOLS_MODULE, None)
    assert ran.count("lookup") == 2


@pytest.mark.slow
def test_live_run_that_calls_a_stub_says_which_tool_to_port(tmp_path: Path) -> None:
    from replaykit.testing.script import call, sequence_policy
    from replaykit.testing.scripted_server import ScriptedServer

    port = tmp_path / "port"
    export([FIXTURES / "two_turns.jsonl"], port)
    with ScriptedServer(sequence_policy([call("harness_echo", {"text": "hi"})])) as server:
        env = {"PATH": os.environ.get("PATH", ""), "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": server.base_url,
               "HOME": str(tmp_path)}
        proc = _live(port, "Echo hi.", env=env)
    assert proc.returncode == 1
    assert proc.stderr.strip() == "agent.py: port the harness_echo tool (in agent_tools.py)"
    set_body(port, "harness_echo", ECHO)
    with ScriptedServer(sequence_policy([call("harness_echo", {"text": "hi"})], final_text="Echoed.")) as server:
        env["OPENAI_BASE_URL"] = server.base_url
        proc = _live(port, "Echo hi.", env=env)
        sent = server.llm_requests[1].body["messages"][-1]
    assert proc.returncode == 0 and "Echoed." in proc.stdout
    assert sent["role"] == "tool" and sent["content"] == '{"echo": "HI"}'


def test_reexport_removes_a_generated_file_it_no_longer_writes(tmp_path: Path) -> None:
    """Two runs (a dated prompt: a values file), then one run into the same port: the values file the
    first export wrote goes (unedited), so a live run does not read a stale value; an edited one stays."""
    runs = port_runs.write_ops_runs(tmp_path / "runs")
    port = tmp_path / "port"
    export(runs, port)
    values = port / "prompts" / "system.variables.json"
    assert values.is_file()
    export(runs[:1], port)
    assert not values.exists() and (port / "agent.py").is_file()
    export(runs, port)
    values.write_text('{"date": "2030-01-01"}', encoding="utf-8")  # the team's edit
    export(runs[:1], port)
    assert values.read_text(encoding="utf-8") == '{"date": "2030-01-01"}'
