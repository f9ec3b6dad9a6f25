"""Langfuse: a page of the observations API v2 (written with langfuse 5.2.0's ObservationsV2Response) and the
older trace-with-observations JSON (langfuse 3.15.0's TraceWithFullDetails), see
tests/fixtures/platforms/make_langfuse.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replaykit.adapters.langfuse import import_langfuse
from replaykit.core.trace.ir import Provenance
from replaykit.core.trace.run import Run
from tests.adapters.platform_proof import bad_input_is_one_line, prove

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "platforms"
V2 = FIXTURES / "langfuse_observations_v2.json"
V1 = FIXTURES / "langfuse_traces.json"


@pytest.mark.parametrize("fixture", [V2, V1], ids=["observations-v2", "traces-v1"])
def test_import_validate_replay_play_offline_diff_and_atif(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          fixture: Path) -> None:
    pytest.importorskip("openai")
    pytest.importorskip("atif")
    runs = prove(fixture, "langfuse", tmp_path, capsys)
    assert [r.header.title for r in runs] == ["weather-agent", "LangGraph"]


@pytest.mark.parametrize("fixture", [V2, V1], ids=["observations-v2", "traces-v1"])
def test_what_each_observation_becomes(fixture: Path) -> None:
    first, _ = import_langfuse(fixture)
    run = Run(first.header, first.events)
    # GENERATION -> llm_call, TOOL -> tool_call, AGENT span and EVENT -> opaque, all reconstructed.
    assert [e.kind for e in run.events] == ["opaque", "turn_start", "tools", "llm_call", "tool_call", "opaque",
                                            "llm_call", "run_end"]
    assert {e.provenance for e in run.events if e.kind != "tools"} == {Provenance.RECONSTRUCTED}
    call, answer = run.llm_calls()
    assert call.request.model == "gpt-4o-mini" and call.request.params == {"temperature": 0, "max_tokens": 256}
    assert [t.name for t in run.request_tools(call.request) or []] == ["get_weather", "get_forecast"]
    assert [m.role for m in run.request_messages(call)] == ["system", "user"]
    assert call.response.message.tool_calls[0].arguments == {"city": "Paris"}
    usage = call.response.usage
    assert usage is not None and (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (120, 18, 138)
    assert usage.details is not None and "langfuse" in usage.details  # Langfuse's own figures, cost included
    kept = usage.details["langfuse"]
    assert kept.get("cost_details", {}).get("total") == 0.0000288 or kept.get("total_cost") == 0.0000288
    # Timing from the observations, the original ids in corr.
    assert (call.t, call.duration) == (0.1, 0.8)
    assert call.corr is not None and call.corr.api_request_id == "obs-gen-1" and call.corr.turn_id == "trace-1"
    assert call.corr.extra == {"langfuse": {"observation_id": "obs-gen-1", "trace_id": "trace-1",
                                            "parent_observation_id": "obs-root-1", "type": "GENERATION",
                                            "name": "OpenAI-generation"}}
    (tool,) = run.tool_calls()
    # The TOOL observation carries no call id: it answers the model's open call of that tool.
    assert (tool.call_id, tool.name, tool.arguments, tool.result) == ("call_p1", "get_weather", {"city": "Paris"},
                                                                      "sunny, 18 C")
    assert tool.llm_call_id == call.id and tool.corr is not None and tool.corr.api_request_id == "obs-tool-1"
    event = next(e for e in run.events if e.kind == "opaque" and e.name == "event")  # type: ignore[union-attr]
    assert event.provider_details == {"langfuse": {"metadata": {"cache": "weather", "key": "Paris"},
                                                   "environment": "production"}}
    assert run.final_answer == "It is sunny and 18 C in Paris." == answer.response.message.text
    assert run.status == "completed"


def test_traces_of_one_session_are_linked_runs() -> None:
    first, second = import_langfuse(V2)
    assert first.header.session_id == second.header.session_id == "session-42"
    links = [r.header.metadata["langfuse"]["session"] for r in (first, second)]
    ids = [first.header.run_id, second.header.run_id]
    assert links[0] == {"id": "session-42", "position": 0, "run_ids": ids, "previous_run_id": None,
                        "next_run_id": ids[1]}
    assert links[1]["previous_run_id"] == ids[0] and links[1]["position"] == 1


def test_calls_without_a_tool_observation_take_their_result_from_the_next_request() -> None:
    _, second = import_langfuse(V2)
    run = Run(second.header, second.events)
    calls = run.tool_calls()
    assert [(c.call_id, c.result) for c in calls] == [("call_f1", "rain, 14 C"),
                                                      ("call_f2", "error: forecast service timed out")]
    assert calls[1].corr is not None and calls[1].corr.api_request_id is None  # no observation stood behind it
    assert any("read from the request that followed" in w for w in second.warnings)
    # The first request holds the previous trace's turn as history: only the new user message starts a turn.
    starts = [e for e in run.events if e.kind == "turn_start"]
    assert [s.message.text for s in starts] == ["And tomorrow, in Paris and Lyon?"]  # type: ignore[union-attr]
    kinds = [e.name for e in run.events if e.kind == "opaque"]  # type: ignore[union-attr]
    assert kinds == ["chain", "retriever"]
    retriever = next(e for e in run.events if e.kind == "opaque" and e.name == "retriever")  # type: ignore[union-attr]
    assert retriever.data["output"] == [{"page_content": "Paris, FR"}, {"page_content": "Lyon, FR"}]  # type: ignore[union-attr]


def test_v2_and_the_older_trace_json_give_the_same_runs() -> None:
    def view(item: Any) -> list[Any]:
        run = Run(item.header, item.events)
        return [(s.kind, [m.model_dump(exclude_none=True) for m in run.request_messages(s.event)]
                 if s.kind == "llm_call" else s.event.model_dump(include={"call_id", "result", "status"}))
                for s in run.steps]
    assert [view(r) for r in import_langfuse(V2)] == [view(r) for r in import_langfuse(V1)]


def test_a_failed_root_observation_fails_the_run(tmp_path: Path) -> None:
    page = json.loads(V2.read_text())
    page["data"] = [o for o in page["data"] if o["traceId"] == "trace-1"]
    page["data"][0].update(level="ERROR", statusMessage="agent crashed")
    path = tmp_path / "page.json"
    path.write_text(json.dumps(page))
    (run,) = import_langfuse(path)
    end = run.events[-1]
    assert end.kind == "run_end" and end.status == "failed" and end.reason == "agent crashed"  # type: ignore[union-attr]


def test_jsonl_of_observations_and_snake_case_keys(tmp_path: Path) -> None:
    page = json.loads(V2.read_text())
    snake = [{"".join(f"_{c.lower()}" if c.isupper() else c for c in k): v for k, v in o.items()}
             for o in page["data"]]
    path = tmp_path / "observations.jsonl"
    path.write_text("\n".join(json.dumps(o) for o in snake) + "\n")
    runs = import_langfuse(path)
    assert [len(Run(r.header, r.events).steps) for r in runs] == [3, 4]


@pytest.mark.parametrize(("content", "message"), [
    ('{"data": [{"id": "o1", "type": "GENERATION", "startTime": "2026-01-01T00:00:00Z"', "not valid JSON"),
    ('{"messages": [{"role": "user", "content": "hi"}]}', "not a Langfuse trace or observation"),
    ('{"data": [{"id": "o1", "type": "GENERATION", "startTime": "2026-01-01T00:00:00Z"}]}', "has no traceId"),
    ('{"data": [{"id": "o1", "traceId": "t", "type": "SPAN", "startTime": "yesterday"}]}', "not an ISO 8601"),
    ('{"id": "t1", "observations": ["o1", "o2"]}', "fetch each trace whole"),
    ('{"data": [{"id": "o1", "traceId": "t", "type": "GENERATION", "startTime": "2026-01-01T00:00:00Z", '
     '"input": "hi", "output": {"role": "assistant", "tool_calls": [{"id": 5}]}}]}', "observation o1"),
    ("", "empty file"),
])
def test_bad_documents_are_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str,
                                           message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    bad_input_is_one_line(path, "langfuse", tmp_path, capsys, message)
