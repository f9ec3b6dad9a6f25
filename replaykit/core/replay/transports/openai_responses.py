"""``openai-responses``: the Responses API through the ``openai`` SDK, streamed (events as dicts)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from replaykit.core.replay.resilience import StreamFailure
from replaykit.core.replay.transports.openai_chat import Chunks, openai_client
from replaykit.core.replay.wire_apis import JSON, Endpoint
from replaykit.core.trace import jsonsafe


class Events(Chunks):
    """Responses events as dicts; an ``error`` event or ``response.failed`` (which the SDK hands over as
    data) raises ``StreamFailure`` with the provider's code, so the core classifies and retries it."""

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for event in super().__iter__():
            kind = event.get("type")
            if kind == "error":
                raise StreamFailure(str(event.get("code") or "server_error"), str(event.get("message") or ""))
            if kind == "response.failed":
                error = (event.get("response") or {}).get("error") or {}
                raise StreamFailure(str(error.get("code") or "server_error"), str(error.get("message") or ""))
            yield event


class ResponsesTransport:
    def __init__(self, client: Any) -> None:
        self.client = client

    def open_stream(self, body: JSON) -> Events:
        rest = {k: v for k, v in body.items() if k not in ("model", "input", "stream")}
        if jsonsafe.has_surrogate(json.dumps(body, ensure_ascii=False)):
            return Events(self._post_escaped({"model": body["model"], "input": body.get("input", []),
                                              "stream": True, **rest}))
        return Events(self.client.responses.create(model=body["model"], input=body.get("input", []), stream=True,
                                                   extra_body=rest))

    def _post_escaped(self, payload: JSON) -> Any:
        from openai import Stream
        from openai.types.responses import Response, ResponseStreamEvent

        data = json.dumps(payload, ensure_ascii=True, separators=(",", ":")).encode("ascii")
        return self.client.post("/responses", cast_to=Response, content=data, stream=True,
                                stream_cls=Stream[ResponseStreamEvent],
                                options={"headers": {"Content-Type": "application/json"}})


def open_transport(endpoint: Endpoint) -> ResponsesTransport:
    return ResponsesTransport(openai_client(endpoint, "https://api.openai.com/v1"))
