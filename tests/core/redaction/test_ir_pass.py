"""redact_run: a new run, lineage 'redaction', structure intact, placeholders consistent."""

from __future__ import annotations

import json

import pytest

from replaykit.core.redaction import redact_run, redact_trace_file
from replaykit.core.trace.canonical import fingerprint
from replaykit.core.trace.ir import LLMCallEvent, ToolCallEvent
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.testing.sample_pii_run import CUSTOMER, build_support_run

SECRETS_AND_PII = ["John Smith", "john.smith@example.com", "+44 20 7946 0958", "4111 1111 1111 1111",
                   "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB", "sk-proj-Abc123Def456Ghi789Jkl012Mno345Pqr",
                   "maria.gonzalez@acme-corp.com", "Maria Gonzalez", "42 Elm Street"]


def _dump(run: Run) -> str:
    return "\n".join([run.header.model_dump_json(), *(e.model_dump_json() for e in run.events)])


@pytest.mark.parametrize("mode", ["patterns", "ner"])
def test_redacted_run_is_new_and_clean(mode: str) -> None:
    run = build_support_run()
    before = _dump(run)
    red = redact_run(run, mode=mode)
    assert _dump(run) == before  # never in place
    assert red.run_id != run.run_id
    assert red.header.lineage is not None and red.header.lineage.relation == "redaction"
    assert red.header.lineage.parent_run_id == run.run_id
    text = json.loads(json.dumps([json.loads(line) for line in _dump(red).splitlines()]))
    flat = json.dumps(text, ensure_ascii=False)
    expected_gone = SECRETS_AND_PII if mode == "ner" else [s for s in SECRETS_AND_PII if "Smith" not in s and "Maria G" not in s]
    for value in expected_gone:
        assert value not in flat, value
    # structure-kept identifiers
    assert CUSTOMER["id"] in flat and "msg-7f3a9c" in flat


def test_structure_and_replay_invariants() -> None:
    run = build_support_run()
    red = redact_run(run, mode="ner")
    red.check_references()
    assert [e.id for e in red.events] == [e.id for e in run.events]
    assert [e.kind for e in red.events] == [e.kind for e in run.events]
    for old, new in zip(run.events, red.events, strict=True):
        if isinstance(old, ToolCallEvent):
            assert isinstance(new, ToolCallEvent)
            assert (new.call_id, new.name, new.llm_call_id) == (old.call_id, old.name, old.llm_call_id)
            assert json.loads(new.raw_arguments or "") == new.arguments  # raw and parsed agree
            assert new.result is not None and json.loads(new.result)  # still JSON
        if isinstance(new, LLMCallEvent):
            msgs = red.request_messages(new)
            assert new.request.fingerprint == fingerprint(msgs, red.request_tools(new.request))
            assert [p.id for p in new.response.message.tool_calls] == [
                p.id for p in old.response.message.tool_calls]  # type: ignore[union-attr]
    # JSON-in-string keeps its formatting style (indent=2) and its keys
    tool = next(e for e in red.events if isinstance(e, ToolCallEvent))
    assert tool.result is not None and tool.result.startswith('{\n  "id": ')
    assert list(json.loads(tool.result)) == list(CUSTOMER)
    # compact raw arguments stay compact
    second = [e for e in red.events if isinstance(e, ToolCallEvent)][1]
    assert second.raw_arguments is not None and '","' in second.raw_arguments and '", "' not in second.raw_arguments


def test_placeholders_consistent_across_messages() -> None:
    run = build_support_run()
    red = redact_run(run, mode="ner")
    calls = [e for e in red.events if isinstance(e, ToolCallEvent)]
    email_ph = calls[0].arguments["email"]
    assert email_ph.startswith("<EMAIL_ADDRESS_")
    assert calls[1].arguments["to"] == email_ph  # same value, same placeholder, another event
    customer = json.loads(calls[0].result or "")
    assert customer["email"] == email_ph
    body = calls[1].arguments["body"]
    assert customer["full_name"] in body  # <PERSON_n> of John Smith reused inside free text
    assert customer["phone"] in body
    # different people differ
    sys_text = red.request_messages(red.llm_calls()[0])[0].text
    assert "<PERSON_" in sys_text and customer["full_name"] not in sys_text


def test_redact_trace_file_streams_into_store(tmp_path) -> None:
    store = RunStore(tmp_path / "store")
    run = build_support_run()
    src = store.write_run(run.header, run.events)
    original = src.read_bytes()
    result = redact_trace_file(src, store.path_for("red-1"), "patterns", run_id="red-1")
    assert src.read_bytes() == original
    loaded = store.load("red-1")
    assert loaded.header.lineage.relation == "redaction"
    assert result.redactions > 0 and result.placeholders["EMAIL_ADDRESS"] >= 1
    assert "john.smith@example.com" not in store.path_for("red-1").read_text()
