"""``anthropic-messages``: the Messages API through the ``anthropic`` SDK, streamed (events as dicts).

The SDK appends ``/v1/messages`` to its base URL, so a ``--base-url`` ending in ``/v1`` (the OpenAI
habit) is taken without it. An ``error`` event inside the stream (``overloaded_error``) is raised by
the SDK as an ``APIStatusError`` whose body names the error type: the core classifies it by that type.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from replaykit.core.replay.wire_apis import JSON, Endpoint
from replaykit.core.trace import jsonsafe

DEFAULT_HOST = "https://api.anthropic.com"
_CLIENTS: dict[tuple[str, str, float], Any] = {}


def _host(base_url: str | None) -> str:
    url = (base_url or DEFAULT_HOST).rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


class Events:
    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def __iter__(self) -> Iterator[JSON]:
        for event in self.stream:
            yield event.to_dict()

    def close(self) -> None:
        self.stream.close()


class AnthropicTransport:
    def __init__(self, client: Any) -> None:
        self.client = client

    def open_stream(self, body: JSON) -> Events:
        rest = {k: v for k, v in body.items() if k not in ("model", "messages", "max_tokens", "stream")}
        if jsonsafe.has_surrogate(json.dumps(body, ensure_ascii=False)):
            return Events(self._post_escaped({**body, "stream": True}))
        return Events(self.client.messages.create(model=body["model"], messages=body["messages"],
                                                  max_tokens=body.get("max_tokens", 4096), stream=True,
                                                  extra_body=rest))

    def _post_escaped(self, payload: JSON) -> Any:
        from anthropic import Stream
        from anthropic.types import Message, RawMessageStreamEvent

        data = json.dumps(payload, ensure_ascii=True, separators=(",", ":")).encode("ascii")
        return self.client.post("/v1/messages", cast_to=Message, body=None, content=data, stream=True,
                                stream_cls=Stream[RawMessageStreamEvent],
                                options={"headers": {"Content-Type": "application/json"}})


def open_transport(endpoint: Endpoint) -> AnthropicTransport:
    import anthropic

    host = _host(endpoint.base_url)
    # The key is always passed, so the SDK never reads ANTHROPIC_API_KEY itself (nor ANTHROPIC_BASE_URL).
    key = (host, endpoint.api_key or "replaykit-no-key", endpoint.timeout)
    client = _CLIENTS.get(key)
    if client is None:
        client = _CLIENTS[key] = anthropic.Anthropic(base_url=host, api_key=key[1], max_retries=0,
                                                     timeout=endpoint.timeout)
    return AnthropicTransport(client)
