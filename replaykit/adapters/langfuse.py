"""``replaykit import PATH --format langfuse``: Langfuse traces and their observations as runs.

PATH holds what Langfuse's public API returns, as JSON (no Langfuse SDK needed):

- a page of the observations API v2 (``GET /api/public/v2/observations``: ``{"data": [ObservationV2...],
  "meta": {"cursor": ...}}``, the current SDK's ``api.observations.get_many`` serialised), a JSON list
  of observations, or JSONL with one page or one observation a line;
- the older trace with its observations (``GET /api/public/traces/{id}``: ``TraceWithFullDetails``, with
  ``ObservationsView`` entries and scores), a list of them, ``{"data": [...]}`` of them, or JSONL;
- the Langfuse UI's "download trace" JSON: ``{"trace": {...}, "observations": [...]}`` (observations in
  any order: they are sorted by start time).

Keys may be camelCase (the API, the SDK's ``by_alias`` dump) or snake_case (``model_dump()``); input and
output may be JSON text (the v2 API returns them as raw strings). Each trace becomes a run; traces of
one session share the run's ``session_id`` and name each other in ``metadata.langfuse.session``.

Observation types: ``GENERATION`` -> an LLM call, ``TOOL`` -> a tool call, anything else (``SPAN``,
``AGENT``, ``CHAIN``, ``EVENT``, ``RETRIEVER``, ``EMBEDDING``, ``EVALUATOR``, ``GUARDRAIL``) -> an
opaque event with its name, input, output and metadata. Usage and cost go to the response's usage
(``details.langfuse`` keeps Langfuse's own figures), timing to ``t`` and ``duration``, the ids to
``corr``. Every event is ``reconstructed``: see ``replaykit.adapters.platform_runs`` for the rule.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from pathlib import Path
from typing import Any

from replaykit import __version__
from replaykit.adapters import platform_messages as pm
from replaykit.adapters.base import ImportedRun, read_json_documents
from replaykit.adapters.platform_runs import (
    LlmStep,
    OpaqueStep,
    RunEnd,
    Step,
    Timing,
    ToolStep,
    build_run,
    session_lineage,
    session_links,
)
from replaykit.core.errors import BadInput, CodecError
from replaykit.core.gcpause import cyclic_gc_paused
from replaykit.core.trace.interop import Losses
from replaykit.core.trace.ir import Correlation, Message, RunHeader, Source, ToolSpec, Usage
from replaykit.core.trace.store import new_run_id

ADAPTER = "replaykit.adapters.langfuse"
PLATFORM = "langfuse"
TRACE_KEYS = ("id", "timestamp", "name", "input", "output", "sessionId", "userId", "release", "version",
              "metadata", "tags", "public", "environment", "htmlPath", "latency", "totalCost", "scores",
              "projectId", "bookmarked", "externalId")
OBSERVATION_TYPES = {"GENERATION", "SPAN", "EVENT", "AGENT", "TOOL", "CHAIN", "RETRIEVER", "EVALUATOR",
                     "EMBEDDING", "GUARDRAIL"}
CACHE_READ = ("input_cached_tokens", "cache_read_input_tokens", "input_cache_read", "cached_tokens")
CACHE_WRITE = ("cache_creation_input_tokens", "input_cache_creation", "input_cache_write")
REASONING = ("output_reasoning_tokens", "reasoning_tokens", "output_reasoning")


def import_langfuse(path: Path) -> list[ImportedRun]:
    with cyclic_gc_paused():  # an import builds many long-lived acyclic objects (core/gcpause.py)
        return _import(Path(path))


def _import(path: Path) -> list[ImportedRun]:
    path = Path(path)
    traces, observations, page_meta = _read(path)
    for obs in observations:
        trace_id = _get(obs, "traceId")
        if not isinstance(trace_id, str) or not trace_id:
            raise BadInput(f"{path.name}: observation {_get(obs, 'id')!r} has no traceId")
        traces.setdefault(trace_id, {"id": trace_id, "observations": []})["observations"].append(obs)
    if not traces:
        raise BadInput(f"{path.name}: no Langfuse trace or observation in the file")
    run_ids = {trace_id: new_run_id("langfuse") for trace_id in traces}
    sessions: dict[str, list[str]] = {}
    ordered = sorted(traces.items(), key=lambda item: _trace_start(item[1]) or dt.datetime.min.replace(tzinfo=dt.UTC))
    for trace_id, trace in ordered:
        session = _session(trace)
        if session:
            sessions.setdefault(session, []).append(run_ids[trace_id])
    runs = []
    for trace_id, trace in ordered:
        reader = _Trace(trace, run_ids[trace_id], sessions, path.name)
        for meta in page_meta:
            reader.losses.add("page metadata", json.dumps(meta, ensure_ascii=False)[:200], fields=["meta"],
                              reason="the API page's pagination state (cursor, counts): about the listing, not "
                              "about any trace")
        runs.append(reader.run())
    return runs


# ------------------------------------------------------------------------------------------- reading


def _get(obj: dict[str, Any], camel: str, default: Any = None) -> Any:
    """A field by its API (camelCase) name, or the SDK's snake_case attribute name."""
    if camel in obj:
        return obj[camel]
    return obj.get(_snake(camel), default)


@functools.lru_cache(maxsize=256)
def _snake(camel: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)



def _is_observation(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("type"), str) and _get(obj, "startTime") is not None \
        and "observations" not in obj


def _read(path: Path) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]], list[Any]]:
    traces: dict[str, dict[str, Any]] = {}
    observations: list[dict[str, Any]] = []
    page_meta: list[Any] = []  # the API pages' ``meta`` (cursor, counts): pagination, not part of a trace

    def take(item: Any, where: str) -> None:
        if isinstance(item, dict) and isinstance(item.get("trace"), dict) and isinstance(item.get("observations"), list):
            # the Langfuse UI's "download trace" JSON: the trace and its observations side by side
            item = {**item["trace"], "observations": item["observations"],
                    **({"scores": item["scores"]} if item.get("scores") and not item["trace"].get("scores") else {})}
        if _is_observation(item):
            observations.append(item)
        elif isinstance(item, dict) and isinstance(item.get("observations"), list):
            trace_id = item.get("id")
            if not isinstance(trace_id, str) or not trace_id:
                raise BadInput(f"{where}: a trace without an id")
            bad = next((o for o in item["observations"] if not _is_observation(o)), None)
            if bad is not None:
                raise BadInput(f"{where}: trace {trace_id}: an observation is not a Langfuse observation "
                               "(needs type and startTime; a trace from the list API holds only ids: fetch "
                               "each trace whole)")
            trace = dict(item)
            trace["observations"] = list(item["observations"])
            traces[trace_id] = trace
        else:
            raise BadInput(f"{where}: not a Langfuse trace or observation (expected an observations page "
                           "{\"data\": [...]}, a trace with observations, or a list of them)")

    for where, document in read_json_documents(path, "Langfuse traces or observations as JSON"):
        items = document.get("data") if isinstance(document, dict) and isinstance(document.get("data"), list) \
            else document
        if items is not document and document.get("meta"):
            page_meta.append(document["meta"])
        if isinstance(items, list):
            for index, item in enumerate(items):
                take(item, f"{where}: item {index + 1}")
        else:
            take(items, where)
    return traces, observations, page_meta


def _time(value: Any, where: str) -> dt.datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadInput(f"{where}: a time is {type(value).__name__}, expected ISO 8601 text")
    try:
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise BadInput(f"{where}: {value!r} is not an ISO 8601 time") from exc
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def _trace_start(trace: dict[str, Any]) -> dt.datetime | None:
    stamps = [_time(_get(o, "startTime"), f"observation {_get(o, 'id')}") for o in trace["observations"]]
    stamps.append(_time(trace.get("timestamp"), f"trace {trace.get('id')}"))
    found = [s for s in stamps if s is not None]
    return min(found) if found else None


def _session(trace: dict[str, Any]) -> str | None:
    session = _get(trace, "sessionId") or next(
        (_get(o, "sessionId") for o in trace["observations"] if _get(o, "sessionId")), None)
    return session if isinstance(session, str) else None


# ------------------------------------------------------------------------------------------ building


def usage_of(obs: dict[str, Any]) -> Usage | None:
    """Langfuse's usage (``usageDetails``, else the older ``usage``) and cost as IR usage; Langfuse's own
    figures, cost included, stay in ``details.langfuse``."""
    details = _get(obs, "usageDetails")
    old = pm.as_dict(obs.get("usage"))
    counts: dict[str, Any] = dict(details) if isinstance(details, dict) and details else {
        k: v for k, v in old.items() if k in ("input", "output", "total")}
    kept = {k: v for k, v in {
        "usage_details": details or None, "usage": old or None, "cost_details": _get(obs, "costDetails") or None,
        "total_cost": _get(obs, "totalCost") if _get(obs, "totalCost") is not None else
        _get(obs, "calculatedTotalCost")}.items() if v is not None}
    if not counts and not kept:
        return None

    def first(keys: tuple[str, ...]) -> int | None:
        return next((int(counts[k]) for k in keys if isinstance(counts.get(k), int | float)), None)

    usage = Usage(input_tokens=first(("input", "prompt_tokens", "input_tokens")),
                  output_tokens=first(("output", "completion_tokens", "output_tokens")),
                  total_tokens=first(("total", "total_tokens")), cache_read_tokens=first(CACHE_READ),
                  cache_write_tokens=first(CACHE_WRITE), reasoning_tokens=first(REASONING),
                  details={PLATFORM: kept} if kept else None)
    return usage


class _Trace:
    def __init__(self, trace: dict[str, Any], run_id: str, sessions: dict[str, list[str]], source_name: str) -> None:
        self.trace = trace
        self.run_id = run_id
        self.sessions = sessions
        self.source_name = source_name
        self.trace_id = str(trace["id"])
        self.where = f"{source_name}: trace {self.trace_id}"
        self.observations = sorted(trace["observations"], key=self.start)
        self.t0 = _trace_start(trace) or dt.datetime.now(tz=dt.UTC)
        self.losses = Losses()
        self.cache = pm.MessageCache()
        self.by_id = {str(_get(o, "id")): o for o in self.observations}
        self.root = self.find_root()

    def start(self, obs: dict[str, Any]) -> dt.datetime:
        return _time(_get(obs, "startTime"), f"{self.where}: observation {_get(obs, 'id')}") or \
            dt.datetime.min.replace(tzinfo=dt.UTC)

    def find_root(self) -> dict[str, Any] | None:
        roots = [o for o in self.observations if _get(o, "isRootObservation") is True
                 or not _get(o, "parentObservationId") or _get(o, "parentObservationId") not in self.by_id]
        return roots[0] if len(roots) == 1 else None

    def timing(self, obs: dict[str, Any]) -> Timing:
        start = self.start(obs)
        end = _time(_get(obs, "endTime"), f"{self.where}: observation {_get(obs, 'id')}")
        extra = {k: v for k, v in {"observation_id": _get(obs, "id"), "trace_id": self.trace_id,
                                    "parent_observation_id": _get(obs, "parentObservationId"),
                                    "type": obs.get("type"), "name": obs.get("name")}.items() if v is not None}
        session = _get(obs, "sessionId") or _session(self.trace)
        corr = Correlation(session_id=session, turn_id=self.trace_id, api_request_id=str(_get(obs, "id")),
                           extra={PLATFORM: extra})
        kept = {k: v for k, v in {
            "level": obs.get("level") if obs.get("level") not in (None, "DEFAULT") else None,
            "status_message": _get(obs, "statusMessage"), "metadata": obs.get("metadata") or None,
            "version": obs.get("version"), "environment": obs.get("environment"),
            "completion_start_time": _get(obs, "completionStartTime"),
            "time_to_first_token": _get(obs, "timeToFirstToken"), "prompt_name": _get(obs, "promptName"),
            "prompt_version": _get(obs, "promptVersion"), "model_id": _get(obs, "modelId") or
            _get(obs, "internalModelId")}.items() if v is not None}
        return Timing(t=round(max(0.0, (start - self.t0).total_seconds()), 6),
                      duration=round((end - start).total_seconds(), 6) if end is not None else None,
                      corr=corr, details={PLATFORM: kept} if kept else None)

    # ------------------------------------------------------------------------------------------ steps

    def steps(self) -> list[Step]:
        out: list[Step] = []
        for obs in self.observations:
            kind = str(obs.get("type") or "").upper()
            where = f"{self.where}: observation {_get(obs, 'id')}"
            try:
                if kind == "GENERATION":
                    out.append(self.generation(obs, where))
                elif kind == "TOOL":
                    out.append(self.tool(obs))
                else:
                    if kind not in OBSERVATION_TYPES:
                        self.losses.add("unknown observation types", f"{kind or '?'} ({_get(obs, 'id')}): "
                                        "kept as an opaque event")
                    data = {k: v for k, v in {"name": obs.get("name"), "input": pm.maybe_json(obs.get("input")),
                                              "output": pm.maybe_json(obs.get("output"))}.items() if v is not None}
                    out.append(OpaqueStep(self.timing(obs), PLATFORM, kind.lower() or "observation", data))
            except CodecError as exc:
                raise BadInput(f"{where}: {exc}") from exc
        return out

    def generation(self, obs: dict[str, Any], where: str) -> LlmStep:
        at = self.timing(obs)
        raw_input = pm.maybe_json(obs.get("input"))
        messages = pm.decode_list(raw_input, f"{where}.input", self.cache)
        if messages is None and isinstance(raw_input, str):
            messages = [pm.decode(raw_input, where)]  # a completion prompt: one user message
        mine = dict((at.details or {}).get(PLATFORM) or {})
        if messages is None and raw_input is not None:
            mine["input"] = raw_input
            self.losses.add("inputs that are not messages", f"{_get(obs, 'id')}: kept in provider_details")
        raw_output = pm.maybe_json(obs.get("output"))
        decoded = pm.decode_output(raw_output, f"{where}.output")
        response: Message | None = None
        extra: dict[str, Any] = {}
        error = _get(obs, "statusMessage") if obs.get("level") == "ERROR" else None
        if decoded is not None:
            response, extra = decoded
        elif raw_output is not None:
            response = Message(role="assistant", parts=pm.decode(
                raw_output if isinstance(raw_output, str) else json.dumps(raw_output, ensure_ascii=False),
                where, default_role="assistant").parts)
            mine["output"] = raw_output
            self.losses.add("outputs that are not messages", f"{_get(obs, 'id')}: kept as text")
        elif error is None:
            response = Message(role="assistant")
            self.losses.add("generations without output", str(_get(obs, "id")))
        params = _get(obs, "modelParameters")
        if params is not None and not isinstance(params, dict):
            mine["model_parameters"] = params
            params = None
        if mine:
            at.details = {**(at.details or {}), PLATFORM: mine}
        return LlmStep(at=at, messages=messages, response=response, model=obs.get("model") or extra.get("model"),
                       params=dict(params or {}), tools=self.tools(raw_input, obs, where),
                       usage=usage_of(obs) or extra.get("usage"), finish_reason=extra.get("finish_reason"),
                       response_id=extra.get("response_id"), error=error or (None if response else "no output"))

    def tools(self, raw_input: Any, obs: dict[str, Any], where: str) -> list[ToolSpec] | None:
        for holder in (raw_input, obs.get("metadata"), _get(obs, "modelParameters")):
            found = pm.decode_tools(holder.get("tools"), f"{where}.tools", self.cache) \
                if isinstance(holder, dict) else None
            if found:
                return found
        return None

    def tool(self, obs: dict[str, Any]) -> ToolStep:
        at = self.timing(obs)
        raw_input = pm.maybe_json(obs.get("input"))
        arguments = raw_input
        if isinstance(raw_input, dict) and set(raw_input) <= {"args", "kwargs"}:  # @observe's capture
            args, kwargs = raw_input.get("args") or [], raw_input.get("kwargs") or {}
            arguments = kwargs if not args else {"args": args, **kwargs}
        metadata = pm.as_dict(obs.get("metadata"))
        call_id = metadata.get("tool_call_id") or metadata.get("toolCallId")
        output = obs.get("output")
        failed = obs.get("level") == "ERROR"
        return ToolStep(at=at, name=str(obs.get("name") or "tool"), call_id=call_id if isinstance(call_id, str)
                        else None, arguments=arguments, result=None if output is None else pm.text_of(output),
                        status="error" if failed else "ok", error=_get(obs, "statusMessage") if failed else None)

    # -------------------------------------------------------------------------------------------- run

    def header(self) -> RunHeader:
        trace = self.trace
        root = self.root or {}
        session = _session(trace)
        generation = next((o for o in self.observations if str(o.get("type")).upper() == "GENERATION"), None)
        # every field of the trace (the known ones first), none left behind
        keys = [*TRACE_KEYS, *(k for k in trace if k not in TRACE_KEYS)]
        kept = {k: v for k, v in {key: trace.get(key) for key in keys if key not in ("id", "observations")}.items()
                if v not in (None, [], {})}
        kept["trace_id"] = self.trace_id
        if "input" in kept or "output" in kept:
            kept["input"], kept["output"] = pm.maybe_json(kept.get("input")), pm.maybe_json(kept.get("output"))
        for key in ("traceName", "tags", "release", "projectId", "userId", "environment"):
            value = next((_get(o, key) for o in self.observations if _get(o, key)), None)
            if value is not None:
                kept.setdefault(key, value)
        if session:
            kept["session"] = session_links(session, self.run_id, self.sessions)
        title = trace.get("name") or kept.get("traceName") or root.get("name")
        return RunHeader(
            run_id=self.run_id, created_at=self.t0.isoformat(timespec="microseconds").replace("+00:00", "Z"),
            source=Source(framework=PLATFORM, adapter=ADAPTER, replaykit_version=__version__),
            model=generation.get("model") if generation else None, session_id=session,
            lineage=session_lineage(session, self.run_id, self.sessions, PLATFORM) if session else None,
            title=str(title)[:80] if title else None, tags=["imported", "reconstructed"],
            metadata={"imported_from": self.source_name, PLATFORM: kept})

    def end(self) -> RunEnd:
        failed = [o for o in self.observations if o.get("level") == "ERROR"]
        root = self.root
        if root is not None and root.get("level") == "ERROR":
            return RunEnd(status="failed", reason=_get(root, "statusMessage") or "the root observation failed")
        output = pm.maybe_json(self.trace.get("output") if self.trace.get("output") is not None else
                               (root or {}).get("output"))
        final: str | None = None
        if isinstance(output, str):
            final = output
        elif output is not None:
            try:
                decoded = pm.decode_output(output, f"{self.where}.output")
            except CodecError:
                decoded = None
            final = decoded[0].text if decoded is not None else None
        if failed and final is None:
            return RunEnd(status="failed", reason=_get(failed[-1], "statusMessage") or "an observation failed")
        return RunEnd(final_answer=final)

    def run(self) -> ImportedRun:
        header = self.header()
        steps = self.steps()
        warnings = ["Langfuse keeps what the instrumented code reported: requests, tool calls and turns were "
                    "rebuilt from the observations, events are marked reconstructed"]
        return build_run(header, steps, platform=PLATFORM, end=self.end(), warnings=warnings, losses=self.losses)
