"""IR -> JSON -> IR identity, the published schema, and stored fixtures of every schema version."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replaykit.core.trace import ir
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.testing.sample_runs import record_weather_run, sample_header

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "schema"


def _every_kind_run(tmp_path: Path) -> Path:
    store = RunStore(tmp_path)
    header = sample_header("every-kind")
    with store.create(header) as writer:
        rec = Recorder(header, writer)
        rec.meta({"hermes_version": "0.19.0", "skills": ["arxiv"]})
        record_weather_run(rec)
        rec.llm_error([ir.Message(role="user", parts=[ir.TextPart(text="again")])], message="HTTP 500",
                      error_type="InternalServerError", status_code=500, retryable=True, attempt=1)
        rec.subagent("start", child_run_id="child-1", goal="look it up", role="leaf")
        rec.subagent("stop", child_run_id="child-1", status="completed", summary="found")
        rec.desync(3, reason="request differs", expected="aa", actual="bb")
        rec.synthetic(4, reason="record ended")
        rec.opaque("hermes", "pre_gateway_dispatch", {"x": [1, None, "ü"]})
        rec.run_end("London is warmer.")
    return store.path_for("every-kind")


def test_every_event_round_trips_through_json(tmp_path: Path) -> None:
    path = _every_kind_run(tmp_path)
    run = Run.load(path)
    kinds = {e.kind for e in run.events}
    assert kinds >= {"tools", "turn_start", "llm_call", "tool_call", "turn_end", "meta", "error",
                     "subagent", "desync", "synthetic", "opaque", "run_end"}
    for event in run.events:
        again = ir.EVENT_ADAPTER.validate_json(event.model_dump_json(exclude_none=True))
        assert again == event
    header_again = ir.HEADER_ADAPTER.validate_json(run.header.model_dump_json())
    assert header_again == run.header


def test_message_parts_round_trip() -> None:
    message = ir.Message(
        role="assistant",
        parts=[
            ir.TextPart(text="a\u2028b\x00"),
            ir.ReasoningPart(text="t", signature="sig", provider="anthropic"),
            ir.ToolCallPart(id="c", name="n", arguments={"k": None}, raw_arguments='{"k": null}'),
            ir.MediaPart(media_type="image/png", url="http://127.0.0.1/x.png"),
            ir.OpaquePart(format="anthropic", data={"type": "server_tool_use"}),
        ],
        provider_details={"refusal": None},
    )
    assert ir.Message.model_validate_json(message.model_dump_json()) == message


def test_json_schema_is_published_and_describes_every_kind() -> None:
    schema = ir.json_schema()
    text = json.dumps(schema)
    for kind in ("llm_call", "tool_call", "desync", "synthetic", "opaque", "run"):
        assert f'"{kind}"' in text
    assert schema["$id"].endswith(f"/{ir.SCHEMA_VERSION}.json")


@pytest.mark.parametrize("version", sorted(ir.READABLE_SCHEMA_VERSIONS))
def test_stored_fixture_of_every_schema_version_loads(version: int) -> None:
    path = FIXTURES / f"v{version}.jsonl"
    run = Run.load(path)
    assert run.header.schema_version == version
    assert len(run.steps) >= 4
    assert run.final_answer == "London is warmer."
    # Every request of the fixture reconstructs.
    for call in run.llm_calls():
        assert run.request_messages(call)[0].role == "system"


def test_unknown_schema_version_is_a_clear_error(tmp_path: Path) -> None:
    from replaykit.core.errors import UnknownSchemaVersion

    src = (FIXTURES / "v1.jsonl").read_text().splitlines()
    header = json.loads(src[0])
    header["schema_version"] = 999
    path = tmp_path / "future.jsonl"
    path.write_text("\n".join([json.dumps(header), *src[1:]]) + "\n")
    with pytest.raises(UnknownSchemaVersion, match="999"):
        Run.load(path)
