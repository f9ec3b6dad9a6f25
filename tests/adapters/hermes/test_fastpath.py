"""The recorder's hot path (plain dicts written without pydantic) against the slow path it replaces.

Three claims: (1) every fast message/response dict equals what the shared codec + pydantic dump give;
(2) every line the capture engine writes validates and is byte-for-byte what ``model_dump_json`` of the
validated event writes (so nothing on disk depends on which path wrote it); (3) requests stay exactly
reconstructable while Hermes rewrites history, mixes shapes the fast path declines, and fails attempts.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replaykit.adapters.hermes import fastpath
from replaykit.adapters.hermes.capture import HermesCapture
from replaykit.adapters.hermes.plugin import make_llm_execution, make_tool_execution
from replaykit.adapters.hermes.reconstruct import attempt_bodies
from replaykit.adapters.hermes.response import response_to_ir
from replaykit.core.trace.codecs import openai_chat
from replaykit.core.trace.ir import EVENT_ADAPTER, LLMResponse
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "hermes"


def slow(message: Any) -> dict[str, Any]:
    return openai_chat.decode_message(message).model_dump(mode="json", exclude_none=True)


def fixture_messages() -> list[dict[str, Any]]:
    """Every Chat Completions message real Hermes sent in the fixtures (the other api modes' recordings
    hold Anthropic / Responses bodies, which the Chat fast path is not for)."""
    out = []
    for path in sorted(FIX.glob("*.requests.json")):
        if path.name.startswith(("anthropic_messages.", "codex_responses.")):
            continue
        for body in json.loads(path.read_text()):
            out.extend(body.get("messages") or [])
    return out


def test_fixture_messages_take_the_fast_path_and_equal_the_codec():
    messages = fixture_messages()
    assert len(messages) > 50
    for message in messages:
        fast = fastpath.chat_message(message)
        assert fast is not None, message  # every shape real Hermes sent is handled without the codec
        assert fast == slow(message)
        assert json.dumps(fast) == json.dumps(slow(message))  # same key order too


CALL = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": [1, 2.5, null]}'}}
HANDLED = [
    {"role": "system", "content": "s"},
    {"role": "developer", "content": ""},
    {"role": "user", "content": "hi", "name": "bob"},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "assistant", "content": "x", "reasoning_content": "think", "tool_calls": [CALL, {**CALL, "id": "c2"}]},
    {"role": "assistant", "content": "", "reasoning": ""},
    {"role": "assistant", "content": "t", "tool_calls": [{**CALL, "function": {"name": "f", "arguments": "not json"}}]},
    {"role": "assistant", "content": "t", "tool_calls": [{**CALL, "function": {"name": "f", "arguments": "null"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "r"},
    {"role": "tool", "tool_call_id": "c1", "content": "", "name": "f"},
]
DECLINED = [
    {"role": "user", "content": [{"type": "text", "text": "hi"}]},  # content list
    {"role": "user"},  # no content
    {"role": "assistant", "content": "x", "refusal": "no"},
    {"role": "assistant", "content": "x", "reasoning_content": None},
    {"role": "assistant", "content": "x", "reasoning_content": "a", "reasoning": "b"},
    {"role": "assistant", "content": "x", "tool_calls": []},
    {"role": "assistant", "content": "x", "tool_calls": None},
    {"role": "assistant", "content": "x", "tool_calls": [{**CALL, "index": 0}]},
    {"role": "assistant", "content": "x", "tool_calls": [{"id": "c", "function": CALL["function"]}]},
    {"role": "assistant", "content": "x", "tool_calls": [{**CALL, "function": {"name": "f", "arguments": {"a": 1}}}]},
    {"role": "user", "content": "x", "name": None},
    {"role": "user", "content": "x", "extra": 1},
    {"role": "user", "content": "x", "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "c1", "content": None},
    {"role": "tool", "tool_call_id": "c1", "content": "r", "extra": True},
    {"role": "tool", "content": "r"},
    {"role": "robot", "content": "x"},
    "not a message",
]


@pytest.mark.parametrize("message", HANDLED)
def test_handled_shapes_equal_the_codec(message):
    fast = fastpath.chat_message(message)
    assert fast is not None
    assert json.dumps(fast) == json.dumps(slow(message))


@pytest.mark.parametrize("message", DECLINED)
def test_other_shapes_are_left_to_the_codec(message):
    assert fastpath.chat_message(message) is None


@pytest.mark.parametrize("raw", ["Infinity", '{"x": NaN}', '[1, -Infinity]'])
def test_non_finite_arguments_are_left_to_the_codec(raw):
    """json.loads reads NaN / Infinity as floats; the IR's JSON dump writes null there: not the fast
    path's business (found by the generated-messages property below)."""
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": raw}}
    assert fastpath.chat_message({"role": "assistant", "content": None, "tool_calls": [call]}) is None
    response = SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(
        content=None, tool_calls=[SimpleNamespace(id="c", function=SimpleNamespace(name="f", arguments=raw))]),
        finish_reason="tool_calls")], usage=None, model="m", id="r")
    assert fastpath.chat_response(response)["message"]["parts"][0]["raw_arguments"] == raw


text = st.text(max_size=12)
json_args = st.one_of(st.just("{}"), st.builds(json.dumps, st.dictionaries(text, st.one_of(text, st.integers(), st.none()),
                                                                             max_size=3)), text)
calls = st.lists(st.fixed_dictionaries({"id": text, "type": st.just("function"),
                                        "function": st.fixed_dictionaries({"name": text, "arguments": json_args})}),
                 max_size=3)
messages = st.one_of(
    st.fixed_dictionaries({"role": st.sampled_from(["system", "developer", "user", "assistant"]),
                           "content": st.one_of(text, st.none())},
                          optional={"name": st.one_of(text, st.none(), st.integers())}),
    st.fixed_dictionaries({"role": st.just("assistant"), "content": st.one_of(text, st.none()), "tool_calls": calls},
                          optional={"reasoning_content": st.one_of(text, st.none()), "reasoning": text}),
    st.fixed_dictionaries({"role": st.just("tool"), "tool_call_id": text, "content": st.one_of(text, st.none())},
                          optional={"name": st.one_of(text, st.none())}),
)


@settings(max_examples=300, deadline=None)
@given(messages)
def test_generated_messages_fast_equals_codec_or_declines(message):
    fast = fastpath.chat_message(message)
    if fast is not None:
        assert json.dumps(fast) == json.dumps(slow(message))


def _ns_response(**over: Any) -> SimpleNamespace:
    call = SimpleNamespace(id="c1", type="function", function=SimpleNamespace(name="f", arguments='{"x": 1}'))
    msg = SimpleNamespace(role="assistant", content=over.pop("content", "hello"), tool_calls=over.pop("calls", [call]),
                          reasoning_content=over.pop("reasoning_content", None))
    usage = over.pop("usage", SimpleNamespace(prompt_tokens=5, completion_tokens=2, total_tokens=7,
                                              prompt_tokens_details=SimpleNamespace(cached_tokens=3),
                                              completion_tokens_details=SimpleNamespace(reasoning_tokens=1)))
    return SimpleNamespace(id="r1", model="m", choices=[SimpleNamespace(index=0, message=msg, finish_reason="stop")],
                           usage=usage, **over)


@pytest.mark.parametrize("result", [
    _ns_response(),
    _ns_response(content="", calls=None, reasoning_content="why", usage=None),
    _ns_response(content=None, usage=SimpleNamespace(prompt_tokens=None, completion_tokens=True, total_tokens=3)),
    _ns_response(calls=[SimpleNamespace(id=None, function=SimpleNamespace(name="g", arguments={"raw": "obj"}))]),
    {"id": "d", "model": "m", "choices": [{"message": {"content": "dict form", "tool_calls": None},
                                           "finish_reason": "length"}], "usage": {"prompt_tokens": 1}},
    SimpleNamespace(choices=[], usage=None),
])
def test_chat_response_dict_is_the_canonical_dump(result):
    fast = fastpath.chat_response(result)
    model = LLMResponse.model_validate(fast)
    assert model.model_dump(mode="json", exclude_none=True) == fast
    assert model.model_dump_json(exclude_none=True) == json.dumps(fast, separators=(",", ":"))
    assert response_to_ir("openai-chat", result) == model


def test_chat_response_of_a_real_openai_object():
    from openai.types.chat import ChatCompletion

    completion = ChatCompletion.model_validate({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-x",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None,
            "tool_calls": [{"id": "c9", "type": "function", "function": {"name": "f", "arguments": "{\"q\": \"é\"}"}}]}}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13}})
    fast = fastpath.chat_response(completion)
    assert fast["message"]["parts"] == [{"type": "tool_call", "id": "c9", "name": "f", "arguments": {"q": "é"},
                                         "raw_arguments": "{\"q\": \"é\"}"}]
    assert LLMResponse.model_validate(fast).model_dump(mode="json", exclude_none=True) == fast


# ------------------------------------------------------------------------------ whole capture


def _result(step: int, calls: list[tuple[str, str]] | None, text: str = "") -> SimpleNamespace:
    tcs = [SimpleNamespace(id=cid, type="function", function=SimpleNamespace(name="echo", arguments=args))
           for cid, args in calls] if calls else None
    msg = SimpleNamespace(role="assistant", content=text, tool_calls=tcs, reasoning_content=None)
    return SimpleNamespace(id=f"r{step}", model="m", choices=[SimpleNamespace(index=0, message=msg,
                           finish_reason="tool_calls" if calls else "stop")],
                           usage=SimpleNamespace(prompt_tokens=10 + step, completion_tokens=2, total_tokens=12 + step))


def _drive(tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    """A session whose history grows, is rewritten (compression), holds shapes the fast path declines
    (multimodal content, a refusal), uses NaN-free odd values, and has a failed attempt then a retry."""
    cap = HermesCapture(RunStore(tmp_path))
    llm, tool = make_llm_execution(cap), make_tool_execution(cap)
    ids = {"session_id": "S9", "task_id": "t", "turn_id": "S9:t:1", "api_mode": "chat_completions",
           "platform": "cli", "model": "m", "provider": "custom", "base_url": "http://127.0.0.1:1/v1"}
    tools = [{"type": "function", "function": {"name": "echo", "parameters": {"type": "object"}}}]
    sent: list[dict[str, Any]] = []
    history: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "look"},
                                     {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]}]
    cap.session_start({"session_id": "S9", "model": "m", "platform": "cli"})
    cap.turn_start({**ids, "user_message": "look"})

    def call(step: int, reply: Any, fail: bool = False) -> Any:
        request = {"model": "m", "messages": [{"role": "system", "content": "sys ü"}] + [dict(m) for m in history],
                   "tools": tools, "max_tokens": 100, "temperature": 0.25, "timeout": 30.0}
        body = {k: v for k, v in request.items() if k != "timeout"}
        sent.append(json.loads(json.dumps({**body, "stream": True, "stream_options": {"include_usage": True}})))
        rid = f"S9:t:1:api:{step}"
        if fail:
            with pytest.raises(ConnectionError):
                llm(request=request, next_call=lambda: (_ for _ in ()).throw(ConnectionError("reset")),
                    api_request_id=rid, **ids)
            cap.api_request_error({**ids, "api_request_id": rid, "status_code": 502, "retryable": True,
                                   "error": {"type": "APIConnectionError", "message": "reset"}})
            return None
        return llm(request=request, next_call=lambda: reply, api_request_id=rid, **ids)

    for step in range(1, 9):
        cid = f"c{step}"
        args = json.dumps({"n": step, "f": 1e-7 * step, "s": "ß"})
        if step == 4:
            call(step, None, fail=True)
        result = call(step, _result(step, [(cid, args)]))
        msg = result.choices[0].message
        history.append({"role": "assistant", "content": msg.content, "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": "echo", "arguments": args}}]})
        if step == 3:
            history[-1]["refusal"] = "kept verbatim"  # a key the fast path leaves to the codec
        kw = {**ids, "tool_name": "echo", "args": json.loads(args), "tool_call_id": cid, "api_request_id": f"S9:t:1:api:{step}"}
        out = tool(**kw, next_call=lambda step=step: json.dumps({"ok": step}))
        cap.post_tool_call({**kw, "result": out, "status": "ok", "duration_ms": 1})
        history.append({"role": "tool", "tool_call_id": cid, "content": out, "name": "echo"})
        if step == 5:  # context compression: the middle of the history is replaced by a summary
            history[1:5] = [{"role": "user", "content": "[summary of earlier turns]"}]
        if step == 6:  # an old message edited in place (same length, different content)
            history[2] = {**history[2], "content": history[2]["content"] + " (edited)"}
    call(9, _result(9, None, "done"))
    cap.post_llm_call({**ids, "assistant_response": "done"})
    cap.turn_end({**ids, "completed": True})
    cap.close_all()
    return tmp_path / "hermes-S9.jsonl", sent


def test_every_request_is_reconstructed_exactly_through_rewrites_and_failures(tmp_path):
    path, sent = _drive(tmp_path)
    run = Run.load(path)
    assert attempt_bodies(run) == sent
    assert len(run.errors) == 1 and run.errors[0].request is not None
    assert len(run.llm_calls()) == 9 and len(run.tool_calls()) == 8
    # The delta really is a delta: no request re-records the whole conversation after the first.
    appended = [len(e.request.context.append) for e in run.llm_calls()]
    assert appended[0] == 2 and max(appended[1:4]) <= 2


def test_hot_path_lines_validate_and_equal_what_pydantic_writes(tmp_path):
    path, _ = _drive(tmp_path)
    lines = path.read_bytes().splitlines()[1:]  # after the header
    kinds = set()
    for line in lines:
        event = EVENT_ADAPTER.validate_json(line)
        kinds.add(event.kind)
        assert event.model_dump_json(exclude_none=True).encode() == line
    assert {"llm_call", "tool_call", "error", "tools", "turn_start", "turn_end", "meta"} <= kinds


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to name a descriptor's file")
def test_turn_end_fsync_runs_in_the_background(tmp_path, monkeypatch):
    import os
    import threading

    from replaykit.adapters.hermes import syncer

    synced: list[tuple[str, str]] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:  # the real fsync, noting which file and on which thread
        synced.append((os.readlink(f"/proc/self/fd/{fd}"), threading.current_thread().name))
        real_fsync(fd)

    monkeypatch.setattr(syncer.os, "fsync", spy)
    cap = HermesCapture(RunStore(tmp_path))
    cap.turn_start({"session_id": "S3", "user_message": "hi"})
    cap.turn_end({"session_id": "S3", "completed": True})
    assert cap.syncer.wait()
    path = str((tmp_path / "hermes-S3.jsonl").resolve())
    assert (path, "replaykit-fsync") in synced
    # Everything was already on disk (os.write per event) before any fsync.
    assert [e.kind for e in Run.load(tmp_path / "hermes-S3.jsonl").events] == ["turn_start", "turn_end"]
    cap.close_all()
