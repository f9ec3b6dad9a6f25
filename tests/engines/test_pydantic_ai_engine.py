"""The PydanticAI engine: offline replay with 0 provider calls, live branches against the scripted
server on 127.0.0.1, tools (served / not available / user implementation through the guard), faults."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")
pytest.importorskip("openai")

from replaykit.core.errors import ProviderError
from replaykit.core.replay.tool_ladder import UNAVAILABLE_MARKER
from replaykit.core.trace.ir import LLMCallEvent, Provenance, ToolCallEvent
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore, write_run_file
from replaykit.engines.pydantic_ai.engine import play, play_run, replay
from replaykit.engines.pydantic_ai.messages import from_pydantic_ai, to_pydantic_ai
from replaykit.testing.script import call, fault, text
from replaykit.testing.scripted_server import ScriptedServer
from tests.exporters.pai_fixtures import FIXTURES, weather_run


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_replay_reproduces_the_original_messages(name: str) -> None:
    run = FIXTURES[name]()
    result = replay(run)
    original = run.conversation()
    residue = to_pydantic_ai(original).residue
    assert from_pydantic_ai(result.messages, residue) == original
    assert result.final_answer == run.final_answer
    c = result.counters
    assert (c.provider_calls, c.desyncs, c.synthetic, c.tools_executed, c.llm_live) == (0, 0, 0, 0, 0)
    assert c.llm_served == len(run.llm_calls())
    assert c.tools_served == len(run.tool_calls())


def test_served_responses_carry_recorded_usage_and_are_fresh_copies() -> None:
    run = weather_run()
    first, second = replay(run), replay(run)
    responses = [m for m in first.messages if m.kind == "response"]
    assert [(r.usage.input_tokens, r.usage.output_tokens) for r in responses] == [(50, 20), (90, 15), (120, 18)]
    again = [m for m in second.messages if m.kind == "response"]
    assert all(a is not b for a, b in zip(responses, again, strict=True))
    assert {getattr(r, "run_id", None) for r in responses}.isdisjoint({getattr(r, "run_id", 1) for r in again}) \
        or getattr(responses[0], "run_id", None) is None


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_full_play_makes_zero_provider_calls(tmp_path: Path, name: str) -> None:
    run = FIXTURES[name]()
    trace = write_run_file(tmp_path / "orig.jsonl", run.header, run.events)
    before = hashlib.sha256(trace.read_bytes()).hexdigest()
    with ScriptedServer([text("must never be asked")]) as server:
        result = play_run(Run.load(trace), {"base_url": server.base_url, "model": "m", "store": str(tmp_path / "s")})
        assert server.requests == []
    assert result.counters.provider_calls == 0 and result.counters.llm_live == 0
    assert hashlib.sha256(trace.read_bytes()).hexdigest() == before
    new = RunStore(tmp_path / "s").load(result.run_id)
    steps = [e for e in new.events if isinstance(e, LLMCallEvent | ToolCallEvent)]
    assert steps and all(e.provenance == Provenance.SERVED for e in steps)


def _chat_view(body: dict[str, Any]) -> list[tuple[Any, ...]]:
    out = []
    for m in body["messages"]:
        calls = tuple((c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
                      for c in m.get("tool_calls") or [])
        content = m.get("content")
        if m["role"] == "assistant" and isinstance(content, str) and content.startswith("<think>"):
            content = content.split("</think>", 1)[1].strip() or None  # PydanticAI's thinking encoding
        out.append((m["role"], content or None, m.get("tool_call_id"), calls))
    return out


def _expected_view(messages: list[Any]) -> list[tuple[Any, ...]]:
    out = []
    for m in messages:
        calls = tuple((c.id, c.name, c.arguments) for c in m.tool_calls)
        tool_id = m.tool_results[0].tool_call_id if m.tool_results else None
        content = m.tool_results[0].content if m.tool_results else m.text
        out.append((m.role, content or None, tool_id, calls))
    return out


def test_live_branch_sends_exactly_the_expected_requests(tmp_path: Path) -> None:
    run = weather_run()
    llm_steps = [s.index for s in run.steps if s.kind == "llm"]
    cut = llm_steps[-1]  # the final answer goes live
    with ScriptedServer([text("A different final answer.")]) as server:
        result = play_run(run, {"at": cut, "base_url": server.base_url, "model": "other-model",
                                "store": str(tmp_path)})
        requests = server.llm_requests
    assert len(requests) == 1
    assert requests[0].body["model"] == "other-model"
    assert _chat_view(requests[0].body) == _expected_view(run.request_messages(run.steps[cut].event))
    assert sorted(t["function"]["name"] for t in requests[0].body["tools"]) == ["get_weather", "write_file"]
    assert result.final_answer == "A different final answer."
    new = RunStore(tmp_path).load(result.run_id)
    assert new.header.lineage is not None and new.header.lineage.parent_run_id == run.run_id
    assert new.header.lineage.parent_step == cut and new.header.lineage.engine == "pydantic-ai"
    live = [e for e in new.llm_calls() if e.provenance == Provenance.LIVE]
    assert len(live) == 1 and live[0].response.message.text == "A different final answer."
    # The live request is the recorded one, IR details included (kept on the IR side, restored).
    assert new.request_messages(live[0]) == run.request_messages(run.steps[cut].event)
    assert new.final_answer == "A different final answer."


def test_live_branch_of_a_responses_run_goes_through_the_one_live_model(tmp_path: Path) -> None:
    # Every engine's live part speaks Chat Completions through core.live_model, whatever API recorded it.
    run = FIXTURES["responses"]()
    cut = [s.index for s in run.steps if s.kind == "llm"][-1]
    with ScriptedServer([text("Responses answer.")]) as server:
        result = play_run(run, {"at": cut, "base_url": server.base_url, "model": "m", "store": str(tmp_path)})
        assert [r.path for r in server.llm_requests] == ["/v1/chat/completions"]
        messages = server.llm_requests[0].body["messages"]
    outputs = [m for m in messages if m["role"] == "tool"]
    assert [o["tool_call_id"] for o in outputs] == ["call_1", "call_2", "call_3"]
    assert result.final_answer == "Responses answer."


def test_live_tools_served_unavailable_or_run_through_the_guard(tmp_path: Path) -> None:
    run = weather_run()
    script = [call("get_weather", {"city": "Paris"}), call("get_weather", {"city": "Lima"}),
              call("write_file", {"path": "x.txt", "content": "hi"}), text("done")]
    # No implementations: the matching call is served from the record, the other one is not available.
    with ScriptedServer(list(script)) as server:
        result = play_run(run, {"at": 0, "base_url": server.base_url, "model": "m", "store": str(tmp_path)})
        bodies = [r.body for r in server.llm_requests]
    results = {m["tool_call_id"]: m["content"] for m in bodies[-1]["messages"] if m["role"] == "tool"}
    values = list(results.values())
    assert values[0] == "Sunny, 21C"
    assert values[1].startswith(UNAVAILABLE_MARKER)
    assert values[2].startswith(UNAVAILABLE_MARKER)  # the recorded write had other arguments
    assert result.counters.tools_executed == 0
    assert (result.counters.tools_served, result.counters.tools_unavailable) == (1, 2)


def test_live_tools_user_module_goes_through_the_guard(tmp_path: Path) -> None:
    run = weather_run()
    module = tmp_path / "my_tools.py"
    marker = tmp_path / "written.txt"
    module.write_text(
        "from pathlib import Path\n"
        "def get_weather(city):\n    return 'LIVE weather for ' + city\n\n"
        "def write_file(path, content):\n    Path(path).write_text(content)\n    return 'ok'\n")
    script = [call("get_weather", {"city": "Lima"}), call("write_file", {"path": str(marker), "content": "hi"}),
              text("done")]
    with ScriptedServer(list(script)) as server:
        result = play_run(run, {"at": 0, "base_url": server.base_url, "model": "m", "store": str(tmp_path),
                                "tools_module": str(module)})
        last = server.llm_requests[-1].body
    results = [m["content"] for m in last["messages"] if m["role"] == "tool"]
    assert not marker.exists(), "a destructive tool ran without --allow-destructive"
    assert results[1].startswith("[replaykit dry-run]")
    if _guard_available():
        assert results[0] == "LIVE weather for Lima"
        assert result.counters.tools_dry_run == 1 and result.counters.tools_executed == 1
    else:  # without the core guard nothing real runs (fail closed)
        assert results[0].startswith("[replaykit dry-run]")
        assert result.counters.tools_dry_run == 2 and result.counters.tools_executed == 0
    new = RunStore(tmp_path).load(result.run_id)
    statuses = {e.name: e.status for e in new.tool_calls() if e.provenance != Provenance.SERVED}
    assert statuses["write_file"] == "dry_run"


def _guard_available() -> bool:
    try:
        from replaykit.core import guard  # noqa: F401
    except ImportError:
        return False
    return True


def test_no_request_limit_cuts_a_long_replay_short() -> None:
    from tests.exporters.pai_fixtures import long_run

    run = long_run(60)  # more than PydanticAI's default request_limit of 50
    result = replay(run)
    assert result.counters.llm_served == 61 and result.final_answer == "finished"


# ------------------------------------------------------------------------------------------ faults


def _play_with(server_script: list[Any], tmp_path: Path, **extra: Any) -> tuple[Any, list[Any]]:
    run = weather_run()
    cut = [s.index for s in run.steps if s.kind == "llm"][-1]
    options = {"at": cut, "model": "m", "store": str(tmp_path), "retry_base_delay": 0.01, **extra}
    with ScriptedServer(server_script) as server:
        options["base_url"] = server.base_url
        result = play_run(run, options)
        return result, server.llm_requests


def test_429_honours_retry_after(tmp_path: Path) -> None:
    import time

    started = time.monotonic()
    result, requests = _play_with([fault("429", retry_after=0.3), text("after 429")], tmp_path)
    assert time.monotonic() - started >= 0.3
    assert len(requests) == 2 and result.final_answer == "after 429"
    assert result.counters.provider_calls == 2 and result.counters.retries == 1
    errors = [e for e in RunStore(tmp_path).load(result.run_id).errors if e.where == "llm"]
    assert [(e.status_code, e.retryable) for e in errors] == [(429, True)]


def test_500s_are_retried_with_backoff(tmp_path: Path) -> None:
    result, requests = _play_with([fault("500"), fault("500"), text("after 500s")], tmp_path)
    assert len(requests) == 3 and result.final_answer == "after 500s"


def test_a_hung_stream_is_cut_by_the_stale_timeout_and_retried(tmp_path: Path) -> None:
    result, requests = _play_with([fault("stall", stall_seconds=5), text("after stall")], tmp_path,
                                  stale_timeout=0.5)
    assert len(requests) == 2 and result.final_answer == "after stall"
    errors = RunStore(tmp_path).load(result.run_id).errors
    assert any("timeout" in e.message for e in errors)


def test_a_length_truncated_answer_is_continued(tmp_path: Path) -> None:
    result, requests = _play_with([fault("length", text="The answer is lo"), text("ng and complete.")], tmp_path)
    assert len(requests) == 2
    follow = requests[1].body["messages"]
    assert follow[-2]["role"] == "assistant" and follow[-1]["role"] == "user"
    partial = follow[-2]["content"]  # what the server sent before cutting the answer
    assert partial and "The answer is lo".startswith(partial)
    assert result.final_answer == partial + "ng and complete."
    live = [e for e in RunStore(tmp_path).load(result.run_id).llm_calls() if e.provenance == Provenance.LIVE]
    assert [e.response.message.text for e in live] == [result.final_answer]


def test_401_fails_at_once_with_one_line_and_saves_the_partial_branch(tmp_path: Path) -> None:
    with pytest.raises(ProviderError) as info:
        _play_with([fault("401"), text("never")], tmp_path)
    message = str(info.value)
    assert "\n" not in message and "HTTP 401" in message and "partial branch saved as" in message
    run_id = message.rsplit(" ", 1)[-1]
    saved = RunStore(tmp_path).load(run_id)
    assert saved.status == "failed"
    assert any(e.provenance == Provenance.SERVED for e in saved.llm_calls())


def test_play_entry_point_takes_play_options_and_returns_play_result(tmp_path: Path) -> None:
    from replaykit.core.replay.play import PlayOptions, PlayResult

    run = weather_run()
    with ScriptedServer([text("x")]) as server:
        options = PlayOptions(base_url=server.base_url, model="m", store=RunStore(tmp_path), cut=5)
        result = play(run, options)
    assert isinstance(result, PlayResult)
    summary = result.to_json()
    json.dumps(summary)
    assert summary["engine"] == "pydantic-ai" and summary["parent_run_id"] == run.run_id and summary["cut"] == 5
    assert summary["counters"]["live_llm_steps"] == 1 and summary["counters"]["provider_calls"] == 1
    assert RunStore(tmp_path).load(result.run_id).header.lineage.parent_run_id == run.run_id  # type: ignore[union-attr]


# ------------------------------------------------------------------------------ iteration budget


def _budget_play(tmp_path: Path, script: list[Any], budget: int) -> tuple[Any, list[Any]]:
    run = weather_run()
    with ScriptedServer(script) as server:
        result = play_run(run, {"at": 0, "base_url": server.base_url, "model": "m", "store": str(tmp_path),
                                "max_iterations": budget, "retry_base_delay": 0.01})
        return result, [r.body for r in server.llm_requests]


def test_iteration_budget_ends_the_turn_with_one_grace_call(tmp_path: Path) -> None:
    from replaykit.core.replay.resilience import GRACE_PROMPT

    result, bodies = _budget_play(tmp_path, [call("get_weather", {"city": "Paris"}), text("Final, no tools."),
                                             text("never asked")], budget=1)
    assert len(bodies) == 2  # one call within the budget, then exactly one grace call
    assert bodies[0].get("tools") and not bodies[1].get("tools")  # the grace call offers no tools
    last = bodies[1]["messages"][-1]
    assert last["role"] == "user" and last["content"] == GRACE_PROMPT
    assert bodies[1]["messages"][-2]["role"] == "tool"  # the budgeted call's tool was still answered
    assert result.final_answer == "Final, no tools." and result.counters.grace_calls == 1
    new = RunStore(tmp_path).load(result.run_id)
    live = [e for e in new.llm_calls() if e.provenance == Provenance.LIVE]
    assert len(live) == 2
    grace_request = new.request_messages(live[1])
    assert grace_request[-1].role == "user" and grace_request[-1].text == GRACE_PROMPT
    assert not new.request_tools(live[1].request)
    assert new.status == "completed"


def test_a_grace_answer_that_still_calls_tools_ends_the_turn(tmp_path: Path) -> None:
    from replaykit.engines.pydantic_ai.engine import BUDGET_ANSWER

    result, bodies = _budget_play(tmp_path, [call("get_weather", {"city": "Paris"}),
                                             call("get_weather", {"city": "Rome"}), text("never asked")], budget=1)
    assert len(bodies) == 2
    assert result.final_answer == BUDGET_ANSWER
    new = RunStore(tmp_path).load(result.run_id)
    assert [e.arguments for e in new.tool_calls()] == [{"city": "Paris"}]  # the grace call's call never ran
    # The trace keeps the grace answer as the model gave it.
    assert new.llm_calls()[-1].response.message.tool_calls[0].arguments == {"city": "Rome"}


def test_the_budget_counts_live_calls_only(tmp_path: Path) -> None:
    run = weather_run()
    cut = [s.index for s in run.steps if s.kind == "llm"][-1]  # two served LLM steps before the cut
    with ScriptedServer([text("live answer")]) as server:
        result = play_run(run, {"at": cut, "base_url": server.base_url, "model": "m", "store": str(tmp_path),
                                "max_iterations": 1})
        body = server.llm_requests[0].body
    assert body.get("tools") and result.counters.grace_calls == 0
    assert result.final_answer == "live answer"


def _inconsistent_run() -> Run:
    """The second request's tool result differs from the recorded tool call's result: an agent that is
    served that result cannot send the recorded request (a desync at step 2)."""
    from replaykit.core.trace.ir import (
        LLMResponse,
        Message,
        RunHeader,
        TextPart,
        ToolCallPart,
        ToolResultPart,
    )
    from replaykit.core.trace.recorder import Recorder
    from tests.exporters.pai_fixtures import WEATHER

    rec = Recorder(RunHeader(run_id="drift", created_at="2026-01-01T00:00:00Z", model="gpt-test"))
    msgs = [Message(role="user", parts=[TextPart(text="Weather in Paris?")])]
    rec.turn_start(msgs[0])
    a1 = Message(role="assistant", parts=[ToolCallPart(id="c1", name="get_weather", arguments={"city": "Paris"})])
    e1 = rec.llm_call(msgs, LLMResponse(message=a1, finish_reason="tool_calls"), tools=[WEATHER])
    rec.tool_call("c1", "get_weather", {"city": "Paris"}, result="Sunny", llm_call_id=e1.id)
    other = Message(role="tool", parts=[ToolResultPart(tool_call_id="c1", name="get_weather", content="Rain")])
    a2 = Message(role="assistant", parts=[TextPart(text="It rains.")])
    rec.llm_call([*msgs, a1, other], LLMResponse(message=a2, finish_reason="stop"), tools=[WEATHER])
    rec.turn_end("It rains.")
    rec.run_end("It rains.")
    return Run(rec.header, rec.events)


def test_a_desync_fails_open_to_live_with_a_desync_event(tmp_path: Path) -> None:
    run = _inconsistent_run()
    with ScriptedServer([text("Live: sunny.")]) as server:
        result = play_run(run, {"base_url": server.base_url, "model": "m", "store": str(tmp_path)})
        assert len(server.llm_requests) == 1
        sent = server.llm_requests[0].body["messages"]
    assert [m["content"] for m in sent if m["role"] == "tool"] == ["Sunny"]  # what the agent really holds
    c = result.counters
    assert (c.desyncs, c.llm_served, c.llm_live, c.tools_served, c.provider_calls) == (1, 1, 1, 1, 1)
    assert result.final_answer == "Live: sunny."
    new = RunStore(tmp_path).load(result.run_id)
    desyncs = [e for e in new.events if e.kind == "desync"]
    assert len(desyncs) == 1 and desyncs[0].step == 2
    assert [e.provenance for e in new.llm_calls()] == [Provenance.SERVED, Provenance.LIVE]


def test_offline_replay_reports_the_desync_and_follows_the_record() -> None:
    result = replay(_inconsistent_run())
    assert result.counters.desyncs == 1 and result.counters.provider_calls == 0
    assert result.final_answer == "It rains."
