"""Record what a LangGraph fork did back into the store: a new run whose lineage names its parent.

The new run copies the parent's events before the edited step verbatim (same ids, so its delta-encoded
requests stay valid and ``replaykit diff`` aligns the steps), then the edited step, then every step the
graph took after it, each with its provenance (served where the record still matched, live, synthetic).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from replaykit.core.trace.ir import (
    Edit,
    LLMCallEvent,
    LLMResponse,
    Message,
    Provenance,
    RunHeader,
    Source,
    ToolCallEvent,
    ToolSpec,
)
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.store import new_run_id, utc_now_iso

if TYPE_CHECKING:
    from replaykit.core.trace.run import Run
    from replaykit.engines.langgraph.live import LiveEndpoint

JSON = dict[str, Any]

_PROVENANCE = {
    "served": Provenance.SERVED,
    "live": Provenance.LIVE,
    "synthetic": Provenance.SYNTHETIC,
    "desync": Provenance.DESYNC,
    "edited": Provenance.EDITED,
    "recorded": Provenance.RECORDED,
}


def _messages(items: list[JSON]) -> list[Message]:
    return [Message.model_validate(m) for m in items]


def fork_header(run: Run, *, step: int, target: str, value: Any, call_id: str | None, run_id: str | None,
                endpoint: LiveEndpoint | None, relation: str = "branch", engine: str = "langgraph") -> RunHeader:
    from replaykit.core.trace.ir import Lineage

    parent = run.step(step).event
    return RunHeader(
        run_id=run_id or new_run_id("lgfork"),
        created_at=utc_now_iso(),
        source=Source(framework=run.header.source.framework, adapter="langgraph"),
        model=endpoint.model if endpoint is not None else run.model,
        provider=run.header.provider if endpoint is None else "openai-compatible",
        base_url=endpoint.base_url if endpoint is not None else run.header.base_url,
        session_id=run.header.session_id,
        title=f"langgraph {relation} of {run.run_id} at step {step}",
        lineage=Lineage(relation=relation, parent_run_id=run.run_id, parent_step=step,  # type: ignore[arg-type]
                        parent_event_id=parent.id,
                        edit=Edit(target=target, step=step, value=value, tool_call_id=call_id)  # type: ignore[arg-type]
                        if target else None,
                        engine=engine),
    )


def copy_prefix(recorder: Recorder, run: Run, before_seq: int) -> None:
    """Copy the parent's events before ``before_seq`` and point the delta encoder at its last request."""
    prefix = [e for e in run.events if e.seq < before_seq]
    recorder.copy_events(prefix)
    for event in reversed(prefix):
        if isinstance(event, LLMCallEvent):
            recorder.set_last_request(event.id, run.request_messages(event))
            break


def write_entries(recorder: Recorder, entries: list[JSON], *, skip_calls: set[str] | None = None,
                  edited_call: str | None = None, model: str | None = None) -> None:
    """Append the graph's log entries as events (tool entries of one ToolNode run in call order)."""
    skip = skip_calls or set()
    ordered: list[JSON] = []
    batch: list[JSON] = []
    for entry in entries:
        if entry["kind"] == "tool":
            batch.append(entry)
            continue
        ordered += sorted(batch, key=lambda e: e.get("offset", 0))
        batch = []
        ordered.append(entry)
    ordered += sorted(batch, key=lambda e: e.get("offset", 0))
    last_llm_id: str | None = None
    for entry in ordered:
        provenance = _PROVENANCE.get(entry["provenance"], Provenance.LIVE)
        if entry["kind"] == "llm":
            if entry["provenance"] == "synthetic":
                recorder.synthetic(len([e for e in recorder.events if isinstance(e, LLMCallEvent | ToolCallEvent)]),
                                   reason=entry.get("reason", "synthetic end of turn"))
            tools = [ToolSpec.model_validate(t) for t in entry.get("tools") or ()] or None
            response = LLMResponse.model_validate(entry["response"])
            event = recorder.llm_call(_messages(entry["request"]), response, provenance=provenance,
                                      tools=tools, model=model or response.model, duration=entry.get("duration"))
            last_llm_id = event.id
            continue
        if entry["call_id"] in skip:
            continue
        if entry["call_id"] == edited_call:
            provenance = Provenance.EDITED
        recorder.tool_call(entry["call_id"], entry["name"], entry.get("arguments"), result=entry.get("result"),
                           status=entry.get("status") or "ok", provenance=provenance,
                           error=entry.get("result") if entry.get("status") == "error" else None,
                           llm_call_id=last_llm_id, duration=entry.get("duration"))


def record_fork(run: Run, store: Any, *, step: int, target: str, value: Any, call_id: str | None,
                entries: list[JSON], messages: list[JSON], final_answer: str | None, run_id: str | None,
                endpoint: LiveEndpoint | None) -> str:
    """Write the fork as a new run in ``store``; returns its id."""
    header = fork_header(run, step=step, target=target, value=value, call_id=call_id, run_id=run_id,
                         endpoint=endpoint)
    recorder = Recorder(header, store.create(header))
    try:
        event = run.step(step).event
        copy_prefix(recorder, run, event.seq)
        skip: set[str] = {e.call_id for e in recorder.events if isinstance(e, ToolCallEvent)}
        model = endpoint.model if endpoint is not None else None
        if target == "result":
            assert isinstance(event, ToolCallEvent)
            recorder.tool_call(event.call_id, event.name, event.arguments, raw_arguments=event.raw_arguments,
                               result=value if isinstance(value, str) else _dumps(value), status="ok",
                               provenance=Provenance.EDITED, llm_call_id=event.llm_call_id)
            skip.add(event.call_id)
            # The other calls of the same model answer were already in the checkpoint: served.
            for sibling in _siblings_after(run, event):
                recorder.tool_call(sibling.call_id, sibling.name, sibling.arguments,
                                   raw_arguments=sibling.raw_arguments, result=sibling.result,
                                   result_blocks=sibling.result_blocks, status=sibling.status, error=sibling.error,
                                   provenance=Provenance.SERVED, llm_call_id=sibling.llm_call_id)
                skip.add(sibling.call_id)
            write_entries(recorder, entries, skip_calls=skip, model=model)
        elif target == "args":
            write_entries(recorder, entries, skip_calls=skip, edited_call=call_id, model=model)
        else:
            assert isinstance(event, LLMCallEvent)
            text = value if isinstance(value, str) else _dumps(value)
            edited = LLMResponse(message=Message.model_validate(
                {"role": "assistant", "parts": [{"type": "text", "text": text}] if text else []}),
                finish_reason="stop")
            recorder.llm_call(run.request_messages(event), edited, provenance=Provenance.EDITED,
                              tools=run.request_tools(event.request), model=event.request.model)
            write_entries(recorder, entries, skip_calls=skip, model=model)
        recorder.run_end(final_answer)
    finally:
        recorder.close()
    return header.run_id


def _siblings_after(run: Run, event: ToolCallEvent) -> list[ToolCallEvent]:
    out = []
    for other in run.events:
        if other.seq <= event.seq:
            continue
        if isinstance(other, LLMCallEvent):
            break
        if isinstance(other, ToolCallEvent):
            out.append(other)
    return out


def _dumps(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, default=str)
