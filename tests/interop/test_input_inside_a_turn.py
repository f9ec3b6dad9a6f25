"""Input an application adds inside a turn, imported as what it is and played back: a user message after
a tool result (PydanticAI sends a tool's image so), two Hermes ``human`` turns in a row, and two ``gpt``
turns in a row (each its own LLM call, issue 39: the second's request ends with the first answer). Every
engine that loops itself (openai,
LangGraph, Hermes) hands the recorded input over before the served call
(``ReplayCursor.take_recorded_input``): 0 calls, 0 desyncs, `diff` equal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replaykit.adapters import import_file
from replaykit.core.analysis.diff import diff_runs
from replaykit.core.trace.ir import MediaPart
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.engines import play
from tests.conformance._matrix import engine_extra, options

LOOPS = ["openai", "langgraph", pytest.param("hermes", marks=[pytest.mark.hermes, pytest.mark.slow])]

SYSTEM = ('You are a function calling AI model. <tools>\n[{"name": "get_weather", "description": "Weather", '
          '"parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]\n</tools>')


def _hermes_line() -> dict[str, Any]:
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    response = '<tool_response>\n{"tool_call_id": "c1", "name": "get_weather", "content": "18C"}\n</tool_response>'
    return {"timestamp": "2026-01-01T10:00:00", "model": "m", "completed": True, "conversations": [
        {"from": "system", "value": SYSTEM}, {"from": "human", "value": "Hi"},
        {"from": "human", "value": "Weather in Paris?"}, {"from": "gpt", "value": call},
        {"from": "tool", "value": response}, {"from": "gpt", "value": "It is 18C."},
        {"from": "gpt", "value": "(Note: data from the demo feed.)"}, {"from": "human", "value": "Thanks"},
        {"from": "gpt", "value": "You're welcome."}]}


def _image_log() -> dict[str, Any]:
    return {"model": "gpt-4o", "tools": [{"type": "function", "function": {"name": "get_image", "parameters": {
        "type": "object", "properties": {}}}}], "messages": [
        {"role": "user", "content": "What is in the image the tool gives?"},
        {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
                                              "function": {"name": "get_image", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "See file f1"},
        {"role": "user", "content": [{"type": "text", "text": "This is file f1:"},
                                     {"type": "image_url", "image_url": {"url": "https://example.test/p.jpg"}}]},
        {"role": "assistant", "content": "A potato."}]}


def _played(tmp_path: Path, path: Path, fmt: str, engine: str = "openai") -> tuple[Run, Run, Any]:
    store = RunStore(tmp_path / "store")
    imported = import_file(path, fmt)[0]
    store.write_run(imported.header, list(imported.events))
    run = store.load(imported.header.run_id)
    result = play(run, engine, options(store, serve_only=True, extra=engine_extra(engine, tmp_path)))
    return run, store.load(result.run_id), result


def test_hermes_consecutive_turns_import_as_what_they_are(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(_hermes_line()) + "\n")
    (imported,) = import_file(path, "hermes-trajectory")
    run = Run(imported.header, imported.events)
    gpt_turns = sum(1 for t in _hermes_line()["conversations"] if t["from"] == "gpt")
    assert len(run.llm_calls()) == gpt_turns == 4  # every gpt turn is an LLM call, two in a row too
    assert not [e for e in run.events if e.kind == "opaque"]
    assert any("each is an LLM call" in w for w in imported.warnings)
    first, _, note, last = run.llm_calls()
    assert [m.role for m in run.request_messages(first)] == ["system", "user", "user"]
    assert [m.text for m in run.request_messages(note)][-1] == "It is 18C."
    assert note.response.message.text == "(Note: data from the demo feed.)"
    assert [m.text for m in run.request_messages(last)][-3:] == [
        "It is 18C.", "(Note: data from the demo feed.)", "Thanks"]
    assert run.final_answer == "You're welcome."


@pytest.mark.parametrize("engine", ["openai", "langgraph", pytest.param("hermes", marks=[
    pytest.mark.hermes, pytest.mark.slow, pytest.mark.xfail(strict=True, reason=(
        "Hermes's run_conversation cannot call the model again without a user message: the second of two "
        "assistant answers in a row is not reached (issue 39 made it an LLM call of its own)"))])])
def test_hermes_consecutive_turns_play_offline_with_diff_equal(tmp_path: Path, engine: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(_hermes_line()) + "\n")
    run, played, result = _played(tmp_path, path, "hermes-trajectory", engine)
    counters = result.counters
    assert (counters.provider_calls, counters.tool_executions, counters.desyncs, counters.synthetic_steps) == \
        (0, 0, 0, 0)
    assert diff_runs(run, played).equal
    assert [m.text for m in played.request_messages(played.llm_calls()[-1])] == \
        [m.text for m in run.request_messages(run.llm_calls()[-1])]


@pytest.mark.parametrize("engine", LOOPS)
def test_a_user_message_after_a_tool_result_is_handed_over(tmp_path: Path, engine: str) -> None:
    path = tmp_path / "log.json"
    path.write_text(json.dumps(_image_log()))
    run, played, result = _played(tmp_path, path, "openai-chat", engine)
    assert (result.counters.desyncs, result.counters.synthetic_steps, result.counters.provider_calls) == (0, 0, 0)
    assert played.final_answer == "A potato."
    last = played.request_messages(played.llm_calls()[-1])
    assert last[-1].role == "user" and any(isinstance(p, MediaPart) for p in last[-1].parts)
    assert diff_runs(run, played).equal
    assert [e.message.text for e in played.user_turns()] == [e.message.text for e in run.user_turns()]
