"""Rebuild, from a recorded Hermes run, the exact HTTP body each LLM attempt sent to the provider."""

from __future__ import annotations

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


def auxiliary_bodies(run: Run) -> list[dict[str, Any]]:
    """The HTTP bodies of the auxiliary calls (titles, compression, vision: ``opaque``
    ``hermes/auxiliary_call`` events) from the SDK kwargs Hermes handed ``pre_auxiliary_call``; exact when
    the event says ``request_exact`` (Hermes's hook sanitiser cut nothing)."""
    from replaykit.adapters.hermes.capture.auxiliary import NAME, SOURCE
    from replaykit.adapters.hermes.wire import http_body
    from replaykit.core.trace.ir import OpaqueEvent

    bodies = []
    for event in run.events:
        if isinstance(event, OpaqueEvent) and (event.source, event.name) == (SOURCE, NAME) \
                and isinstance(event.data, dict) and isinstance(event.data.get("request"), dict) \
                and isinstance(event.data["request"].get("body"), dict):
            bodies.append(http_body(event.data["request"]["body"]))
    return bodies
