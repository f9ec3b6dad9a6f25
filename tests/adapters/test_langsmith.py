"""LangSmith: runs as ``Client.list_runs`` returns them (``langsmith.schemas.Run``), from LangChain's own tracer
and from LangSmith's RunTree in the OpenAI wrapper's shapes (tests/adapters/platform_fixtures.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langsmith")
pytest.importorskip("langchain_core")

from replaykit.adapters.langsmith import import_langsmith
from replaykit.core.trace.ir import Provenance
from replaykit.core.trace.run import Run
from tests.adapters.platform_fixtures import THREAD, langchain_trace, openai_trace
from tests.adapters.platform_proof import bad_input_is_one_line, prove


@pytest.fixture(scope="module")
def listed() -> list[dict[str, Any]]:
    return langchain_trace() + openai_trace()


def _write(tmp_path: Path, runs: list[dict[str, Any]], jsonl: bool = False) -> Path:
    path = tmp_path / ("runs.jsonl" if jsonl else "runs.json")
    path.write_text("\n".join(json.dumps(r) for r in runs) + "\n" if jsonl else json.dumps(runs))
    return path


@pytest.mark.parametrize("jsonl", [False, True], ids=["json-list", "jsonl"])
def test_import_validate_replay_play_offline_diff_and_atif(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          listed: list[dict[str, Any]], jsonl: bool) -> None:
    pytest.importorskip("openai")
    pytest.importorskip("atif")
    runs = prove(_write(tmp_path, listed, jsonl), "langsmith", tmp_path, capsys)
    assert sorted(r.header.title or "" for r in runs) == ["compare", "weather-agent"]


def test_langchain_shapes(tmp_path: Path, listed: list[dict[str, Any]]) -> None:
    """Messages serialised by dumpd, LLMResult generations, tool calls in the AIMessage, a ToolMessage output."""
    trace = langchain_trace()
    (item,) = import_langsmith(_write(tmp_path, trace))
    run = Run(item.header, item.events)
    assert [e.kind for e in run.events] == ["opaque", "turn_start", "tools", "llm_call", "tool_call", "llm_call",
                                            "run_end"]
    first, second = run.llm_calls()
    assert [(m.role, m.text) for m in run.request_messages(first)] == [
        ("system", "You are a weather assistant."), ("user", "What's the weather in Paris?")]
    assert [(c.id, c.name, c.arguments) for c in first.response.message.tool_calls] == [
        ("call_1", "get_weather", {"city": "Paris"})]
    assert [t.name for t in run.request_tools(first.request) or []] == ["get_weather"]  # from invocation_params
    assert first.response.usage is not None and first.response.usage.input_tokens == 52  # AIMessage.usage_metadata
    (tool,) = run.tool_calls()
    assert (tool.call_id, tool.result, tool.status) == ("call_1", "sunny, 18 C in Paris", "ok")
    assert [m.role for m in run.request_messages(second)][-2:] == ["assistant", "tool"]
    assert run.final_answer == "It is sunny and 18 C in Paris."
    root = next(r for r in trace if r["parent_run_id"] is None)
    assert item.header.metadata["langsmith"]["trace_id"] == root["trace_id"] and item.header.session_id == THREAD
    assert first.corr is not None and first.corr.turn_id == root["trace_id"]
    assert first.corr.extra is not None and first.corr.extra["langsmith"]["parent_run_id"] == root["id"]


def test_openai_wrapper_shapes_usage_and_a_failed_tool(tmp_path: Path) -> None:
    (item,) = import_langsmith(_write(tmp_path, openai_trace()))
    run = Run(item.header, item.events)
    first, _ = run.llm_calls()
    assert first.request.model == "gpt-4o-mini" and item.header.provider == "openai"
    usage = first.response.usage
    assert usage is not None and (usage.input_tokens, usage.output_tokens) == (80, 30)
    assert usage.details is not None and usage.details["langsmith"]["total_cost"] == "0.0000321"
    assert first.response.response_id == "chatcmpl-1" and first.response.finish_reason == "tool_calls"
    paris, lyon = run.tool_calls()
    assert (paris.call_id, paris.result) == ("call_a", "sunny, 18 C")
    # The failed tool run: what the model saw in the next request is served; the run's error is kept.
    assert lyon.call_id == "call_b" and lyon.error == "TimeoutError('weather service')"
    assert lyon.result == "Error: TimeoutError('weather service')"
    assert lyon.provider_details is not None and lyon.provider_details["langsmith"]["tool_status"] == "error"
    assert {s.event.provenance for s in run.steps} == {Provenance.RECONSTRUCTED}


def test_a_tool_run_with_error_is_a_failed_step(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 39: the tool run's ``error`` makes an error step (``inspect`` shows the failing step), while the
    message the model saw (plain text: Chat has no error flag) still replays byte for byte."""
    pytest.importorskip("openai")
    pytest.importorskip("atif")
    trace = openai_trace()
    failed = next(r for r in trace if r["run_type"] == "tool" and r.get("error"))
    (run,) = prove(_write(tmp_path, trace), "langsmith", tmp_path, capsys)
    lyon = next(t for t in run.tool_calls() if t.corr is not None and t.corr.api_request_id == str(failed["id"]))
    assert (lyon.status, lyon.error) == ("error", failed["error"])
    assert run.failing_step == next(s.index for s in run.steps if s.event is lyon)
    answer = run.llm_calls()[-1]
    shown = [p for m in run.request_messages(answer) for p in m.tool_results if p.tool_call_id == lyon.call_id]
    assert shown and shown[0].is_error and shown[0].content == lyon.result


def test_traces_of_one_thread_are_linked_runs(tmp_path: Path, listed: list[dict[str, Any]]) -> None:
    runs = import_langsmith(_write(tmp_path, listed))
    assert {r.header.session_id for r in runs} == {THREAD}
    ids = [r.header.run_id for r in runs]
    assert [r.header.metadata["langsmith"]["session"]["run_ids"] for r in runs] == [ids, ids]


def test_a_run_tree_with_child_runs_is_flattened(tmp_path: Path, listed: list[dict[str, Any]]) -> None:
    trace = langchain_trace()
    root = next(r for r in trace if r["parent_run_id"] is None)
    nested = {**root, "child_runs": [r for r in trace if r is not root]}
    (item,) = import_langsmith(_write(tmp_path, [nested]))
    assert len(Run(item.header, item.events).steps) == 3


def test_a_failed_root_fails_the_run(tmp_path: Path) -> None:
    trace = langchain_trace()
    next(r for r in trace if r["parent_run_id"] is None)["error"] = "ValueError('boom')\nTraceback ..."
    (item,) = import_langsmith(_write(tmp_path, trace))
    end = item.events[-1]
    assert end.kind == "run_end" and end.status == "failed" and end.reason == "ValueError('boom')"  # type: ignore[union-attr]


@pytest.mark.parametrize(("content", "message"), [
    ('[{"id": "r1", "name": "x", "run_type": "llm", "start_time": "2026-01-01T00:00:00Z"', "not valid JSON"),
    ('[{"id": "r1", "name": "x"}]', "not a LangSmith run (missing run_type, start_time"),
    ('{"messages": []}', "not a LangSmith run"),
    ('[{"id": "r1", "name": "x", "run_type": "llm", "start_time": "soon"}]', "not an ISO 8601"),
    ('[{"id": "r1", "name": "x", "run_type": "llm", "start_time": "2026-01-01T00:00:00Z", "inputs": {"messages": '
     '[{"role": "user", "content": "hi"}]}, "outputs": {"generations": [[{"message": {"lc": 1, "type": "constructor",'
     ' "id": ["x", "AIMessage"], "kwargs": {"content": "", "tool_calls": [{"args": {}}]}}}]]}}]', "without a name"),
    ("[]", "no LangSmith run"),
])
def test_bad_documents_are_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str,
                                           message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    bad_input_is_one_line(path, "langsmith", tmp_path, capsys, message)
