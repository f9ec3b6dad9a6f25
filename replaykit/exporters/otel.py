"""``replaykit export RUN --format otel``: a run as OpenTelemetry GenAI spans, in OTLP JSON.

One trace per run (subagent runs join their parent's trace under the launching tool span): an
``invoke_agent`` span per user turn, a ``chat`` span per LLM call (a failed attempt is a ``chat`` span
with status ERROR), an ``execute_tool`` span per tool call, attributes from the GenAI semantic
conventions v1.37.0 (``replaykit.core.trace.codecs.otel_genai``). Message content (``gen_ai.input.messages``,
``gen_ai.output.messages``, ``gen_ai.system_instructions``, tool arguments and results) is written only
with ``include_content``, since the conventions make it opt-in. ``replaykit.*`` attributes and span
events keep what the conventions have no name for (order, provenance, sampling parameters, meta and
turn-end events), so that replaykit -> OTLP (with content) -> replaykit is exact.

``render`` is pure (spans, then the OTLP JSON document); ``replaykit.exporters.export(run, "otel", path)``
writes the file atomically, after ``deliver`` has sent the same spans to ``otlp_endpoint`` (if given)
through the OpenTelemetry SDK's OTLP/HTTP exporter.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from replaykit import __version__
from replaykit.core.errors import BadInput, MissingExtra
from replaykit.core.trace import jsonsafe
from replaykit.core.trace.codecs import otel_genai
from replaykit.core.trace.interop import ChildLoader, Conversation, Losses, find_child
from replaykit.core.trace.ir import (
    ErrorEvent,
    Event,
    LLMCallEvent,
    RunEndEvent,
    ToolCallEvent,
    ToolsEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from replaykit.core.trace.run import Run, request_of

SCOPE = "replaykit"
SCHEMA_URL = f"https://opentelemetry.io/schemas/{otel_genai.SEMCONV_VERSION}"
KIND_INTERNAL, KIND_CLIENT = 1, 3
STATUS_UNSET, STATUS_OK, STATUS_ERROR = 0, 1, 2
# Request parameters with a GenAI attribute of their own (the rest stay in replaykit.request).
PARAMS = {"max_tokens": "gen_ai.request.max_tokens", "max_completion_tokens": "gen_ai.request.max_tokens",
          "max_output_tokens": "gen_ai.request.max_tokens", "temperature": "gen_ai.request.temperature",
          "top_p": "gen_ai.request.top_p", "top_k": "gen_ai.request.top_k", "seed": "gen_ai.request.seed",
          "frequency_penalty": "gen_ai.request.frequency_penalty", "stream": "gen_ai.request.stream",
          "presence_penalty": "gen_ai.request.presence_penalty", "stop": "gen_ai.request.stop_sequences",
          "stop_sequences": "gen_ai.request.stop_sequences"}
# Body fields that can carry message content: written only with include_content.
CONTENT_PARAMS = frozenset({"messages", "input", "instructions", "system", "prompt", "prediction", "response_format",
                            "text", "metadata", "user", "extra_body"})
PROVIDERS = {"openai-chat": "openai", "openai-responses": "openai", "anthropic-messages": "anthropic"}


@dataclass
class SpanData:
    """One span, independent of the SDK (the JSON encoder and the SDK bridge both read it)."""

    trace_id: str  # 32 hex
    span_id: str  # 16 hex
    parent_id: str | None
    name: str
    kind: int
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    status_code: int = STATUS_UNSET
    status_message: str = ""
    events: list[tuple[str, int, dict[str, Any]]] = field(default_factory=list)


@dataclass
class Rendered:
    document: dict[str, Any]
    spans: list[SpanData]
    losses: Losses
    run_ids: list[str]
    include_content: bool = False

    @cached_property
    def text(self) -> str:
        return jsonsafe.dumps(self.document) + "\n"  # lone surrogates escaped: the file stays UTF-8

    @property
    def report(self) -> dict[str, Any]:
        return {"spans": len(self.spans), "trace_id": self.spans[0].trace_id if self.spans else None,
                "run_ids": self.run_ids, "include_content": self.include_content,
                "semconv": otel_genai.SEMCONV_VERSION, "losses": self.losses.to_json()}


def render(run: Run, *, filename: str | None = None, include_content: bool = False,
           children: ChildLoader | None = None, otlp_endpoint: str | None = None) -> Rendered:
    """The run's spans and their OTLP JSON document (``otlp_endpoint`` is for ``deliver``)."""
    losses = Losses()
    run_ids: list[str] = []
    trace_id = hashlib.sha256(f"replaykit-trace:{run.run_id}".encode()).hexdigest()[:32]
    spans = _SpanBuilder(run, trace_id, include_content, children, losses, run_ids, parent_span=None,
                         seen=set()).build()
    if not include_content:
        losses.add("content_not_included", "messages, tool arguments and results are opt-in in the GenAI "
                   "conventions: pass --include-content to write them")
    return Rendered(document=otlp_json(spans, run), spans=spans, losses=losses, run_ids=run_ids,
                    include_content=include_content)


def deliver(run: Run, rendered: Rendered, *, otlp_endpoint: str | None = None, **_options: Any) -> dict[str, Any]:
    """Send the spans to ``otlp_endpoint`` (called by ``replaykit.exporters.export`` before the file is
    written, so a collector that refuses them leaves nothing behind)."""
    if not otlp_endpoint:
        return {}
    send(rendered.spans, run, otlp_endpoint)
    return {"otlp_endpoint": otlp_endpoint}


# ---------------------------------------------------------------------------------------- building


def _ns(start: dt.datetime, seconds: float) -> int:
    return int(start.timestamp() * 1e9) + round(seconds * 1e9)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _dump(model: Any) -> Any:
    return jsonsafe.model_data(model, exclude_none=True)


def _event_info(event: Event, include_content: bool) -> dict[str, Any]:
    info: dict[str, Any] = {"seq": event.seq, "t": event.t, "provenance": str(event.provenance)}
    if event.duration is not None:
        info["duration"] = event.duration
    if event.corr is not None:
        info["corr"] = _dump(event.corr)
    if include_content and event.provider_details:
        info["provider_details"] = event.provider_details
    return info


class _SpanBuilder:
    def __init__(self, run: Run, trace_id: str, include_content: bool, children: ChildLoader | None,
                 losses: Losses, run_ids: list[str], parent_span: str | None, seen: set[str]) -> None:
        self.run = run
        self.trace_id = trace_id
        self.content = include_content
        self.children = children
        self.losses = losses
        self.run_ids = run_ids
        self.parent_span = parent_span
        self.seen = seen | {run.run_id}
        self.spans: list[SpanData] = []
        self.conv = Conversation()
        self.tool_sets: dict[str, Any] = {}
        self.turn: SpanData | None = None
        self.tool_spans: dict[str, SpanData] = {}  # tool call id -> its execute_tool span
        self.pending: list[tuple[str, int, dict[str, Any]]] = []  # span events before the first turn
        self.launches: list[Any] = []  # subagent start events, built once the run's own spans exist
        self.early_end: TurnEndEvent | RunEndEvent | None = None  # an end before any turn span exists
        self.encoded_cache: dict[int, tuple[Any, str]] = {}  # id(message) -> (message, its JSON text)
        try:
            self.start = dt.datetime.fromisoformat(run.header.created_at.replace("Z", "+00:00"))
        except ValueError as exc:
            raise BadInput(f"run {run.run_id}: created_at {run.header.created_at!r} is not ISO 8601") from exc
        run_ids.append(run.run_id)

    def encoded(self, message: Any) -> str:
        """A message's GenAI JSON text, computed once per message object (requests share their prefix)."""
        found = self.encoded_cache.get(id(message))
        if found is None or found[0] is not message:
            found = (message, _json(otel_genai.encode_message(message, [], "")))
            self.encoded_cache[id(message)] = found
        return found[1]

    def span_id(self, key: str) -> str:
        return hashlib.sha256(f"{self.run.run_id}:{key}".encode()).hexdigest()[:16]

    def agent_attributes(self) -> dict[str, Any]:
        header = self.run.header
        attrs: dict[str, Any] = {"gen_ai.operation.name": "invoke_agent",
                                 "gen_ai.agent.name": header.source.framework or "replaykit",
                                 "gen_ai.agent.id": header.run_id, "replaykit.run_id": header.run_id,
                                 "replaykit.header": _json(_dump(header)),
                                 "replaykit.include_content": self.content}
        if header.session_id:
            attrs["gen_ai.conversation.id"] = header.session_id
        if self.run.model:
            attrs["gen_ai.request.model"] = self.run.model
        if header.provider:
            attrs["gen_ai.provider.name"] = header.provider
        return attrs

    def build(self) -> list[SpanData]:
        for event in self.run.events:
            self.event(event)
        for event in self.launches:  # after the run: the launching tool span exists by now
            self.subagent(event)
        if self.turn is None:  # a run without user turns still gets its agent span
            self.open_turn(None)
        self.close_turn()
        return self.spans

    # ------------------------------------------------------------------------------------- turns

    def open_turn(self, event: TurnStartEvent | None) -> SpanData:
        self.close_turn()
        key = event.id if event is not None else "run"
        t = event.t if event is not None else 0.0
        name = f"invoke_agent {self.run.header.source.framework or 'replaykit'}"
        span = SpanData(self.trace_id, self.span_id(key), self.parent_span, name, KIND_INTERNAL,
                        _ns(self.start, t), _ns(self.start, t), self.agent_attributes())
        if event is not None and self.content:
            span.attributes["gen_ai.input.messages"] = _json([otel_genai.encode_message(event.message, [], "")])
        span.events.extend(self.pending)
        self.pending = []
        self.turn = span
        self.spans.append(span)
        if self.early_end is not None:
            self.end(span, self.early_end)
            self.early_end = None
        return span

    def end(self, span: SpanData, event: TurnEndEvent | RunEndEvent) -> None:
        """A turn's or the run's end in the conventions' own terms, on the agent span it closes: the final
        answer as the agent's ``gen_ai.output.messages`` (content, so opt-in) and a failed or interrupted
        end as status ERROR with ``error.type`` (a success keeps status UNSET, as instrumentations should).
        Readers that know only the conventions see how the agent ended; ``replaykit import`` rebuilds the
        end event from them when the ``replaykit.*`` span events are gone."""
        attrs = span.attributes
        if self.content and event.final_answer is not None:
            attrs["gen_ai.output.messages"] = _json([{"role": "assistant", "finish_reason": "stop" if
                                                     event.status == "completed" else "error",
                                                     "parts": [{"type": "text", "content": event.final_answer}]}])
        if event.status == "completed":
            span.status_code, span.status_message = STATUS_UNSET, ""
            attrs.pop("error.type", None)
        else:
            span.status_code = STATUS_ERROR
            span.status_message = (event.reason or event.status) if self.content else event.status
            attrs["error.type"] = event.status

    def close_turn(self) -> None:
        if self.turn is not None:
            ends = [s.end_ns for s in self.spans if s.parent_id == self.turn.span_id]
            ends += [e[1] for e in self.turn.events]
            self.turn.end_ns = max([self.turn.end_ns, *ends])

    def current_turn(self) -> SpanData:
        return self.turn if self.turn is not None else self.open_turn(None)

    def carry(self, event: Event, name: str | None = None) -> None:
        """An event with no span of its own: a span event ``replaykit.<kind>`` holding it."""
        body = _dump(event)
        body.pop("seq", None)
        body.pop("id", None)
        content_free = {k: v for k, v in body.items()
                        if k not in ("message", "final_answer", "data", "expected", "actual", "summary", "goal",
                                     "provider_details")}
        attrs = {"replaykit.seq": event.seq, "replaykit.event": _json(body if self.content else content_free)}
        item = (name or f"replaykit.{event.kind}", _ns(self.start, event.t + (event.duration or 0.0)), attrs)
        if self.turn is None:
            self.pending.append(item)
        else:
            self.turn.events.append(item)

    # ------------------------------------------------------------------------------------ events

    def event(self, event: Event) -> None:
        if isinstance(event, ToolsEvent):
            self.tool_sets[event.hash] = event.tools
        elif isinstance(event, TurnStartEvent):
            self.open_turn(event).attributes["replaykit.turn_start"] = _json(
                {**_event_info(event, self.content), "turn": event.turn,
                 **({"message": _dump(event.message)} if self.content else {})})
            self.conv.add(event.message)
        elif isinstance(event, LLMCallEvent | ErrorEvent) and request_of(event) is not None:
            self.llm(event)
        elif isinstance(event, ToolCallEvent):
            self.tool(event)
        else:
            self.carry(event)
            if isinstance(event, TurnEndEvent | RunEndEvent):
                if self.turn is None:
                    self.early_end = event
                else:
                    self.end(self.turn, event)
            if event.kind == "subagent":
                self.launches.append(event)

    def llm(self, event: LLMCallEvent | ErrorEvent) -> None:
        request = request_of(event)
        assert request is not None
        turn = self.current_turn()
        model = request.model or (event.response.model if isinstance(event, LLMCallEvent) else None) \
            or self.run.model or "unknown"
        attrs: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model,
                                 "gen_ai.provider.name": self.run.header.provider or PROVIDERS.get(request.api,
                                                                                                  "unknown"),
                                 "replaykit.seq": event.seq, "replaykit.event": _json(_event_info(event, self.content))}
        if self.run.header.session_id:
            attrs["gen_ai.conversation.id"] = self.run.header.session_id
        for key, value in request.params.items():
            name = PARAMS.get(key)
            if name and isinstance(value, bool | int | float | str | list) and not isinstance(value, dict):
                attrs[name] = [str(v) for v in value] if isinstance(value, list) else \
                    ([value] if name.endswith("stop_sequences") and isinstance(value, str) else value)
        params = request.params if self.content else {
            k: v for k, v in request.params.items() if k not in CONTENT_PARAMS}
        for key in sorted(set(request.params) - set(params)):
            self.losses.add("content_params_not_included", f"{self.run.run_id} event {event.seq}: {key}")
        req_info: dict[str, Any] = {"api": request.api, "params": params}
        for key, value in (("model", request.model), ("tools_ref", request.tools_ref),
                           ("fingerprint", request.fingerprint)):
            if value is not None:
                req_info[key] = value
        if self.content:
            actual = self.run.request_messages(event)
            patch = self.conv.patch_for(actual)
            self.conv.adopt(actual)
            if patch is not None:
                req_info["patch"] = patch
            if request.provider_details:
                req_info["provider_details"] = request.provider_details
            lead = 0
            while lead < len(actual) and actual[lead].role == "system":
                lead += 1
            if lead:
                instructions = [p for m in actual[:lead] for p in otel_genai.encode_message(m, [], "")["parts"]]
                attrs["gen_ai.system_instructions"] = _json(instructions)
            # Every chat span repeats the history (the conventions' shape): encode each message once.
            attrs["gen_ai.input.messages"] = "[" + ",".join(self.encoded(m) for m in actual[lead:]) + "]"
            tools = self.tool_sets.get(request.tools_ref or "")
            if tools:
                attrs["gen_ai.tool.definitions"] = _json(otel_genai.encode_tools(tools))
                req_info["tools"] = [_dump(t) for t in tools]
        attrs["replaykit.request"] = _json(req_info)
        span = SpanData(self.trace_id, self.span_id(event.id), turn.span_id, f"chat {model}", KIND_CLIENT,
                        _ns(self.start, event.t), _ns(self.start, event.t + (event.duration or 0.0)), attrs)
        if isinstance(event, ErrorEvent):
            self.failed(event, span)
        else:
            self.response(event, span)
        self.spans.append(span)

    def failed(self, event: ErrorEvent, span: SpanData) -> None:
        span.status_code = STATUS_ERROR
        span.status_message = event.message if self.content else (event.error_type or "error")
        span.attributes["error.type"] = event.error_type or (str(event.status_code) if event.status_code else
                                                              "_OTHER")
        info = {k: v for k, v in _dump(event).items() if k in ("where", "error_type", "status_code", "retryable",
                                                                "attempt")}
        if self.content:
            info["message"] = event.message
        span.attributes["replaykit.error"] = _json(info)

    def response(self, event: LLMCallEvent, span: SpanData) -> None:
        response = event.response
        attrs = span.attributes
        if response.model:
            attrs["gen_ai.response.model"] = response.model
        if response.response_id:
            attrs["gen_ai.response.id"] = response.response_id
        if response.finish_reason:
            attrs["gen_ai.response.finish_reasons"] = [response.finish_reason]
        usage = response.usage
        if usage is not None:
            for name, value in (("gen_ai.usage.input_tokens", usage.input_tokens),
                                ("gen_ai.usage.output_tokens", usage.output_tokens),
                                ("gen_ai.usage.cache_read.input_tokens", usage.cache_read_tokens),
                                ("gen_ai.usage.cache_creation.input_tokens", usage.cache_write_tokens),
                                ("gen_ai.usage.reasoning.output_tokens", usage.reasoning_tokens)):
                if value is not None:
                    attrs[name] = value
        info: dict[str, Any] = {"attempt": event.attempt}
        for key, text in (("finish_reason", response.finish_reason), ("model", response.model),
                          ("response_id", response.response_id)):
            if text is not None:
                info[key] = text
        if usage is not None:
            info["usage"] = _dump(usage)
        if self.content:
            losses: list[str] = []
            where = f"{self.run.run_id} event {event.seq}"
            encoded = otel_genai.encode_message(response.message, losses, where)
            if response.finish_reason:
                encoded["finish_reason"] = response.finish_reason
            attrs["gen_ai.output.messages"] = _json([encoded])
            if otel_genai.decode_message(encoded) != response.message:
                info["message"] = _dump(response.message)
            if response.provider_details:
                info["provider_details"] = response.provider_details
            self.conv.add(response.message)
        attrs["replaykit.response"] = _json(info)

    def tool(self, event: ToolCallEvent) -> None:
        turn = self.current_turn()
        attrs: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": event.name,
                                 "gen_ai.tool.call.id": event.call_id, "gen_ai.tool.type": "function",
                                 "replaykit.seq": event.seq, "replaykit.event": _json(_event_info(event, self.content))}
        info: dict[str, Any] = {"status": event.status}
        if self.content:
            attrs["gen_ai.tool.call.arguments"] = event.raw_arguments if event.raw_arguments is not None \
                else _json(event.arguments)
            if event.result is not None:
                attrs["gen_ai.tool.call.result"] = event.result
            info.update({k: v for k, v in _dump(event).items()
                         if k in ("arguments", "raw_arguments", "result", "result_blocks", "error")})
            self.conv.tool_result(event.call_id, event.name, event.result or "", is_error=event.status == "error")
        attrs["replaykit.tool"] = _json(info)
        span = SpanData(self.trace_id, self.span_id(event.id), turn.span_id, f"execute_tool {event.name}",
                        KIND_INTERNAL, _ns(self.start, event.t), _ns(self.start, event.t + (event.duration or 0.0)),
                        attrs)
        if event.status == "error":
            span.status_code = STATUS_ERROR
            span.status_message = (event.error or "tool error") if self.content else "tool error"
            attrs["error.type"] = "tool_error"
        self.tool_spans[event.call_id] = span
        self.spans.append(span)

    def subagent(self, event: Any) -> None:
        if event.phase != "start" or not event.child_run_id:
            return
        child = find_child(self.children, event.child_run_id)
        if child is None or child.run_id in self.seen:
            self.losses.add("subagent_runs_missing", f"{self.run.run_id} event {event.seq}: run "
                            f"{event.child_run_id} not found; only the subagent event is written")
            return
        launcher = self.tool_spans.get(event.launched_by or "")
        parent = launcher.span_id if launcher is not None else self.current_turn().span_id
        builder = _SpanBuilder(child, self.trace_id, self.content, self.children, self.losses, self.run_ids,
                               parent_span=parent, seen=self.seen)
        self.spans.extend(builder.build())  # its own created_at: absolute times line up


# ------------------------------------------------------------------------------------------ OTLP JSON


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}  # OTLP JSON: 64-bit integers as decimal strings
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [_value(v) for v in value]}}
    return {"stringValue": str(value)}


def _attributes(attrs: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": key, "value": _value(value)} for key, value in attrs.items()]


def otlp_json(spans: list[SpanData], run: Run) -> dict[str, Any]:
    """The OTLP/JSON ``ExportTraceServiceRequest`` (hex ids, integers as strings, enums as numbers)."""
    encoded = []
    for span in spans:
        item: dict[str, Any] = {
            "traceId": span.trace_id, "spanId": span.span_id, "name": span.name, "kind": span.kind,
            "startTimeUnixNano": str(span.start_ns), "endTimeUnixNano": str(span.end_ns),
            "attributes": _attributes(span.attributes), "status": {"code": span.status_code},
        }
        if span.parent_id:
            item["parentSpanId"] = span.parent_id
        if span.status_message:
            item["status"]["message"] = span.status_message
        if span.events:
            item["events"] = [{"name": n, "timeUnixNano": str(t), "attributes": _attributes(a)}
                              for n, t, a in span.events]
        encoded.append(item)
    return {"resourceSpans": [{
        "resource": {"attributes": _attributes(_resource(run))},
        "scopeSpans": [{"scope": {"name": SCOPE, "version": __version__}, "schemaUrl": SCHEMA_URL,
                        "spans": encoded}],
        "schemaUrl": SCHEMA_URL,
    }]}


def _resource(run: Run) -> dict[str, Any]:
    return {"service.name": f"replaykit:{run.header.source.framework or 'unknown'}",
            "telemetry.sdk.name": "replaykit", "telemetry.sdk.language": "python"}


# ---------------------------------------------------------------------------------------- OTLP/HTTP


def send(spans: list[SpanData], run: Run, endpoint: str, timeout: float = 10.0) -> None:
    """Send the spans to an OTLP/HTTP collector with the OpenTelemetry SDK's own exporter."""
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import Event as SdkEvent
        from opentelemetry.sdk.trace import ReadableSpan
        from opentelemetry.sdk.trace.export import SpanExportResult
        from opentelemetry.sdk.util.instrumentation import InstrumentationScope
        from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags
    except ModuleNotFoundError as exc:
        raise MissingExtra("otel", "opentelemetry-sdk / opentelemetry-exporter-otlp-proto-http") from exc
    if not endpoint.startswith(("http://", "https://")):
        raise BadInput(f"--otlp-endpoint must be an http(s) URL, got {endpoint!r}")
    url = endpoint if endpoint.rstrip("/").endswith("/v1/traces") else endpoint.rstrip("/") + "/v1/traces"
    resource = Resource.create(_resource(run))
    scope = InstrumentationScope(SCOPE, __version__, SCHEMA_URL)
    kinds = {KIND_INTERNAL: SpanKind.INTERNAL, KIND_CLIENT: SpanKind.CLIENT}
    codes = {STATUS_UNSET: StatusCode.UNSET, STATUS_OK: StatusCode.OK, STATUS_ERROR: StatusCode.ERROR}
    sdk_spans = []
    for span in spans:
        context = SpanContext(int(span.trace_id, 16), int(span.span_id, 16), is_remote=False,
                              trace_flags=TraceFlags(TraceFlags.SAMPLED))
        parent = SpanContext(int(span.trace_id, 16), int(span.parent_id, 16), is_remote=False,
                             trace_flags=TraceFlags(TraceFlags.SAMPLED)) if span.parent_id else None
        status = Status(codes[span.status_code], span.status_message or None) \
            if span.status_code == STATUS_ERROR else Status(codes[span.status_code])
        sdk_spans.append(ReadableSpan(
            name=span.name, context=context, parent=parent, resource=resource, attributes=span.attributes,
            events=[SdkEvent(n, a, t) for n, t, a in span.events], kind=kinds[span.kind], status=status,
            start_time=span.start_ns, end_time=span.end_ns, instrumentation_scope=scope,
        ))
    exporter = OTLPSpanExporter(endpoint=url, timeout=timeout)
    try:
        result = exporter.export(sdk_spans)
    finally:
        exporter.shutdown()
    if result is not SpanExportResult.SUCCESS:
        raise BadInput(f"the OTLP/HTTP collector at {url} did not accept the spans")
