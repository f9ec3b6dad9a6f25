"""``replaykit import PATH --format inspect-ai``: Inspect AI eval logs, one run per sample.

PATH is an Inspect AI log (``.eval`` or ``.json``), read with Inspect AI's own reader
(``inspect_ai.log.read_eval_log``, attachments resolved; the ``inspect-ai`` extra). Each sample (each
epoch of it) becomes a run whose steps come from the sample's events: a ``model`` event is an LLM call
(its input messages, tools, generate config, output and usage), a ``tool`` event a tool call (id,
function, arguments, result, error), and every other event (sample init, state and store changes, spans,
scores, info, sandbox, approvals, ...) an opaque event with the event whole. A sample logged without
events is rebuilt from its messages (each assistant message an LLM call on the messages before it).

The header's ``session_id`` is the eval's id, so an eval's samples are found together; ``metadata.inspect_ai``
keeps the eval (id, run id, task, model, dataset, headline results), the sample (id, epoch, input,
target, metadata) and its scores. The original ids (eval, sample, event uuid, span) go to ``corr``. Every
event is ``reconstructed``; see ``replaykit.adapters.platform_runs`` for the rule.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from replaykit import __version__
from replaykit.adapters.base import ImportedRun
from replaykit.adapters.platform_runs import (
    LlmStep,
    OpaqueStep,
    RunEnd,
    Step,
    Timing,
    ToolStep,
    build_run,
)
from replaykit.core.errors import BadInput, MissingExtra
from replaykit.core.gcpause import cyclic_gc_paused
from replaykit.core.trace.interop import Losses
from replaykit.core.trace.ir import (
    Correlation,
    MediaPart,
    Message,
    OpaquePart,
    Part,
    ReasoningPart,
    RunHeader,
    Source,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    Usage,
)
from replaykit.core.trace.store import new_run_id

ADAPTER = "replaykit.adapters.inspect_ai"
PLATFORM = "inspect_ai"
ROLES = ("system", "user", "assistant", "tool")
MESSAGE_KEYS = {"role", "content", "tool_calls", "tool_call_id", "function", "error", "source", "model"}


def import_inspect_ai(path: Path) -> list[ImportedRun]:
    with cyclic_gc_paused():  # an import builds many long-lived acyclic objects (core/gcpause.py)
        return _import(Path(path))


def _import(path: Path) -> list[ImportedRun]:
    log = _read(Path(path))
    samples = log.get("samples") or []
    if not samples:
        raise BadInput(f"{Path(path).name}: the eval log holds no samples (written with log_samples off?)")
    return [_Sample(log, sample, Path(path).name).run() for sample in samples]


def _read(path: Path) -> dict[str, Any]:
    """The log as plain JSON, read by Inspect AI's reader (its own validation; errors become one line)."""
    try:
        from inspect_ai.log import read_eval_log
    except ModuleNotFoundError as exc:
        raise MissingExtra("inspect-ai", "inspect_ai") from exc
    try:
        log = read_eval_log(str(path), resolve_attachments=True)
    except (Exception, RecursionError) as exc:  # the reader raises zip, JSON and validation errors alike
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BadInput(f"{path.name}: not an Inspect AI eval log ({type(exc).__name__}: {first[:300]})") from exc
    try:  # pooled model inputs the reader left as references: Inspect's own resolver binds them back
        from inspect_ai.log import resolve_sample_events_data
    except ImportError:  # an Inspect AI without pools: nothing to resolve
        pass
    else:
        if log.samples and any(getattr(sample, "events_data", None) for sample in log.samples):
            log = log.model_copy(update={"samples": [resolve_sample_events_data(s) for s in log.samples]})
    document: dict[str, Any] = log.model_dump(mode="json", exclude={"location"})
    return document


def _time(value: Any) -> dt.datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


# ------------------------------------------------------------------------------------------- messages


def content_parts(content: Any) -> list[Part]:
    """Inspect AI content (a string or Content items) as IR parts; what the IR has no part for is opaque."""
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [TextPart(text=content)]
    parts: list[Part] = []
    for item in content:
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "text":
            parts.append(TextPart(text=str(item.get("text") or "")))
        elif kind == "reasoning":
            parts.append(ReasoningPart(text=str(item.get("reasoning") or ""), signature=item.get("signature"),
                                       redacted=bool(item.get("redacted")), provider=PLATFORM,
                                       provider_details={PLATFORM: {"summary": item["summary"]}}
                                       if item.get("summary") else None))
        elif kind == "image" and isinstance(item.get("image"), str):
            image = item["image"]
            if image.startswith("data:") and ";base64," in image:
                media_type, data = image[5:].split(";base64,", 1)
                parts.append(MediaPart(media_type=media_type, data=data))
            else:
                parts.append(MediaPart(media_type="image/*", url=image))
        else:
            parts.append(OpaquePart(format=PLATFORM, data=item))
    return parts


def decode_message(raw: dict[str, Any], where: str) -> Message:
    role = raw.get("role")
    if role not in ROLES:
        raise BadInput(f"{where}: unsupported message role {role!r}")
    parts = content_parts(raw.get("content"))
    if role == "tool":
        text = "".join(p.text for p in parts if isinstance(p, TextPart))
        blocks = [p for p in parts if isinstance(p, TextPart | MediaPart | OpaquePart)]
        parts = [ToolResultPart(tool_call_id=str(raw.get("tool_call_id") or ""), name=raw.get("function"),
                                content=text, is_error=raw.get("error") is not None,
                                blocks=blocks if any(not isinstance(p, TextPart) for p in blocks) else None)]
    for call in raw.get("tool_calls") or []:
        parts.append(ToolCallPart(id=str(call.get("id")), name=str(call.get("function")),
                                  arguments=call.get("arguments")))
    kept = {k: v for k, v in raw.items() if k not in MESSAGE_KEYS and v not in (None, {}, [])}
    if role == "tool" and raw.get("error") is not None:
        kept["error"] = raw["error"]
    return Message(role=role, parts=parts, provider_details={PLATFORM: kept} if kept else None)  # type: ignore[arg-type]


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    return Usage(input_tokens=raw.get("input_tokens"), output_tokens=raw.get("output_tokens"),
                 total_tokens=raw.get("total_tokens"), cache_read_tokens=raw.get("input_tokens_cache_read"),
                 cache_write_tokens=raw.get("input_tokens_cache_write"), reasoning_tokens=raw.get("reasoning_tokens"),
                 details={PLATFORM: raw})


def _tool_spec(raw: dict[str, Any]) -> ToolSpec:
    return ToolSpec(name=str(raw.get("name")), description=raw.get("description"), parameters=raw.get("parameters"))


def _result_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(p.text for p in content_parts(value) if isinstance(p, TextPart))
    return json.dumps(value, ensure_ascii=False)


# -------------------------------------------------------------------------------------------- samples


class _Sample:
    def __init__(self, log: dict[str, Any], sample: dict[str, Any], source_name: str) -> None:
        self.log = log
        self.eval = log.get("eval") or {}
        self.sample = sample
        self.source_name = source_name
        self.where = f"{source_name}: sample {sample.get('id')} (epoch {sample.get('epoch')})"
        self.events = sample.get("events") or []
        stamps = [s for s in (_time(e.get("timestamp")) for e in self.events) if s is not None]
        self.t0 = _time(sample.get("started_at")) or (min(stamps) if stamps else None) or \
            _time(self.eval.get("created")) or dt.datetime.now(tz=dt.UTC)
        self.losses = Losses()

    def timing(self, event: dict[str, Any]) -> Timing:
        start = _time(event.get("timestamp"))
        end = _time(event.get("completed"))
        ids = {k: v for k, v in {"eval_id": self.eval.get("eval_id"), "sample_id": self.sample.get("id"),
                                  "epoch": self.sample.get("epoch"), "event_uuid": event.get("uuid"),
                                  "span_id": event.get("span_id"), "event": event.get("event")}.items()
               if v is not None}
        duration = event.get("working_time") if isinstance(event.get("working_time"), int | float) else (
            (end - start).total_seconds() if start and end else None)
        return Timing(t=round(max(0.0, (start - self.t0).total_seconds()), 6) if start else 0.0,
                      duration=round(duration, 6) if duration is not None else None,
                      corr=Correlation(session_id=self.eval.get("eval_id"), task_id=self.eval.get("task_id"),
                                       turn_id=str(self.sample.get("id")), api_request_id=event.get("uuid"),
                                       extra={PLATFORM: ids}))

    def steps(self) -> list[Step]:
        if not any(e.get("event") == "model" for e in self.events):
            return self.from_messages()
        out: list[Step] = []
        for index, event in enumerate(self.events):
            where = f"{self.where}: event {index + 1}"
            kind = event.get("event")
            if kind == "model":
                out.append(self.model(event, where))
            elif kind == "tool":
                out.append(self.tool(event))
            else:
                out.append(OpaqueStep(self.timing(event), PLATFORM, str(kind or "event"), event))
        return out

    def pooled_input(self, event: dict[str, Any]) -> list[Any] | None:
        """A model event's input: inline, or range references (``input_refs``: ``[start, end)`` pairs) into
        the sample's message pool (``events_data.messages``), which newer Inspect AI writes to deduplicate
        the history every model event repeats. Inspect's reader resolves the pool it knows
        (``resolve_sample_events_data``); refs it left unresolved are expanded here the same way. None:
        neither (the input is not in the log)."""
        if event.get("input"):
            return list(event["input"])
        refs = event.get("input_refs")
        if not refs:
            return [] if "input" in event else None
        pool = (self.sample.get("events_data") or {}).get("messages") or []
        out: list[Any] = []
        for ref in refs:
            if not (isinstance(ref, list | tuple) and len(ref) == 2 and all(isinstance(n, int) for n in ref)):
                raise BadInput(f"{self.where}: a model event's input_refs entry {ref!r} is not a [start, end) pair")
            out.extend(pool[ref[0]:ref[1]])
        return out or None

    def model(self, event: dict[str, Any], where: str) -> LlmStep:
        at = self.timing(event)
        raw_input = self.pooled_input(event)
        messages: list[Message] | None = None
        if raw_input is not None:
            messages = [decode_message(m, f"{where}.input[{i}]") for i, m in enumerate(raw_input)]
        else:
            self.losses.add("model inputs", f"event {event.get('uuid')}: input_refs into a message pool the log "
                            "does not hold", reason="the model event's input points into a message pool that is "
                            "not in the log: its request is rebuilt from the conversation so far",
                            fields=["input_refs"])
        output = event.get("output") or {}
        choices = output.get("choices") or []
        response = decode_message(choices[0]["message"], f"{where}.output") if choices else None
        error = event.get("error") or output.get("error")
        kept = {k: v for k, v in {"role": event.get("role"), "tool_choice": event.get("tool_choice"),
                                  "cache": event.get("cache"), "retries": event.get("retries"),
                                  "call": event.get("call"), "other_choices": choices[1:] or None,
                                  "output_metadata": output.get("metadata"), "stop_details":
                                  choices[0].get("stop_details") if choices else None}.items() if v}
        if kept:
            at.details = {PLATFORM: kept}
        config = {k: v for k, v in (event.get("config") or {}).items() if v is not None}
        model = event.get("model") or output.get("model")
        return LlmStep(at=at, messages=messages, response=response, model=model, params=config,
                       tools=[_tool_spec(t) for t in event.get("tools") or []] or None,
                       usage=_usage(output.get("usage")), finish_reason=choices[0].get("stop_reason") if choices
                       else None, response_id=output.get("response_id"),
                       error=str(error) if error else (None if response else "no output"))

    def tool(self, event: dict[str, Any]) -> ToolStep:
        error = event.get("error")
        kept = {k: v for k, v in {"view": event.get("view"), "truncated": event.get("truncated"),
                                  "agent": event.get("agent"), "error": error}.items() if v}
        at = self.timing(event)
        if kept:
            at.details = {PLATFORM: kept}
        message = error.get("message") if isinstance(error, dict) else (str(error) if error else None)
        return ToolStep(at=at, name=str(event.get("function")), call_id=str(event.get("id")),
                        arguments=event.get("arguments"), result=_result_text(event.get("result")),
                        status="error" if error else "ok", error=message)

    def from_messages(self) -> list[Step]:
        """A sample logged without model events: the conversation in ``messages`` is all there is."""
        out: list[Step] = []
        history: list[Message] = []
        at = Timing(corr=Correlation(session_id=self.eval.get("eval_id"), turn_id=str(self.sample.get("id"))))
        for index, raw in enumerate(self.sample.get("messages") or []):
            message = decode_message(raw, f"{self.where}: message {index + 1}")
            if message.role == "assistant":
                out.append(LlmStep(at=at, messages=list(history), response=message, model=raw.get("model")
                                   or self.eval.get("model")))
            elif message.role == "tool":
                part = message.tool_results[0]
                out.append(ToolStep(at=at, name=part.name or "tool", call_id=part.tool_call_id, result=part.content,
                                    status="error" if part.is_error else "ok"))
            history.append(message)
        if out:
            self.losses.add("model events", "the sample was logged without events: calls rebuilt from its "
                            "messages, no timing or usage")
        return out

    # ------------------------------------------------------------------------------------------- run

    def header(self) -> RunHeader:
        ev, sample = self.eval, self.sample
        results = self.log.get("results") or {}
        kept = {k: v for k, v in {
            "eval_id": ev.get("eval_id"), "run_id": ev.get("run_id"), "task": ev.get("task"),
            "task_id": ev.get("task_id"), "task_version": ev.get("task_version"), "model": ev.get("model"),
            "dataset": ev.get("dataset"), "status": self.log.get("status"), "results": results or None,
            "sample_id": sample.get("id"), "epoch": sample.get("epoch"), "input": sample.get("input"),
            "target": sample.get("target"), "scores": sample.get("scores"), "sample_metadata":
            sample.get("metadata") or None, "sample_uuid": sample.get("uuid"), "model_usage":
            sample.get("model_usage") or None, "total_time": sample.get("total_time"),
            "working_time": sample.get("working_time"), "limit": sample.get("limit"),
            "error": sample.get("error")}.items() if v is not None}
        model = str(ev.get("model") or "") or None
        provider = model.split("/", 1)[0] if model and "/" in model else None
        title = f"{ev.get('task') or 'eval'} sample {sample.get('id')}" + (
            f" epoch {sample.get('epoch')}" if (ev.get("config") or {}).get("epochs") not in (None, 1) else "")
        return RunHeader(
            run_id=new_run_id("inspect"), created_at=self.t0.isoformat(timespec="microseconds").replace("+00:00", "Z"),
            source=Source(framework="inspect_ai", framework_version=(self.log.get("eval") or {}).get("packages", {})
                          .get("inspect_ai"), adapter=ADAPTER, replaykit_version=__version__),
            model=model.split("/", 1)[1] if provider and model else model, provider=provider,
            session_id=ev.get("eval_id"), title=title[:80], tags=["imported", "reconstructed", *self.labels()],
            metadata={"imported_from": self.source_name, PLATFORM: kept})

    def labels(self) -> list[str]:
        """Tags an evaluation user filters on (``eval --filter tag=score:match=C``, the viewer's tag filter):
        the task, the sample's id, uuid and epoch, and each score (``score:<scorer>=<value>``; a dict value
        gives one tag per key, ``score:<scorer>.<key>=<value>``). The scores whole (answer, explanation,
        metadata) are in ``metadata.inspect_ai.scores``."""
        sample, tags = self.sample, []
        if self.eval.get("task"):
            tags.append(f"task:{self.eval['task']}")
        for key in ("id", "uuid", "epoch"):
            if sample.get(key) is not None:
                tags.append(f"sample_{key}:{sample[key]}" if key != "id" else f"sample:{sample[key]}")
        for scorer, score in (sample.get("scores") or {}).items():
            value = score.get("value") if isinstance(score, dict) else score
            if isinstance(value, dict):
                tags.extend(f"score:{scorer}.{k}={v}" for k, v in value.items())
            elif value is not None:
                tags.append(f"score:{scorer}={value}")
        return tags

    def end(self) -> RunEnd:
        error = self.sample.get("error")
        if error:
            message = error.get("message") if isinstance(error, dict) else str(error)
            return RunEnd(status="failed", reason=str(message).splitlines()[0][:500])
        limit = self.sample.get("limit")
        if limit:
            return RunEnd(status="interrupted", reason=f"{limit.get('type')} limit ({limit.get('limit')})")
        completion = (self.sample.get("output") or {}).get("completion")
        return RunEnd(final_answer=completion if isinstance(completion, str) and completion else None)

    def run(self) -> ImportedRun:
        header = self.header()
        warnings = ["Inspect AI logs the model and tool events of a sample: requests and turns were rebuilt from "
                    "them, events are marked reconstructed"]
        return build_run(header, self.steps(), platform=PLATFORM, end=self.end(), warnings=warnings,
                         losses=self.losses)
