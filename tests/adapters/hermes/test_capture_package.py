"""The capture package: a tool call that entered is always recorded, requests are decided in O(1) on
Hermes's thread, and a rewrite the O(1) checks cannot see is caught by the verifier and restated."""

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


class _Counting(dict):  # type: ignore[type-arg]
    """A message dict that counts how often it is compared."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        _Counting.compared += 1
        return dict.__eq__(self, other)

    __hash__ = None  # type: ignore[assignment]


def test_the_request_decision_on_hermes_thread_is_o1_in_the_conversation():
    chain = wire_deltas.RequestChain()
    history = [_Counting(role="user" if i % 2 else "assistant", content=f"m{i}") for i in range(2000)]
    system = _Counting(role="system", content="sys")
    pre = chain.prepare("openai-chat", [system, *history[:1000]])
    chain.commit(pre, "e1")
    _Counting.compared = 0
    pre = chain.prepare("openai-chat", [_Counting(system), *[_Counting(m) for m in history[:1002]]])
    assert pre.keep == 1001 and len(pre.tail) == 2
    assert pre.verify_upto == 1001 - wire_deltas.WINDOW
    assert _Counting.compared <= wire_deltas.WINDOW + 1  # the system message and the window, no more


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


def test_a_rewrite_in_the_middle_is_restated_by_the_verifier(tmp_path):
    path, sent, cap = _record(tmp_path, 60, rewrite_turn=4)
    assert cap.verifier.fixes == 2  # the edited request, and the next one (which has the original back)
    run = Run.load(path)
    assert [b["messages"] for b in attempt_bodies(run)] == [b["messages"] for b in sent]
    assert len(run.steps) == 60


def test_the_long_session_records_every_request_exactly(tmp_path):
    path, sent, cap = _record(tmp_path, 60, rewrite_turn=None)
    assert cap.verifier.fixes == 0
    run = Run.load(path)
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
    """The last message the O(1) check on Hermes's thread does not look at (a turn's first request has
    two messages more than the last one: its final answer and the new user message)."""
    i = len(messages) - 3 - wire_deltas.WINDOW
    messages[i] = {**messages[i], "content": str(messages[i].get("content") or "") + " (edited)"}


@pytest.mark.parametrize("edit", [_edit_tool_arguments, _edit_extra_key, _edit_just_outside_the_window])
def test_hostile_edits_of_old_messages_still_rebuild_every_request_exactly(tmp_path, edit):
    path, sent, cap = _record(tmp_path, 40, rewrite_turn=2, edit=edit)
    assert cap.verifier.fixes == 2  # caught off Hermes's thread: the edited request and the next one
    run = Run.load(path)
    assert [b["messages"] for b in attempt_bodies(run)] == [b["messages"] for b in sent]
