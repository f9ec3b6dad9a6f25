"""``import --format hermes-trajectory``: files written by Hermes's own trajectory code (agent/trajectory.py
and the converter AIAgent._save_trajectory uses), read back into runs."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from replaykit.adapters.hermes.import_trajectory import import_trajectory
from replaykit.cli.main import main
from replaykit.core.trace import codecs
from replaykit.core.trace.ir import Provenance, ReasoningPart
from replaykit.core.trace.run import Run
from tests.interop.roundtrip import FIXTURES


def _hermes_trajectory(run: Run, path: Path, *, completed: bool = True) -> None:
    """Write ``run``'s conversation exactly as Hermes 0.19.0's save_trajectories does."""
    pytest.importorskip("run_agent")
    from agent.agent_runtime_helpers import convert_to_trajectory_format
    from agent.system_prompt import format_tools_for_system_message
    from agent.trajectory import save_trajectory

    last = run.llm_calls()[-1]
    tools = run.request_tools(last.request) or []
    body = codecs.encode_request("openai-chat", run.conversation(), tools, {"model": "m"}).body
    agent = SimpleNamespace(tools=body["tools"])
    agent._format_tools_for_system_message = lambda: format_tools_for_system_message(agent)
    messages = [m for m in body["messages"] if m["role"] != "system"]
    trajectory = convert_to_trajectory_format(agent, messages, messages[0]["content"], completed)
    save_trajectory(trajectory, run.model or "m", completed, filename=str(path))


@pytest.mark.hermes
def test_a_hermes_trajectory_file_comes_back_as_a_run(tmp_path: Path) -> None:
    original = Run.load(FIXTURES / "hermes" / "two_turns.jsonl")
    path = tmp_path / "trajectory_samples.jsonl"
    _hermes_trajectory(original, path)
    _hermes_trajectory(original, path, completed=False)  # Hermes appends: two lines, two runs
    first, second = import_trajectory(path)
    run = Run(first.header, first.events)
    assert [(s.kind, getattr(s.event, "name", None)) for s in run.steps] == \
        [(s.kind, getattr(s.event, "name", None)) for s in original.steps]
    assert [t.call_id for t in run.tool_calls()] == [t.call_id for t in original.tool_calls()]
    assert [t.arguments for t in run.tool_calls()] == [t.arguments for t in original.tool_calls()]
    assert [t.result for t in run.tool_calls()] == [t.result for t in original.tool_calls()]
    assert [u.message.text for u in run.user_turns()] == [u.message.text for u in original.user_turns()]
    assert run.final_answer == original.final_answer and run.status == "completed"
    assert Run(second.header, second.events).status == "failed"
    # Tool declarations come from the <tools> block; the request is the conversation so far.
    assert sorted(t.name for t in run.request_tools(run.llm_calls()[0].request) or []) == \
        sorted(t.name for t in original.request_tools(original.llm_calls()[0].request) or [])
    last = run.request_messages(run.llm_calls()[-1])
    assert [m.role for m in last] == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant",
                                      "user", "assistant", "tool", "assistant", "tool"]
    assert {e.provenance for e in run.events if e.kind != "tools"} == {Provenance.RECONSTRUCTED}
    assert any("function-calling prompt" in w for w in first.warnings)
    # Every call's response ids line up with its tool events (the <tool_response> names the ids).
    for call in run.llm_calls():
        for part in call.response.message.tool_calls:
            assert any(t.call_id == part.id and t.llm_call_id == call.id for t in run.tool_calls())


def test_think_blocks_become_reasoning(tmp_path: Path) -> None:
    line = {"conversations": [
        {"from": "system", "value": "x <tools>\n[]\n</tools>"},
        {"from": "human", "value": "hi"},
        {"from": "gpt", "value": "<think>\nplan it\n</think>\nHello!"},
    ], "timestamp": "2026-11-30T10:00:00", "model": "m", "completed": True}
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(line) + "\n")
    (imported,) = import_trajectory(path)
    run = Run(imported.header, imported.events)
    parts = run.llm_calls()[0].response.message.parts
    assert isinstance(parts[0], ReasoningPart) and parts[0].text == "plan it" and parts[1].text == "Hello!"  # type: ignore[union-attr]
    assert run.final_answer == "Hello!"


@pytest.mark.parametrize(("content", "message"), [
    ('{"conversations": [{"from": "human", "val', "JSON"),
    ('{"messages": []}', "not a Hermes trajectory"),
    ('{"conversations": [{"from": "robot", "value": "x"}]}', "unknown speaker"),
])
def test_bad_input_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str,
                                      message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content + "\n")
    store = tmp_path / "store"
    assert main(["import", str(path), "--format", "hermes-trajectory", "--store", str(store), "--json"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
    assert not store.exists() or not any(store.iterdir())


@pytest.mark.hermes
@pytest.mark.slow
def test_a_real_hermes_agent_trajectory_matches_its_recording(tmp_path: Path) -> None:
    """AIAgent(save_trajectories=True) writes the file itself; the import says what the recording says."""
    from replaykit.testing.hermes_harness import HermesSandbox, hermes_available
    from replaykit.testing.scripted_server import ScriptedServer, hermes_default_policy

    if not hermes_available():
        pytest.skip("hermes-agent is not installed")
    sandbox = HermesSandbox(tmp_path)  # the replaykit plugin records the same session
    with ScriptedServer(hermes_default_policy()) as srv:
        sandbox.run_agent({"base_url": srv.base_url, "turns": ["Please echo hello"], "save_trajectories": True})
    (recorded,) = [Run.load(p) for p in sandbox.store.glob("*.jsonl")]
    (imported,) = import_trajectory(sandbox.cwd / "trajectory_samples.jsonl")
    run = Run(imported.header, imported.events)
    assert [(t.call_id, t.name, t.arguments, t.result) for t in run.tool_calls()] == \
        [(t.call_id, t.name, t.arguments, t.result) for t in recorded.tool_calls()]
    assert [s.kind for s in run.steps] == [s.kind for s in recorded.steps]
    assert run.final_answer == recorded.final_answer == "All done: HELLO REPLAYKIT."
    assert run.header.model == "scripted-model" and run.status == "completed"
    assert sorted(t.name for t in run.request_tools(run.llm_calls()[0].request) or []) == \
        sorted(t.name for t in recorded.request_tools(recorded.llm_calls()[0].request) or [])


def _realworld_trajectories() -> Path | None:
    for root in Path(__file__).resolve().parents:
        found = root / "shared" / "realworld" / "data" / "hermes-trajectory" / "hermeswith-trajectory_samples.jsonl"
        if found.is_file():
            return found
    return None


@pytest.mark.parametrize("inject", [False, True], ids=["as-written", "gpt-turn-injected"])
def test_every_gpt_turn_is_one_llm_call_on_real_files(tmp_path: Path, inject: bool) -> None:
    """Issue 39: a file holding N gpt turns comes in with N LLM calls, two gpt turns in a row included
    (real Hermes save_trajectories output from ../shared/realworld, read where it lies; the injected copy
    puts a second gpt turn after each first one, as Hermes writes a continuation)."""
    real = _realworld_trajectories()
    if real is None:
        pytest.skip("the real-world corpus is not beside this checkout")
    lines = [json.loads(line) for line in real.read_text(encoding="utf-8").splitlines() if line.strip()]
    if inject:
        for entry in lines:
            turns = entry["conversations"]
            first = next(i for i, t in enumerate(turns) if t["from"] == "gpt")
            turns.insert(first + 1, {"from": "gpt", "value": "(continuing) " + turns[first]["value"][:200]})
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in lines) + "\n")
    imported = import_trajectory(path)
    assert len(imported) == len(lines)
    for entry, item in zip(lines, imported, strict=True):
        run = Run(item.header, item.events)
        gpt = [t["value"] for t in entry["conversations"] if t["from"] == "gpt"]
        assert len(run.llm_calls()) == len(gpt)
        if inject:
            second = run.llm_calls()[1]
            assert run.request_messages(second)[-1].role == "assistant"
