"""OpenTelemetry GenAI: IR -> OTLP JSON -> IR on every fixture, spans made by the real OpenTelemetry SDK
(GenAI and OpenInference attribute names), a local OTLP/HTTP collector receiving the SDK exporter's
requests, and bad input."""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from replaykit.adapters.otel import import_otel
from replaykit.cli.main import main
from replaykit.core.trace.ir import LLMResponse, Message, Provenance, TextPart
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.exporters import otel as otel_export
from replaykit.testing.json_strings import SLOTS, strings_run
from tests.interop.roundtrip import (
    FIXTURES,
    RUN_FIXTURES,
    first_difference,
    fixture_runs,
    provider_runs,
    view,
)

pytest.importorskip("opentelemetry.sdk")
from google.protobuf.json_format import MessageToDict
from opentelemetry import trace as otel_trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


def _write(tmp_path: Path, document: Any, name: str = "spans.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize("fixture", RUN_FIXTURES, ids=lambda p: p.name)
def test_round_trip_with_content_is_exact(tmp_path: Path, fixture: Path) -> None:
    runs = fixture_runs()
    run = Run.load(fixture)
    rendered = otel_export.render(run, include_content=True, children=runs.get)
    imported = import_otel(_write(tmp_path, rendered.document))
    back = Run(imported[0].header, imported[0].events)
    assert view(back) == view(run), first_difference(view(run), view(back))
    kinds = [s.attributes["gen_ai.operation.name"] for s in rendered.spans]
    own = [s for s in rendered.spans if s.attributes.get("replaykit.run_id", run.run_id) == run.run_id]
    assert kinds.count("chat") == len(run.llm_calls()) + sum(
        1 for e in run.events if e.kind == "error" and e.request is not None) + sum(  # type: ignore[union-attr]
        len(runs[c].llm_calls()) for c in rendered.run_ids[1:])
    assert own and all(s.trace_id == rendered.spans[0].trace_id for s in rendered.spans)
    for child_id, child in zip(rendered.run_ids[1:], imported[1:], strict=True):  # subagent runs come back too
        assert view(Run(child.header, child.events)) == view(runs[child_id])


def test_round_trip_provider_log_fixtures(tmp_path: Path) -> None:
    for run in provider_runs():
        rendered = otel_export.render(run, include_content=True)
        (imported,) = import_otel(_write(tmp_path, rendered.document))
        back = Run(imported.header, imported.events)
        assert view(back) == view(run), first_difference(view(run), view(back))


def test_without_content_the_loss_is_named_and_the_shape_survives(tmp_path: Path) -> None:
    run = Run.load(FIXTURES / "hermes" / "two_turns.jsonl")
    rendered = otel_export.render(run)
    assert "content_not_included" in rendered.losses.items
    text = json.dumps(rendered.document)
    assert "HELLO REPLAYKIT" not in text and "gen_ai.input.messages" not in text  # opt-in content stays out
    (imported,) = import_otel(_write(tmp_path, rendered.document))
    back = Run(imported.header, imported.events)
    assert [(s.kind, getattr(s.event, "name", None)) for s in back.steps] == \
        [(s.kind, getattr(s.event, "name", None)) for s in run.steps]
    assert [c.response.usage for c in back.llm_calls()] == [c.response.usage for c in run.llm_calls()]
    assert [c.request.params for c in back.llm_calls()] == [c.request.params for c in run.llm_calls()]
    assert {s.event.provenance for s in back.steps} == {Provenance.RECONSTRUCTED}
    assert any("without message content" in w for w in imported.warnings)
    # Turns in their place (the second user turn after the first turn's steps) and each end with its status.
    shape = ("turn_start", "llm_call", "tool_call", "error", "turn_end", "run_end")
    assert [e.kind for e in back.events] == [e.kind for e in run.events if e.kind in shape]
    ends = [e for e in back.events if e.kind in ("turn_end", "run_end")]
    assert back.status == run.status and ends and all(e.final_answer is None for e in ends)  # type: ignore[union-attr]


def _conventions_only(document: dict[str, Any]) -> dict[str, Any]:
    """What a backend that keeps only the GenAI conventions holds: no replaykit.* attribute, no span event."""
    document = copy.deepcopy(document)
    for resource_spans in document["resourceSpans"]:
        for scope in resource_spans["scopeSpans"]:
            for span in scope["spans"]:
                span["attributes"] = [a for a in span["attributes"] if not a["key"].startswith("replaykit.")]
                span.pop("events", None)
    return document


def _assistant(run: Run) -> list[Any]:
    """The model's messages, without the wire details the conventions have no place for."""
    return [[p.model_dump(exclude={"raw_arguments", "provider_details", "redacted"}, exclude_none=True)
             for p in c.response.message.parts] for c in run.llm_calls()]


@pytest.mark.parametrize("fixture", [None, *RUN_FIXTURES], ids=lambda p: p.name if p else "strings-run")
def test_conventions_alone_keep_assistant_text_beside_tool_calls_and_the_run_end(tmp_path: Path,
                                                                                   fixture: Path | None) -> None:
    """Exported with content, then read back from the GenAI attributes alone (replaykit.* dropped): every
    assistant message (text next to its tool calls too) and how the run ended (status, final answer)."""
    run = Run.load(fixture) if fixture else strings_run({s: f"<{s}>" for s in SLOTS})
    rendered = otel_export.render(run, include_content=True)
    imported = import_otel(_write(tmp_path, _conventions_only(rendered.document)))[0]
    back = Run(imported.header, imported.events)
    assert _assistant(back) == _assistant(run)
    assert (back.status, back.final_answer) == (run.status, run.final_answer)
    # Each earlier turn's end on its own agent span; the last agent span's end is the run's.
    last_turn = max(e.seq for e in run.events if e.kind == "turn_start")
    earlier = sum(1 for e in run.events if e.kind == "turn_end" and e.seq < last_turn)
    assert [e.kind for e in back.events if e.kind in ("turn_end", "run_end")] == ["turn_end"] * earlier + ["run_end"]
    assert back.events[-1].kind == "run_end"
    if fixture is None:
        assert back.llm_calls()[0].response.message.text == "<thinking_text>"  # beside the search call
        assert back.llm_calls()[0].response.message.tool_calls[0].name == "search"


@pytest.mark.parametrize("status", ["failed", "interrupted"])
def test_a_run_that_did_not_complete_is_an_error_status_on_its_agent_span(tmp_path: Path, status: str) -> None:
    from replaykit.core.trace.ir import RunHeader, Source
    from replaykit.core.trace.recorder import Recorder

    rec = Recorder(RunHeader(run_id="ends", created_at="2026-12-01T00:00:00Z", source=Source(framework="t")))
    rec.turn_start(Message(role="user", parts=[TextPart(text="go")]))
    rec.llm_call([Message(role="user", parts=[TextPart(text="go")])],
                 LLMResponse(message=Message(role="assistant", parts=[TextPart(text="half")])), model="m")
    rec.run_end("half" if status == "failed" else None, status=status, reason="killed by the user")
    run = Run(rec.header, rec.events)
    for include_content in (True, False):
        rendered = otel_export.render(run, include_content=include_content)
        agent = rendered.spans[0]
        assert agent.status_code == otel_export.STATUS_ERROR and agent.attributes["error.type"] == status
        assert agent.status_message == ("killed by the user" if include_content else status)
        for document in (rendered.document, _conventions_only(rendered.document)):
            (imported,) = import_otel(_write(tmp_path, document))
            end = imported.events[-1]
            assert end.kind == "run_end" and end.status == status  # type: ignore[union-attr]
            assert end.final_answer == (run.final_answer if include_content and status == "failed" else  # type: ignore[union-attr]
                                        None)
            assert end.reason == ("killed by the user" if include_content or document is rendered.document  # type: ignore[union-attr]
                                  else None)


# ----------------------------------------------------------------------------- spans made by the SDK


@pytest.fixture()
def tracer() -> Iterator[tuple[Any, InMemorySpanExporter]]:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    yield provider.get_tracer("app-under-test"), memory
    provider.shutdown()


def _otlp_json(spans: Any) -> dict[str, Any]:
    """What the OpenTelemetry SDK puts on the wire, in protobuf's JSON mapping (base64 ids)."""
    return MessageToDict(encode_spans(spans))


def test_genai_spans_from_the_sdk_import(tmp_path: Path, tracer: Any) -> None:
    tracer, memory = tracer
    tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]
    with tracer.start_as_current_span("invoke_agent weather", attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather",
            "gen_ai.conversation.id": "conv-1"}):
        with tracer.start_as_current_span("chat gpt-x", kind=otel_trace.SpanKind.CLIENT, attributes={
                "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-x",
                "gen_ai.request.temperature": 0.2, "gen_ai.request.max_tokens": 300,
                "gen_ai.system_instructions": json.dumps([{"type": "text", "content": "Be brief."}]),
                "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [
                    {"type": "text", "content": "Weather in Oslo?"}]}]),
                "gen_ai.output.messages": json.dumps([{"role": "assistant", "finish_reason": "tool_call", "parts": [
                    {"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": {"city": "Oslo"}}]}]),
                "gen_ai.tool.definitions": json.dumps(tools),
                "gen_ai.response.finish_reasons": ["tool_call"], "gen_ai.response.id": "resp-1",
                "gen_ai.usage.input_tokens": 40, "gen_ai.usage.output_tokens": 7}):
            pass
        with tracer.start_as_current_span("execute_tool get_weather", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.id": "c1", "gen_ai.tool.call.arguments": '{"city": "Oslo"}',
                "gen_ai.tool.call.result": '{"temp": 3}'}):
            pass
        with tracer.start_as_current_span("chat gpt-x", kind=otel_trace.SpanKind.CLIENT, attributes={
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-x",
                "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
                    {"type": "text", "content": "3 C in Oslo."}]}]),
                "gen_ai.usage.input_tokens": 60, "gen_ai.usage.output_tokens": 5}):
            pass
    (imported,) = import_otel(_write(tmp_path, _otlp_json(memory.get_finished_spans())))
    run = Run(imported.header, imported.events)
    assert run.header.session_id == "conv-1" and run.header.source.framework == "weather"
    first, tool, last = (s.event for s in run.steps)
    assert [m.role for m in run.request_messages(first)] == ["system", "user"]
    assert first.request.params == {"temperature": 0.2, "max_tokens": 300}  # type: ignore[union-attr]
    assert first.response.message.tool_calls[0].arguments == {"city": "Oslo"}  # type: ignore[union-attr]
    assert first.response.usage.input_tokens == 40  # type: ignore[union-attr]
    assert tool.result == '{"temp": 3}' and tool.llm_call_id == first.id  # type: ignore[union-attr]
    # The second call carries no input messages: rebuilt from the conversation, and said so.
    assert [m.role for m in run.request_messages(last)] == ["system", "user", "assistant", "tool"]
    assert run.final_answer == "3 C in Oslo."
    assert {s.event.provenance for s in run.steps} == {Provenance.RECONSTRUCTED}
    assert any("input messages" in w for w in imported.warnings)
    assert any("reconstructed" in w for w in imported.warnings)


def test_openinference_spans_from_the_sdk_import(tmp_path: Path, tracer: Any) -> None:
    tracer, memory = tracer
    with tracer.start_as_current_span("agent", attributes={"openinference.span.kind": "AGENT",
                                                           "input.value": "Add 2 and 3", "output.value": "5"}):
        with tracer.start_as_current_span("llm", attributes={
                "openinference.span.kind": "LLM", "llm.model_name": "m-1", "llm.provider": "openai",
                "llm.invocation_parameters": json.dumps({"temperature": 0}),
                "llm.input_messages.0.message.role": "system", "llm.input_messages.0.message.content": "Math bot.",
                "llm.input_messages.1.message.role": "user", "llm.input_messages.1.message.content": "Add 2 and 3",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.tool_calls.0.tool_call.id": "t1",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "add",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"a": 2, "b": 3}',
                "llm.tools.0.tool.json_schema": json.dumps({"type": "function", "function": {"name": "add"}}),
                "llm.token_count.prompt": 20, "llm.token_count.completion": 4, "llm.token_count.total": 24}):
            pass
        with tracer.start_as_current_span("add", attributes={"openinference.span.kind": "TOOL", "tool.name": "add",
                                                             "input.value": '{"a": 2, "b": 3}', "output.value": "5"}):
            pass
        with tracer.start_as_current_span("llm", attributes={
                "openinference.span.kind": "LLM", "llm.model_name": "m-1",
                "llm.output_messages.0.message.role": "assistant", "llm.output_messages.0.message.content": "5"}):
            pass
    (imported,) = import_otel(_write(tmp_path, _otlp_json(memory.get_finished_spans())))
    run = Run(imported.header, imported.events)
    assert [s.kind for s in run.steps] == ["llm", "tool", "llm"]
    first, tool, _ = (s.event for s in run.steps)
    assert run.user_turns()[0].message.text == "Add 2 and 3"
    assert [m.text for m in run.request_messages(first)] == ["Math bot.", "Add 2 and 3"]
    assert first.request.params == {"temperature": 0} and first.request.model == "m-1"  # type: ignore[union-attr]
    assert [t.name for t in run.request_tools(first.request) or []] == ["add"]  # type: ignore[union-attr]
    assert first.response.usage.total_tokens == 24  # type: ignore[union-attr]
    assert (tool.name, tool.arguments, tool.result) == ("add", {"a": 2, "b": 3}, "5")  # type: ignore[union-attr]
    assert tool.call_id == "t1" and tool.llm_call_id == first.id  # type: ignore[union-attr]
    assert run.request_messages(run.steps[2].event)[-1].tool_results[0].tool_call_id == "t1"
    assert run.final_answer == "5"
    end = run.events[-1]  # the agent's output is the run's end
    assert (end.kind, end.final_answer, end.status) == ("run_end", "5", "completed")  # type: ignore[union-attr]


# ------------------------------------------------------------------------- a local OTLP/HTTP collector


class _Collector(BaseHTTPRequestHandler):
    received: list[bytes]
    status = 200

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        type(self).received.append(body)
        self.send_response(type(self).status)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()
        self.wfile.write(b"")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture()
def collector() -> Iterator[tuple[str, type[_Collector]]]:
    handler = type("Handler", (_Collector,), {"received": [], "status": 200})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", handler
    server.shutdown()
    server.server_close()


def test_otlp_endpoint_sends_the_same_spans_through_the_sdk_exporter(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], collector: Any) -> None:
    url, handler = collector
    store = RunStore(tmp_path / "store")
    run = Run.load(FIXTURES / "hermes" / "retry_500.jsonl")
    store.write_run(run.header, run.events)
    out = tmp_path / "trace.json"
    assert main(["export", run.run_id, "--format", "otel", "--include-content", "--otlp-endpoint", url,
                 "-o", str(out), "--store", str(store.root), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["run_id"] == run.run_id and summary["otlp_endpoint"] == url
    assert len(handler.received) == 1
    request = ExportTraceServiceRequest()
    request.ParseFromString(handler.received[0])
    received = MessageToDict(request)
    spans = [s for rs in received["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
    assert len(spans) == summary["spans"]
    # What the collector got is the file's content, span for span: importing either gives the run back.
    for document in (received, json.loads(out.read_text())):
        (imported,) = import_otel(_write(tmp_path, document))
        assert view(Run(imported.header, imported.events)) == view(run)


def test_a_collector_that_refuses_leaves_no_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 collector: Any) -> None:
    url, handler = collector
    handler.status = 400
    out = tmp_path / "trace.json"
    assert main(["export", str(FIXTURES / "hermes" / "two_turns.jsonl"), "--format", "otel", "--otlp-endpoint",
                 url, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "did not accept" in err and err.count("\n") == 1
    assert not out.exists()


@pytest.mark.parametrize(("document", "message"), [
    ('{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "', "JSON"),
    ('{"conversations": []}', "not OTLP JSON"),
    (json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{
        "traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174", "name": "GET /",
        "startTimeUnixNano": "1", "endTimeUnixNano": "2",
        "attributes": [{"key": "http.request.method", "value": {"stringValue": "GET"}}]}]}]}]}),
     "no span carries GenAI"),
    (json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174", "parentSpanId": "eee19b7ec3c1b175",
         "name": "a", "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}}]},
        {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b175", "parentSpanId": "eee19b7ec3c1b174",
         "name": "b", "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}]}]}]}]}),
     "cycle"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         document: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(document)
    store = tmp_path / "store"
    assert main(["import", str(path), "--format", "otel", "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err
    assert not store.exists() or not any(store.iterdir())
