"""The capture package: a tool call that entered is always recorded, requests are compared exactly on
Hermes's thread against the capture's own copy of the previous one (never Hermes's containers), and a
rewrite of any old message is restated in that request's delta."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from replaykit.adapters.hermes.capture import HermesCapture, PendingCall, wire_deltas
from replaykit.adapters.hermes.capture import tools as capture_tools
from replaykit.adapters.hermes.plugin import make_llm_execution, make_tool_execution
from replaykit.adapters.hermes.reconstruct import attempt_bodies
from replaykit.core.trace.ir import MessageRef
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
import long_session

IDS = {"session_id": "S7", "task_id": "t", "turn_id": "S7:t:1", "api_request_id": "S7:t:1:api:1",
       "api_mode": "chat_completions", "platform": "cli", "model": "m"}


def _tool_round(cap: HermesCapture, call_id: str, *, post_hook: bool = True) -> str:
    tool = make_tool_execution(cap)
    kw = {**IDS, "tool_name": "echo", "args": {"x": call_id}, "tool_call_id": call_id}
    out = tool(**kw, next_call=lambda: f"result of {call_id}")
    if post_hook:
        cap.post_tool_call({**kw, "result": out, "status": "ok", "duration_ms": 1})
    return str(out)


@pytest.mark.parametrize("step", ["_stamp", "_mark_current"])
def test_a_raising_enter_step_does_not_lose_the_call(tmp_path, monkeypatch, step):
    def boom(self: Any, pending: PendingCall) -> None:
        raise RuntimeError(f"{step} broke")

    monkeypatch.setattr(capture_tools.ToolCapture, step, boom)
    cap = HermesCapture(RunStore(tmp_path))
    cap.turn_start({**IDS, "user_message": "go"})
    assert _tool_round(cap, "c1") == "result of c1"
    cap.turn_end({**IDS, "completed": True})
    cap.close_all()
    calls = Run.load(tmp_path / "hermes-S7.jsonl").tool_calls()
    assert [(c.call_id, c.result, c.status) for c in calls] == [("c1", "result of c1", "ok")]
    assert "reconstructed_from" not in (calls[0].provider_details or {})  # recorded from the execution itself


def test_a_raising_exit_step_still_writes_the_call_at_once(tmp_path, monkeypatch):
    def boom(state: Any, pending: PendingCall) -> None:
        raise RuntimeError("stash broke")

    monkeypatch.setattr(capture_tools.ToolCapture, "_stash", staticmethod(boom))
    cap = HermesCapture(RunStore(tmp_path))
    cap.turn_start({**IDS, "user_message": "go"})
    _tool_round(cap, "c2", post_hook=False)  # no post_tool_call: only the exit path can record it
    path = tmp_path / "hermes-S7.jsonl"
    assert [c.call_id for c in Run.load(path).tool_calls()] == ["c2"]  # on disk before the turn ends
    _tool_round(cap, "c3")  # the hook then arrives for another call: recorded once, not twice
    cap.turn_end({**IDS, "completed": True})
    cap.close_all()
    assert [c.call_id for c in Run.load(path).tool_calls()] == ["c2", "c3"]


def test_the_chain_keeps_its_own_containers_and_shares_the_leaves():
    chain = wire_deltas.RequestChain()
    history: list[dict[str, Any]] = [{"role": "user" if i % 2 else "assistant", "content": f"m{i}"} for i in range(2000)]
    history[5] = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
    system = {"role": "system", "content": "sys"}
    sent = [system, *history[:1000]]
    chain.commit(chain.prepare("openai-chat", sent), "e1")
    # Nothing of Hermes's list is kept: every container is the chain's own, every string is shared.
    assert not {id(x) for x in chain.seen} & {id(x) for x in sent}
    assert chain.seen[6]["tool_calls"] is not history[5]["tool_calls"]
    assert chain.seen[6]["tool_calls"][0]["function"] is not history[5]["tool_calls"][0]["function"]
    assert all(a["content"] is b["content"] for a, b in zip(chain.seen, sent, strict=True))
    # Fresh copies of the same messages (as Hermes sends them) keep the whole prefix.
    pre = chain.prepare("openai-chat", [dict(system), *[dict(m) for m in history[:1002]]])
    assert pre.keep == 1001 and len(pre.tail) == 2


def test_an_edit_anywhere_in_the_prefix_shortens_what_is_kept():
    chain = wire_deltas.RequestChain()
    history = [{"role": "user", "content": f"m{i}"} for i in range(50)]
    chain.commit(chain.prepare("openai-chat", history[:40]), "e1")
    for where in (0, 1, 20, 39):
        edited = [dict(m) for m in history[:45]]
        edited[where] = {**edited[where], "content": "edited"}
        assert chain.prepare("openai-chat", edited).keep == where


def _restated(run: Run) -> int:
    """Requests whose delta keeps less than the whole previous request (a rewrite was restated)."""
    calls, bodies = run.llm_calls(), attempt_bodies(run)
    return sum(1 for i in range(1, len(calls)) if calls[i].request.context.keep < len(bodies[i - 1]["messages"]))


def _edit_content(messages: list[Any]) -> None:
    messages[3] = {**messages[3], "content": "rewritten in place"}


def _record(tmp_path: Path, n_steps: int, rewrite_turn: int | None,
            edit: Callable[[list[Any]], None] = _edit_content) -> tuple[Path, list[dict[str, Any]], HermesCapture]:
    """The long-session workload through the real plugin; optionally an old message is edited in place
    (same count, same system prompt, same recent tail) by ``edit`` before turn ``rewrite_turn``."""
    from replaykit.adapters.hermes import plugin

    cap = HermesCapture(RunStore(tmp_path))
    bus = long_session.HermesBus()
    sent: list[dict[str, Any]] = []
    llm = make_llm_execution(cap)

    def spy(**kw: Any) -> Any:
        if kw.get("api_call_count") == 1 and rewrite_turn is not None and f":{rewrite_turn:08x}" in kw["turn_id"]:
            edit(kw["request"]["messages"])
        body = {k: v for k, v in kw["request"].items() if k != "timeout"}
        sent.append(json.loads(json.dumps(body)))
        return llm(**kw)

    previous = plugin._capture
    plugin._capture = cap
    try:
        plugin.register(bus)
        bus._middleware["llm_execution"] = [spy]
        long_session.drive(n_steps, bus)
    finally:
        plugin._capture = previous
    cap.close_all()
    return tmp_path / f"hermes-{long_session.SESSION_ID}.jsonl", sent, cap


def test_a_rewrite_in_the_middle_is_restated(tmp_path):
    path, sent, _ = _record(tmp_path, 60, rewrite_turn=4)
    run = Run.load(path)
    assert _restated(run) == 2  # the edited request, and the next one (which has the original back)
    assert [b["messages"] for b in attempt_bodies(run)] == [b["messages"] for b in sent]
    assert len(run.tool_calls()) == 60 and len(run.steps) == 60 + 66  # 11 LLM calls per 10 tool steps


def test_the_long_session_records_every_request_exactly(tmp_path):
    path, sent, _ = _record(tmp_path, 60, rewrite_turn=None)
    run = Run.load(path)
    assert _restated(run) == 0
    assert [b["messages"] for b in attempt_bodies(run)] == [b["messages"] for b in sent]
    # Deltas really are deltas: after the first request, each appends at most the new tail.
    assert max(len(e.request.context.append) for e in run.llm_calls()[1:]) <= 3
    # Each tool result is stored once: every appended tool message is a reference to its tool call
    # (schema 2), with "strip" where Hermes stripped the result's whitespace before sending it.
    refs = [item for call in run.llm_calls() for item in call.request.context.append
            if type(item) is MessageRef or item.role == "tool"]
    assert refs and all(type(item) is MessageRef for item in refs)
    assert 0 < sum(1 for item in refs if item.strip) < len(refs)


def _first_assistant_with_calls(messages: list[Any]) -> int:
    return next(i for i, m in enumerate(messages) if m.get("tool_calls"))


def _edit_tool_arguments(messages: list[Any]) -> None:
    """A nested edit: one tool call's arguments string in an old assistant message."""
    i = _first_assistant_with_calls(messages)
    calls = [dict(c) for c in messages[i]["tool_calls"]]
    calls[0] = {**calls[0], "function": {**calls[0]["function"], "arguments": '{"edited":true}'}}
    messages[i] = {**messages[i], "tool_calls": calls}


def _edit_extra_key(messages: list[Any]) -> None:
    """A key the message did not have (the fast decoder declines it: the codec restates it)."""
    messages[2] = {**messages[2], "name": "someone"}


def _edit_just_outside_the_window(messages: list[Any]) -> None:
    """An old message just before the recent tail (the earlier O(1) check's window of 4 left it to a
    verifier thread; a turn's first request has two messages more than the last one)."""
    i = len(messages) - 3 - 4
    messages[i] = {**messages[i], "content": str(messages[i].get("content") or "") + " (edited)"}


@pytest.mark.parametrize("edit", [_edit_tool_arguments, _edit_extra_key, _edit_just_outside_the_window])
def test_hostile_edits_of_old_messages_still_rebuild_every_request_exactly(tmp_path, edit):
    path, sent, _ = _record(tmp_path, 40, rewrite_turn=2, edit=edit)
    run = Run.load(path)
    assert _restated(run) == 2  # the edited request and the next one
    assert [b["messages"] for b in attempt_bodies(run)] == [b["messages"] for b in sent]


def _aux(cap: HermesCapture, phase: str, started: float, **extra: Any) -> None:
    kw = {**IDS, "aux_task": "title_generation", "api_request_id": f"aux-{started}", "started_at": started,
          "model": "m", "provider": "custom", "api_mode": "chat_completions", **extra}
    if phase == "pre":
        cap.aux_pre({**kw, "request": {"method": "POST", "body": {"model": "m", "messages": [
            {"role": "system", "content": "You name chat sessions."}, {"role": "user", "content": "go"}]}}})
    else:
        cap.aux_post({**kw, "response": {"finish_reason": "stop"}})


def _auxiliary_events(path: Path) -> list[dict[str, Any]]:
    return [e.data for e in Run.load(path).events if getattr(e, "name", None) == "auxiliary_call"]


def test_an_auxiliary_call_in_flight_at_the_turn_end_is_written_once_when_it_ends(tmp_path):
    """Hermes 0.22 titles a session once the turn settles: the call is still in flight at turn_end."""
    cap = HermesCapture(RunStore(tmp_path))
    cap.turn_start({**IDS, "user_message": "go"})
    _aux(cap, "pre", 1.0)
    cap.turn_end({**IDS, "completed": True})
    _aux(cap, "post", 1.0)
    _aux(cap, "pre", 2.0)  # a second call that never ends: written at exit, marked
    cap.close_all()
    events = _auxiliary_events(tmp_path / "hermes-S7.jsonl")
    assert [(e["api_request_id"], e["outcome"], e["request"] is not None) for e in events] == [
        ("aux-1.0", "ok", True), ("aux-2.0", "unknown", True)]


def test_an_auxiliary_call_that_waited_too_long_is_written_at_the_turn_end(tmp_path, monkeypatch):
    from replaykit.adapters.hermes.capture import auxiliary

    monkeypatch.setattr(auxiliary, "STALE_AFTER_S", 0.0)  # Hermes skipped its post (a timed-out callback)
    cap = HermesCapture(RunStore(tmp_path))
    cap.turn_start({**IDS, "user_message": "go"})
    _aux(cap, "pre", 1.0)
    cap.turn_end({**IDS, "completed": True})
    path = tmp_path / "hermes-S7.jsonl"
    assert [e["outcome"] for e in _auxiliary_events(path)] == ["unknown"]  # on disk before the process ends
    cap.close_all()
    assert [e["outcome"] for e in _auxiliary_events(path)] == ["unknown"]
