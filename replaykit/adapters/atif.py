"""``replaykit import PATH --format atif``: ATIF trajectories (Harbor RFC 0001, v1.0 to v1.8) as runs.

PATH is one trajectory (a JSON file) or JSONL of trajectories. Each becomes a run; each embedded
subagent trajectory becomes a linked child run (``Lineage(relation="subagent")``) with ``subagent``
events in the parent. A ``system`` step adds to the conversation, a ``user`` step is a turn, an
``agent`` step an LLM call whose request is the conversation so far (``replaykit.core.trace.interop``), and
each observation result of a tool call a ``tool_call`` event. A result without ``source_call_id``
answers the step's next unanswered tool call, in order (Terminus-2 and OpenHands write their results
so); one with no call left to answer is feedback from an action outside tool calling, which the agent
hands the model as its next user message, and becomes that message. Older versions are read through
``replaykit.core.trace.interop.upgrade_atif``. Files replaykit wrote carry the rest in
``extra.replaykit`` and come back exactly; for other files the requests, timing and usage are rebuilt
from what the steps hold and the events are marked ``reconstructed``.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from replaykit import __version__
from replaykit.adapters.base import ImportedRun, read_import_text
from replaykit.core.errors import BadInput
from replaykit.core.trace.interop import (
    ATIF_VERSIONS,
    Conversation,
    content_parts,
    rebuild_assistant,
    rebuild_message,
    upgrade_atif,
    validate_atif,
)
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
    ToolSpec,
    Usage,
)
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.store import new_run_id, utc_now_iso

ADAPTER = "replaykit.adapters.atif"
EXTRA_KEY = "replaykit"
MAX_DEPTH = 32  # subagents of subagents: deeper nesting is refused, not recursed into


def import_atif(path: Path) -> list[ImportedRun]:
    runs: list[ImportedRun] = []
    for where, raw in _documents(Path(path)):
        try:
            document = _validate(raw, where)
        except RecursionError as exc:
            raise BadInput(f"{where}: trajectory nested too deeply to read") from exc
        runs.extend(_Reader(document, where=where, source_name=Path(path).name).runs())
    return runs


# --------------------------------------------------------------------------------------------- reading


def _documents(path: Path) -> list[tuple[str, Any]]:
    text = read_import_text(path)
    if not text.strip():
        raise BadInput(f"{path.name}: empty file (expected an ATIF trajectory)")
    try:
        return [(path.name, json.loads(text))]
    except (ValueError, RecursionError) as whole:
        lines = [line for line in text.splitlines() if line.strip()]
        if len(lines) < 2:
            raise BadInput(f"{path.name}: not valid JSON ({whole}); truncated?") from whole
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                out.append((f"{path.name}:{number}", json.loads(line)))
            except (ValueError, RecursionError) as exc:
                raise BadInput(f"{path.name}:{number}: not valid JSON ({exc}); truncated?") from exc
    return out


def _validate(document: Any, where: str) -> dict[str, Any]:
    """Version first (one clear line for an unknown one), then the document in the newest version's
    shape through the spec's models (the ``atif`` extra); that upgraded document is what is read."""
    if not isinstance(document, dict) or "steps" not in document or "schema_version" not in document:
        raise BadInput(f"{where}: not an ATIF trajectory (no schema_version and steps)")
    version = document.get("schema_version")
    if version not in ATIF_VERSIONS:
        raise BadInput(f"{where}: unknown ATIF version {str(version)[:40]!r} (replaykit reads "
                       f"{ATIF_VERSIONS[0]} to {ATIF_VERSIONS[-1]})")
    upgraded = upgrade_atif(document)
    validate_atif(upgraded, where)
    return upgraded


def _t(info: dict[str, Any], timestamp: Any, start: dt.datetime | None) -> float:
    if isinstance(info.get("t"), int | float):
        return float(info["t"])
    if start is not None and isinstance(timestamp, str):
        try:
            moment = dt.datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
            return max(0.0, round((moment - start).total_seconds(), 6))
        except ValueError:
            return 0.0
    return 0.0


def _start(steps: list[dict[str, Any]]) -> dt.datetime | None:
    for step in steps:
        stamp = step.get("timestamp")
        if isinstance(stamp, str):
            try:
                return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
            except ValueError:
                return None
    return None


def _mine(obj: dict[str, Any] | None) -> dict[str, Any]:
    """The ``extra.replaykit`` block replaykit wrote on an ATIF object (empty for other producers)."""
    extra = (obj or {}).get("extra")
    value = extra.get(EXTRA_KEY) if isinstance(extra, dict) else None
    return value if isinstance(value, dict) else {}


def _tool_spec(definition: Any) -> ToolSpec:
    function = definition.get("function", definition) if isinstance(definition, dict) else {}
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise BadInput("agent.tool_definitions: each entry needs a function name")
    return ToolSpec(name=function["name"], description=function.get("description"),
                    parameters=function.get("parameters"))


def _bind_results(calls: list[dict[str, Any]], results: list[dict[str, Any]]) -> list[str | None]:
    """The tool call each observation result answers: its ``source_call_id``; else, in order, the step's
    next call that no result names (RFC 0001: the id is optional, and Terminus-2 / OpenHands leave it
    out); None for a result with no call left, which came from an action outside tool calling."""
    named = {r.get("source_call_id") for r in results if isinstance(r, dict)}
    free = [c["tool_call_id"] for c in calls if c["tool_call_id"] not in named]
    out: list[str | None] = []
    for result in results:
        call_id = result.get("source_call_id") if isinstance(result, dict) else None
        if call_id is None and free:
            call_id = free.pop(0)
        out.append(call_id)
    return out


def _text_actions(document: dict[str, Any]) -> bool:
    """True when the agent's ``tool_calls`` are its own reading of the model's text, not function calls
    the model made: Terminus-2 (and its summarization sub-trajectories) asks for commands in a JSON or XML
    answer, parses them into ``tool_calls``, and hands the terminal output back as the next user message.
    Such a trajectory offers the model no tool (no ``agent.tool_definitions``, or a text ``parser`` in
    ``agent.extra``) and no observation result names a ``source_call_id``."""
    agent = document.get("agent") or {}
    steps = document.get("steps") or []
    if not any(step.get("tool_calls") for step in steps if isinstance(step, dict)):
        return False
    extra = agent.get("extra")
    if isinstance(extra, dict) and isinstance(extra.get("parser"), str):
        return True
    results = [(step, r) for step in steps if isinstance(step, dict)
               for r in (step.get("observation") or {}).get("results") or [] if isinstance(r, dict)]
    if agent.get("tool_definitions") or any(r.get("source_call_id") for _, r in results):
        return False
    # evidence, not absence: a step with actions whose output came back naming no call
    return any(step.get("tool_calls") and r.get("content") is not None for step, r in results)


class _Reader:
    def __init__(self, document: dict[str, Any], *, where: str, source_name: str,
                 lineage: Lineage | None = None, run_id: str | None = None, depth: int = 0) -> None:
        if depth > MAX_DEPTH:
            raise BadInput(f"{where}: subagent trajectories nested deeper than {MAX_DEPTH} levels")
        self.depth = depth
        self.doc = document
        self.where = where
        self.source_name = source_name
        self.mine = _mine(document)
        self.run_id = run_id or new_run_id("atif")
        self.lineage = lineage
        self.warnings: list[str] = []
        self.children: list[ImportedRun] = []
        self.embedded = {sub.get("trajectory_id"): sub for sub in document.get("subagent_trajectories") or []}
        self.child_ids: dict[str, str] = {}  # trajectory_id -> new child run id
        self.exact = bool(self.mine)
        self.by_position: dict[tuple[int, int], list[Any]] = {}
        self.text_actions = not self.exact and _text_actions(document)

    # ----------------------------------------------------------------------------------------- run

    def header(self) -> RunHeader:
        agent = self.doc.get("agent") or {}
        stored = self.mine.get("header")
        if isinstance(stored, dict):
            try:
                header = HEADER_ADAPTER.validate_python(stored)
            except ValueError as exc:
                raise BadInput(f"{self.where}: extra.replaykit.header is not a run header") from exc
            tags = [*header.tags, "imported"] if "imported" not in header.tags else header.tags
            lineage = header.lineage
            if self.lineage is not None:  # the parent has a new id; event ids are new on import too
                lineage = (lineage or self.lineage).model_copy(update={
                    "parent_run_id": self.lineage.parent_run_id, "parent_event_id": None})
            return header.model_copy(update={"run_id": self.run_id, "lineage": lineage, "tags": tags})
        return RunHeader(
            run_id=self.run_id, created_at=self.doc["steps"][0].get("timestamp") if self.doc["steps"]
            and isinstance(self.doc["steps"][0].get("timestamp"), str) else utc_now_iso(),
            source=Source(framework=str(agent.get("name") or "atif"), framework_version=agent.get("version"),
                          adapter=ADAPTER, replaykit_version=__version__),
            model=agent.get("model_name"), session_id=self.doc.get("session_id"), lineage=self.lineage,
            title=self.title(), tags=["imported", "reconstructed"],
            metadata={"imported_from": self.source_name, "atif_version": self.doc["schema_version"],
                      **({"trajectory_id": self.doc["trajectory_id"]} if self.doc.get("trajectory_id") else {}),
                      **({"agent_extra": agent["extra"]} if agent.get("extra") else {}),
                      **({"notes": self.doc["notes"]} if self.doc.get("notes") else {}),
                      **({"atif_extra": self.doc["extra"]} if self.doc.get("extra") else {}),
                      **({"atif_final_metrics": self.doc["final_metrics"]} if self.doc.get("final_metrics")
                         else {})},
        )

    def title(self) -> str | None:
        for step in self.doc["steps"]:
            if step.get("source") == "user":
                text = "".join(p.text for p in content_parts(step.get("message")) if hasattr(p, "text")).strip()
                if text:
                    return text.splitlines()[0][:80]
        return None

    def tool_sets(self) -> tuple[dict[str, list[ToolSpec]], list[ToolSpec] | None]:
        sets: dict[str, list[ToolSpec]] = {}
        stored = self.mine.get("tool_sets")
        if isinstance(stored, dict):
            for digest, tools in stored.items():
                try:
                    sets[digest] = [ToolSpec.model_validate(t) for t in tools]
                except ValueError as exc:
                    raise BadInput(f"{self.where}: extra.replaykit.tool_sets[{digest}] is invalid") from exc
        definitions = (self.doc.get("agent") or {}).get("tool_definitions")
        default = [_tool_spec(d) for d in definitions] if definitions else None
        return sets, default

    def runs(self) -> list[ImportedRun]:
        header = self.header()
        recorder = Recorder(header, clock=lambda: 0.0)
        sets, default_tools = self.tool_sets()
        conv = Conversation()
        steps = self.doc["steps"]
        start = _start(steps)
        carried: list[Any] = self.mine["events"] if isinstance(self.mine.get("events"), list) else []
        self.by_position = {}
        for item in carried:
            if isinstance(item, dict) and isinstance(item.get("after_step"), int):
                key = (item["after_step"], int(item.get("after_results") or 0))
                self.by_position.setdefault(key, []).append(item.get("event"))
        self.replay_carried(recorder, 0, 0)
        turn = 0
        for index, step in enumerate(steps, start=1):
            where = f"{self.where}: step {index}"
            mine = _mine(step)
            source = step.get("source")
            if source == "system":
                message = self.message(mine, "system", step.get("message"), where)
                conv.add(message)
                self.system_results(recorder, step, where)
            elif source == "user":
                message = self.message(mine, "user", step.get("message"), where)
                info = mine.get("event") or {}
                recorder.turn_start(message, turn=int(mine.get("turn", turn)), t=_t(info, step.get("timestamp"), start),
                                    **self.event_fields(info))
                turn += 1
                conv.add(message)
            else:
                self.agent(recorder, conv, step, mine, sets, default_tools, start, where, index,
                           last=index == len(steps))
            self.replay_carried(recorder, index, len((step.get("observation") or {}).get("results") or []))
        leftover = sorted(self.by_position)
        if leftover:
            raise BadInput(f"{self.where}: extra.replaykit.events placed after step {leftover[0][0]}, result "
                           f"{leftover[0][1]}: no such position")
        if not self.exact:
            self.warnings.append("requests, timing and usage were rebuilt from the trajectory's steps: events "
                                 "are marked reconstructed")
            if recorder.events and not any(e.kind == "run_end" for e in recorder.events):
                last = steps[-1] if steps else {}
                if last.get("source") == "agent" and not last.get("tool_calls"):
                    text = "".join(p.text for p in content_parts(last.get("message")) if hasattr(p, "text"))
                    recorder.run_end(final_answer=text, provenance=Provenance.RECONSTRUCTED)
        unused = set(self.embedded) - set(self.child_ids)
        for trajectory_id in sorted(str(u) for u in unused):
            self.import_child(trajectory_id, None, None)
            self.warnings.append(f"subagent trajectory {trajectory_id} is referenced by no step: imported unlinked")
        return [ImportedRun(header=header, events=recorder.events, warnings=self.warnings), *self.children]

    # -------------------------------------------------------------------------------------- pieces

    def event_fields(self, info: dict[str, Any]) -> dict[str, Any]:
        fields: dict[str, Any] = {"provenance": Provenance(info["provenance"]) if info.get("provenance") in
                                  set(Provenance) else Provenance.RECONSTRUCTED}
        if isinstance(info.get("duration"), int | float):
            fields["duration"] = float(info["duration"])
        if isinstance(info.get("corr"), dict):
            fields["corr"] = Correlation.model_validate(info["corr"])
        if isinstance(info.get("provider_details"), dict):
            fields["provider_details"] = info["provider_details"]
        return fields

    def message(self, mine: dict[str, Any], role: str, content: Any, where: str) -> Message:
        stored = mine.get("message")
        if stored is not None:
            try:
                return Message.model_validate(stored)
            except ValueError as exc:
                raise BadInput(f"{where}: extra.replaykit.message is not a message") from exc
        try:
            return rebuild_message(role, content)
        except BadInput as exc:
            raise BadInput(f"{where}: {exc}") from exc

    def agent(self, recorder: Recorder, conv: Conversation, step: dict[str, Any], mine: dict[str, Any],
              sets: dict[str, list[ToolSpec]], default_tools: list[ToolSpec] | None, start: dt.datetime | None,
              where: str, index: int, *, last: bool = False) -> None:
        # Actions parsed from the model's text (``_text_actions``) are no function calls: the model's
        # answer is its text, each observation the next user message (kept in provider_details).
        calls = [] if self.text_actions else step.get("tool_calls") or []
        info = mine.get("event") or {}
        llm_id: str | None = None
        if step.get("llm_call_count") != 0:
            req = mine.get("request") or {}
            resp = mine.get("response") or {}
            messages = conv.apply_patch(req["patch"], where) if "patch" in req else conv.expected()
            conv.adopt(messages)
            if isinstance(resp.get("message"), dict):
                message = self.message({"message": resp["message"]}, "assistant", None, where)
            else:
                message = rebuild_assistant(step.get("message"), step.get("reasoning_content"),
                                            [c for c in calls if not _mine(c).get("added_by_tool_event")])
            tools_ref = req.get("tools_ref")
            tools = sets.get(tools_ref) if isinstance(tools_ref, str) else (None if self.exact else default_tools)
            if isinstance(tools_ref, str) and tools is None:
                raise BadInput(f"{where}: unknown tool set {tools_ref!r}")
            response = LLMResponse(
                message=message, finish_reason=resp.get("finish_reason", None if self.exact else
                                                        ("tool_calls" if calls else "stop")),
                usage=self.usage(resp, step.get("metrics")), model=resp.get("model", step.get("model_name")),
                response_id=resp.get("response_id"), provider_details=self.response_details(resp, step),
            )
            event = recorder.llm_call(
                messages, response, api=req.get("api", "openai-chat"), model=req.get("model", step.get("model_name")),
                tools=tools, params=req.get("params") or {}, t=_t(info, step.get("timestamp"), start),
                attempt=int(mine.get("attempt", 1)), fingerprint=req.get("fingerprint"),
                request_details=req.get("provider_details"), **self.event_fields(info),
            )
            llm_id = event.id
            conv.add(message)
        results = (step.get("observation") or {}).get("results") or []
        by_call = {c["tool_call_id"]: c for c in calls}
        bound = _bind_results(calls, results)
        for done, (result, call_id) in enumerate(zip(results, bound, strict=True)):
            self.replay_carried(recorder, index, done)
            if call_id is None:
                self.feedback(recorder, conv, result, step, start, where)
            else:
                self.result(recorder, conv, result, call_id, by_call, llm_id, step, start, where)
        answered = set(bound)
        unanswered = [c for c in calls if c["tool_call_id"] not in answered and not _mine(c).get("added_by_tool_event")]
        if unanswered and not last and not self.exact:
            # The trajectory goes on, so something answered these calls; the file holds no output for them.
            self.warnings.append(f"{where}: {len(unanswered)} tool call(s) have no observation result: "
                                 "recorded with no result")
            for call in unanswered:
                recorder.tool_call(call["tool_call_id"], str(call["function_name"]), call.get("arguments"),
                                   result=None, llm_call_id=llm_id, t=_t({}, step.get("timestamp"), start),
                                   provenance=Provenance.RECONSTRUCTED)
                conv.tool_result(call["tool_call_id"], str(call["function_name"]), "")

    def feedback(self, recorder: Recorder, conv: Conversation, result: dict[str, Any], step: dict[str, Any],
                 start: dt.datetime | None, where: str) -> None:
        """An observation result no tool call asked for (an action outside tool calling, such as a
        command the model wrote in its text): the agent hands it to the model as the next user message,
        so it is a user turn of the run (its other fields in ``provider_details.atif_observation``)."""
        for ref in result.get("subagent_trajectory_ref") or []:
            self.link_subagent(recorder, ref, None, where)
        content = result.get("content")
        if content is None or content == "":
            if not result.get("subagent_trajectory_ref"):
                recorder.opaque("atif", "observation", result, provenance=Provenance.RECONSTRUCTED)
            return
        message = rebuild_message("user", content)
        rest = {k: v for k, v in result.items() if k not in ("content", "subagent_trajectory_ref")}
        recorder.turn_start(message, t=_t({}, step.get("timestamp"), start), provenance=Provenance.RECONSTRUCTED,
                            provider_details={"atif_observation": rest})
        conv.add(message)

    def system_results(self, recorder: Recorder, step: dict[str, Any], where: str) -> None:
        """Observations of a system step (v1.2+: subagent delegation, context management, resets): the
        model never saw them as a message; subagents are linked, the rest is kept as opaque events."""
        for result in (step.get("observation") or {}).get("results") or []:
            for ref in result.get("subagent_trajectory_ref") or []:
                self.link_subagent(recorder, ref, None, where)
            rest = {k: v for k, v in result.items() if k != "subagent_trajectory_ref"}
            if rest:
                recorder.opaque("atif", "system_observation", rest, provenance=Provenance.RECONSTRUCTED)

    def result(self, recorder: Recorder, conv: Conversation, result: dict[str, Any], call_id: str,
               by_call: dict[str, Any], llm_id: str | None, step: dict[str, Any], start: dt.datetime | None,
               where: str) -> None:
        mine = _mine(result)
        refs = result.get("subagent_trajectory_ref") or []
        call = by_call[call_id]
        if not mine.get("placeholder"):
            info = mine.get("event") or {}
            blocks = mine.get("result_blocks")
            content = result.get("content")
            text = mine["result"] if "result" in mine else (
                content if isinstance(content, str) or content is None else
                "".join(p.text for p in content_parts(content) if hasattr(p, "text")))
            if mine.get("no_result"):
                text = None
            status = mine.get("status", "ok")
            arguments = mine["arguments"] if "arguments" in mine else call.get("arguments")
            recorder.tool_call(
                call_id, str(mine.get("name", call["function_name"])), arguments,
                raw_arguments=mine.get("raw_arguments"), result=text,
                result_blocks=blocks if blocks else (content_parts(content) if isinstance(content, list) else None),
                status=status, error=mine.get("error"), llm_call_id=llm_id,
                t=_t(info, step.get("timestamp"), start), **self.event_fields(info),
            )
            conv.tool_result(call_id, str(mine.get("name", call["function_name"])), text or "",
                             is_error=status == "error")
        for ref in refs:
            self.link_subagent(recorder, ref, call_id, where)

    def link_subagent(self, recorder: Recorder, ref: dict[str, Any], call_id: str | None, where: str) -> None:
        trajectory_id = ref.get("trajectory_id")
        if trajectory_id not in self.embedded:
            self.warnings.append(f"{where}: subagent {trajectory_id or ref.get('trajectory_path')} is not embedded "
                                 "in the file: kept as a reference only")
            recorder.opaque("atif", "subagent_trajectory_ref", ref, provenance=Provenance.RECONSTRUCTED)
            return
        steps_so_far = sum(1 for e in recorder.events if e.kind in ("llm_call", "tool_call"))
        child_id = self.import_child(str(trajectory_id), max(0, steps_so_far - 1), call_id)
        if not self.exact:  # replaykit's own files carry their subagent events in extra
            recorder.subagent("start", child_run_id=child_id, child_session_id=ref.get("session_id"),
                              launched_by=call_id, provenance=Provenance.RECONSTRUCTED)
            recorder.subagent("stop", child_run_id=child_id, provenance=Provenance.RECONSTRUCTED)

    def import_child(self, trajectory_id: str, parent_step: int | None, call_id: str | None) -> str:
        if trajectory_id in self.child_ids:
            return self.child_ids[trajectory_id]
        child_id = new_run_id("atif")
        self.child_ids[trajectory_id] = child_id
        lineage = Lineage(relation="subagent", parent_run_id=self.run_id, parent_step=parent_step,
                          details={"tool_call_id": call_id, "trajectory_id": trajectory_id} if call_id else
                          {"trajectory_id": trajectory_id})
        reader = _Reader(self.embedded[trajectory_id], where=f"{self.source_name}: subagent {trajectory_id}",
                         source_name=self.source_name, lineage=lineage, run_id=child_id, depth=self.depth + 1)
        self.children.extend(reader.runs())
        return child_id

    def replay_carried(self, recorder: Recorder, after_step: int, after_results: int) -> None:
        """Emit the events replaykit carried in extra at this position (after step N and K results)."""
        for body in self.by_position.pop((after_step, after_results), []):
            if not isinstance(body, dict):
                raise BadInput(f"{self.where}: extra.replaykit.events holds a non-object")
            data = dict(body)
            if data.get("kind") == "subagent" and data.get("child_run_id") in self.embedded:
                data["child_run_id"] = self.import_child(str(data["child_run_id"]), None, None)
            seq, event_id = recorder.next_ids()
            try:
                event = EVENT_ADAPTER.validate_python({**data, "seq": seq, "id": event_id})
            except ValueError as exc:
                raise BadInput(f"{self.where}: extra.replaykit.events holds an invalid event") from exc
            recorder.emit(event)

    def usage(self, resp: dict[str, Any], metrics: dict[str, Any] | None) -> Usage | None:
        if isinstance(resp.get("usage"), dict):
            return Usage.model_validate(resp["usage"])
        if not metrics:
            return None
        extra: dict[str, Any] = metrics["extra"] if isinstance(metrics.get("extra"), dict) else {}
        usage = Usage(input_tokens=metrics.get("prompt_tokens"), output_tokens=metrics.get("completion_tokens"),
                      cache_read_tokens=metrics.get("cached_tokens"),
                      reasoning_tokens=extra.get("reasoning_tokens"), cache_write_tokens=extra.get(
                          "cache_write_tokens"), total_tokens=extra.get("total_tokens"))
        return usage if usage != Usage() else None

    def response_details(self, resp: dict[str, Any], step: dict[str, Any]) -> dict[str, Any] | None:
        details = dict(resp["provider_details"]) if isinstance(resp.get("provider_details"), dict) else {}
        if "usage" not in resp:  # token ids, logprobs and cost have no IR field: kept for the way back
            metrics = step.get("metrics") or {}
            kept = {k: metrics[k] for k in ("prompt_token_ids", "completion_token_ids", "logprobs", "cost_usd")
                    if metrics.get(k) is not None}
            if kept:
                details["atif_metrics"] = kept
        for key in ("reasoning_effort", "is_copied_context", "extra"):
            if step.get(key) is not None and not (key == "extra" and self.exact):
                details.setdefault("atif_step", {})[key] = step[key]
        if self.text_actions and step.get("tool_calls"):
            details.setdefault("atif_step", {})["text_actions"] = step["tool_calls"]
        return details or None

