"""Where a live step says what went on the wire: ``request.provider_details["replaykit"]["wire"]``.

Written by the live model (``core/replay/live_model.py``) on every live LLM step: ``api`` (the wire API
the request was sent on), ``from`` (the API the history was recorded on, when it differs), ``provider``
(the price provider, for a native endpoint), ``losses`` (one line per thing the translation dropped or
changed). Read by ``inspect --step N``, the viewer, ``diff`` and the cost ledger. Stdlib only; works
on typed events and on plain JSON event dicts alike.
"""

from __future__ import annotations

from typing import Any


def wire_details(api: str, source_api: str | None = None, provider: str | None = None,
                 losses: list[str] | None = None) -> dict[str, Any]:
    """The ``request.provider_details`` of a live step."""
    wire: dict[str, Any] = {"api": api}
    if source_api is not None and source_api != api:
        wire["from"] = source_api
    if provider:
        wire["provider"] = provider
    if losses:
        wire["losses"] = list(losses)
    return {"replaykit": {"wire": wire}}


def step_wire(event: Any) -> dict[str, Any]:
    """The wire record of an LLM step (empty for a step that was not sent live by a play)."""
    request = event.get("request") if isinstance(event, dict) else getattr(event, "request", None)
    details = request.get("provider_details") if isinstance(request, dict) else getattr(request, "provider_details", None)
    if not isinstance(details, dict):
        return {}
    own = details.get("replaykit")
    wire = own.get("wire") if isinstance(own, dict) else None
    return wire if isinstance(wire, dict) else {}


def step_losses(event: Any) -> list[str]:
    """The translation losses of an LLM step's request (empty when nothing was lost)."""
    losses = step_wire(event).get("losses")
    return [str(line) for line in losses] if isinstance(losses, list) else []
