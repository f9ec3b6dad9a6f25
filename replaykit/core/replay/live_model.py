"""The one OpenAI-compatible live model every engine's live path calls.

Streams a Chat Completions request through the ``openai`` client (imported lazily: the ``openai`` extra)
and wraps it in the core resilience pieces: classified errors, Retry-After, jittered backoff, the
stale-stream guard, length continuation. In a play (``session`` given) each attempt is counted on the
cursor and each failed attempt is recorded as an ``error`` event. An offline play (``serve_only``) never
calls (no endpoint): asking it to is an error naming why the record could not answer.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from replaykit.core.errors import MissingExtra, ReplaykitError
from replaykit.core.replay.play import PlayOptions, PlaySession
from replaykit.core.replay.resilience import (
    Classified,
    ContinuationPolicy,
    EndpointLimiter,
    LimiterSlot,
    RetryPolicy,
    StaleStream,
    continue_truncated,
    is_truncated,
    retry_call,
    stale_guard,
)
from replaykit.core.trace import jsonsafe
from replaykit.core.trace.codecs import assemble_stream, encode_request
from replaykit.core.trace.ir import LLMResponse, Message, Provenance, ToolSpec

#: request fields an engine sets itself; recorded values of these are never forwarded
DROP_PARAMS = frozenset({"model", "messages", "tools", "stream", "stream_options", "n"})


_CLIENTS: dict[tuple[str, str, float], Any] = {}


def _client(openai: Any, base_url: str, api_key: str, timeout: float) -> Any:
    """One client per endpoint, key and timeout in this process (kept in memory only): building one
    loads the system's CA certificates (about 0.1 s), which a worker playing many runs pays once."""
    key = (base_url, api_key, timeout)
    client = _CLIENTS.get(key)
    if client is None:
        client = _CLIENTS[key] = openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=timeout)
    return client


def _free_when_ended(ended: threading.Event, stream: Any, slot: LimiterSlot | None, cap: float) -> None:
    """After a stalled stream: the server still holds that request open (the stream's reader drains it),
    so its limiter slot stays taken until the connection ends - the server finishing it, or the client's
    read timeout (``cap``) - and only then is the stream closed and the slot freed, off the caller's thread."""

    def reap() -> None:
        ended.wait(cap + 1.0)
        try:
            if stream is not None:
                stream.close()
        finally:
            if slot is not None:
                slot.release()

    threading.Thread(target=reap, name="replaykit-stalled-stream", daemon=True).start()


class LiveModel:
    """One OpenAI-compatible endpoint, called through the core resilience pieces."""

    def __init__(self, options: PlayOptions, session: PlaySession | None = None) -> None:
        self.options = options
        self.session = session
        self.client: Any = None
        if not options.base_url:
            return  # offline: ``complete`` refuses; no client, no key read
        try:
            import openai
        except ImportError as exc:
            raise MissingExtra("openai", "openai") from exc
        # max_retries=0: retries belong to the core policy (counted, recorded, Retry-After honoured).
        # A silent stream is caught by ``stale_guard`` (the client's HTTP library differs across openai
        # majors, so no transport-specific timeout object is built here).
        self.client = _client(openai, options.base_url, options.api_key() or "replaykit-no-key",
                              options.request_timeout)
        self.policy = RetryPolicy(max_attempts=options.max_attempts,
                                  base_delay=float(options.extra.get("retry_base_delay", 0.5)),
                                  max_delay=float(options.extra.get("retry_max_delay", 20.0)))
        self.continuation = ContinuationPolicy(int(options.extra.get("max_continuations", 3)))
        # A limiter shared with other processes calling the same endpoint (``replaykit eval``'s workers).
        shared = options.extra.get("endpoint_limiter")
        self.limiter = EndpointLimiter(str(shared)) if shared else None

    def _limited(self, body: dict[str, Any]) -> LLMResponse:
        if self.limiter is None:
            return self._once(body, None)
        slot = self.limiter.request().__enter__()
        return self._once(body, slot)

    def _once(self, body: dict[str, Any], slot: LimiterSlot | None) -> LLMResponse:
        """One streamed request. ``slot`` (the limiter's, taken by the caller) is freed when the request
        is no longer in flight at the server: at once after a whole answer or an error answer, but after a
        stalled stream only once its connection has ended (see ``_free_when_ended``), so the retry that
        follows never makes one request more in flight than ``--max-concurrency`` allows."""
        ended = threading.Event()
        stream: Any = None
        try:
            # Every field but the two the SDK requires travels in extra_body: recorded parameters from any
            # framework reach the endpoint verbatim, and none can trip the SDK's keyword signature.
            rest = {k: v for k, v in body.items() if k not in ("model", "messages", "stream")}
            rest.setdefault("stream_options", {"include_usage": True})
            if jsonsafe.has_surrogate(json.dumps(body, ensure_ascii=False)):
                stream = self._post_escaped({"model": body["model"], "messages": body["messages"], "stream": True,
                                             **rest})
            else:
                stream = self.client.chat.completions.create(model=body["model"], messages=body["messages"],
                                                             stream=True, extra_body=rest)
            chunks = [chunk.to_dict() for chunk in stale_guard(stream, self.options.stale_timeout,
                                                                on_source_end=ended.set)]
        except StaleStream:
            if slot is not None:  # no limiter: nothing to keep, the stream is closed at once below
                _free_when_ended(ended, stream, slot, self.options.request_timeout)
                slot, stream = None, None
            raise
        finally:
            if stream is not None:
                stream.close()
            if slot is not None:
                slot.release()
        return assemble_stream("openai-chat", chunks)

    def _post_escaped(self, payload: dict[str, Any]) -> Any:
        """The same request with the JSON body written by us, ASCII-escaped: the SDK encodes its JSON
        as UTF-8, which cannot hold a lone surrogate (legal JSON; see core/trace/jsonsafe.py)."""
        from openai import Stream
        from openai.types.chat import ChatCompletion, ChatCompletionChunk

        data = json.dumps(payload, ensure_ascii=True, separators=(",", ":")).encode("ascii")
        return self.client.post("/chat/completions", cast_to=ChatCompletion, content=data, stream=True,
                                stream_cls=Stream[ChatCompletionChunk],
                                options={"headers": {"Content-Type": "application/json"}})

    def complete(self, messages: list[Message], tools: list[ToolSpec] | None, params: dict[str, Any],
                 *, why: str = "") -> LLMResponse:
        """One completion (streamed, retried, continued when cut by the length limit). ``why``: the
        cursor's reason for going live, named in the offline error."""
        if self.client is None:
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
                                           attempt=attempt, provenance=Provenance.LIVE)

        def on_attempt(_attempt: int) -> None:
            if session is not None:
                session.cursor.note_provider_call()

        def call(history: list[Message]) -> LLMResponse:
            body = encode_request("openai-chat", history, tools, {**params, "model": self.options.model}).body
            return retry_call(lambda: self._limited(body), self.policy, on_attempt=on_attempt, on_error=on_error,
                              where=self.options.base_url, announce=None)

        response = call(messages)
        if is_truncated(response):
            response = continue_truncated(messages, response, call, self.continuation)
        return response
