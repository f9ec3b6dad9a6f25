"""Rebuild, from a recorded Hermes run, the exact HTTP body each LLM attempt sent to the provider."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from replaykit.core.trace.codecs import encode_llm_request
from replaykit.core.trace.ir import ErrorEvent, LLMCallEvent
from replaykit.core.trace.run import Run


def request_body(run: Run, event: LLMCallEvent | ErrorEvent) -> dict[str, Any]:
    request = event.request
    if request is None:
        raise ValueError(f"event {event.seq} has no recorded request")
    encoded = encode_llm_request(request, run.request_messages(event), run.request_tools(request))
    return dict(encoded.body)


def attempt_bodies(run: Run) -> list[dict[str, Any]]:
    """Every LLM attempt's body (successful calls and failed attempts), in the order they were sent."""
    events = [e for e in run.events if isinstance(e, LLMCallEvent) or (isinstance(e, ErrorEvent) and e.request)]
    events.sort(key=lambda e: (e.t, e.seq))
    return [request_body(run, e) for e in events]


@dataclass(frozen=True)
class AuxiliaryRequest:
    """One recorded auxiliary call's request. ``body`` is the HTTP body rebuilt from the SDK kwargs Hermes
    handed ``pre_auxiliary_call``; ``on_wire`` says whether that body is what went on the wire: Hermes's
    auxiliary client always takes Chat Completions kwargs, and in a ``codex_responses`` (or other non-Chat)
    session its adapter converts them into that API's request after the hook, a conversion the hook never
    shows. ``outcome`` is ``unknown`` for a call still in flight when the process ended (it may never have
    reached the provider)."""

    task: str | None
    body: dict[str, Any]
    on_wire: bool
    outcome: str | None


def auxiliary_requests(run: Run) -> list[AuxiliaryRequest]:
    """The auxiliary calls (titles, compression, vision: ``opaque`` ``hermes/auxiliary_call`` events) whose
    request was recorded, in order."""
    from replaykit.adapters.hermes.capture.auxiliary import NAME, SOURCE
    from replaykit.adapters.hermes.wire import http_body
    from replaykit.core.trace.ir import OpaqueEvent

    session_api = run.meta.get("api_mode") or "chat_completions"
    found = []
    for event in run.events:
        if not (isinstance(event, OpaqueEvent) and (event.source, event.name) == (SOURCE, NAME)
                and isinstance(event.data, dict)):
            continue
        request = event.data.get("request")
        if not (isinstance(request, dict) and isinstance(request.get("body"), dict)):
            continue
        body = http_body(request["body"])
        chat_shaped = "messages" in body
        on_wire = bool(event.data.get("request_exact")) and (session_api == "chat_completions" or not chat_shaped)
        found.append(AuxiliaryRequest(event.data.get("task"), body, on_wire, event.data.get("outcome")))
    return found


def auxiliary_bodies(run: Run) -> list[dict[str, Any]]:
    """The exact HTTP bodies of the auxiliary calls whose recorded request is what went on the wire (see
    :class:`AuxiliaryRequest`)."""
    return [a.body for a in auxiliary_requests(run) if a.on_wire]
