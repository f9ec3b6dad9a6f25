"""``replaykit export RUN --format atif``: a run as an ATIF trajectory (Harbor RFC 0001, v1.7 / v1.8).

Mapping (docs/atif.md has the full table): the leading system message of the first request is a
``system`` step, each user turn a ``user`` step, each LLM call an ``agent`` step (message, reasoning,
tool calls, metrics), each tool execution an observation result of the agent step that asked for it,
and each subagent an embedded trajectory in ``subagent_trajectories`` referenced from the launching
call's observation. What ATIF has no field for but a replay needs (sampling parameters, the api format,
finish reasons, timing, provenance, the exact request where it differs from the appended conversation)
travels in ``extra.replaykit`` on the same object, so replaykit -> ATIF -> replaykit is exact. What
neither holds (failed attempts, desync / synthetic / opaque events, subagents whose run is not at hand)
is reported as a named loss.

``render`` is pure and validates the document with the ``atif`` package's models (the ``atif`` extra);
``replaykit.exporters.export(run, "atif", path)`` writes it atomically, 0600.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from replaykit import __version__
from replaykit.core.errors import BadInput
from replaykit.core.trace import jsonsafe
from replaykit.core.trace.interop import (
    ChildLoader,
    Conversation,
    Losses,
    find_child,
    rebuild_assistant,
    rebuild_message,
    validate_atif,
)
from replaykit.core.trace.ir import (
    ErrorEvent,
    Event,
    LLMCallEvent,
    MediaPart,
    Message,
    MetaEvent,
    ReasoningPart,
    RunEndEvent,
    SubagentEvent,
    TextPart,
    ToolCallEvent,
    ToolsEvent,
    TurnEndEvent,
    TurnStartEvent,
    Usage,
)
from replaykit.core.trace.run import Run

VERSIONS = ("1.7", "1.8")
EXTRA_KEY = "replaykit"
IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
AUDIO_TYPES = ("audio/wav", "audio/mpeg", "audio/mp4", "audio/aac", "audio/ogg", "audio/flac", "audio/webm",
               "audio/aiff")


@dataclass
class Rendered:
    document: dict[str, Any]
    losses: Losses = field(default_factory=Losses)
    run_ids: list[str] = field(default_factory=list)  # the run and every embedded subagent run
    version: str = "1.8"

    @cached_property
    def text(self) -> str:
        return jsonsafe.dumps(self.document) + "\n"  # compact: the C encoder; lone surrogates escaped

    @property
    def report(self) -> dict[str, Any]:
        return {"atif_version": f"ATIF-v{self.version}", "steps": len(self.document["steps"]),
                "run_ids": self.run_ids, "losses": self.losses.to_json()}


def render(run: Run, *, filename: str | None = None, version: str = "1.8", children: ChildLoader | None = None,
           validate: bool = True) -> Rendered:
    """The ATIF document of ``run`` (with its subagent runs embedded when ``children`` finds them),
    validated against the spec's models (``atif`` extra) unless ``validate`` is False."""
    if version not in VERSIONS:
        raise BadInput(f"unknown ATIF version {version!r} (replaykit writes {', '.join(VERSIONS)})")
    losses = Losses()
    rendered = Rendered(document={}, losses=losses, version=version)
    rendered.document = _Writer(run, version, children, losses, rendered.run_ids, seen=set()).trajectory()
    if validate:
        validate_atif(rendered.document, f"ATIF export of {run.run_id}")
    return rendered


# ---------------------------------------------------------------------------------------------- writer


def _dump(model: Any) -> Any:
    return jsonsafe.model_data(model, exclude_none=True)


def _event_info(event: Event) -> dict[str, Any]:
    """What an event carries besides its content (kept in ``extra`` for an exact round trip)."""
    info: dict[str, Any] = {"t": event.t, "provenance": str(event.provenance)}
    if event.duration is not None:
        info["duration"] = event.duration
    if event.corr is not None:
        info["corr"] = _dump(event.corr)
    if event.provider_details:
        info["provider_details"] = event.provider_details
    return info


class _Writer:
    def __init__(self, run: Run, version: str, children: ChildLoader | None, losses: Losses,
                 run_ids: list[str], seen: set[str]) -> None:
        self.run = run
        self.version = version
        self.children = children
        self.losses = losses
        self.run_ids = run_ids
        self.seen = seen | {run.run_id}
        self.steps: list[dict[str, Any]] = []
        self.conv = Conversation()
        self.agent_step_of: dict[str, dict[str, Any]] = {}  # llm_call event id -> its agent step
        self.call_step: dict[str, dict[str, Any]] = {}  # tool call id -> the agent step that asked for it
        self.carried: list[dict[str, Any]] = []  # events with no ATIF field, kept in extra, by position
        self.subagents: list[dict[str, Any]] = []
        self.tool_sets: dict[str, Any] = {}
        self.default_tools: str | None = None
        self.pending_refs: dict[str, list[dict[str, Any]]] = {}  # call id -> subagent refs to attach
        self.run_ids.append(run.run_id)

    def where(self, event: Event) -> str:
        return f"{self.run.run_id} event {event.seq}"

    # ---------------------------------------------------------------------------------- document

    def system_steps(self) -> None:
        """The leading system message(s) of the first request: the trajectory's first step(s)."""
        first = next((e for e in self.run.events if isinstance(e, LLMCallEvent)), None)
        if first is None:
            return
        for message in self.run.request_messages(first):
            if message.role not in ("system", "developer"):
                break
            content = self.content(message, self.where(first))
            same = message.role == "system" and rebuild_message("system", content) == message
            self.step("system", content, extra=None if same else {EXTRA_KEY: {"message": _dump(message)}})
            self.conv.add(message)

    def trajectory(self) -> dict[str, Any]:
        self.system_steps()
        for event in self.run.events:
            self.event(event)
        header = self.run.header
        extra: dict[str, Any] = {
            "run_id": header.run_id,
            "header": _dump(header),
            "tool_sets": self.tool_sets,
        }
        if self.carried:
            extra["events"] = self.carried
        agent: dict[str, Any] = {"name": header.source.framework or "replaykit",
                                 "version": header.source.framework_version or "unknown"}
        if self.run.model:
            agent["model_name"] = self.run.model
        if self.default_tools is not None:
            agent["tool_definitions"] = [_openai_tool(t) for t in self.tool_sets[self.default_tools]]
        document: dict[str, Any] = {
            "schema_version": f"ATIF-v{self.version}",
            "session_id": header.session_id or header.run_id,
            "trajectory_id": header.run_id,
            "agent": agent,
            "steps": self.steps,
        }
        metrics = self.final_metrics()
        if metrics:
            document["final_metrics"] = metrics
        if self.subagents:
            document["subagent_trajectories"] = self.subagents
        document["extra"] = {EXTRA_KEY: extra, "exported_by": f"replaykit {__version__}"}
        return document

    def final_metrics(self) -> dict[str, Any]:
        calls = self.run.llm_calls()
        out: dict[str, Any] = {"total_steps": len(self.steps)}
        for key, attr in (("total_prompt_tokens", "input_tokens"), ("total_completion_tokens", "output_tokens"),
                          ("total_cached_tokens", "cache_read_tokens")):
            values = [getattr(c.response.usage, attr) for c in calls if c.response.usage is not None]
            known = [v for v in values if v is not None]
            if known:
                out[key] = sum(known)
        return out

    def step(self, source: str, message: Any, **fields: Any) -> dict[str, Any]:
        step: dict[str, Any] = {"step_id": len(self.steps) + 1, "source": source, "message": message}
        step.update({k: v for k, v in fields.items() if v is not None})
        self.steps.append(step)
        return step

    def timestamp(self, event: Event) -> str | None:
        try:
            start = dt.datetime.fromisoformat(self.run.header.created_at.replace("Z", "+00:00"))
        except ValueError:
            return None
        return (start + dt.timedelta(seconds=event.t)).isoformat().replace("+00:00", "Z")

    def carry(self, event: Event) -> None:
        """Keep an event ATIF has no field for, with its position: after step N and its first K results."""
        done = len((self.steps[-1].get("observation") or {}).get("results", [])) if self.steps else 0
        self.carried.append({"after_step": len(self.steps), "after_results": done, "event": _dump(event)})

    # ------------------------------------------------------------------------------------ events

    def event(self, event: Event) -> None:
        if isinstance(event, ToolsEvent):
            self.tool_sets[event.hash] = [_dump(t) for t in event.tools]
            if self.default_tools is None:
                self.default_tools = event.hash
        elif isinstance(event, TurnStartEvent):
            self.user(event)
        elif isinstance(event, LLMCallEvent):
            self.agent(event)
        elif isinstance(event, ToolCallEvent):
            self.tool(event)
        elif isinstance(event, SubagentEvent):
            self.subagent(event)
        elif isinstance(event, MetaEvent | TurnEndEvent | RunEndEvent):
            self.carry(event)
        elif isinstance(event, ErrorEvent):
            self.losses.add("failed_attempts", f"{self.where(event)}: {event.where} error "
                            f"{event.status_code or ''} {event.message[:60]}".strip())
        else:
            self.losses.add(f"{event.kind}_events", f"{self.where(event)} (ATIF has no {event.kind} record)")

    def user(self, event: TurnStartEvent) -> None:
        content = self.content(event.message, self.where(event))
        extra: dict[str, Any] = {"event": _event_info(event), "turn": event.turn}
        if rebuild_message("user", content) != event.message:
            extra["message"] = _dump(event.message)
        self.step("user", content, timestamp=self.timestamp(event), extra={EXTRA_KEY: extra})
        self.conv.add(event.message)

    def agent(self, event: LLMCallEvent) -> None:
        actual = self.run.request_messages(event)
        patch = self.conv.patch_for(actual)
        self.conv.adopt(actual)
        response = event.response
        message = response.message
        text_parts = [p for p in message.parts if not isinstance(p, ReasoningPart)]
        content = self.content(Message(role="assistant", parts=[
            p for p in text_parts if isinstance(p, TextPart | MediaPart)]), self.where(event))
        reasoning = "".join(p.text for p in message.parts if isinstance(p, ReasoningPart)) or None
        calls = [{"tool_call_id": c.id, "function_name": c.name,
                  "arguments": c.arguments if isinstance(c.arguments, dict) else {}} for c in message.tool_calls]
        request = event.request
        req_extra: dict[str, Any] = {"api": request.api, "params": request.params}
        for key, value in (("model", request.model), ("tools_ref", request.tools_ref),
                           ("fingerprint", request.fingerprint), ("provider_details", request.provider_details),
                           ("patch", patch)):
            if value is not None:
                req_extra[key] = value
        resp_extra: dict[str, Any] = {}
        for key, value in (("finish_reason", response.finish_reason), ("model", response.model),
                           ("response_id", response.response_id), ("provider_details", response.provider_details)):
            if value is not None:
                resp_extra[key] = value
        if response.usage is not None:
            resp_extra["usage"] = _dump(response.usage)
        if rebuild_assistant(content, reasoning, calls) != message:
            resp_extra["message"] = _dump(message)
        step = self.step(
            "agent", content, timestamp=self.timestamp(event), model_name=response.model or request.model,
            reasoning_content=reasoning, tool_calls=calls or None, metrics=_metrics(response.usage, response),
            llm_call_count=1,
            extra={EXTRA_KEY: {"event": _event_info(event), "attempt": event.attempt, "request": req_extra,
                               "response": resp_extra}},
        )
        self.agent_step_of[event.id] = step
        for call in message.tool_calls:
            self.call_step[call.id] = step
        self.conv.add(message)

    def tool(self, event: ToolCallEvent) -> None:
        step = self.agent_step_of.get(event.llm_call_id or "") or self.call_step.get(event.call_id)
        if step is None:  # a tool run no LLM call asked for: an agent step without inference
            step = self.step("agent", "", timestamp=self.timestamp(event), llm_call_count=0,
                             extra={EXTRA_KEY: {"no_llm_call": True}})
        calls = step.setdefault("tool_calls", [])
        if not any(c["tool_call_id"] == event.call_id for c in calls):
            calls.append({"tool_call_id": event.call_id, "function_name": event.name,
                          "arguments": event.arguments if isinstance(event.arguments, dict) else {},
                          "extra": {EXTRA_KEY: {"added_by_tool_event": True}}})
        result: dict[str, Any] = {"source_call_id": event.call_id}
        if event.result_blocks:
            result["content"] = self.content(Message(role="tool", parts=list(event.result_blocks)),
                                             self.where(event))
        elif event.result is not None:
            result["content"] = event.result
        info: dict[str, Any] = {"event": _event_info(event), "name": event.name, "status": event.status}
        for key, value in (("error", event.error), ("raw_arguments", event.raw_arguments),
                           ("result", event.result if event.result_blocks else None),
                           ("result_blocks", [_dump(b) for b in event.result_blocks] if event.result_blocks
                            else None)):
            if value is not None:
                info[key] = value
        if not isinstance(event.arguments, dict):  # ATIF arguments are an object: the rest rides in extra
            info["arguments"] = event.arguments
            self.losses.add("tool_arguments_not_an_object", f"{self.where(event)}: {event.name} arguments written "
                            "as {} (the original is in extra.replaykit)")
        if event.result is None and not event.result_blocks:
            info["no_result"] = True
        result["extra"] = {EXTRA_KEY: info}
        results = step.setdefault("observation", {"results": []})["results"]
        placeholder = next((r for r in results if r.get("source_call_id") == event.call_id
                            and r["extra"][EXTRA_KEY].get("placeholder")), None)
        if placeholder is not None:  # a subagent ref was hung here before the tool finished
            placeholder.update(result)
        else:
            results.append(result)
        self.conv.tool_result(event.call_id, event.name, event.result or "", is_error=event.status == "error")

    def subagent(self, event: SubagentEvent) -> None:
        self.carry(event)
        if event.phase != "start" or not event.child_run_id:
            return
        child = find_child(self.children, event.child_run_id)
        if child is None or child.run_id in self.seen:
            self.losses.add("subagent_runs_missing", f"{self.where(event)}: run {event.child_run_id} not found; "
                            "only its reference is written")
        else:
            writer = _Writer(child, self.version, self.children, self.losses, self.run_ids, self.seen)
            self.subagents.append(writer.trajectory())
        ref = {"trajectory_id": event.child_run_id, **({"session_id": event.child_session_id}
                                                       if event.child_session_id else {})}
        step = self.call_step.get(event.launched_by or "")
        if step is None:
            self.losses.add("subagent_refs_unplaced", f"{self.where(event)}: launching tool call "
                            f"{event.launched_by!r} is not in the trajectory")
            return
        self.pending_refs.setdefault(event.launched_by or "", []).append(ref)
        self.attach_refs(step)

    def attach_refs(self, step: dict[str, Any]) -> None:
        """Hang subagent refs on the observation result of their launching call (added when missing)."""
        results = step.setdefault("observation", {"results": []})["results"]
        for call_id, refs in list(self.pending_refs.items()):
            if self.call_step.get(call_id) is not step:
                continue
            target = next((r for r in results if r.get("source_call_id") == call_id), None)
            if target is None:
                target = {"source_call_id": call_id, "extra": {EXTRA_KEY: {"placeholder": True}}}
                results.append(target)
            target.setdefault("subagent_trajectory_ref", []).extend(refs)
            del self.pending_refs[call_id]

    # ----------------------------------------------------------------------------------- content

    def content(self, message: Message, where: str) -> str | list[dict[str, Any]]:
        """ATIF's message: a string, or ContentPart objects when there is media."""
        media = [p for p in message.parts if isinstance(p, MediaPart)]
        if not media:
            return "".join(p.text for p in message.parts if isinstance(p, TextPart))
        out: list[dict[str, Any]] = []
        for part in message.parts:
            if isinstance(part, TextPart):
                out.append({"type": "text", "text": part.text})
            elif isinstance(part, MediaPart):
                kind = "image" if part.media_type in IMAGE_TYPES else "audio" if part.media_type in AUDIO_TYPES \
                    else None
                if kind == "audio" and self.version == "1.7":
                    kind = None
                location = part.url or (f"data:{part.media_type};base64,{part.data}" if part.data else None)
                if kind is None or location is None:
                    self.losses.add("media_unsupported", f"{where}: {part.media_type} has no ATIF "
                                    f"v{self.version} content part (kept in extra)")
                    continue
                out.append({"type": kind, "source": {"media_type": part.media_type, "path": location}})
        return out


def _openai_tool(spec: dict[str, Any]) -> dict[str, Any]:
    function: dict[str, Any] = {"name": spec["name"]}
    if spec.get("description") is not None:
        function["description"] = spec["description"]
    if spec.get("parameters") is not None:
        function["parameters"] = spec["parameters"]
    return {"type": "function", "function": function}


def _metrics(usage: Usage | None, response: Any) -> dict[str, Any] | None:
    out: dict[str, Any] = {}
    if usage is not None:
        for key, attr in (("prompt_tokens", "input_tokens"), ("completion_tokens", "output_tokens"),
                          ("cached_tokens", "cache_read_tokens")):
            value = getattr(usage, attr)
            if value is not None:
                out[key] = value
        extra = {k: getattr(usage, k) for k in ("reasoning_tokens", "cache_write_tokens", "total_tokens")
                 if getattr(usage, k) is not None}
        if extra:
            out["extra"] = extra
    details = response.provider_details or {}
    atif_metrics = details.get("atif_metrics") if isinstance(details, dict) else None
    if isinstance(atif_metrics, dict):  # token ids, logprobs, cost from an imported ATIF file
        out.update({k: v for k, v in atif_metrics.items() if k not in out})
    return out or None
