"""Any string JSON can carry survives exactly: store, emit_dict, Run.load, replay, branch, diff,
redaction, import, CLI JSON output (property tests over ``replaykit.testing.json_strings``)."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replaykit.adapters.provider_logs import import_openai_chat
from replaykit.core.analysis.diff import diff_runs
from replaykit.core.replay.branch import branch
from replaykit.core.replay.replay import replay_run
from replaykit.core.trace import codecs, jsonsafe
from replaykit.core.trace.ir import EVENT_ADAPTER, Message, RunHeader, Source, TextPart
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.testing.json_strings import (
    SLOTS,
    json_strings,
    lone_surrogate,
    slot_strings,
    strings_run,
    texts_of,
)

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                        HealthCheck.too_slow])
LONG = "\ud800" + "long \u2028 text " * 70_000 + "\udfff"  # ~1.1 M characters, lone surrogates at both ends


def _slots_in(value: object, slots: dict[str, str]) -> None:
    found = set(texts_of(value))
    for name in SLOTS:
        assert slots[name] in found, (name, slots[name])


def _stored(tmp: Path, run: Run) -> tuple[Path, Run]:
    store = RunStore(tmp)
    path = store.write_run(run.header, run.events)
    return path, store.load(run.run_id)


@pytest.fixture()
def fresh(tmp_path_factory: pytest.TempPathFactory) -> object:
    return lambda: tmp_path_factory.mktemp("s")


@FAST
@given(slots=slot_strings())
def test_store_round_trip_is_exact_and_the_file_is_utf8(fresh, slots: dict[str, str]) -> None:
    run = strings_run(slots)
    path, loaded = _stored(fresh(), run)
    data = path.read_bytes()
    data.decode("utf-8")  # strict: the file is valid UTF-8 whatever the strings hold
    assert loaded.header == run.header and loaded.events == run.events
    _slots_in([json.loads(jsonsafe.model_json(e)) for e in [loaded.header, *loaded.events]], slots)
    # every line is still plain JSON that any reader parses to the same strings
    lines = [json.loads(line) for line in data.decode("utf-8").split("\n") if line]
    assert [EVENT_ADAPTER.validate_python(line) for line in lines[1:]] == run.events


@FAST
@given(text=json_strings())
def test_emit_dict_hot_path_writes_what_emit_writes(fresh, text: str) -> None:
    store = RunStore(fresh())
    header = RunHeader(run_id="hot", created_at="2026-12-01T00:00:00Z", source=Source(framework="t"))
    rec = Recorder(header, writer=store.create(header), clock=lambda: 0.0)
    body = {"t": 0.0, "provenance": "recorded", "kind": "turn_start",
            "message": {"role": "user", "parts": [{"type": "text", "text": text}]}, "turn": 0}
    rec.emit_dict(body)
    rec.close()
    loaded = store.load("hot")
    assert loaded.events[0].message.text == text  # type: ignore[union-attr]
    store.path_for("hot").read_bytes().decode("utf-8")


def test_very_long_string_with_surrogates_round_trips(tmp_path: Path) -> None:
    slots = dict.fromkeys(SLOTS, "x")
    slots["result"] = LONG
    _, loaded = _stored(tmp_path, strings_run(slots))
    assert loaded.tool_calls()[0].result == LONG


def test_pure_utf8_lines_are_byte_identical_to_pydantic(tmp_path: Path) -> None:
    """The common case is untouched: no surrogate, the line is pydantic's own serialization."""
    run = strings_run(dict.fromkeys(SLOTS, "plain \u2028 \x00 \ufeff é"))
    path, _ = _stored(tmp_path, run)
    lines = [x for x in path.read_text(encoding="utf-8").split("\n") if x]
    assert lines[1:] == [e.model_dump_json(exclude_none=True) for e in run.events]


def test_surrogates_are_escaped_in_the_file(tmp_path: Path) -> None:
    run = strings_run(dict.fromkeys(SLOTS, "a" + lone_surrogate(0xD83D) + "b"))
    path, loaded = _stored(tmp_path, run)
    text = path.read_text(encoding="utf-8")
    assert "a\\ud83db" in text and loaded.events == run.events


@FAST
@given(slots=slot_strings())
def test_replay_branch_and_diff_keep_every_string(fresh, slots: dict[str, str]) -> None:
    store = RunStore(fresh())
    store.write_run(*(lambda r: (r.header, r.events))(strings_run(slots)))
    run = store.load("strings-run")
    doc = replay_run(run)
    assert doc["final_answer"] == slots["answer"]
    texts = set(texts_of(doc["messages"]))
    for name in ("system", "user", "result", "answer", "thinking_text", "user2"):
        assert slots[name] in texts, name
    edited = branch(store, run, 1, result=slots["title"])  # step 1 is the tool call
    assert edited.tool_calls()[-1].result == slots["title"]
    assert store.load(edited.run_id).tool_calls()[-1].result == slots["title"]
    result = diff_runs(run, run)
    assert result.equal
    report = diff_runs(run, edited).to_json()
    assert json.loads(jsonsafe.dumps(report)) == json.loads(json.dumps(report))


@settings(max_examples=40, deadline=None)
@given(pieces=st.lists(st.one_of(st.sampled_from(["", "\x00", "\u2028", "\u2029", "\ufeff", " ", "\n", "-"]),
                                 st.integers(0xD800, 0xDFFF).map(lone_surrogate)), max_size=8))
def test_redaction_keeps_strings_without_pii_exactly(pieces: list[str]) -> None:
    from replaykit.core.redaction import Redactor

    text = "".join(pieces)
    redactor = Redactor(mode="patterns")
    assert redactor.redact_text(text) == text
    assert redactor.redact_value({text: [text, json.dumps({"k": text})]}) == {text: [text, json.dumps({"k": text})]}
    # and PII next to a lone surrogate still goes, the surrogate stays
    red = redactor.redact_text(text + " mail jane.doe@example.com " + text)
    assert "jane.doe@example.com" not in red and red.startswith(text) and red.endswith(text)


@FAST
@given(slots=slot_strings())
def test_redacted_run_round_trips_through_the_store(fresh, slots: dict[str, str]) -> None:
    from replaykit.core.redaction import redact_run

    redacted = redact_run(strings_run(slots), "patterns")
    _, loaded = _stored(fresh(), redacted)
    assert loaded.events == redacted.events


@FAST
@given(system=json_strings(), user=json_strings(), answer=json_strings(), result=json_strings())
def test_openai_chat_import_is_exact(fresh, system: str, user: str, answer: str, result: str) -> None:
    body = {"model": "m", "messages": [
        {"role": "system", "content": system},
        {"role": "user", "content": user},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": json.dumps({"q": user})}}]},
        {"role": "tool", "tool_call_id": "c1", "content": result},
        {"role": "assistant", "content": answer},
    ]}
    path = fresh() / "chat.json"
    path.write_text(json.dumps(body), encoding="ascii")  # the escapes, as a client writes them
    (imported,) = import_openai_chat(path)
    store = RunStore(path.parent / "store")
    store.write_run(imported.header, imported.events)
    run = store.load(imported.header.run_id)
    last = run.llm_calls()[-1]
    sent = codecs.codec("openai-chat").encode_request(run.request_messages(last), tools=None, params={})
    assert sent.body["messages"] == body["messages"][:-1]
    assert run.final_answer == answer and run.tool_calls()[0].result == result


def test_empty_user_turns_become_turn_start_events(tmp_path: Path) -> None:
    body = {"messages": [{"role": "system", "content": ""}, {"role": "user", "content": ""},
                         {"role": "assistant", "content": "a"}, {"role": "user", "content": ""},
                         {"role": "assistant", "content": "b"}]}
    path = tmp_path / "c.json"
    path.write_text(json.dumps(body))
    (imported,) = import_openai_chat(path)
    turns = [e for e in imported.events if e.kind == "turn_start"]
    assert len(turns) == 2 and all(t.message.role == "user" and t.message.text == "" for t in turns)


@FAST
@given(text=json_strings())
def test_cli_json_output_is_utf8_and_exact(text: str) -> None:
    from replaykit.cli._common import print_json

    buffer = io.StringIO()
    with redirect_stdout(buffer):
        print_json({"run_id": "r", "value": text})
    printed = buffer.getvalue()
    printed.encode("utf-8")
    assert json.loads(printed)["value"] == text


def test_message_with_surrogate_key_in_arguments_round_trips(tmp_path: Path) -> None:
    key = lone_surrogate(0xDC00)
    slots = dict.fromkeys(SLOTS, "v")
    slots["arg_key"] = key
    _, loaded = _stored(tmp_path, strings_run(slots))
    assert key in loaded.tool_calls()[0].arguments  # type: ignore[operator]
    assert EVENT_ADAPTER.validate_python(loaded.events[0].model_dump()) == loaded.events[0]
    assert Message(role="user", parts=[TextPart(text=key)]).text == key


def test_python_mode_fallback_gives_what_json_mode_gives() -> None:
    """jsonsafe.model_data's fallback (python mode + _jsonable) equals pydantic's json mode on every
    kind of event of real recorded runs, so a run with a surrogate key is dumped like any other."""
    from replaykit.core.trace.jsonsafe import _jsonable
    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "hermes"
    runs = [strings_run(dict.fromkeys(SLOTS, "x")),
            *(Run.load(p) for p in sorted(fixtures.glob("*.jsonl")))]
    kinds = set()
    for run in runs:
        for model in [run.header, *run.events]:
            for kw in ({}, {"exclude_none": True}):
                assert _jsonable(model.model_dump(mode="python", **kw)) == model.model_dump(mode="json", **kw)
            kinds.add(getattr(model, "kind", "run"))
    assert {"run", "llm_call", "tool_call", "turn_start", "run_end"} <= kinds
