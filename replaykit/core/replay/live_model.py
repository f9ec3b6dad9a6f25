"""The one live model every engine's live path calls, on any wire API (``core/replay/wire_apis.py``).

``LiveModel.complete(messages, tools, params, why=...)`` encodes the IR history for the play's API
(the recording's own API: the recorded parameters and messages sent as recorded; another API: the
history made legal for it by ``codecs.translate_request``, every loss listed), streams the request
through that API's transport (the provider's SDK, an extra imported lazily) and wraps it in the core
resilience pieces: classified errors (per provider: ``resilience.PROVIDER_CODES``), Retry-After,
jittered backoff, the stale-stream guard, length continuation, the shared endpoint limiter. In a play
(``session`` given) each attempt is counted on the cursor and each failed attempt is recorded as an
``error`` event; ``record(cursor, response, ...)`` records the live step with what was sent (API,
messages and parameters as they went on the wire) and its translation losses. An offline play never
calls (no endpoint): asking it to is an error naming why the record could not answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from replaykit.core.errors import BadInput, CodecError, ReplaykitError
from replaykit.core.replay.play import PlayOptions, PlaySession
from replaykit.core.replay.resilience import (
    Classified,
    ContinuationPolicy,
    EndpointLimiter,
    RetryPolicy,
    continue_truncated,
    is_truncated,
    retry_call,
    stale_guard,
)
from replaykit.core.replay.wire_apis import Endpoint, Wire, open_transport
from replaykit.core.trace.codecs import assemble_stream, decode_request, encode_request, translate_request
from replaykit.core.trace.ir import LLMResponse, Message, Provenance, ToolSpec
from replaykit.core.trace.wire_record import wire_details

#: request fields an engine sets itself; recorded values of these are never forwarded
DROP_PARAMS = frozenset({"model", "messages", "tools", "stream", "stream_options", "n"})
#: server-side conversation state (Responses): a play sends the whole history itself, so a recorded
#: pointer to the provider's stored conversation is dropped (and said so on the step)
SERVER_STATE_PARAMS = ("previous_response_id", "conversation")


@dataclass
class SentRequest:
    """What one ``complete`` put on the wire: the API, the history and tools as sent (after translation),
    the parameters sent (``model`` aside), and what did not cross (empty for a same-API request)."""

    api: str
    messages: list[Message]
    tools: list[ToolSpec] | None
    params: dict[str, Any]
    source_api: str
    losses: list[str] = field(default_factory=list)
    provider: str | None = None

    def details(self) -> dict[str, Any]:
        """The live step's ``request.provider_details``: where the request went and its losses."""
        return wire_details(self.api, self.source_api, self.provider, self.losses)


def recorded_api(session: PlaySession | None) -> str | None:
    """The API the played run's model calls were recorded on (its first call's)."""
    if session is None:
        return None
    calls = session.run.llm_calls()
    if not calls:
        return None
    api = calls[0].request.api
    return "anthropic-messages" if api == "anthropic" else api


class LiveModel:
    """One wire API endpoint, called through the core resilience pieces."""

    def __init__(self, options: PlayOptions, session: PlaySession | None = None, *,
                 source_api: str | None = None) -> None:
        self.options = options
        self.session = session
        self.transport: Any = None
        self.last_request: SentRequest | None = None
        if not options.base_url and (options.serve_only or options.api is None):
            return  # offline: ``complete`` refuses; no client, no key read
        self.wire: Wire = options.wire()
        self.api = self.wire.api.name
        self.source_api = source_api or recorded_api(session) or self.api
        key, credentials = options.live_credentials()
        endpoint = Endpoint(self.api, self.wire.base_url, key, credentials, options.request_timeout)
        # SDK retries are off in every transport: retries belong to the core policy (counted, recorded,
        # Retry-After honoured). A silent stream is caught by ``stale_guard``.
        self.transport = open_transport(self.wire.api, endpoint)
        self.where = self.wire.base_url or self.wire.api.default_base_url or self.wire.api.label
        self.policy = RetryPolicy(max_attempts=options.max_attempts,
                                  base_delay=float(options.extra.get("retry_base_delay", 0.5)),
                                  max_delay=float(options.extra.get("retry_max_delay", 20.0)))
        self.continuation = ContinuationPolicy(int(options.extra.get("max_continuations", 3)))
        # A limiter shared with other processes calling the same endpoint (``replaykit eval``'s workers).
        shared = options.extra.get("endpoint_limiter")
        self.limiter = EndpointLimiter(str(shared)) if shared else None

    # ------------------------------------------------------------------------------------ encoding

    def encode(self, messages: list[Message], tools: list[ToolSpec] | None,
               params: dict[str, Any]) -> tuple[dict[str, Any], SentRequest]:
        """The body sent for ``messages`` and what it holds (see ``SentRequest``)."""
        params = {k: v for k, v in params.items() if k not in DROP_PARAMS}
        state_losses = [f"parameter {k!r} dropped (the play sends the whole history, not a pointer to the "
                        "provider's stored conversation)" for k in SERVER_STATE_PARAMS if k in params]
        params = {k: v for k, v in params.items() if k not in SERVER_STATE_PARAMS}
        with_model = {**params, "model": self.wire.model}
        if not any(m.role not in ("system", "developer") for m in messages):
            raise BadInput(f"{self._step()}: the recorded request holds no message but a system prompt; "
                           f"{self.wire.api.label} cannot express it (a request needs a conversation)")
        if self.source_api == self.api:
            encoded = encode_request(self.api, messages, tools, with_model)
            sent_messages, sent_tools, sent_params = list(messages), tools, params
        else:
            try:
                encoded = translate_request(self.api, messages, tools, with_model, self.source_api)
            except CodecError as exc:
                raise BadInput(f"{self._step()}: the recording cannot be expressed in {self.wire.api.label}: "
                               f"{exc}") from exc
            # What went on the wire, as IR: the record of this step re-encodes to this body exactly.
            decoded = decode_request(self.api, encoded.body)
            sent_messages, sent_tools = decoded.messages, decoded.tools
            sent_params = {k: v for k, v in decoded.params.items() if k != "model"}
        sent = SentRequest(self.api, sent_messages, list(sent_tools) if sent_tools is not None else None,
                           sent_params, self.source_api, [*state_losses, *encoded.losses],
                           self.wire.api.price_provider if self.wire.base_url is None else None)
        return encoded.body, sent

    def _step(self) -> str:
        """The play's step this request answers (named in errors)."""
        if self.session is None:
            return "live step"
        done = sum(1 for e in self.session.recorder.events if e.kind in ("llm_call", "tool_call"))
        return f"step {done}"

    # ------------------------------------------------------------------------------------- calling

    def _limited(self, body: dict[str, Any]) -> LLMResponse:
        if self.limiter is None:
            return self._once(body)
        with self.limiter.request():
            return self._once(body)

    def _once(self, body: dict[str, Any]) -> LLMResponse:
        stream = self.transport.open_stream(body)
        try:
            chunks = list(stale_guard(stream, self.options.stale_timeout))
        finally:
            stream.close()
        return assemble_stream(self.api, chunks)

    def complete(self, messages: list[Message], tools: list[ToolSpec] | None, params: dict[str, Any],
                 *, why: str = "") -> LLMResponse:
        """One completion (streamed, retried, continued when cut by the length limit). ``why``: the
        cursor's reason for going live, named in the offline error. ``last_request`` then says what
        the first request sent and lost."""
        if self.transport is None:
            reason = f" ({why})" if why else ""
            raise ReplaykitError(f"offline play: the record cannot answer this request{reason} and an offline "
                                 "play never calls a provider")
        session = self.session

        def on_error(error: Classified, attempt: int, wait: float | None) -> None:
            if self.limiter is not None and error.retry_after is not None:
                self.limiter.pause(error.retry_after)  # every process sharing the endpoint waits, not only this one
            if session is not None:
                session.recorder.llm_error(None, message=error.describe(), error_type=error.kind,
                                           status_code=error.status_code, retryable=wait is not None,
                                           attempt=attempt, provenance=Provenance.LIVE, api=self.api)

        def on_attempt(_attempt: int) -> None:
            if session is not None:
                session.cursor.note_provider_call()

        first: list[SentRequest] = []

        def call(history: list[Message]) -> LLMResponse:
            body, sent = self.encode(history, tools, params)
            if not first:
                first.append(sent)
            return retry_call(lambda: self._limited(body), self.policy, on_attempt=on_attempt, on_error=on_error,
                              where=self.where, announce=None)

        response = call(messages)
        self.last_request = first[0]
        if is_truncated(response):
            response = continue_truncated(messages, response, call, self.continuation)
        return response

    def record(self, cursor: Any, response: LLMResponse, **record_kw: Any) -> Any:
        """Record the live step answered by the last ``complete``: the request as it was sent (API,
        messages, tools, parameters) and its losses (``request.provider_details["replaykit"]["wire"]``)."""
        sent = self.last_request
        if sent is None:
            raise ReplaykitError("LiveModel.record before a completion")
        return cursor.live_llm(sent.messages, response, sent.tools, api=sent.api, params=sent.params,
                               request_details=sent.details(), **record_kw)
