"""replaykit export --format pydantic-ai: the module compiles, runs offline, reproduces the history, and
no trace content can become code."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replaykit.core.trace.ir import (
    LLMResponse,
    Message,
    RunHeader,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    Usage,
)
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.run import Run
from replaykit.engines.pydantic_ai.behaviour import behaviour_of_dump
from replaykit.exporters import export
from tests.exporters.pai_fixtures import FIXTURES

REPO = Path(__file__).resolve().parents[2]
CHECK = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("agent", sys.argv[1])
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
from pydantic_ai.messages import ModelMessagesTypeAdapter as TA
history, recorded = mod.run(), mod.recorded_history()
got = TA.dump_python(history, mode="json")
want = TA.dump_python(recorded, mode="json")
print(json.dumps({"got": got, "want": want, "same": mod.behaviour(history) == mod.behaviour(recorded)}))
"""


def _run_module(path: Path) -> subprocess.CompletedProcess[str]:
    # The generated module needs only pydantic_ai: no PYTHONPATH to replaykit.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-c", CHECK, str(path)], capture_output=True, text=True, env=env,
                          cwd=path.parent, timeout=120)


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_exported_module_runs_offline_and_reproduces_the_history(tmp_path: Path, name: str) -> None:
    run = FIXTURES[name]()
    out = tmp_path / "agent.py"
    info = export(run, "pydantic-ai", out)
    assert oct(out.stat().st_mode & 0o777) == "0o600"
    assert info["llm_calls"] == len(run.llm_calls())
    compile(out.read_text(), str(out), "exec")
    proc = _run_module(out)
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(proc.stdout.strip().splitlines()[-1])
    assert doc["same"] and comparable_json(doc["got"]) == comparable_json(doc["want"])
    assert run.final_answer in proc.stdout
    # The history holds the recorded conversation (same texts and tool results).
    texts = [p.get("content") for m in doc["got"] for p in m["parts"] if p["part_kind"] in ("text", "tool-return")]
    for message in run.conversation():
        for part in message.parts:
            if isinstance(part, TextPart) and message.role == "assistant":
                assert part.text in texts


def comparable_json(messages: list[dict]) -> list[dict]:
    """What the history did (timestamps, durations, ids and usage estimates left out)."""
    return behaviour_of_dump(messages)


def test_cli_export_writes_the_module(tmp_path: Path) -> None:
    from replaykit.core.trace.store import write_run_file

    run = FIXTURES["weather"]()
    trace = write_run_file(tmp_path / "w.jsonl", run.header, run.events)
    out = tmp_path / "agent.py"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "replaykit", "export", str(trace), "--format", "pydantic-ai",
                           "-o", str(out), "--json", "--store", str(tmp_path / "store")],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["format"] == "pydantic-ai" and out.exists()


HOSTILE = st.sampled_from([
    '"""; import os; os.system("echo pwned") #', "'''\nraise SystemExit(3)\n'''", "\\x00\\u2028\u2028\x00",
    "{DATA}", "__import__('os')", "def f():\n  pass", "\udcff"[:0] + "é\u0301", "class", "1abc", "a-b c",
])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.one_of(HOSTILE, st.text(min_size=1, max_size=20)), content=st.one_of(HOSTILE, st.text(max_size=50)))
def test_trace_content_never_becomes_code(tmp_path: Path, name: str, content: str) -> None:
    name = name.replace("\x00", "") or "t"
    rec = Recorder(RunHeader(run_id="hostile", created_at="2026-01-01T00:00:00Z", title=content))
    msgs = [Message(role="system", parts=[TextPart(text=content)]), Message(role="user", parts=[TextPart(text=content)])]
    tool = ToolSpec(name=name, description=content, parameters={"type": "object", "properties": {}})
    a1 = Message(role="assistant", parts=[ToolCallPart(id="c1", name=name, arguments={"x": content})])
    e1 = rec.llm_call(msgs, LLMResponse(message=a1, usage=Usage(input_tokens=1, output_tokens=1)), tools=[tool])
    rec.tool_call("c1", name, {"x": content}, result=content, llm_call_id=e1.id)
    a2 = Message(role="assistant", parts=[TextPart(text=content + "!")])
    rec.llm_call([*msgs, a1, Message(role="tool", parts=[])], LLMResponse(message=a2), tools=[tool])
    out = tmp_path / "agent.py"
    export(Run(rec.header, rec.events), "pydantic-ai", out, force=True)
    source = out.read_text()
    tree = ast.parse(source)
    # Exactly one string literal carries data: the argument of json.loads in DATA = ...
    data_nodes = [n for n in ast.walk(tree) if isinstance(n, ast.AnnAssign)
                  and getattr(n.target, "id", None) == "DATA"]
    assert len(data_nodes) == 1
    literal = data_nodes[0].value.args[0]  # type: ignore[union-attr]
    data = json.loads(literal.value)
    assert data["tools"][0]["name"] == name and data["tools"][0]["results"]["c1"] == content
    # Function names are plain identifiers derived safely; the module defines nothing else from the trace.
    funcs = [n.name for n in tree.body if isinstance(n, ast.AsyncFunctionDef)]
    assert len(funcs) == 1 and funcs[0].startswith("tool_") and funcs[0].isidentifier()


# ----------------------------------------------------------------- Anthropic tool results (issue 35)

HERMES = REPO / "tests" / "fixtures" / "hermes"
REALWORLD = next((d / "shared" / "realworld" / "data" for d in REPO.parents
                  if (d / "shared" / "realworld" / "data" / "MANIFEST.json").is_file()), None)


def _anthropic_runs() -> list[object]:
    cases: list[object] = [pytest.param(lambda: Run.load(HERMES / "anthropic_messages.jsonl"), id="hermes-anthropic")]
    if REALWORLD is not None:
        def realworld() -> Run:
            from replaykit.adapters import import_file

            (imported,) = import_file(REALWORLD / "anthropic" / "pydantic-ai-test_multiple_parallel_tool_calls.json",
                                      "anthropic")
            return Run(imported.header, imported.events)

        cases.append(pytest.param(realworld, id="realworld-parallel"))
    return cases


@pytest.mark.parametrize("load", _anthropic_runs())
def test_anthropic_tool_results_continue_the_agent_run(tmp_path: Path, load: Callable[[], Run]) -> None:
    """Anthropic Messages carries tool results in a ``user`` message: that is the loop's next step, not a
    new user turn. Split into one agent run per model call, the export served its three responses to the
    first agent run and then died with ``Exceeded maximum output retries`` in the second."""
    from replaykit.engines.pydantic_ai.plan import build_plan

    run = load()
    plan = build_plan(run)
    user_turns = len({i for i, m in enumerate(run.conversation()) if m.role == "user"
                      and not all(isinstance(p, ToolResultPart) for p in m.parts)})
    assert len(plan.segments) == user_turns == 1
    out = tmp_path / "agent.py"
    export(run, "pydantic-ai", out)
    proc = _run_module(out)
    assert proc.returncode == 0, proc.stderr[-2000:]
    *printed, last = proc.stdout.strip().splitlines()
    doc = json.loads(last)
    assert doc["same"] and comparable_json(doc["got"]) == comparable_json(doc["want"])
    assert "\n".join(printed).count(run.final_answer or "\0") == 1


# ----------------------------------------------------------------- porting a tool body (issue 35)

_ECHO_STUB = '''async def tool_harness_echo(ctx: Any, **arguments: Any) -> str:
    """Recorded tool DATA["tools"][0]: returns the recorded result. Replace with real code."""
    return recorded_result(0, ctx.tool_call_id)'''


def _main(path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, cwd=path.parent,
                          timeout=120)


def test_a_ported_tool_body_is_checked_against_the_record(tmp_path: Path) -> None:
    """A correct body (keyword arguments, as every replaykit tool module) conforms and is said to have run
    for real; a wrong one, or one that raises, fails with one screen naming tool, step, turn, expected and
    actual (it went unnoticed before: exit 0)."""
    run = Run.load(HERMES / "two_turns.jsonl")
    source = (tmp_path / "agent.py")
    export(run, "pydantic-ai", source)
    text = source.read_text()
    assert _ECHO_STUB in text
    bodies = {
        "correct": "async def tool_harness_echo(ctx: Any, text: str) -> str:\n    return json.dumps({'echo': text.upper()})",
        "sync": "def tool_harness_echo(ctx: Any, text: str) -> str:\n    return json.dumps({'echo': text.upper()})",
        "wrong": "async def tool_harness_echo(ctx: Any, text: str) -> str:\n    return json.dumps({'echo': text})",
        "raising": "async def tool_harness_echo(ctx: Any, text: str) -> str:\n    raise OSError('disk on fire')",
    }
    results = {}
    for name, body in bodies.items():
        path = tmp_path / f"agent_{name}.py"
        path.write_text(text.replace(_ECHO_STUB, body))
        results[name] = _main(path)
    stub = _main(source)
    assert stub.returncode == 0 and "ran for real" not in stub.stderr, stub.stderr[-2000:]
    for name in ("correct", "sync"):
        ok = results[name]
        assert ok.returncode == 0, ok.stderr[-2000:]
        assert "ran for real and matched the record: harness_echo (2 calls)" in ok.stderr
        assert ok.stdout == stub.stdout
    bad = results["wrong"]
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert bad.stderr.strip().splitlines() == [
        "error: tool 'harness_echo' does not match the record (step 1, user turn 1, call call_001)",
        "  arguments: '{\"text\":\"hello replaykit\"}'",
        "  expected:  '{\"echo\": \"HELLO REPLAYKIT\"}'",
        "  actual:    '{\"echo\": \"hello replaykit\"}'",
    ]
    boom = results["raising"]
    assert boom.returncode == 1 and "Traceback" not in boom.stderr
    assert "actual:    'Error: OSError: disk on fire'" in boom.stderr


def test_behaviour_ignores_timing_and_fields_a_later_pydantic_ai_adds() -> None:
    """PydanticAI 2.7x added ``ModelResponse.duration``: a whole-dump comparison of run() with
    recorded_history() was never equal again. Behaviour is an allow-list: unknown fields do not count,
    what the agent said and did does."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter as TA
    from pydantic_ai.messages import ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart, UserPromptPart
    from pydantic_ai.messages import TextPart as PaiText

    history = [ModelRequest(parts=[UserPromptPart(content="hi")]),
               ModelResponse(parts=[ToolCallPart(tool_name="t", args='{"a": 1}', tool_call_id="c1")]),
               ModelRequest(parts=[ToolReturnPart(tool_name="t", content="r", tool_call_id="c1")]),
               ModelResponse(parts=[PaiText(content="done")])]
    dumped = TA.dump_python(history, mode="json")
    later = json.loads(json.dumps(dumped))
    for message in later:
        message["duration"] = "PT1.5S"
        message["a_field_from_the_future"] = {"x": 1}
        message.pop("timestamp", None)
        for part in message["parts"]:
            part["timestamp"] = "2099-01-01T00:00:00Z"
            part["another_new_field"] = 3
    later[1]["parts"][0]["args"] = {"a": 1}  # the same call, arguments as an object
    assert behaviour_of_dump(later) == behaviour_of_dump(dumped)
    changed = json.loads(json.dumps(later))
    changed[2]["parts"][0]["content"] = "other"
    assert behaviour_of_dump(changed) != behaviour_of_dump(dumped)
    changed = json.loads(json.dumps(later))
    changed[1]["parts"][0]["args"] = {"a": 2}
    assert behaviour_of_dump(changed) != behaviour_of_dump(dumped)
