"""Schema 2: a request message may be a reference to the tool message of an earlier tool call event, and
a correlation may leave out the ids equal to the previous event's.

Written only where exact, expanded by the one resolver everywhere, refused in one line when broken, and
redacted through the tool call it names."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from replaykit.core.errors import TraceError
from replaykit.core.redaction import RedactingWriter, redact_run, redact_trace_file
from replaykit.core.trace import deltas
from replaykit.core.trace.ir import (
    LLMResponse,
    Message,
    MessageRef,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)
from replaykit.core.trace.recorder import Recorder, ToolRefs
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.core.trace.validate import validate_trace
from replaykit.testing.sample_runs import sample_header

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "schema"


def _dump(messages: list[Message]) -> list[dict]:
    return [m.model_dump(mode="json", exclude_none=True) for m in messages]


def _raw_refs(path: Path) -> list[str]:
    refs = []
    for line in path.read_text().splitlines()[1:]:
        event = json.loads(line)
        for item in ((event.get("request") or {}).get("context") or {}).get("append", []):
            if "ref" in item:
                refs.append(item["ref"])
    return refs


def test_v1_and_v2_fixtures_load_and_rebuild_the_same_requests() -> None:
    """v2.jsonl is the v1 run recorded again (the Recorder's typed path), plus one round written through
    ``Recorder.emit_dict`` (the hot path), so it holds every schema-2 form."""
    v1, v2 = Run.load(FIXTURES / "v1.jsonl"), Run.load(FIXTURES / "v2.jsonl")
    assert (v1.header.schema_version, v2.header.schema_version) == (1, 2)
    text = (FIXTURES / "v2.jsonl").read_text()
    assert not _raw_refs(FIXTURES / "v1.jsonl") and len(_raw_refs(FIXTURES / "v2.jsonl")) == 3
    assert '"strip":true' in text and '"corr":{"api_request_id":"s1:t2:api:2","same":true}' in text
    assert text.count('"same":true') > text.count('"corr":{"api_request_id"') > 0
    calls1, calls2 = v1.llm_calls(), v2.llm_calls()
    assert len(calls1) == 2 and len(calls2) == 4
    for a, b in zip(calls1, calls2[:2], strict=True):
        assert _dump(v1.request_messages(a)) == _dump(v2.request_messages(b))
        assert a.request.model_dump(exclude={"context"}) == b.request.model_dump(exclude={"context"})
    # The hot-path round: whole requests and correlations once loaded.
    assert all(c.request.model == "gpt-4o-mini" and c.request.params == {"temperature": 0} and c.request.same is None
               for c in calls2)
    assert v2.tool_calls()[-1].corr.model_dump(exclude_none=True) == {  # type: ignore[union-attr]
        "session_id": "s1", "task_id": "t1", "turn_id": "s1:t2", "api_request_id": "s1:t2:api:1",
        "tool_call_id": "call_2"}
    last = v2.request_messages(calls2[-1])
    assert last[-1].tool_results[0].content == '{"city": "Berlin", "temp_c": 9}'  # the stripped result
    assert v2.tool_calls()[-1].result == '{"city": "Berlin", "temp_c": 9}\n'
    assert validate_trace(FIXTURES / "v2.jsonl")["valid"]
    # The stdlib resolvers (embedded in generated code) rebuild the same lists from the JSON lines.
    events = [e.model_dump(mode="json", exclude_none=True) for e in v2.events]
    every = deltas.resolve_all_requests(events)
    by_id = {e["id"]: e for e in events}
    for call in calls2:
        assert every[call.id] == _dump(v2.request_messages(call))
        assert deltas.resolve_delta_chain(by_id[call.id], by_id) == every[call.id]


def _recorder(tmp_path: Path) -> tuple[Recorder, Path]:
    store = RunStore(tmp_path)
    header = sample_header("refs")
    return Recorder(header, store.create(header)), store.path_for("refs")


def _tool_msg(call_id: str, content: str, *, name: str | None = "t", is_error: bool = False) -> Message:
    return Message(role="tool", parts=[ToolResultPart(tool_call_id=call_id, name=name, content=content,
                                                      is_error=is_error)])


def test_the_recorder_writes_a_reference_only_for_an_exactly_equal_tool_message(tmp_path: Path) -> None:
    rec, path = _recorder(tmp_path)
    user = Message(role="user", parts=[TextPart(text="go")])
    calls = [ToolCallPart(id=f"c{i}", name="t", arguments={}) for i in range(5)]
    ask = rec.llm_call([user], LLMResponse(message=Message(role="assistant", parts=calls)))
    rec.tool_call("c0", "t", {}, result="same text", llm_call_id=ask.id)
    rec.tool_call("c1", "t", {}, result="  listing\n", llm_call_id=ask.id)
    rec.tool_call("c2", "t", {}, result="failed", status="error", llm_call_id=ask.id)
    rec.tool_call("c3", "t", {}, result=None, llm_call_id=ask.id)
    rec.tool_call("c4", "t", {}, result="a long output", llm_call_id=ask.id)
    sent = [user, ask.response.message,
            _tool_msg("c0", "same text"),  # exactly the tool message: a reference
            _tool_msg("c1", "listing"),  # the agent stripped the whitespace (Hermes does): "strip": true
            _tool_msg("c2", "failed"),  # is_error differs from the status: in full
            _tool_msg("c3", ""),  # no result is the empty text: a reference
            _tool_msg("c4", "a long out")]  # cut by the agent: in full
    second = rec.llm_call(sent, LLMResponse(message=Message(role="assistant", parts=[TextPart(text="done")])))
    rec.close()
    appended = second.request.context.append
    assert [type(m).__name__ for m in appended] == ["Message", "MessageRef", "MessageRef", "Message", "MessageRef",
                                                    "Message"]
    assert [m.strip for m in appended if isinstance(m, MessageRef)] == [None, True, None]
    run = Run.load(path)
    assert len(_raw_refs(path)) == 3
    assert _dump(run.request_messages(run.llm_calls()[1])) == _dump(sent)
    assert _dump(run.appended_messages(run.llm_calls()[1])) == _dump(sent[1:])


def test_tool_refs_forget_every_noted_call_at_the_next_request() -> None:
    refs = ToolRefs()
    body = {"call_id": "a", "name": "t", "result": "r", "status": "ok"}
    message = deltas.tool_message(body)
    refs.note_json("e1", body)
    other = {"role": "user", "parts": []}
    assert refs.swap([other]) == [other]  # a request without it: forgotten (bounded memory)
    assert refs.swap([dict(message)]) == [message]  # too late: written in full, never a stale reference
    refs.note_json("e1", body)
    appended = [other, json.loads(json.dumps(message))]  # equal as JSON, not the same object
    assert refs.swap(appended) == [other, {"ref": "e1"}]
    assert appended[1] == message  # the caller's list is not changed
    refs.note_json("e2", {**body, "result": "\n r \n"})
    assert refs.swap([message]) == [{"ref": "e2", "strip": True}]


def _write_with_ref(tmp_path: Path, ref: str) -> Path:
    """The v2 fixture with its first reference pointed at ``ref``, and one more tool call at the end
    (``later-tool``)."""
    lines = (FIXTURES / "v2.jsonl").read_text().splitlines()
    original = _raw_refs(FIXTURES / "v2.jsonl")[0]
    out = [line.replace(f'{{"ref":"{original}"}}', f'{{"ref":"{ref}"}}') if '"ref"' in line else line
           for line in lines]
    out.append(json.dumps({"seq": 99, "id": "later-tool", "kind": "tool_call", "call_id": "call_0",
                           "name": "get_weather", "result": '{"city": "Paris", "temp_c": 12}'}))
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(out) + "\n")
    return path


def _event_ids(kind: str) -> list[str]:
    lines = (FIXTURES / "v2.jsonl").read_text().splitlines()[1:]
    return [json.loads(line)["id"] for line in lines if json.loads(line)["kind"] == kind]


@pytest.mark.parametrize(("target", "problem"), [
    ("e999-000000", "unknown tool call event"),
    ("llm_call", "not a tool call"),
    ("later", "not an earlier event"),
])
def test_a_bad_reference_is_a_one_line_error(tmp_path: Path, target: str, problem: str) -> None:
    if target == "llm_call":
        target = _event_ids("llm_call")[0]
    elif target == "later":
        target = "later-tool"  # a tool call written after the request that names it
    path = _write_with_ref(tmp_path, target)
    with pytest.raises(TraceError, match=problem):
        Run.load(path)
    report = validate_trace(path)
    assert not report["valid"] and any("request message" in e for e in report["errors"])
    done = subprocess.run([sys.executable, "-m", "replaykit", "inspect", str(path), "--json"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert problem in done.stderr


def test_redaction_redacts_the_result_a_reference_rebuilds(tmp_path: Path) -> None:
    rec, path = _recorder(tmp_path)
    user = Message(role="user", parts=[TextPart(text="who wrote it?")])
    ask = rec.llm_call([user], LLMResponse(message=Message(role="assistant", parts=[
        ToolCallPart(id="c0", name="git_log", arguments={})])))
    result = "Author: Ada Lovelace <ada.lovelace@example.com>"
    rec.tool_call("c0", "git_log", {}, result=result, llm_call_id=ask.id)
    sent = [user, ask.response.message, _tool_msg("c0", result, name="git_log")]
    rec.llm_call(sent, LLMResponse(message=Message(role="assistant", parts=[TextPart(text="Ada")])))
    rec.close()
    run = Run.load(path)
    assert type(run.llm_calls()[1].request.context.append[-1]) is MessageRef
    redacted = redact_run(run, mode="patterns")
    rebuilt = redacted.request_messages(redacted.llm_calls()[1])[-1]
    assert "ada.lovelace@example.com" not in json.dumps(_dump([rebuilt]))
    assert rebuilt.tool_results[0].content == redacted.tool_calls()[0].result != result
    # The redacted copy keeps the reference (the result is stored once there too).
    assert type(redacted.llm_calls()[1].request.context.append[-1]) is MessageRef
    # `replaykit redact` streams the file (redact_trace_file): the same, read back from disk.
    out = tmp_path / "redacted.jsonl"
    redact_trace_file(path, out, "patterns")
    streamed = Run.load(out)
    assert '"ref"' in out.read_text() and "ada.lovelace@example.com" not in out.read_text()
    assert _dump(streamed.request_messages(streamed.llm_calls()[1])) == _dump(
        redacted.request_messages(redacted.llm_calls()[1]))


@pytest.mark.parametrize("redacting", [False, True], ids=["plain", "redacting-writer"])
def test_correlation_ids_equal_to_the_previous_events_are_written_once(tmp_path: Path, redacting: bool) -> None:
    rec, path = _recorder(tmp_path)
    if redacting:  # the Hermes recorder's redaction hook parses each raw line and writes it again
        rec.writer = RedactingWriter(rec.writer)  # type: ignore[arg-type]
    turn = {"session_id": "S", "task_id": "T", "turn_id": "S:T:1"}
    bodies = [
        {"t": 0.0, "provenance": "recorded", "corr": turn, "kind": "turn_start",
         "message": {"role": "user", "parts": [{"type": "text", "text": "hi"}]}, "turn": 0},
        {"t": 0.1, "provenance": "recorded", "corr": {**turn, "api_request_id": "a1"}, "kind": "meta", "data": {}},
        {"t": 0.2, "provenance": "recorded", "corr": {**turn, "api_request_id": "a1", "tool_call_id": "c1"},
         "kind": "tool_call", "call_id": "c1", "name": "t", "status": "ok"},
        {"t": 0.3, "provenance": "recorded", "kind": "meta", "data": {}},  # no corr: not a link in the chain
        {"t": 0.4, "provenance": "recorded", "corr": {**turn, "api_request_id": "a2"}, "kind": "meta", "data": {}},
        {"t": 0.5, "provenance": "recorded", "corr": {**turn, "turn_id": "S:T:2"}, "kind": "turn_end"},  # clears
        {"t": 0.6, "provenance": "recorded", "corr": {"session_id": "S", "turn_id": "S:T:2"}, "kind": "turn_end"},
    ]
    for body in bodies:
        rec.emit_dict(body)
    rec.run_end(corr=None)
    rec.close()
    lines = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    written = [line.get("corr") for line in lines[:len(bodies)]]
    assert written[1] == {"api_request_id": "a1", "same": True}
    assert written[2] == {"tool_call_id": "c1", "same": True}
    assert written[4] == {"api_request_id": "a2", "same": True}
    assert written[5] == {**turn, "turn_id": "S:T:2"}  # drops api_request_id: cannot say "same"; in full
    assert written[6] == {"session_id": "S", "turn_id": "S:T:2"}  # drops task_id: in full
    run = Run.load(path)
    loaded = [e.corr.model_dump(exclude_none=True) if e.corr else None for e in run.events[:len(bodies)]]
    assert loaded == [b.get("corr") for b in bodies]
    assert all(e.corr is None or e.corr.same is None for e in run.events)
    assert validate_trace(path)["valid"]


@pytest.mark.parametrize("redacting", [False, True], ids=["plain", "redacting-writer"])
def test_request_fields_equal_to_the_previous_requests_are_written_once(tmp_path: Path, redacting: bool) -> None:
    rec, path = _recorder(tmp_path)
    if redacting:  # parsed and written again: an empty params must still mean "the previous request's"
        rec.writer = RedactingWriter(rec.writer)  # type: ignore[arg-type]
    tools = rec.declare_tools([ToolSpec(name="t")])
    user = {"role": "user", "parts": [{"type": "text", "text": "hi"}]}
    full = {"api": "openai-chat", "model": "m", "context": {"keep": 0, "append": [user]}, "tools_ref": tools,
            "params": {"max_tokens": 10, "stream": True}, "provider_details": {"sdk_kwargs": {"timeout": 1.0}}}
    requests = [
        full,
        {**full, "context": {"keep": 0, "append": [user, user]}},  # model, tools, params, details: the same
        {**full, "params": {"max_tokens": 20}},  # params differ: written; the rest left out
        {**{k: v for k, v in full.items() if k != "model"}},  # no model after one: in full
        {**full, "params": {}},  # empty params after some: in full
    ]
    answer = {"message": {"role": "assistant", "parts": [{"type": "text", "text": "ok"}]}}
    for request in requests:
        rec.emit_dict({"t": 0.0, "provenance": "recorded", "kind": "llm_call", "request": request,
                       "response": answer})
    rec.close()
    lines = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    written = [line["request"] for line in lines if line["kind"] == "llm_call"]
    assert "same" not in written[0]
    assert written[1].get("same") is True and not {"model", "tools_ref", "provider_details"} & written[1].keys()
    assert written[1]["params"] == {}  # what pydantic writes for it: the line reads back to itself
    assert written[2]["same"] is True and written[2]["params"] == {"max_tokens": 20} and "model" not in written[2]
    assert "same" not in written[3] and "same" not in written[4]
    run = Run.load(path)
    loaded = [e.request.model_dump(mode="json", exclude_none=True) for e in run.llm_calls()]
    assert [{k: v for k, v in r.items() if k != "context"} for r in loaded] == \
        [{k: v for k, v in r.items() if k != "context"} for r in requests]
    assert run.llm_calls()[1].request.params is not run.llm_calls()[0].request.params  # each its own
    assert validate_trace(path)["valid"]
