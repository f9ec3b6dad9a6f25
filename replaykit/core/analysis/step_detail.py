"""One step, whole: what ``inspect RUN --step N``, the HTML report and the viewer's step page show.

For an LLM step: the request exactly as the provider received it (the body rebuilt from the run's
delta-encoded messages and tool set through the codec of the request's API, so it is the provider's own
shape: Chat ``messages``, Responses ``input``, Anthropic ``system`` + ``messages``), the same messages in
the IR (role + parts), the sampling parameters, and the whole response (message, finish reason, usage,
model, response id) with its cost. For a tool step: name, call id, arguments (parsed and raw), result,
status, error. Both: provenance, timing, correlation ids.
"""

from __future__ import annotations

from typing import Any

from replaykit.core.errors import CodecError
from replaykit.core.trace import jsonsafe
from replaykit.core.trace.canonical import parsed_arguments
from replaykit.core.trace.ir import (
    LLMCallEvent,
    MediaPart,
    Message,
    ReasoningPart,
    RunHeader,
    TextPart,
    ToolCallEvent,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)
from replaykit.core.trace.run import Run, Step
from replaykit.core.trace.wire_record import step_losses, step_wire


def _provider_messages(api: str, body: dict[str, Any]) -> list[Any]:
    """The message list inside a provider request body (the system prompt first when separate)."""
    if api == "openai-responses":
        items = list(body.get("input") or [])
        if body.get("instructions"):
            items.insert(0, {"role": "system", "content": body["instructions"], "_from": "instructions"})
        return items
    messages = list(body.get("messages") or [])
    if api.startswith("anthropic") and body.get("system"):
        messages.insert(0, {"role": "system", "content": body["system"], "_from": "system"})
    return messages


def step_costs(run: Run) -> dict[int, dict[str, Any]]:
    """The cost ledger's line of every LLM step, by step number (empty when pricing fails)."""
    from replaykit.core.analysis import cost

    out: dict[int, dict[str, Any]] = {}
    try:
        for line in cost.step_costs(run):
            out[line.step] = cost_line(line)
    except Exception:  # pricing is an extra; the steps themselves must still show
        return {}
    return out


def one_step_cost(header: RunHeader, index: int, event: LLMCallEvent) -> dict[str, Any] | None:
    """``step_costs(run)[index]`` for a reader that holds only this step (None when pricing fails)."""
    from replaykit.core.analysis import cost

    try:
        return cost_line(cost.step_cost(header, index, event))
    except Exception:  # as above: an extra
        return None


def cost_line(line: Any) -> dict[str, Any]:
    """A ``core.analysis.cost.StepCost`` as the step document shows it."""
    value = line.cost
    return {"cost": None if value is None else float(value), "billed": line.billed,
            "unknown_reason": line.price.reason if value is None else None}


def _llm_detail(run: Run, event: LLMCallEvent, whole_request: bool) -> dict[str, Any]:
    return llm_detail(event, messages=run.request_messages(event) if whole_request else None,
                      appended=run.appended_messages(event), message_count=len(run.request_messages(event)),
                      tools=run.request_tools(event.request))


def llm_detail(event: LLMCallEvent, *, messages: list[Message] | None, appended: list[Message], message_count: int,
               tools: list[ToolSpec] | None) -> dict[str, Any]:
    """An LLM step's part of the document from what a reader rebuilt of its request: ``messages`` the
    whole list (None: left out, no body either), ``appended`` the messages new since its base request
    (references expanded), ``tools`` its tool set. The one shape whichever reader rebuilt them (a loaded
    ``Run``, or the viewer's index of the file, ``core/analysis/run_index.py``)."""
    from replaykit.core.trace.codecs import encode_llm_request

    request = event.request
    body: dict[str, Any] | None = None
    losses: list[str] = []
    if messages is not None:
        try:
            encoded = encode_llm_request(request, messages, tools)
            body = encoded.body
            losses = [str(loss) for loss in encoded.losses]
        except CodecError:
            body = None  # an "unknown" API: the IR messages below are all there is
    response = event.response
    return {
        "api": request.api,
        "model": request.model,
        "request": {
            "messages": [jsonsafe.model_data(m, exclude_none=True) for m in messages or []],
            "provider_messages": _provider_messages(request.api, body) if body is not None else None,
            "body": body,
            "losses": losses,
            "message_count": message_count,
            "whole": messages is not None,
            "new_messages": len(request.context.append),
            "kept": request.context.keep if request.context.base is not None else 0,
            "appended": [jsonsafe.model_data(m, exclude_none=True) for m in appended],
            "tools": [t.name for t in tools or []],
            "params": request.params,
            "fingerprint": request.fingerprint,
            "wire": step_wire(event) or None,
            "translation_losses": step_losses(event),
        },
        "response": {
            "message": jsonsafe.model_data(response.message, exclude_none=True),
            "text": response.message.text,
            "tool_calls": [{"id": c.id, "name": c.name, "arguments": parsed_arguments(c.arguments, c.raw_arguments)}
                           for c in response.message.tool_calls],
            "finish_reason": response.finish_reason,
            "usage": jsonsafe.model_data(response.usage, exclude_none=True) if response.usage else None,
            "model": response.model,
            "response_id": response.response_id,
        },
    }


def provider_request(event: LLMCallEvent, messages: list[Message], tools: list[ToolSpec] | None) -> dict[str, Any]:
    """A request's whole body as the provider received it, for a page of its messages: ``provider_messages``
    (None for an API without a codec; then ``messages``, in the IR), ``body``, ``losses``, ``api``,
    ``model``, ``tools``, ``params``. Unlike ``llm_detail``, the IR messages are dumped only when there is
    no provider form to show."""
    from replaykit.core.trace.codecs import encode_llm_request

    request = event.request
    try:
        encoded = encode_llm_request(request, messages, tools)
        body: dict[str, Any] | None = encoded.body
        losses = [str(loss) for loss in encoded.losses]
    except CodecError:
        body, losses = None, []
    return {
        "kind": "llm", "api": request.api, "model": request.model, "tools": [t.name for t in tools or []],
        "params": request.params, "body": body, "losses": losses, "message_count": len(messages),
        "wire": step_wire(event) or None, "translation_losses": step_losses(event),
        "provider_messages": _provider_messages(request.api, body) if body is not None else None,
        "messages": None if body is not None else [jsonsafe.model_data(m, exclude_none=True) for m in messages],
    }


def tool_detail(event: ToolCallEvent) -> dict[str, Any]:
    return {
        "tool": event.name,
        "call_id": event.call_id,
        "arguments": parsed_arguments(event.arguments, event.raw_arguments),
        "raw_arguments": event.raw_arguments,
        "result": event.result,
        "status": event.status,
        "error": event.error,
    }


def step_head(run_id: str, index: int, event: LLMCallEvent | ToolCallEvent, *, failing: bool) -> dict[str, Any]:
    """What every step's document starts with (kind, ids, provenance, timing, correlation ids)."""
    step = Step(index, event)
    return {
        "run_id": run_id,
        "step": index,
        "kind": step.kind,
        "event_id": event.id,
        "seq": event.seq,
        "provenance": str(event.provenance),
        "t": event.t,
        "duration": event.duration,
        "failed": step.failed,
        "failing": failing,
        "corr": jsonsafe.model_data(event.corr, exclude_none=True) if event.corr else None,
    }


def step_detail(run: Run, index: int, *, whole_request: bool = True,
                costs: dict[int, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Everything about step ``index`` of ``run`` as one JSON-ready document (raises BadInput when out
    of range). ``whole_request=False`` leaves out the rebuilt request (messages, body) and keeps only
    the messages appended since the previous call: a report of every step then stays linear in the
    run's size. ``costs``: ``step_costs(run)``, computed once for many steps."""
    event = run.step(index).event
    doc = step_head(run.run_id, index, event, failing=run.failing_step == index)
    if isinstance(event, LLMCallEvent):
        doc.update(_llm_detail(run, event, whole_request))
        doc["cost"] = (step_costs(run) if costs is None else costs).get(index)
    else:
        doc.update(tool_detail(event))
    return doc


def message_text(message: Message | dict[str, Any]) -> str:
    """A message as plain readable text (one line per part): what diffs and terminals show."""
    if isinstance(message, dict):
        message = Message.model_validate(message)
    lines: list[str] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            lines.append(part.text)
        elif isinstance(part, ReasoningPart):
            lines.append(f"[reasoning] {part.text}")
        elif isinstance(part, ToolCallPart):
            lines.append(f"[tool call {part.id}] {part.name}({part.arguments_json()})")
        elif isinstance(part, ToolResultPart):
            flag = " error" if part.is_error else ""
            lines.append(f"[tool result {part.tool_call_id}{flag}] {part.content}")
        elif isinstance(part, MediaPart):
            lines.append(f"[media {part.media_type}] {part.url or '(inline data)'}")
        else:
            lines.append(f"[{part.type} {part.format}]")
    return "\n".join(lines)
