"""``replaykit import PATH --format langsmith``: LangSmith runs as replaykit runs.

PATH holds runs as the LangSmith SDK's ``Client.list_runs`` returns them (``langsmith.schemas.Run``,
dumped to JSON): a flat JSON list, ``{"runs": [...]}``, JSONL with one run a line, or a run whose
``child_runs`` hold its tree (``read_run(load_child_runs=True)``). Runs are linked by ``parent_run_id``
and ``trace_id``; each trace becomes a replaykit run, and traces of one thread (``thread_id``,
``session_id`` or ``conversation_id`` in the run's metadata) share the header's ``session_id`` and name
each other in ``metadata.langsmith.session``. No LangSmith SDK is needed.

Run types: ``llm`` -> an LLM call, ``tool`` -> a tool call, anything else (``chain``, ``retriever``,
``prompt``, ``parser``, ``embedding``) -> an opaque event with its name, inputs and outputs. Inputs and
outputs are read in the shapes the SDK writes: LangChain's (``{"messages": [[serialised messages]]}``,
``LLMResult`` generations, tool outputs as ``ToolMessage`` dicts) and the OpenAI wrapper's (the request
body, the ChatCompletion). Every event is ``reconstructed``; see ``replaykit.adapters.platform_runs``.
"""

from __future__ import annotations

import datetime as dt
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
from replaykit.core.trace.ir import Correlation, Message, RunHeader, Source, Usage
from replaykit.core.trace.store import new_run_id

ADAPTER = "replaykit.adapters.langsmith"
PLATFORM = "langsmith"
THREAD_KEYS = ("thread_id", "session_id", "conversation_id")
REQUEST_KEYS = {"messages", "tools", "model", "prompts", "stream"}
RUN_KEYS = ("id", "name", "run_type", "start_time", "trace_id")


def import_langsmith(path: Path) -> list[ImportedRun]:
    with cyclic_gc_paused():  # an import builds many long-lived acyclic objects (core/gcpause.py)
        return _import(Path(path))


def _import(path: Path) -> list[ImportedRun]:
    path = Path(path)
    runs = _read(path)
    if not runs:
        raise BadInput(f"{path.name}: no LangSmith run in the file")
    traces: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        traces.setdefault(str(run.get("trace_id") or run["id"]), []).append(run)
    ordered = sorted(traces.items(), key=lambda item: min(_time(r.get("start_time"), path.name) for r in item[1]))
    run_ids = {trace_id: new_run_id("langsmith") for trace_id, _ in ordered}
    sessions: dict[str, list[str]] = {}
    for trace_id, trace in ordered:
        thread = _thread(trace)
        if thread:
            sessions.setdefault(thread, []).append(run_ids[trace_id])
    return [_Trace(trace_id, trace, run_ids[trace_id], sessions, path.name).run() for trace_id, trace in ordered]


# ------------------------------------------------------------------------------------------- reading



def _read(path: Path) -> list[dict[str, Any]]:
    runs: list[dict[str, Any]] = []
    seen: set[str] = set()

    def take(item: Any, where: str, depth: int = 0) -> None:
        if depth > 64:
            raise BadInput(f"{where}: child_runs nested deeper than 64 levels")
        missing = [k for k in RUN_KEYS[:4] if not isinstance(item, dict) or item.get(k) in (None, "")]
        if missing:
            raise BadInput(f"{where}: not a LangSmith run (missing {', '.join(missing)}; expected the objects "
                           "Client.list_runs returns)")
        run = {k: v for k, v in item.items() if k != "child_runs"}
        if str(run["id"]) not in seen:  # the same run listed flat and as a child is one run
            seen.add(str(run["id"]))
            runs.append(run)
        for index, child in enumerate(item.get("child_runs") or []):
            take({**child, "trace_id": child.get("trace_id") or run.get("trace_id"),
                  "parent_run_id": child.get("parent_run_id") or run["id"]},
                 f"{where}: child {index + 1}", depth + 1)

    for where, document in read_json_documents(path, "LangSmith runs as JSON or JSONL"):
        items = document.get("runs") if isinstance(document, dict) and isinstance(document.get("runs"), list) \
            else document
        if isinstance(items, list):
            for index, item in enumerate(items):
                take(item, f"{where}: run {index + 1}")
        else:
            take(items, where)
    return runs


def _time(value: Any, where: str) -> dt.datetime:
    if isinstance(value, str):
        try:
            moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
            return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)
        except ValueError:
            pass
    raise BadInput(f"{where}: start_time/end_time {value!r} is not an ISO 8601 time")


def _metadata(run: dict[str, Any]) -> dict[str, Any]:
    extra = pm.as_dict(run.get("extra"))
    metadata = extra.get("metadata")
    return metadata if isinstance(metadata, dict) else {}


def _thread(trace: list[dict[str, Any]]) -> str | None:
    for run in trace:
        metadata = _metadata(run)
        for key in THREAD_KEYS:
            if isinstance(metadata.get(key), str | int) and metadata[key] != "":
                return str(metadata[key])
    return None


# ------------------------------------------------------------------------------------------ building


def usage_of(run: dict[str, Any]) -> Usage | None:
    """LangSmith's token counts and cost on the run (the server's figures) as IR usage."""
    prompt = run.get("prompt_tokens")
    completion = run.get("completion_tokens")
    if prompt is None and completion is None and run.get("total_tokens") is None:
        return None
    prompt_details = pm.as_dict(run.get("prompt_token_details"))
    completion_details = pm.as_dict(run.get("completion_token_details"))
    kept = {k: run[k] for k in ("prompt_tokens", "completion_tokens", "total_tokens", "prompt_token_details",
                                "completion_token_details", "total_cost", "prompt_cost", "completion_cost",
                                "prompt_cost_details", "completion_cost_details") if run.get(k) is not None}
    return Usage(input_tokens=pm.as_int(prompt), output_tokens=pm.as_int(completion),
                 total_tokens=pm.as_int(run.get("total_tokens")),
                 cache_read_tokens=pm.as_int(prompt_details.get("cache_read")),
                 cache_write_tokens=pm.as_int(prompt_details.get("cache_creation")),
                 reasoning_tokens=pm.as_int(completion_details.get("reasoning")), details={PLATFORM: kept})


class _Trace:
    def __init__(self, trace_id: str, runs: list[dict[str, Any]], run_id: str, sessions: dict[str, list[str]],
                 source_name: str) -> None:
        self.trace_id = trace_id
        self.where = f"{source_name}: trace {trace_id}"
        # dotted_order is start time plus id at every level: the one total order of a trace's runs.
        self.runs = sorted(runs, key=lambda r: (str(r.get("dotted_order") or ""), self.start(r)))
        self.run_id = run_id
        self.sessions = sessions
        self.source_name = source_name
        self.t0 = min(self.start(r) for r in runs)
        self.losses = Losses()
        self.cache = pm.MessageCache()
        ids = {str(r["id"]) for r in runs}
        roots = [r for r in runs if not r.get("parent_run_id") or str(r["parent_run_id"]) not in ids]
        self.root = roots[0] if len(roots) == 1 else None

    def start(self, run: dict[str, Any]) -> dt.datetime:
        return _time(run.get("start_time"), f"{self.where}: run {run.get('id')}")

    def timing(self, run: dict[str, Any]) -> Timing:
        start = self.start(run)
        end = _time(run["end_time"], f"{self.where}: run {run.get('id')}") if run.get("end_time") else None
        extra = {k: str(v) for k, v in {"run_id": run.get("id"), "trace_id": self.trace_id,
                                         "parent_run_id": run.get("parent_run_id"),
                                         "dotted_order": run.get("dotted_order"), "run_type": run.get("run_type"),
                                         "name": run.get("name")}.items() if v}
        corr = Correlation(session_id=_thread([run]) or _thread(self.runs), turn_id=self.trace_id,
                           api_request_id=str(run["id"]), extra={PLATFORM: extra})
        kept = {k: v for k, v in {"tags": run.get("tags") or None, "metadata": _metadata(run) or None,
                                  "events": run.get("events") or None, "status": run.get("status"),
                                  "extra": {k: v for k, v in pm.as_dict(run.get("extra")).items()
                                            if k not in ("metadata", "invocation_params")} or None,
                                  "invocation_type": pm.as_dict(pm.as_dict(run.get("extra")).get(
                                      "invocation_params")).get("_type"),
                                  "first_token_time": run.get("first_token_time"),
                                  "feedback_stats": run.get("feedback_stats") or None,
                                  "reference_example_id": run.get("reference_example_id")}.items() if v is not None}
        return Timing(t=round(max(0.0, (start - self.t0).total_seconds()), 6),
                      duration=round((end - start).total_seconds(), 6) if end else None,
                      corr=corr, details={PLATFORM: kept} if kept else None)

    # ------------------------------------------------------------------------------------------ steps

    def steps(self) -> list[Step]:
        out: list[Step] = []
        for run in self.runs:
            kind = str(run.get("run_type") or "")
            where = f"{self.where}: run {run['id']}"
            if run.get("serialized"):
                self.losses.add("serialized constructors", f"run {run['id']} ({run.get('name')})", fields=["serialized"],
                                reason="how LangChain would rebuild the model or chain object (its class path "
                                "and repr), not part of what it did")
            try:
                if kind == "llm":
                    out.append(self.llm(run, where))
                elif kind == "tool":
                    out.append(self.tool(run))
                else:
                    data = {k: v for k, v in {"name": run.get("name"), "inputs": run.get("inputs") or None,
                                              "outputs": run.get("outputs"), "error": run.get("error")}.items()
                            if v is not None}
                    out.append(OpaqueStep(self.timing(run), PLATFORM, kind or "run", data))
            except CodecError as exc:
                raise BadInput(f"{where}: {exc}") from exc
        return out

    def llm(self, run: dict[str, Any], where: str) -> LlmStep:
        at = self.timing(run)
        inputs = pm.as_dict(run.get("inputs"))
        mine = dict((at.details or {}).get(PLATFORM) or {})
        messages = pm.decode_list(inputs, f"{where}.inputs", self.cache)
        if messages is None and isinstance(inputs.get("prompts"), list) and inputs["prompts"]:
            messages = [pm.decode(str(inputs["prompts"][0]), where)]  # a completion model's prompt
        if messages is None and inputs:
            mine["inputs"] = inputs
            self.losses.add("inputs that are not messages", f"{run['id']}: kept in provider_details")
        rest = {k: v for k, v in inputs.items() if k not in REQUEST_KEYS}
        if rest and messages is not None:
            mine["inputs_extra"] = rest
        decoded = pm.decode_output(run.get("outputs"), f"{where}.outputs") if run.get("outputs") else None
        response: Message | None = None
        extra: dict[str, Any] = {}
        if decoded is not None:
            response, extra = decoded
        elif run.get("outputs") and not run.get("error"):
            mine["outputs"] = run["outputs"]
            response = Message(role="assistant")
            self.losses.add("outputs that are not messages", f"{run['id']}: kept in provider_details")
        elif not run.get("error"):
            response = Message(role="assistant")
            self.losses.add("llm runs without output", str(run["id"]))
        invocation = pm.as_dict(pm.as_dict(run.get("extra")).get("invocation_params"))
        metadata = _metadata(run)
        model = metadata.get("ls_model_name") or invocation.get("model") or invocation.get("model_name") \
            or inputs.get("model") or extra.get("model")
        params = {k: v for k, v in invocation.items() if k not in ("model", "model_name", "tools", "_type",
                                                                    "stop", "messages")}
        if invocation.get("stop") is not None:
            params["stop"] = invocation["stop"]
        if mine:
            at.details = {**(at.details or {}), PLATFORM: mine}
        return LlmStep(at=at, messages=messages, response=response, model=str(model) if model else None,
                       params=params, tools=pm.decode_tools(invocation.get("tools") or inputs.get("tools"), f"{where}.tools", self.cache),
                       usage=usage_of(run) or extra.get("usage"), finish_reason=extra.get("finish_reason"),
                       response_id=extra.get("response_id"), error=run.get("error"))

    def tool(self, run: dict[str, Any]) -> ToolStep:
        at = self.timing(run)
        inputs = pm.as_dict(run.get("inputs"))
        arguments: Any = inputs
        if set(inputs) == {"input"}:  # LangChain's tool run: the input string (or dict) the tool got
            arguments = pm.maybe_json(inputs["input"])
        outputs = run.get("outputs") if isinstance(run.get("outputs"), dict) else None
        output = outputs.get("output", outputs) if outputs is not None else None
        call_id = None
        message = output.get("kwargs", output) if isinstance(output, dict) else None
        if isinstance(message, dict) and isinstance(message.get("tool_call_id"), str):
            call_id = message["tool_call_id"]
        call_id = call_id or _metadata(run).get("tool_call_id")
        error = run.get("error")
        failed = bool(error) or (isinstance(message, dict) and message.get("status") == "error")
        return ToolStep(at=at, name=str(run.get("name") or "tool"), call_id=call_id if isinstance(call_id, str)
                        else None, arguments=arguments, result=None if output is None else pm.text_of(output),
                        status="error" if failed else "ok", error=str(error) if error else None)

    # -------------------------------------------------------------------------------------------- run

    def header(self) -> RunHeader:
        root = self.root or self.runs[0]
        thread = _thread(self.runs)
        llm = next((r for r in self.runs if r.get("run_type") == "llm"), None)
        model = None
        if llm is not None:
            invocation = (llm.get("extra") or {}).get("invocation_params") or {}
            model = _metadata(llm).get("ls_model_name") or (invocation.get("model") if isinstance(invocation, dict)
                                                             else None) or (llm.get("inputs") or {}).get("model")
        kept: dict[str, Any] = {"trace_id": self.trace_id, "root_run_id": str(root["id"])}
        for key in ("session_id", "app_path", "tags", "feedback_stats", "reference_example_id", "total_cost",
                    "total_tokens", "status"):
            if root.get(key) not in (None, [], {}):
                kept["project_id" if key == "session_id" else key] = root[key]
        if _metadata(root):
            kept["metadata"] = _metadata(root)
        if thread:
            kept["session"] = session_links(thread, self.run_id, self.sessions)
        provider = _metadata(llm).get("ls_provider") if llm is not None else None
        return RunHeader(
            run_id=self.run_id, created_at=self.t0.isoformat(timespec="microseconds").replace("+00:00", "Z"),
            source=Source(framework=PLATFORM, adapter=ADAPTER, replaykit_version=__version__),
            model=str(model) if model else None, provider=provider if isinstance(provider, str) else None,
            session_id=thread, lineage=session_lineage(thread, self.run_id, self.sessions, PLATFORM) if thread else None,
            title=str(root.get("name"))[:80] if root.get("name") else None,
            tags=["imported", "reconstructed"], metadata={"imported_from": self.source_name, PLATFORM: kept})

    def end(self) -> RunEnd:
        root = self.root
        if root is not None and root.get("error"):
            return RunEnd(status="failed", reason=str(root["error"]).splitlines()[0][:500])
        outputs = (root or {}).get("outputs")
        final: str | None = None
        if isinstance(outputs, dict):
            value = outputs.get("output", outputs)
            if isinstance(value, str):
                final = value
            else:
                try:
                    decoded = pm.decode_output(value, f"{self.where}.outputs")
                except CodecError:
                    decoded = None
                final = decoded[0].text if decoded is not None else None
        return RunEnd(final_answer=final)

    def run(self) -> ImportedRun:
        header = self.header()
        warnings = ["LangSmith keeps what the traced code reported: requests, tool calls and turns were rebuilt "
                    "from the runs, events are marked reconstructed"]
        return build_run(header, self.steps(), platform=PLATFORM, end=self.end(), warnings=warnings,
                         losses=self.losses)
