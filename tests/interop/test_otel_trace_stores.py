"""GenAI traces as trace stores return them over their APIs import through the same OTel importer:
Grafana Tempo (``batches`` of ResourceSpans with the pre-0.15 ``instrumentationLibrarySpans``; the v2
API's ``{"trace": ...}``) and Jaeger (``data[].spans``: tags, logs, references, microseconds). The
spans are made by the real OpenTelemetry SDK; each store's shape is derived from them here, and every
shape must give the very run the OTLP export gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replaykit.adapters.otel import import_otel
from replaykit.cli.main import main
from replaykit.core.trace.run import Run
from tests.interop.roundtrip import view

pytest.importorskip("opentelemetry.sdk")
from google.protobuf.json_format import MessageToDict
from opentelemetry import trace as otel_trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

T0 = 1_767_000_000_000_000_000  # whole microseconds: Jaeger's unit


def _spans() -> list[ReadableSpan]:
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "weather-svc"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("app-under-test")

    def span(name: str, start_us: int, end_us: int, parent: Any, attributes: dict[str, Any],
             error: bool = False) -> Any:
        context = otel_trace.set_span_in_context(parent) if parent is not None else None
        item = tracer.start_span(name, context=context, start_time=T0 + start_us * 1000, attributes=attributes)
        if error:
            item.set_status(otel_trace.Status(otel_trace.StatusCode.ERROR, "tool failed"))
        return item, end_us

    agent, agent_end = span("invoke_agent weather", 0, 900, None, {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather", "gen_ai.conversation.id": "c-9"})
    children = [
        span("chat gpt-x", 10, 300, agent, {
            "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-x", "gen_ai.request.temperature": 0.5,
            "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Oslo?"}]}]),
            "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
                {"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": {"city": "Oslo"}}]}]),
            "gen_ai.usage.input_tokens": 40, "gen_ai.usage.output_tokens": 7}),
        span("execute_tool get_weather", 310, 400, agent, {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather", "gen_ai.tool.call.id": "c1",
            "gen_ai.tool.call.arguments": '{"city": "Oslo"}', "gen_ai.tool.call.result": "timeout"}, error=True),
        span("chat gpt-x", 410, 800, agent, {
            "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-x",
            "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
                {"type": "text", "content": "I could not reach the weather service."}]}]),
            "gen_ai.usage.input_tokens": 60, "gen_ai.usage.output_tokens": 9}),
    ]
    for child, end in children:
        child.end(end_time=T0 + end * 1000)
    agent.end(end_time=T0 + agent_end * 1000)
    spans = list(memory.get_finished_spans())
    provider.shutdown()
    return spans


def _otlp(spans: list[ReadableSpan]) -> dict[str, Any]:
    return MessageToDict(encode_spans(spans))


def _tempo(spans: list[ReadableSpan]) -> dict[str, Any]:
    """Tempo's /api/traces/<id>: ``batches``, and the scope under its pre-OTLP-0.15 name."""
    batches = []
    for resource_spans in _otlp(spans)["resourceSpans"]:
        scopes = [{"instrumentationLibrary": s.get("scope", {}), "spans": s["spans"]}
                  for s in resource_spans.pop("scopeSpans")]
        batches.append({**resource_spans, "instrumentationLibrarySpans": scopes})
    return {"batches": batches}


def _jaeger_tag(key: str, value: Any) -> dict[str, Any]:
    kind = "bool" if isinstance(value, bool) else "int64" if isinstance(value, int) else \
        "float64" if isinstance(value, float) else "string"
    return {"key": key, "type": kind, "value": value}


def _jaeger(spans: list[ReadableSpan]) -> dict[str, Any]:
    """Jaeger's /api/traces/<id>: one trace, spans with tags and CHILD_OF references, a process table."""
    out = []
    for span in spans:
        context = span.get_span_context()
        tags = [_jaeger_tag(k, v) for k, v in (span.attributes or {}).items()]
        if span.status.status_code == otel_trace.StatusCode.ERROR:
            tags += [_jaeger_tag("otel.status_code", "ERROR"), _jaeger_tag("error", True),
                     _jaeger_tag("otel.status_description", span.status.description or "")]
        references = [{"refType": "CHILD_OF", "traceID": f"{context.trace_id:032x}",
                       "spanID": f"{span.parent.span_id:016x}"}] if span.parent is not None else []
        assert span.start_time is not None and span.end_time is not None
        out.append({"traceID": f"{context.trace_id:032x}", "spanID": f"{context.span_id:016x}",
                    "operationName": span.name, "references": references, "startTime": span.start_time // 1000,
                    "duration": (span.end_time - span.start_time) // 1000, "tags": tags, "logs": [],
                    "processID": "p1", "warnings": None})
    trace_id = out[0]["traceID"]
    return {"data": [{"traceID": trace_id, "spans": out, "processes": {
        "p1": {"serviceName": "weather-svc", "tags": []}}}], "total": 0, "limit": 0, "offset": 0, "errors": None}


def _run(tmp_path: Path, document: dict[str, Any], name: str) -> Run:
    path = tmp_path / name
    path.write_text(json.dumps(document))
    (imported,) = import_otel(path)
    return Run(imported.header, imported.events)




@pytest.mark.parametrize("shape", ["tempo", "tempo-v2", "jaeger"])
def test_a_trace_store_shape_imports_as_the_otlp_export_does(shape: str, tmp_path: Path) -> None:
    spans = _spans()
    expected = _run(tmp_path, _otlp(spans), "otlp.json")
    document = {"tempo": _tempo, "jaeger": _jaeger}.get(shape, lambda s: {"trace": _otlp(s)})(spans)
    run = _run(tmp_path, document, f"{shape}.json")
    assert view(run) == view(expected)
    assert [s.kind for s in run.steps] == ["llm", "tool", "llm"]
    tool = run.tool_calls()[0]
    assert (tool.status, tool.result) == ("error", "timeout")  # the status travelled as Jaeger tags too
    assert run.final_answer == "I could not reach the weather service."
    assert run.header.session_id == "c-9"


def test_jaeger_ids_of_64_bits_are_padded(tmp_path: Path) -> None:
    document = _jaeger(_spans())
    for span in document["data"][0]["spans"]:
        span["traceID"] = span["traceID"][16:]
    run = _run(tmp_path, document, "short.json")
    assert run.header.metadata["trace_id"] == "0" * 16 + document["data"][0]["spans"][0]["traceID"]


@pytest.mark.parametrize("document", [{"batches": "x"}, {"data": [{"spans": 3}]}, {"data": "x"}, {"traces": []}])
def test_neither_shape_is_one_line_exit_2(document: dict[str, Any], tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    assert main(["import", str(path), "--format", "otel", "--store", str(tmp_path / "store")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
