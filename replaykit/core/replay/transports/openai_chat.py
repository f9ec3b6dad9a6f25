"""``openai-chat``: Chat Completions through the ``openai`` SDK, streamed (chunks as dicts)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from replaykit.core.replay.wire_apis import JSON, Endpoint
from replaykit.core.trace import jsonsafe

_CLIENTS: dict[tuple[str, str, float], Any] = {}


def openai_client(endpoint: Endpoint, default: str) -> Any:
    """One client per endpoint, key and timeout in this process (kept in memory only): building one
    loads the system's CA certificates (about 0.1 s), which a worker playing many runs pays once.
    ``max_retries=0``: retries belong to the core policy. The key is always passed, so the SDK never
    reads ``OPENAI_API_KEY`` itself; the host likewise (never ``OPENAI_BASE_URL``)."""
    import openai

    base_url = endpoint.base_url or default
    key = (base_url, endpoint.api_key or "replaykit-no-key", endpoint.timeout)
    client = _CLIENTS.get(key)
    if client is None:
        client = _CLIENTS[key] = openai.OpenAI(base_url=base_url, api_key=key[1], max_retries=0,
                                               timeout=endpoint.timeout)
    return client


class Chunks:
    """An SDK stream read as plain dicts."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def __iter__(self) -> Iterator[JSON]:
        for item in self.stream:
            yield item.to_dict()

    def close(self) -> None:
        self.stream.close()


class ChatTransport:
    def __init__(self, client: Any) -> None:
        self.client = client

    def open_stream(self, body: JSON) -> Chunks:
        # Every field but the two the SDK requires travels in extra_body: recorded parameters from any
        # framework reach the endpoint verbatim, and none can trip the SDK's keyword signature.
        rest = {k: v for k, v in body.items() if k not in ("model", "messages", "stream")}
        rest.setdefault("stream_options", {"include_usage": True})
        if jsonsafe.has_surrogate(json.dumps(body, ensure_ascii=False)):
            return Chunks(self._post_escaped({"model": body["model"], "messages": body["messages"], "stream": True,
                                              **rest}))
        return Chunks(self.client.chat.completions.create(model=body["model"], messages=body["messages"],
                                                          stream=True, extra_body=rest))

    def _post_escaped(self, payload: JSON) -> Any:
        """The same request with the JSON body written by us, ASCII-escaped: the SDK encodes its JSON
        as UTF-8, which cannot hold a lone surrogate (legal JSON; see core/trace/jsonsafe.py)."""
        from openai import Stream
        from openai.types.chat import ChatCompletion, ChatCompletionChunk

        data = json.dumps(payload, ensure_ascii=True, separators=(",", ":")).encode("ascii")
        return self.client.post("/chat/completions", cast_to=ChatCompletion, content=data, stream=True,
                                stream_cls=Stream[ChatCompletionChunk],
                                options={"headers": {"Content-Type": "application/json"}})


def open_transport(endpoint: Endpoint) -> ChatTransport:
    return ChatTransport(openai_client(endpoint, "https://api.openai.com/v1"))
