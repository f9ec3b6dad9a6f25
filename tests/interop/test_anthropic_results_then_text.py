"""An Anthropic request log whose user turn holds tool results followed by more user text (issue 39): the
text is input the application added after the results, inside the turn. Each engine that loops itself
hands it over before the served call in the canonical shape (``canonical.message_units``: each result a
message, then the text), so the played request holds every message of the recorded one: 0 desyncs,
``diff`` equal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replaykit.adapters import import_file
from replaykit.core.analysis.diff import diff_runs
from replaykit.core.trace.canonical import normalized_messages
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.engines import play
from tests.conformance._matrix import engine_extra, options


def _log(together: bool) -> dict[str, Any]:
    """An Anthropic Messages request body, as the SDK sends it (and a request log keeps it)."""
    tool = {"name": "get_weather", "description": "Current weather",
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}
    results: list[Any] = [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "18C"},
                          {"type": "tool_result", "tool_use_id": "toolu_2", "content": "9C"}]
    text = {"type": "text", "text": "Answer in French, please."}
    asked = {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
        {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {"city": "Oslo"}}]}
    turn = [{"role": "user", "content": [*results, text]}] if together else [
        {"role": "user", "content": results}, {"role": "user", "content": [text]}]
    return {"model": "claude-sonnet-4-5", "max_tokens": 512, "tools": [tool], "messages": [
        {"role": "user", "content": "Weather in Paris and Oslo?"}, asked, *turn,
        {"role": "assistant", "content": [{"type": "text", "text": "Paris : 18C, Oslo : 9C."}]}]}


@pytest.mark.parametrize("together", [True, False], ids=["one-user-message", "two-user-messages"])
@pytest.mark.parametrize("engine", ["openai", "langgraph"])
def test_results_then_text_play_offline_with_diff_equal(tmp_path: Path, engine: str, together: bool) -> None:
    if engine == "langgraph":
        pytest.importorskip("langgraph")
    path = tmp_path / "anthropic.json"
    path.write_text(json.dumps(_log(together)))
    (imported,) = import_file(path, "anthropic")
    store = RunStore(tmp_path / "store")
    store.write_run(imported.header, list(imported.events))
    run = store.load(imported.header.run_id)
    assert [len(run.request_messages(c)) for c in run.llm_calls()] == [1, 3 if together else 4]
    result = play(run, engine, options(store, serve_only=True, extra=engine_extra(engine, tmp_path)))
    counters = result.counters
    assert (counters.provider_calls, counters.desyncs, counters.synthetic_steps) == (0, 0, 0)
    played = store.load(result.run_id)
    assert diff_runs(run, played).equal
    recorded_last, played_last = (normalized_messages(r.request_messages(r.llm_calls()[-1])) for r in (run, played))
    assert played_last == recorded_last and len(recorded_last) == 5  # user, assistant, 2 results, the text
    assert [e.message.text for e in played.user_turns()] == [e.message.text for e in run.user_turns()]
    assert Run.load(store.path_for(result.run_id)).final_answer == "Paris : 18C, Oslo : 9C."
