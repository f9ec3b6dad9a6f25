"""``replaykit import PATH --format otel``: OTLP JSON traces with GenAI or OpenInference spans as runs.

PATH is an OTLP/JSON ``ExportTraceServiceRequest`` (what the collector's file exporter and most SDK
debug exporters write), or JSONL of them. Span and trace ids may be hex (OTLP/JSON) or base64 (the
protobuf JSON mapping). Each trace becomes a run; an agent span nested under a tool span becomes a
linked subagent run.

Span roles: GenAI ``gen_ai.operation.name`` (``chat`` / ``text_completion`` / ``generate_content`` ->
an LLM call, ``execute_tool`` -> a tool call, ``invoke_agent`` / ``create_agent`` -> a user turn) or
OpenInference ``openinference.span.kind`` (LLM, TOOL, AGENT). Requests come from
``gen_ai.system_instructions`` + ``gen_ai.input.messages`` (or the flattened legacy / OpenInference
messages); when a span carries none, the request is rebuilt from the conversation so far. Either way the
event is marked ``reconstructed``, and what the spans lacked is listed in the run's warnings. Spans that
replaykit wrote carry ``replaykit.*`` attributes and come back exactly.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replaykit import __version__
from replaykit.adapters.base import ImportedRun, read_import_text
from replaykit.core.errors import BadInput
from replaykit.core.trace.codecs import otel_genai
from replaykit.core.trace.interop import Conversation, Losses
from replaykit.core.trace.ir import (
    EVENT_ADAPTER,
    HEADER_ADAPTER,
    Correlation,
    Lineage,
    LLMResponse,
    Message,
    Provenance,
    RunHeader,
    Source,
    TextPart,
    ToolSpec,
    Usage,
)
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.store import new_run_id

ADAPTER = "replaykit.adapters.otel"
#: attributes only a model call carries (any of them, without ``gen_ai.operation.name``: an older-convention call)
MODEL_CALL_PREFIXES = ("gen_ai.system", "gen_ai.provider.name", "gen_ai.request.", "gen_ai.response.",
                       "gen_ai.usage.", "gen_ai.prompt", "gen_ai.completion", "gen_ai.input.messages",
                       "gen_ai.output.messages")
#: attributes that hold message content: decoded into the run's messages, not kept again beside them
CONTENT_ATTRIBUTES = frozenset({"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions",
                                "gen_ai.tool.definitions", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"})
LLM_OPS = {"chat", "text_completion", "generate_content"}
LLM_TYPES = {"chat", "completion"}
PARAMS = {"gen_ai.request.max_tokens": "max_tokens", "gen_ai.request.temperature": "temperature",
          "gen_ai.request.top_p": "top_p", "gen_ai.request.top_k": "top_k", "gen_ai.request.seed": "seed",
          "gen_ai.request.frequency_penalty": "frequency_penalty", "gen_ai.request.stream": "stream",
          "gen_ai.request.presence_penalty": "presence_penalty", "gen_ai.request.stop_sequences": "stop"}


@dataclass
class Span:
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    attrs: dict[str, Any]
    status_code: int
    status_message: str
    events: list[tuple[str, int, dict[str, Any]]] = field(default_factory=list)
    resource: dict[str, Any] = field(default_factory=dict)
    scope: dict[str, Any] = field(default_factory=dict)  # instrumentation scope: name, version, schema URL
    kind: str | None = None  # client, server, producer, consumer (internal: None)
    wrapper: bool = False  # an LLM span around another LLM span (``_Trace``): not a call of its own

    @property
    def role(self) -> str | None:
        op = self.attrs.get("gen_ai.operation.name")
        kind = str(self.attrs.get("openinference.span.kind") or "").upper()
        # ``llm.request.type``: OpenLLMetry's mark of a model call (before gen_ai.operation.name).
        if op in LLM_OPS or kind == "LLM" or (op is None and self.attrs.get("llm.request.type") in LLM_TYPES):
            return None if self.wrapper else "llm"
        if op == "execute_tool" or kind == "TOOL":
            return "tool"
        if op in ("invoke_agent", "create_agent") or kind == "AGENT":
            return "agent"
        if op is None and not kind and any(key.startswith("gen_ai.") for key in self.attrs):
            # Older GenAI semantic conventions (``gen_ai.system``, ``gen_ai.request.model``,
            # ``gen_ai.usage.*`` with no ``gen_ai.operation.name``, as Jaeger's query API returns such
            # spans): a tool's attributes make a tool call, a model call's a model call. Attributes that
            # only say where the span ran (``gen_ai.conversation.id``, ``gen_ai.task.id``, an agent's
            # name: baggage copied onto every span of a request) make no step.
            if any(key in self.attrs for key in ("gen_ai.tool.name", "gen_ai.tool.call.id")):
                return "tool"
            if not any(key.startswith(MODEL_CALL_PREFIXES) for key in self.attrs):
                return None
            return None if self.wrapper else "llm"
        return None

    def mine(self, key: str) -> Any:
        """A ``replaykit.*`` JSON attribute (None when absent)."""
        value = self.attrs.get(f"replaykit.{key}")
        if value is None:
            return None
        try:
            return json.loads(value) if isinstance(value, str) else value
        except ValueError as exc:
            raise BadInput(f"span {self.span_id}: replaykit.{key} is not JSON") from exc


def import_otel(path: Path) -> list[ImportedRun]:
    spans = _read_spans(Path(path))
    if not spans:
        raise BadInput(f"{Path(path).name}: no spans in the file")
    traces: dict[str, list[Span]] = {}
    for span in spans:
        traces.setdefault(span.trace_id, []).append(span)
    runs: list[ImportedRun] = []
    skipped = Losses()
    for trace_id, trace in traces.items():
        if not any(s.role for s in trace):
            skipped.add("traces without GenAI spans", f"trace {trace_id} ({len(trace)} spans)",
                        reason="no span of the trace carries a gen_ai.* or OpenInference attribute: no model "
                        "call, tool or agent to import")
            continue
        runs.extend(_Trace(trace_id, trace, Path(path).name).runs())
    if runs and skipped.items:
        skipped.stamp(runs[0].header)  # the file's record goes with its first run
        runs[0].warnings.extend("not imported: " + line for line in skipped.as_list())
    if not runs:
        raise BadInput(f"{Path(path).name}: no span carries GenAI (gen_ai.*) or OpenInference "
                       "(openinference.span.kind) attributes")
    return runs


# ------------------------------------------------------------------------------------------- reading


def _read_spans(path: Path) -> list[Span]:
    text = read_import_text(path)
    if not text.strip():
        raise BadInput(f"{path.name}: empty file (expected OTLP JSON)")
    try:
        documents = [json.loads(text)]
    except (ValueError, RecursionError) as whole:
        documents = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                documents.append(json.loads(line))
            except (ValueError, RecursionError) as exc:
                raise BadInput(f"{path.name}:{number}: not valid JSON ({exc}); truncated?") from (
                    whole if number == 1 else exc)
    spans: list[Span] = []
    for index, document in enumerate(documents):
        resource_spans = _resource_spans(document)
        if resource_spans is None:
            raise BadInput(f"{path.name}: document {index + 1} is not OTLP JSON (no resourceSpans), nor a "
                           "Tempo (batches) or Jaeger (data[].spans) trace")
        for resource_span in resource_spans:
            if not isinstance(resource_span, dict):
                raise BadInput(f"{path.name}: document {index + 1}: a resource span is not an object")
            resource = _attrs((resource_span.get("resource") or {}).get("attributes"))
            # ``instrumentationLibrarySpans``: the name before OTLP 0.15 (Tempo's API still returns it).
            scopes = resource_span.get("scopeSpans", resource_span.get("scope_spans",
                                       resource_span.get("instrumentationLibrarySpans")))
            for scope in scopes or []:
                if not isinstance(scope, dict):
                    continue
                about = scope.get("scope", scope.get("instrumentationLibrary"))
                info = {k: v for k, v in {**(about if isinstance(about, dict) else {}),
                                          "schema_url": scope.get("schemaUrl")}.items() if v not in (None, "", [], {})}
                if isinstance(info.get("attributes"), list):
                    info["attributes"] = _attrs(info["attributes"])
                for raw in scope.get("spans") or []:
                    span = _span(raw, resource, path.name)
                    span.scope = info
                    spans.append(span)
    return spans


def _resource_spans(document: Any) -> list[Any] | None:
    """A document's OTLP ``ResourceSpans``, whichever way it came: an OTLP export
    (``resourceSpans``), Grafana Tempo's trace API (``batches``; v2: ``{"trace": {...}}``), or Jaeger's
    query API (``data[].spans``, converted by ``_jaeger_resource_spans``). None: none of them."""
    if not isinstance(document, dict):
        return None
    if isinstance(document.get("trace"), dict):  # Tempo /api/v2/traces/<id>
        document = document["trace"]
    for key in ("resourceSpans", "resource_spans", "batches"):
        if isinstance(document.get(key), list):
            return list(document[key])
    data = document.get("data")
    if isinstance(data, list) and all(isinstance(t, dict) and isinstance(t.get("spans"), list) for t in data):
        return [rs for trace in data for rs in _jaeger_resource_spans(trace)]
    return None


JAEGER_STATUS_TAGS = frozenset({"otel.status_code", "otel.status_description", "error", "span.kind"})
_JAEGER_VALUE = {"string": "stringValue", "bool": "boolValue", "int64": "intValue", "float64": "doubleValue",
                 "binary": "bytesValue"}


def _jaeger_attributes(tags: Any) -> list[dict[str, Any]]:
    out = []
    for tag in tags or []:
        if isinstance(tag, dict) and "key" in tag:
            kind = _JAEGER_VALUE.get(str(tag.get("type", "string")).lower(), "stringValue")
            out.append({"key": tag["key"], "value": {kind: tag.get("value")}})
    return out


def _jaeger_resource_spans(trace: dict[str, Any]) -> list[dict[str, Any]]:
    """One Jaeger trace (``{"traceID", "spans", "processes"}``) as OTLP ResourceSpans, one per process:
    ids padded to OTLP's sizes, microseconds to nanoseconds, tags to attributes, logs to events,
    ``CHILD_OF`` references to the parent, ``otel.status_code`` / ``error`` tags to the status, the
    ``span.kind`` tag to the kind."""
    table = trace.get("processes")
    processes: dict[str, Any] = table if isinstance(table, dict) else {}
    by_process: dict[str, list[dict[str, Any]]] = {}
    for span in trace["spans"]:
        if not isinstance(span, dict):
            raise BadInput("a Jaeger span is not an object")
        tags = {t.get("key"): t.get("value") for t in span.get("tags") or [] if isinstance(t, dict)}
        parent = next((r.get("spanID") for r in span.get("references") or []
                       if isinstance(r, dict) and r.get("refType") == "CHILD_OF"), None)
        try:
            start = int(span.get("startTime") or 0) * 1000
            end = start + int(span.get("duration") or 0) * 1000
        except (TypeError, ValueError) as exc:
            raise BadInput(f"Jaeger span {span.get('operationName')!r}: malformed startTime/duration") from exc
        error = str(tags.get("otel.status_code", "")).upper() == "ERROR" or tags.get("error") in (True, "true")
        code = 2 if error else 1 if str(tags.get("otel.status_code", "")).upper() == "OK" else 0
        events = []
        for log in span.get("logs") or []:
            fields = [f for f in (log.get("fields") if isinstance(log, dict) else None) or [] if isinstance(f, dict)]
            name = next((str(f.get("value")) for f in fields if f.get("key") == "event"), "log")
            events.append({"name": name, "timeUnixNano": int(log.get("timestamp") or 0) * 1000,
                           "attributes": _jaeger_attributes([f for f in fields if f.get("key") != "event"])})
        by_process.setdefault(str(span.get("processID") or ""), []).append({
            "traceId": str(span.get("traceID") or trace.get("traceID") or "").rjust(32, "0"),
            "spanId": str(span.get("spanID") or "").rjust(16, "0"),
            "parentSpanId": str(parent).rjust(16, "0") if parent else None,
            "name": span.get("operationName") or "", "startTimeUnixNano": start, "endTimeUnixNano": end,
            "kind": tags.get("span.kind"),
            # the status tags become the span's status (not attributes too: as an OTLP export has them)
            "attributes": _jaeger_attributes([t for t in span.get("tags") or [] if not isinstance(t, dict) or
                                              t.get("key") not in JAEGER_STATUS_TAGS]), "events": events,
            "status": {"code": code, "message": str(tags.get("otel.status_description") or "")},
        })
    out = []
    for process_id, spans in by_process.items():
        found = processes.get(process_id)
        process: dict[str, Any] = found if isinstance(found, dict) else {}
        attributes = _jaeger_attributes(process.get("tags"))
        if process.get("serviceName"):
            attributes.append({"key": "service.name", "value": {"stringValue": process["serviceName"]}})
        out.append({"resource": {"attributes": attributes}, "scopeSpans": [{"spans": spans}]})
    return out


def _id(value: Any, size: int, where: str) -> str:
    """Hex ids (OTLP/JSON) or base64 ids (protobuf's JSON mapping) as lowercase hex."""
    if not isinstance(value, str) or not value:
        raise BadInput(f"{where}: missing or malformed span/trace id")
    if len(value) == size * 2:
        try:
            int(value, 16)
            return value.lower()
        except ValueError:
            pass
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise BadInput(f"{where}: id {value!r} is neither hex nor base64") from exc
    if len(raw) != size:
        raise BadInput(f"{where}: id {value!r} has {len(raw)} bytes, expected {size}")
    return raw.hex()


def _any(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "boolValue", "doubleValue", "bytesValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        return int(value["intValue"])
    if "arrayValue" in value:
        return [_any(v) for v in (value["arrayValue"] or {}).get("values") or []]
    if "kvlistValue" in value:
        return {kv.get("key"): _any(kv.get("value")) for kv in (value["kvlistValue"] or {}).get("values") or []}
    return None


def _attrs(items: Any) -> dict[str, Any]:
    return {str(item.get("key")): _any(item.get("value")) for item in items or [] if isinstance(item, dict)}


def _span(raw: Any, resource: dict[str, Any], name: str) -> Span:
    if not isinstance(raw, dict):
        raise BadInput(f"{name}: a span is not an object")
    where = f"{name}: span {raw.get('name')!r}"
    parent = raw.get("parentSpanId", raw.get("parent_span_id"))
    status = raw.get("status") or {}
    code = status.get("code", 0)
    code = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}.get(code, code)
    try:
        start = int(raw.get("startTimeUnixNano", raw.get("start_time_unix_nano")) or 0)
        end = int(raw.get("endTimeUnixNano", raw.get("end_time_unix_nano")) or start)
    except (TypeError, ValueError) as exc:
        raise BadInput(f"{where}: malformed start/end time") from exc
    return Span(
        trace_id=_id(raw.get("traceId", raw.get("trace_id")), 16, where),
        span_id=_id(raw.get("spanId", raw.get("span_id")), 8, where),
        parent_id=_id(parent, 8, where) if parent else None,
        name=str(raw.get("name") or ""), start_ns=start, end_ns=end, attrs=_attrs(raw.get("attributes")),
        status_code=int(code or 0), status_message=str(status.get("message") or ""),
        events=[(str(e.get("name")), int(e.get("timeUnixNano", 0) or 0), _attrs(e.get("attributes")))
                for e in raw.get("events") or [] if isinstance(e, dict)],
        resource=resource, kind=_kind(raw.get("kind")),
    )


_KINDS = {2: "server", 3: "client", 4: "producer", 5: "consumer"}


def _kind(value: Any) -> str | None:
    """A span's kind by name (``client``, ``server``, ...); internal or unspecified: None (Jaeger writes
    no ``span.kind`` tag for those, so every shape reads the same)."""
    if isinstance(value, str):
        name = value.removeprefix("SPAN_KIND_").lower()
        return None if name in ("internal", "unspecified", "") else name
    return _KINDS.get(value) if isinstance(value, int) else None


# ------------------------------------------------------------------------------------------ building


def _json_attr(span: Span, key: str) -> Any:
    value = span.attrs.get(key)
    if value is None:
        return None
    try:
        return otel_genai.decode_json_attribute(value)
    except ValueError as exc:
        raise BadInput(f"span {span.span_id}: {key} is not JSON") from exc


class _Trace:
    def __init__(self, trace_id: str, spans: list[Span], source_name: str) -> None:
        self.trace_id = trace_id
        self.spans = sorted(spans, key=lambda s: (s.start_ns, s.end_ns))
        self.by_id = {s.span_id: s for s in spans}
        self.source_name = source_name
        self.t0 = min((s.start_ns for s in spans), default=0)
        self.check_acyclic()
        self.mark_wrappers()

    def mark_wrappers(self) -> None:
        """An LLM span with an LLM span below it (a framework's ``generate_content`` around the
        instrumented client's ``openai.chat``, as Google ADK under OpenLLMetry writes them) is one call
        described twice: the innermost span, closest to the request sent, is the call."""
        outer: list[Span] = []
        for span in self.spans:
            if span.role != "llm":
                continue
            cursor = self.by_id.get(span.parent_id or "")
            while cursor is not None:
                if cursor.role == "llm":
                    outer.append(cursor)
                cursor = self.by_id.get(cursor.parent_id or "")
        for span in outer:
            span.wrapper = True

    def owner(self, span: Span) -> str | None:
        """The agent span that owns ``span`` (nearest agent ancestor, itself when it is one)."""
        cursor: Span | None = span
        while cursor is not None:
            if cursor.role == "agent" and (cursor is not span or span.role == "agent"):
                return cursor.span_id
            cursor = self.by_id.get(cursor.parent_id or "")
        return None

    def run_key(self, agent_id: str | None) -> str:
        """Agent spans under a tool span start a subagent run; sibling agent spans are turns of one run."""
        while agent_id is not None:
            span = self.by_id[agent_id]
            explicit = span.attrs.get("replaykit.run_id") or span.attrs.get("gen_ai.agent.id")
            cursor = self.by_id.get(span.parent_id or "")
            outer_agent: str | None = None
            while cursor is not None:
                if cursor.role == "tool":
                    return f"agent:{explicit or agent_id}"
                if cursor.role == "agent":
                    outer = cursor.attrs.get("replaykit.run_id") or cursor.attrs.get("gen_ai.agent.id")
                    if explicit and outer and explicit != outer:  # another agent invoked inside this one
                        return f"agent:{explicit}"
                    outer_agent = cursor.span_id
                    break
                cursor = self.by_id.get(cursor.parent_id or "")
            if outer_agent is None:
                return f"agent:{explicit}" if explicit else "root"
            agent_id = outer_agent  # a turn inside an outer turn of the same agent: the outer one decides
        return "root"

    def check_acyclic(self) -> None:
        """Parent links must form a tree: a cycle would make every ancestor walk endless."""
        done: set[str] = set()
        for span in self.spans:
            seen: set[str] = set()
            cursor: Span | None = span
            while cursor is not None and cursor.span_id not in done:
                if cursor.span_id in seen:
                    raise BadInput(f"trace {self.trace_id}: span parent links form a cycle at {cursor.span_id}")
                seen.add(cursor.span_id)
                cursor = self.by_id.get(cursor.parent_id or "")
            done |= seen

    def runs(self) -> list[ImportedRun]:
        groups: dict[str, list[Span]] = {}
        for span in self.spans:
            if span.role is None:
                continue
            groups.setdefault(self.run_key(self.owner(span)), []).append(span)
        ids = {key: new_run_id("otel") for key in groups}
        roots = [k for k in groups if not self.launcher(groups[k])]
        out: list[ImportedRun] = []
        others = [s for s in self.spans if s.role is None]
        for key, spans in groups.items():
            launcher = self.launcher(spans)
            parent_key = self.run_key(self.owner(launcher)) if launcher is not None else None
            lineage = None
            if launcher is not None and parent_key in ids:
                lineage = Lineage(relation="subagent", parent_run_id=ids[parent_key],
                                  details={"tool_call_id": launcher.attrs.get("gen_ai.tool.call.id")
                                           or launcher.attrs.get("tool_call.id")})
            reader = _RunReader(self, spans, ids[key], lineage, ids)
            if roots and key == roots[0]:
                for span in others:  # an HTTP request, a database call, a wrapper: not part of the agent's run
                    if span.wrapper:
                        reader.losses.add("LLM spans around another LLM span", f"span {span.span_id} ({span.name})",
                                          reason="one model call described twice (a framework's span around the "
                                          "client's): the inner span is the call")
                        continue
                    reader.losses.add("spans that are not GenAI", f"span {span.span_id} ({span.name})",
                                      reason="not a model call, tool or agent turn (an HTTP request, a queue, a "
                                      "database call: no GenAI or OpenInference attribute beyond the "
                                      "conversation/task ids copied onto every span)")
            out.append(reader.build())
        out.sort(key=lambda r: 0 if r.header.run_id in {ids[k] for k in roots} else 1)
        return out

    def launcher(self, spans: list[Span]) -> Span | None:
        """The tool span a subagent run's agent span hangs under (None for a top-level run)."""
        agents = [s for s in spans if s.role == "agent"]
        if not agents:
            return None
        cursor = self.by_id.get(agents[0].parent_id or "")
        while cursor is not None:
            if cursor.role == "tool":
                return cursor
            if cursor.role == "agent":
                return None
            cursor = self.by_id.get(cursor.parent_id or "")
        return None


class _RunReader:
    def __init__(self, trace: _Trace, spans: list[Span], run_id: str, lineage: Lineage | None,
                 ids: dict[str, str]) -> None:
        self.trace = trace
        self.spans = spans
        self.run_id = run_id
        self.lineage = lineage
        self.ids = ids
        self.warnings: list[str] = []
        # replaykit's own spans written with content come back exactly; anything else is rebuilt.
        self.exact = any(s.attrs.get("replaykit.include_content") is True for s in spans if s.role == "agent") \
            and all(s.attrs.get("replaykit.seq") is not None for s in spans if s.role != "agent")
        self.conv = Conversation()
        self.tool_sets: dict[str, list[ToolSpec]] = {}
        self.last_llm: str | None = None
        self.calls: dict[str, str] = {}  # tool call id -> llm_call event id
        self.call_arguments: dict[str, Any] = {}  # tool call id -> arguments the model gave
        self.unanswered: list[tuple[str, str]] = []  # (call id, tool name) the model asked for, no span yet
        self.missing: set[str] = set()
        self.lacking: dict[str, list[str]] = {}  # span id -> the content it did not carry
        self.losses = Losses()

    def lack(self, span: Span, what: str) -> None:
        """``span`` carried no ``what`` (its instrumentation did not record content): the step comes in
        without it, marked so on the event (``provider_details.otel.not_recorded``) and in the record."""
        self.missing.add(what)
        self.lacking.setdefault(span.span_id, []).append(what)
        self.losses.add(f"span {what}", f"span {span.span_id} ({span.name})",
                        reason=f"the span carries no {what} (the instrumentation recorded none): the step "
                        "comes in without them" + (", its request rebuilt from the conversation so far"
                                                   if what == "input messages" else ""))

    # --------------------------------------------------------------------------------------- header

    def header(self) -> RunHeader:
        agent = next((s for s in self.spans if s.role == "agent"), None)
        first = self.spans[0]
        stored = agent.attrs.get("replaykit.header") if agent is not None else None
        if isinstance(stored, str):
            try:
                header = HEADER_ADAPTER.validate_python(json.loads(stored))  # json: lone surrogates too
            except ValueError as exc:
                raise BadInput(f"span {agent.span_id if agent else '?'}: replaykit.header is invalid") from exc
            lineage = header.lineage
            if self.lineage is not None:
                lineage = (lineage or self.lineage).model_copy(update={
                    "parent_run_id": self.lineage.parent_run_id, "parent_event_id": None})
            tags = header.tags if "imported" in header.tags else [*header.tags, "imported"]
            return header.model_copy(update={"run_id": self.run_id, "lineage": lineage, "tags": tags})
        attrs = {**first.resource, **(agent.attrs if agent else {})}
        llm = next((s for s in self.spans if s.role == "llm"), None)
        model = (llm.attrs.get("gen_ai.response.model") or llm.attrs.get("gen_ai.request.model")
                 or llm.attrs.get("llm.model_name")) if llm is not None else None
        provider = (llm.attrs.get("gen_ai.provider.name") or llm.attrs.get("gen_ai.system")
                    or llm.attrs.get("llm.provider") or llm.attrs.get("llm.system")) if llm is not None else None
        created = dt.datetime.fromtimestamp(first.start_ns / 1e9, dt.UTC).isoformat(timespec="microseconds")
        return RunHeader(
            run_id=self.run_id, created_at=created.replace("+00:00", "Z"),
            source=Source(framework=str(attrs.get("gen_ai.agent.name") or attrs.get("agent.name")
                                        or attrs.get("service.name") or "otel"),
                          adapter=ADAPTER, replaykit_version=__version__),
            model=model if isinstance(model, str) else None,
            provider=provider if isinstance(provider, str) else None,
            session_id=_str(attrs.get("gen_ai.conversation.id") or attrs.get("session.id")),
            lineage=self.lineage, tags=["imported", "reconstructed"],
            metadata={"imported_from": self.trace.source_name, "trace_id": self.trace.trace_id,
                      **self.sources()},
        )

    def sources(self) -> dict[str, Any]:
        """Where the trace's spans came from: each distinct resource (service, host, SDK) and
        instrumentation scope (name, version, schema URL), in the header's metadata."""
        resources: list[dict[str, Any]] = []
        scopes: list[dict[str, Any]] = []
        for span in self.trace.spans:
            if span.resource and span.resource not in resources:
                resources.append(span.resource)
            if span.scope and span.scope not in scopes:
                scopes.append(span.scope)
        return {k: v for k, v in {"otel_resources": resources, "otel_scopes": scopes}.items() if v}

    # ---------------------------------------------------------------------------------------- build

    def build(self) -> ImportedRun:
        header = self.header()
        recorder = Recorder(header, clock=lambda: 0.0)
        turn: Span | None = None  # the agent span whose end is still to be written (rebuilt imports)
        for kind, item in self.ordered():
            if kind == "span":
                if not self.exact and item.role == "agent":
                    if turn is not None:
                        self.ending(recorder, turn, last=False)
                    turn = item
                self.span(recorder, item)
            else:
                self.carried(recorder, item)
        if turn is not None:
            self.ending(recorder, turn, last=True)
        if not self.exact:
            _results_from_later_requests(recorder.events)
            if self.missing:
                self.warnings.append("spans without message content (" + ", ".join(sorted(self.missing)) +
                                     "): rebuilt from the conversation so far or left empty")
            self.warnings.append("requests were reconstructed from span attributes (no sampling parameters "
                                 "beyond gen_ai.request.*): events are marked reconstructed")
        return ImportedRun(header=header, events=recorder.events, warnings=self.warnings, losses=self.losses)

    def ordered(self) -> list[tuple[str, Any]]:
        """Spans and carried span events in their original order (``replaykit.seq``), else by time."""
        items: list[tuple[tuple[float, float], str, Any]] = []
        for span in self.spans:
            seq = span.attrs.get("replaykit.seq")
            if span.role == "agent":
                start = span.mine("turn_start")
                if not self.exact:  # the other spans are ordered by time here: so is the turn
                    items.append(((span.start_ns, 0), "turn", span))
                elif isinstance(start, dict):
                    items.append(((float(start.get("seq", 0)), 0), "turn", span))
                for name, _time_ns, attrs in span.events:
                    if self.exact and name.startswith("replaykit.") and attrs.get("replaykit.seq") is not None:
                        items.append(((float(attrs["replaykit.seq"]), 0), "event", (span, attrs)))
                continue
            key = (float(seq), 0) if self.exact and seq is not None else (span.start_ns, span.end_ns)
            items.append((key, "span", span))
        items.sort(key=lambda item: item[0])
        return [(kind, item) if kind != "turn" else ("span", item) for _, kind, item in items]

    def t(self, span: Span) -> float:
        return round(max(0, span.start_ns - self.trace.spans[0].start_ns) / 1e9, 6)

    def fields(self, span: Span, info: Any) -> dict[str, Any]:
        info = info if isinstance(info, dict) else {}
        out: dict[str, Any] = {
            "t": float(info["t"]) if isinstance(info.get("t"), int | float) else self.t(span),
            "duration": info.get("duration") if self.exact else round((span.end_ns - span.start_ns) / 1e9, 6),
            # Only an exact copy keeps its provenance: anything rebuilt from span attributes is reconstructed.
            "provenance": Provenance(info["provenance"]) if self.exact and info.get("provenance") in set(Provenance)
            else Provenance.RECONSTRUCTED,
        }
        if isinstance(info.get("corr"), dict):
            out["corr"] = Correlation.model_validate(info["corr"])
        if isinstance(info.get("provider_details"), dict):
            out["provider_details"] = info["provider_details"]
        if not self.exact:  # a rebuilt span keeps its ids and every attribute it carried beside the content
            out.setdefault("corr", Correlation(turn_id=span.trace_id, api_request_id=span.span_id,
                                               extra={"otel": {k: v for k, v in {
                                                   "span_name": span.name, "parent_span_id": span.parent_id,
                                                   "span_kind": span.kind, "status_code": span.status_code,
                                                   "status_message": span.status_message or None}.items() if v}}))
            kept: dict[str, Any] = {}
            rest = {k: v for k, v in span.attrs.items() if not _is_content(k)}
            if rest:
                kept["attributes"] = rest
            if span.events:
                kept["events"] = [{"name": n, "attributes": a} for n, _t, a in span.events]
            if self.lacking.get(span.span_id):
                kept["not_recorded"] = list(self.lacking[span.span_id])
            if kept:
                out["provider_details"] = {**(out.get("provider_details") or {}), "otel": kept}
        return out

    def span(self, recorder: Recorder, span: Span) -> None:
        if span.role == "agent":
            self.turn(recorder, span)
        elif span.role == "llm":
            self.llm(recorder, span)
        else:
            self.tool(recorder, span)

    def turn(self, recorder: Recorder, span: Span) -> None:
        info = span.mine("turn_start")
        message: Message | None = None
        if isinstance(info, dict) and isinstance(info.get("message"), dict):
            message = Message.model_validate(info["message"])
        else:
            inputs = _json_attr(span, "gen_ai.input.messages")
            users = [otel_genai.decode_message(m) for m in inputs or []] if isinstance(inputs, list) else []
            users = [m for m in users if m.role == "user"]
            if users:
                message = users[-1]
            elif isinstance(span.attrs.get("input.value"), str):
                message = Message(role="user", parts=[TextPart(text=span.attrs["input.value"])])
        if message is None:
            if isinstance(info, dict):
                self.lack(span, "user messages")
                message = Message(role="user")
            else:  # an agent span with no input: no turn to start, the span is kept as what it is
                recorder.opaque("otel", "agent_span", {"name": span.name}, **self.fields(span, None))
                return
        recorder.turn_start(message, turn=int(info.get("turn", 0)) if isinstance(info, dict) else
                            sum(1 for e in recorder.events if e.kind == "turn_start"), **self.fields(span, info))
        self.conv.add(message)

    def ending(self, recorder: Recorder, span: Span, *, last: bool) -> None:
        """A turn's end (the run's, for the last agent span) rebuilt from the agent span: the final answer
        from its ``gen_ai.output.messages`` (or OpenInference ``output.value``), a failure from status
        ERROR / ``error.type``; replaykit's own content-free ``replaykit.turn_end`` / ``replaykit.run_end``
        span events say which ends there were and their status. Nothing to go on: no end event."""
        carried: dict[str, dict[str, Any]] = {}
        for name, _time_ns, attrs in span.events:
            if name in ("replaykit.turn_end", "replaykit.run_end"):
                try:
                    body = json.loads(attrs.get("replaykit.event") or "{}")
                except ValueError as exc:
                    raise BadInput(f"span {span.span_id}: span event {name} is not JSON") from exc
                carried[name.removeprefix("replaykit.")] = body if isinstance(body, dict) else {}
        try:
            outputs = _json_attr(span, "gen_ai.output.messages")
            answers = [otel_genai.decode_message(m).text for m in outputs] if isinstance(outputs, list) else []
        except ValueError as exc:
            raise BadInput(f"span {span.span_id}: gen_ai.output.messages is malformed ({exc})") from exc
        answer = "".join(a for a in answers if a is not None) if answers else _str(span.attrs.get("output.value"))
        failed = span.status_code == 2
        if not carried and answer is None and not failed:
            return
        error_type = span.attrs.get("error.type")
        status = error_type if error_type in ("failed", "interrupted") else ("failed" if failed else "completed")
        reason = span.status_message if failed and span.status_message not in ("", status) else None
        kinds = [k for k in ("turn_end", "run_end") if k in carried] or (["run_end"] if last else ["turn_end"])
        for kind in kinds:
            body = carried.get(kind, {})
            fields: dict[str, Any] = {
                "reason": body.get("reason", reason), "provenance": Provenance.RECONSTRUCTED,
                "status": body["status"] if body.get("status") in ("completed", "failed", "interrupted") else status,
                "t": float(body["t"]) if isinstance(body.get("t"), int | float) else
                round(max(0, span.end_ns - self.trace.spans[0].start_ns) / 1e9, 6)}
            if kind == "run_end":
                recorder.run_end(answer, **fields)
            else:
                recorder.turn_end(answer, sync=False, **fields)

    def carried(self, recorder: Recorder, item: tuple[Span, dict[str, Any]]) -> None:
        span, attrs = item
        try:
            body = json.loads(attrs["replaykit.event"])
            if body.get("kind") == "subagent" and body.get("child_run_id"):
                key = f"agent:{body['child_run_id']}"
                if key in self.ids:
                    body["child_run_id"] = self.ids[key]
            seq, event_id = recorder.next_ids()
            recorder.emit(EVENT_ADAPTER.validate_python({**body, "seq": seq, "id": event_id}))
        except (KeyError, ValueError, TypeError) as exc:
            raise BadInput(f"span {span.span_id}: span event {attrs.get('replaykit.seq')} is not a replaykit "
                           "event") from exc

    # ------------------------------------------------------------------------------------------ LLM

    def request_messages(self, span: Span, req: dict[str, Any]) -> list[Message]:
        where = f"span {span.span_id}"
        if self.exact:
            return self.conv.apply_patch(req["patch"], where) if "patch" in req else self.conv.expected()
        messages: list[Message] = []
        try:
            instructions = _json_attr(span, "gen_ai.system_instructions")
            inputs = _json_attr(span, "gen_ai.input.messages")
            if instructions:
                parts = instructions if isinstance(instructions, list) else [instructions]
                messages.append(Message(role="system", parts=[otel_genai.decode_part(p) for p in parts]))
            if isinstance(inputs, list):
                messages.extend(otel_genai.decode_message(m) for m in inputs)
        except ValueError as exc:
            raise BadInput(f"{where}: gen_ai message attributes are malformed ({exc})") from exc
        if not messages:
            messages = otel_genai.decode_openinference(span.attrs, "llm.input_messages") or \
                otel_genai.decode_legacy(span.attrs, "gen_ai.prompt")
        if not messages:
            self.lack(span, "input messages")
            return self.conv.expected()
        return messages

    def response_message(self, span: Span, info: dict[str, Any]) -> Message:
        if isinstance(info.get("message"), dict):
            return Message.model_validate(info["message"])
        outputs = _json_attr(span, "gen_ai.output.messages")
        decoded: list[Message] = []
        try:
            if isinstance(outputs, list):
                decoded = [otel_genai.decode_message(m) for m in outputs]
        except ValueError as exc:
            raise BadInput(f"span {span.span_id}: gen_ai.output.messages is malformed ({exc})") from exc
        decoded = decoded or otel_genai.decode_openinference(span.attrs, "llm.output_messages") or \
            otel_genai.decode_legacy(span.attrs, "gen_ai.completion")
        if not decoded:
            self.lack(span, "output messages")
            return Message(role="assistant")
        return decoded[0] if len(decoded) == 1 else Message(role="assistant", parts=[
            p for m in decoded for p in m.parts])

    def tools(self, span: Span, req: dict[str, Any]) -> list[ToolSpec] | None:
        if isinstance(req.get("tools"), list):
            return [ToolSpec.model_validate(t) for t in req["tools"]]
        if self.exact:
            ref = req.get("tools_ref")
            return self.tool_sets.get(ref) if isinstance(ref, str) else None
        if span.attrs.get("gen_ai.tool.definitions") is not None:
            return otel_genai.decode_tools(span.attrs["gen_ai.tool.definitions"])
        found = otel_genai.decode_openinference_tools(span.attrs)
        return found or None

    def params(self, span: Span, req: dict[str, Any]) -> dict[str, Any]:
        if isinstance(req.get("params"), dict) and (self.exact or req["params"]):
            return dict(req["params"])
        params: dict[str, Any] = {}
        invocation = span.attrs.get("llm.invocation_parameters")
        if isinstance(invocation, str):
            try:
                loaded = json.loads(invocation)
                params.update(loaded if isinstance(loaded, dict) else {})
            except ValueError:
                self.warnings.append(f"span {span.span_id}: llm.invocation_parameters is not JSON (ignored)")
        for attr, key in PARAMS.items():
            if attr in span.attrs:
                params[key] = span.attrs[attr]
        params.pop("model", None)
        return params

    def llm(self, recorder: Recorder, span: Span) -> None:
        req = span.mine("request") or {}
        info = span.mine("event") or {}
        messages = self.request_messages(span, req)
        self.conv.adopt(messages)
        tools = self.tools(span, req)
        if tools is not None and isinstance(req.get("tools_ref"), str):
            self.tool_sets[req["tools_ref"]] = tools
        model = req.get("model") if self.exact else _str(span.attrs.get("gen_ai.request.model")
                                                           or span.attrs.get("llm.model_name"))
        provider = _str(span.attrs.get("gen_ai.provider.name") or span.attrs.get("llm.provider"))
        api = req.get("api") or ("anthropic-messages" if provider == "anthropic" else "openai-chat")
        common: dict[str, Any] = {"api": api, "model": model, "tools": tools, "params": self.params(span, req)}
        if span.status_code == 2:
            error = span.mine("error") or {}
            recorder.llm_error(messages, message=error.get("message", span.status_message),
                               error_type=error.get("error_type", _str(span.attrs.get("error.type"))),
                               status_code=error.get("status_code"), retryable=error.get("retryable"),
                               attempt=error.get("attempt"), **common, **self.fields(span, info))
            return
        resp = span.mine("response") or {}
        message = self.response_message(span, resp)
        finish = resp.get("finish_reason") if self.exact else _first(
            span.attrs.get("gen_ai.response.finish_reasons", span.attrs.get("gen_ai.completion.0.finish_reason")))
        response = LLMResponse(
            message=message, finish_reason=finish, usage=self.usage(span, resp),
            model=resp.get("model") if self.exact else _str(span.attrs.get("gen_ai.response.model")),
            response_id=resp.get("response_id") if self.exact else _str(span.attrs.get("gen_ai.response.id")),
            provider_details=resp.get("provider_details"),
        )
        event = recorder.llm_call(messages, response, attempt=int(resp.get("attempt", 1)),
                                  fingerprint=req.get("fingerprint"), request_details=req.get("provider_details"),
                                  **common, **self.fields(span, info))
        self.last_llm = event.id
        for call in message.tool_calls:
            self.calls[call.id] = event.id
            self.call_arguments[call.id] = call.arguments
            self.unanswered.append((call.id, call.name))
        self.conv.add(message)

    def usage(self, span: Span, resp: dict[str, Any]) -> Usage | None:
        if isinstance(resp.get("usage"), dict):
            return Usage.model_validate(resp["usage"])
        if self.exact:
            return None
        a = span.attrs
        usage = Usage(
            input_tokens=_int(a.get("gen_ai.usage.input_tokens", a.get("gen_ai.usage.prompt_tokens",
                                                                       a.get("llm.token_count.prompt")))),
            output_tokens=_int(a.get("gen_ai.usage.output_tokens", a.get("gen_ai.usage.completion_tokens",
                                                                         a.get("llm.token_count.completion")))),
            cache_read_tokens=_int(a.get("gen_ai.usage.cache_read.input_tokens",
                                         a.get("llm.token_count.prompt_details.cache_read"))),
            cache_write_tokens=_int(a.get("gen_ai.usage.cache_creation.input_tokens",
                                          a.get("llm.token_count.prompt_details.cache_write"))),
            reasoning_tokens=_int(a.get("gen_ai.usage.reasoning.output_tokens",
                                        a.get("llm.token_count.completion_details.reasoning"))),
            total_tokens=_int(a.get("llm.token_count.total")),
        )
        return None if usage == Usage() else usage

    # ----------------------------------------------------------------------------------------- tool

    def tool(self, recorder: Recorder, span: Span) -> None:
        a = span.attrs
        info = span.mine("tool") or {}
        name = _str(a.get("gen_ai.tool.name") or a.get("tool.name")) or span.name.removeprefix("execute_tool ").strip()
        call_id = _str(a.get("gen_ai.tool.call.id") or a.get("tool_call.id")) or self.unanswered_call(name) \
            or span.span_id
        raw = info.get("raw_arguments") if self.exact else a.get("gen_ai.tool.call.arguments",
                                                                 a.get("tool.parameters", a.get("input.value")))
        raw_text = raw if isinstance(raw, str) else None
        if "arguments" in info:
            arguments = info["arguments"]
        elif raw_text is not None:
            try:
                arguments = json.loads(raw_text)
            except ValueError:
                arguments = None
        else:
            arguments = self.call_arguments.get(call_id)
            if not self.exact:
                self.lack(span, "tool arguments")
        if self.exact:
            result = info.get("result")
        else:
            value = a.get("gen_ai.tool.call.result", a.get("output.value"))
            result = value if value is None or isinstance(value, str) else json.dumps(value)
            if value is None:
                self.lack(span, "tool results")
        status = info.get("status") or ("error" if span.status_code == 2 else "ok")
        error = info.get("error") if self.exact else (span.status_message or None if status == "error" else None)
        recorder.tool_call(call_id, name or "unknown", arguments, raw_arguments=raw_text if not self.exact else
                           info.get("raw_arguments"), result=result, result_blocks=info.get("result_blocks"),
                           status=status, error=error, llm_call_id=self.calls.get(call_id, self.last_llm),
                           **self.fields(span, span.mine("event")))
        self.conv.tool_result(call_id, name, result or "", is_error=status == "error")
        self.unanswered = [(i, n) for i, n in self.unanswered if i != call_id]

    def unanswered_call(self, name: str | None) -> str | None:
        """A tool span without a call id (common with OpenInference) answers the model's first open call
        of that tool."""
        return next((i for i, n in self.unanswered if n == name), None)


def _results_from_later_requests(events: list[Any]) -> None:
    """A tool span that carries no result (its framework keeps the output in attributes of its own)
    gets the one a later request holds for the same call id: what the model was given."""
    open_calls = {e.call_id: i for i, e in enumerate(events) if e.kind == "tool_call" and e.result is None}
    for event in events:
        if not open_calls:
            return
        if event.kind != "llm_call":
            continue
        for message in event.request.context.append:
            for part in getattr(message, "parts", ()):
                index = open_calls.get(getattr(part, "tool_call_id", None)) if part.type == "tool_result" else None
                if index is not None and isinstance(part.content, str) and events[index].seq < event.seq:
                    events[index] = events[index].model_copy(update={"result": part.content})
                    del open_calls[part.tool_call_id]


def _is_content(key: str) -> bool:
    return key in CONTENT_ATTRIBUTES or key.startswith(("llm.input_messages.", "llm.output_messages.", "gen_ai.prompt.",
                                                        "gen_ai.completion.", "llm.tools."))


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: Any) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _first(value: Any) -> str | None:
    if isinstance(value, list) and value:
        return str(value[0])
    return value if isinstance(value, str) else None

