"""Inspect AI: eval logs built with inspect_ai's own objects (EvalLog, EvalSample, ChatMessage*, ModelEvent,
ToolEvent) and written by its ``write_eval_log`` in both formats (.eval and .json), read back by its reader."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai")

from replaykit.adapters.inspect_ai import import_inspect_ai
from replaykit.core.trace.ir import Provenance
from replaykit.core.trace.run import Run
from tests.adapters.platform_proof import bad_input_is_one_line, prove

T0 = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)


def _at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def _sample(sample_id: int, city: str, weather: str, *, fail_tool: bool = False, correct: bool = True) -> Any:
    from inspect_ai.event import InfoEvent, ModelEvent, ToolEvent
    from inspect_ai.log import EvalSample
    from inspect_ai.model import (
        ChatCompletionChoice,
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageTool,
        ChatMessageUser,
        GenerateConfig,
        ModelOutput,
        ModelUsage,
    )
    from inspect_ai.scorer import Score
    from inspect_ai.tool import ToolCall, ToolCallError, ToolInfo, ToolParam, ToolParams

    tools = [ToolInfo(name="get_weather", description="Current weather for a city",
                      parameters=ToolParams(properties={"city": ToolParam(type="string")}, required=["city"]))]
    system = ChatMessageSystem(content="You are a weather assistant.")
    user = ChatMessageUser(content=f"What's the weather in {city}?")
    call_id = f"call_{sample_id}"
    asked = ChatMessageAssistant(content="", model="gpt-4o-mini",
                                 tool_calls=[ToolCall(id=call_id, function="get_weather", arguments={"city": city})])
    error = ToolCallError(type="timeout", message="weather service timed out") if fail_tool else None
    result = "" if fail_tool else weather
    tool = ChatMessageTool(content=result, tool_call_id=call_id, function="get_weather", error=error)
    answer_text = f"In {city}: {weather}." if not fail_tool else f"I could not get the weather in {city}."
    answer = ChatMessageAssistant(content=answer_text, model="gpt-4o-mini")
    config = GenerateConfig(temperature=0.0, max_tokens=200)

    def model_event(start: float, messages: list[Any], reply: Any, stop: str, usage: tuple[int, int]) -> ModelEvent:
        return ModelEvent(model="openai/gpt-4o-mini", input=messages, tools=tools, tool_choice="auto", config=config,
                          output=ModelOutput(model="gpt-4o-mini", choices=[ChatCompletionChoice(message=reply,
                                                                                                stop_reason=stop)],
                                             usage=ModelUsage(input_tokens=usage[0], output_tokens=usage[1],
                                                              total_tokens=sum(usage))),
                          timestamp=_at(start), completed=_at(start + 0.5), working_time=0.5)

    events = [
        InfoEvent(source="solver", data={"note": "starting"}, timestamp=_at(0.0)),
        model_event(0.1, [system, user], asked, "tool_calls", (60, 12)),
        ToolEvent(id=call_id, function="get_weather", arguments={"city": city}, result=result, error=error,
                  timestamp=_at(0.7), completed=_at(0.9), working_time=0.2),
        model_event(1.0, [system, user, asked, tool], answer, "stop", (90, 15)),
    ]
    return EvalSample(id=sample_id, epoch=1, input=user.text, target=weather, messages=[system, user, asked, tool, answer],
                      output=ModelOutput(model="gpt-4o-mini", choices=[ChatCompletionChoice(message=answer,
                                                                                            stop_reason="stop")]),
                      scores={"includes": Score(value="C" if correct else "I", answer=answer_text)},
                      metadata={"city": city}, events=events, started_at=_at(0.0), completed_at=_at(2.0),
                      total_time=2.0, working_time=1.2)


def write_log(path: Path) -> Path:
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalMetric,
        EvalResults,
        EvalScore,
        EvalSpec,
        write_eval_log,
    )

    spec = EvalSpec(created=T0.isoformat(), task="weather", task_id="task-w1", eval_id="eval-abc", run_id="run-1",
                    dataset=EvalDataset(name="weather", samples=2), model="openai/gpt-4o-mini", config=EvalConfig())
    results = EvalResults(total_samples=2, completed_samples=2, scores=[EvalScore(
        name="includes", scorer="includes", metrics={"accuracy": EvalMetric(name="accuracy", value=0.5)})])
    log = EvalLog(eval=spec, status="success", results=results,
                  samples=[_sample(1, "Paris", "sunny, 18 C"), _sample(2, "Oslo", "snow", fail_tool=True, correct=False)])
    write_eval_log(log, str(path))
    return path


@pytest.fixture(scope="module", params=["eval", "json"])
def log_file(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_log(tmp_path_factory.mktemp("inspect") / f"weather.{request.param}")


def test_import_validate_replay_play_offline_diff_and_atif(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          log_file: Path) -> None:
    pytest.importorskip("openai")
    pytest.importorskip("atif")
    runs = prove(log_file, "inspect-ai", tmp_path, capsys)
    assert [r.header.title for r in runs] == ["weather sample 1", "weather sample 2"]


def test_one_run_per_sample_with_the_eval_and_its_scores(log_file: Path) -> None:
    first, second = import_inspect_ai(log_file)
    meta = first.header.metadata["inspect_ai"]
    assert (meta["eval_id"], meta["run_id"], meta["task"], meta["sample_id"], meta["epoch"]) == \
        ("eval-abc", "run-1", "weather", 1, 1)
    assert meta["scores"]["includes"]["value"] == "C"
    assert second.header.metadata["inspect_ai"]["scores"]["includes"]["value"] == "I"
    assert meta["results"]["scores"][0]["metrics"]["accuracy"]["value"] == 0.5
    assert first.header.session_id == second.header.session_id == "eval-abc"
    assert (first.header.model, first.header.provider) == ("gpt-4o-mini", "openai")

    run = Run(first.header, first.events)
    assert [e.kind for e in run.events] == ["opaque", "turn_start", "tools", "llm_call", "tool_call", "llm_call",
                                            "run_end"]
    assert {s.event.provenance for s in run.steps} == {Provenance.RECONSTRUCTED}
    call, _ = run.llm_calls()
    # Inspect writes model inputs as references into a message pool (input_refs); its reader resolves them.
    assert [[m.role for m in run.request_messages(c)] for c in run.llm_calls()] == [
        ["system", "user"], ["system", "user", "assistant", "tool"]]
    assert call.request.params["temperature"] == 0.0 and call.request.params["max_tokens"] == 200
    assert [t.name for t in run.request_tools(call.request) or []] == ["get_weather"]
    assert call.response.usage is not None and call.response.usage.input_tokens == 60
    assert (call.t, call.duration) == (0.1, 0.5)
    assert call.corr is not None and call.corr.extra is not None
    assert call.corr.extra["inspect_ai"]["sample_id"] == 1 and call.corr.api_request_id
    (tool,) = run.tool_calls()
    assert (tool.call_id, tool.name, tool.arguments, tool.result) == ("call_1", "get_weather", {"city": "Paris"},
                                                                      "sunny, 18 C")
    info = run.events[0]
    assert info.kind == "opaque" and info.name == "info" and info.data["data"] == {"note": "starting"}  # type: ignore[union-attr]
    assert run.final_answer == "In Paris: sunny, 18 C."


def test_a_failed_tool_call_is_an_error(log_file: Path) -> None:
    _, second = import_inspect_ai(log_file)
    (tool,) = Run(second.header, second.events).tool_calls()
    assert tool.status == "error" and tool.error == "weather service timed out"


def test_a_sample_logged_without_events_is_rebuilt_from_its_messages(tmp_path: Path) -> None:
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(write_log(tmp_path / "full.json")))
    assert log.samples
    for sample in log.samples:
        sample.events = []
    write_eval_log(log, str(tmp_path / "no-events.json"))
    first, _ = import_inspect_ai(tmp_path / "no-events.json")
    run = Run(first.header, first.events)
    assert [s.kind for s in run.steps] == ["llm", "tool", "llm"]
    assert any("model events" in w for w in first.warnings)


@pytest.mark.parametrize(("content", "message"), [
    ('{"version": 2, "status": "success", "eval": {"task": "x"', "not an Inspect AI eval log"),
    ('{"messages": []}', "not an Inspect AI eval log"),
    ("", "not an Inspect AI eval log"),
])
def test_bad_documents_are_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str,
                                           message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    bad_input_is_one_line(path, "inspect-ai", tmp_path, capsys, message)


def test_a_log_without_samples_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(write_log(tmp_path / "full.json")))
    log.samples = None
    write_eval_log(log, str(tmp_path / "header-only.json"))
    bad_input_is_one_line(tmp_path / "header-only.json", "inspect-ai", tmp_path, capsys, "holds no samples")


def test_a_broken_eval_archive_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "broken.eval"
    path.write_bytes(write_log(tmp_path / "ok.eval").read_bytes()[:300])
    bad_input_is_one_line(path, "inspect-ai", tmp_path, capsys, "not an Inspect AI eval log")


def test_without_the_extra_the_error_names_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch, log_file: Path) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # as if inspect_ai were not installed
    bad_input_is_one_line(log_file, "inspect-ai", tmp_path, capsys, "pip install 'replaykit[inspect-ai]'")
