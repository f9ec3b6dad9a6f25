"""ATIF trajectories of agents without function calling (Harbor's Terminus-2 and its summarization
sub-trajectories, issue 39): the model answers in text (JSON with its shell commands), the agent parses
the commands into ``tool_calls`` and hands the terminal output back as the next user message (an
observation result without ``source_call_id``). The run holds what the model's requests really held:
one LLM call per agent step, no tool call, each observation the following user message; the parsed
actions stay in ``provider_details.atif_step.text_actions``. Offline play on the openai and pydantic-ai
engines: 0 calls, 0 desyncs, ``diff`` equal. The documents follow the shape of Harbor's golden
Terminus-2 trajectories (``tests/golden/terminus_2/`` in Harbor's source) and validate against the
``atif`` package's models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replaykit.adapters.atif import import_atif
from replaykit.core.analysis.diff import diff_runs
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.engines import play
from tests.conformance._matrix import engine_extra, options

atif = pytest.importorskip("atif")

PROMPT = ("You are an AI assistant tasked with solving command-line tasks in a Linux environment. Format your "
          "response as JSON with analysis, plan, commands and task_complete.\n\nTask Description:\nCreate "
          "hello.txt with \"Hello, world!\" as the content.\n\nCurrent terminal state:\nroot@c:/app# ")
COMMANDS = ["ls -la\n", "mkdir test_dir\n", "echo 'test1' > test_dir/file1.txt\n", "cat test_dir/file1.txt\n",
            "printf 'Hello, world!\\n' > hello.txt\n", "cat hello.txt\n"]


def _agent_step(n: int, command: str | None) -> dict[str, Any]:
    step: dict[str, Any] = {
        "step_id": n + 2, "source": "agent", "model_name": "openai/gpt-4o",
        "message": f"Analysis: step {n}.\nPlan: run `{(command or 'nothing').strip()}`.",
        "reasoning_content": f"thinking about step {n}",
        "metrics": {"prompt_tokens": 600 + 50 * n, "completion_tokens": 40, "cost_usd": 0.002}}
    if command is None:  # Terminus-2 asks to confirm completion with one more observation
        step["tool_calls"] = [{"tool_call_id": f"call_{n}_task_complete", "function_name": "mark_task_complete",
                               "arguments": {}}]
        step["observation"] = {"results": [{"content": "Are you sure you want to mark the task as complete?"}]}
        return step
    step["tool_calls"] = [{"tool_call_id": f"call_{n}_1", "function_name": "bash_command",
                           "arguments": {"keystrokes": command, "duration": 0.1}}]
    step["observation"] = {"results": [{"content": f"New Terminal Output:\n\nroot@c:/app# {command}\n"}]}
    return step


def _trajectory(*, parser: bool = True, version: str = "ATIF-v1.5") -> dict[str, Any]:
    steps = [{"step_id": 1, "source": "user", "message": PROMPT}]
    steps += [_agent_step(n, command) for n, command in enumerate([*COMMANDS, None])]
    agent: dict[str, Any] = {"name": "terminus-2", "version": "2.0.0", "model_name": "openai/gpt-4o"}
    if parser:
        agent["extra"] = {"parser": "json", "temperature": 0.7}
    return {"schema_version": version, "session_id": "NORMALIZED_SESSION_ID", "agent": agent, "steps": steps,
            "final_metrics": {"total_prompt_tokens": 5000, "total_completion_tokens": 280}}


def _with_summarization() -> dict[str, Any]:
    """v1.7: the summarization sub-trajectory embedded (no parser in its agent block, as Harbor writes it)."""
    document = _trajectory(version="ATIF-v1.7")
    summary = _trajectory(parser=False, version="ATIF-v1.7")
    summary.update(trajectory_id="summarization-1-summary", session_id="NORMALIZED_SESSION_ID-summary")
    summary["agent"]["name"] = "terminus-2-summarization-summary"
    summary["steps"] = [
        *summary["steps"][:3],
        {"step_id": 4, "source": "user", "message": "Summarize what you have accomplished so far."},
        {"step_id": 5, "source": "agent", "model_name": "openai/gpt-4o", "message": "I created test_dir."}]
    document["subagent_trajectories"] = [summary]
    # the step whose context was summarized names the sub-trajectory beside its terminal output
    document["steps"][3]["observation"]["results"].append(
        {"subagent_trajectory_ref": [{"trajectory_id": "summarization-1-summary"}]})
    return document


def _write(tmp_path: Path, document: dict[str, Any]) -> Path:
    atif.Trajectory.model_validate(document)  # a valid trajectory by the spec's own models
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize("parser", [True, False], ids=["parser-json", "no-tool-definitions"])
def test_no_invented_tool_calls(tmp_path: Path, parser: bool) -> None:
    document = _trajectory(parser=parser)
    agent_steps = [s for s in document["steps"] if s["source"] == "agent"]
    (imported,) = import_atif(_write(tmp_path, document))
    run = Run(imported.header, imported.events)
    assert (len(run.llm_calls()), len(run.tool_calls())) == (len(agent_steps), 0) == (7, 0)
    for call, step in zip(run.llm_calls(), agent_steps, strict=True):
        assert call.response.message.tool_calls == [] and call.response.finish_reason == "stop"
        assert call.response.message.text == step["message"]
        assert call.response.provider_details is not None
        assert call.response.provider_details["atif_step"]["text_actions"] == step["tool_calls"]
    # each request after the first ends with the terminal output of the step before, as a user message
    for previous, call in zip(agent_steps, run.llm_calls()[1:], strict=False):
        last = run.request_messages(call)[-1]
        assert (last.role, last.text) == ("user", previous["observation"]["results"][0]["content"])


def test_function_calling_trajectories_keep_their_tool_calls(tmp_path: Path) -> None:
    document = _trajectory(parser=False)
    document["agent"]["tool_definitions"] = [{"type": "function", "function": {
        "name": "bash_command", "parameters": {"type": "object", "properties": {"keystrokes": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "mark_task_complete", "parameters": {"type": "object"}}}]
    (imported,) = import_atif(_write(tmp_path, document))
    run = Run(imported.header, imported.events)
    assert (len(run.llm_calls()), len(run.tool_calls())) == (7, 7)


def test_summarization_sub_trajectories_too(tmp_path: Path) -> None:
    parent, child = import_atif(_write(tmp_path, _with_summarization()))
    for item, calls in ((parent, 7), (child, 3)):
        run = Run(item.header, item.events)
        assert (len(run.llm_calls()), len(run.tool_calls())) == (calls, 0)
    assert child.header.lineage is not None and child.header.lineage.parent_run_id == parent.header.run_id


@pytest.mark.parametrize("engine", ["openai", "pydantic-ai"])
@pytest.mark.parametrize("shape", ["terminus-2", "with-summarization"])
def test_plays_offline_with_diff_equal(tmp_path: Path, engine: str, shape: str) -> None:
    if engine == "pydantic-ai":
        pytest.importorskip("pydantic_ai")
    document = _trajectory() if shape == "terminus-2" else _with_summarization()
    store = RunStore(tmp_path / "store")
    runs = [Run(r.header, r.events) for r in import_atif(_write(tmp_path, document))]
    for run in runs:
        store.write_run(run.header, list(run.events))
    for run in runs:
        loaded = store.load(run.run_id)
        result = play(loaded, engine, options(store, serve_only=True, extra=engine_extra(engine, tmp_path)))
        counters = result.counters
        assert (counters.provider_calls, counters.tool_executions, counters.desyncs) == (0, 0, 0)
        assert diff_runs(loaded, store.load(result.run_id)).equal
