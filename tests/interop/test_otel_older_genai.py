"""GenAI spans under the older semantic conventions (``gen_ai.system``, ``gen_ai.request.model``,
``gen_ai.usage.prompt_tokens``, no ``gen_ai.operation.name``, no message content), as Jaeger's query API
returns what an older instrumentation wrote: every span with a ``gen_ai.*`` attribute is a GenAI span, a
span without content comes in as a step without content, marked so, and ``inspect`` names what the spans
did not carry. The spans are made by the real OpenTelemetry SDK."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replaykit.adapters.otel import import_otel
from replaykit.cli.main import main
from replaykit.core.trace.run import Run

pytest.importorskip("opentelemetry.sdk")
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.interop.test_otel_trace_stores import T0, _jaeger


def _older_spans() -> list[ReadableSpan]:
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "legacy-svc"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("opentelemetry.instrumentation.openai", "0.30.0")
    http = tracer.start_span("POST /ask", start_time=T0, attributes={"http.method": "POST", "http.route": "/ask"})
    context = otel_trace.set_span_in_context(http)
    for n, (start, end) in enumerate([(10, 300), (320, 700)]):
        call = tracer.start_span("openai.chat", context=context, start_time=T0 + start * 1000, attributes={
            "gen_ai.system": "openai", "gen_ai.request.model": "gpt-3.5-turbo", "gen_ai.request.temperature": 0.2,
            "gen_ai.response.model": "gpt-3.5-turbo-0125", "gen_ai.usage.prompt_tokens": 30 + n,
            "gen_ai.usage.completion_tokens": 5 + n})
        call.end(end_time=T0 + end * 1000)
    http.end(end_time=T0 + 800 * 1000)
    spans = list(memory.get_finished_spans())
    provider.shutdown()
    return spans


def _write(tmp_path: Path) -> Path:
    path = tmp_path / "jaeger-older.json"
    path.write_text(json.dumps(_jaeger(_older_spans())))
    return path


def test_older_genai_spans_import_as_llm_steps_without_content(tmp_path: Path) -> None:
    (imported,) = import_otel(_write(tmp_path))
    run = Run(imported.header, imported.events)
    assert [s.kind for s in run.steps] == ["llm", "llm"]
    first, second = run.llm_calls()
    assert first.request.model == "gpt-3.5-turbo" and first.response.model == "gpt-3.5-turbo-0125"
    assert first.request.params == {"temperature": 0.2}
    usage = second.response.usage
    assert usage is not None and (usage.input_tokens, usage.output_tokens) == (31, 6)
    assert run.header.provider == "openai"
    # no content: each step says so, and the run's record of what was not imported names it with why
    for call in (first, second):
        assert call.provider_details is not None
        assert call.provider_details["otel"]["not_recorded"] == ["input messages", "output messages"]
        assert call.response.message.parts == []
    record = {e["what"]: e for e in imported.header.metadata["not_imported"]}
    assert record["span output messages"]["count"] == 2 and "no output messages" in record["span output messages"]["reason"]
    assert record["spans that are not GenAI"]["examples"][0].endswith("(POST /ask)")


def test_inspect_shows_what_the_spans_did_not_carry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    assert main(["import", str(_write(tmp_path)), "--format", "otel", "--store", str(store), "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    assert main(["inspect", run_id, "--store", str(store), "--json"]) == 0
    view: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert view["steps"] == 2
    assert {e["what"] for e in view["not_imported"]} >= {"span input messages", "span output messages",
                                                         "spans that are not GenAI"}
    assert main(["inspect", run_id, "--store", str(store)]) == 0
    text = capsys.readouterr().out
    assert "not imported: span output messages (2)" in text and "not imported: spans that are not GenAI (1)" in text


def test_a_trace_with_no_gen_ai_attribute_is_still_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = _jaeger(_older_spans())
    for span in document["data"][0]["spans"]:
        span["tags"] = [t for t in span["tags"] if not t["key"].startswith("gen_ai.")]
    path = tmp_path / "plain.json"
    path.write_text(json.dumps(document))
    assert main(["import", str(path), "--format", "otel", "--store", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no span carries GenAI (gen_ai.*)" in err


def test_a_trace_without_gen_ai_spans_is_named_beside_one_with_them(tmp_path: Path) -> None:
    genai = _jaeger(_older_spans())
    plain = _jaeger(_older_spans())
    trace = plain["data"][0]
    trace["traceID"] = "f" * 32
    for span in trace["spans"]:
        span["traceID"] = trace["traceID"]
        span["tags"] = [t for t in span["tags"] if not t["key"].startswith("gen_ai.")]
    path = tmp_path / "two.json"
    path.write_text(json.dumps({"data": genai["data"] + plain["data"]}))
    (imported,) = import_otel(path)
    record = {e["what"]: e for e in imported.header.metadata["not_imported"]}
    assert record["traces without GenAI spans"]["examples"] == [f"trace {'f' * 32} (3 spans)"]
    assert any("traces without GenAI spans" in w for w in imported.warnings)
