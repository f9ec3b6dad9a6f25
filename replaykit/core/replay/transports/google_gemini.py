"""``google-gemini``: ``streamGenerateContent`` (SSE) through the ``google-genai`` SDK, chunks as dicts.

The SDK's client does the work (API key header, host, API version, HTTP stack, its ``APIError`` for
a non-200 answer or an ``{"error": ...}`` chunk), but the body goes out as the codec made it and the
chunks come back as the JSON the server sent, through the client's request layer rather than the
typed ``models.generate_content_stream``: the typed path re-validates ``contents`` into its own
models (unknown fields are refused), and re-encodes every ``thoughtSignature`` as URL-safe base64 on
the way back, while Gemini 3 wants its signatures returned byte for byte. The model goes in the URL
(``models/{model}:streamGenerateContent?alt=sse``), not the body.

The key is always passed (never ``GOOGLE_API_KEY`` / ``GEMINI_API_KEY`` read by the SDK), Vertex AI is
off (never ``GOOGLE_GENAI_USE_VERTEXAI``, no Application Default Credentials), the host and API version
are explicit (never ``GOOGLE_GEMINI_BASE_URL`` / ``GOOGLE_GENAI_API_VERSION``), and the SDK's retries
are off: retries are the core's.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from replaykit.core.replay.wire_apis import JSON, Endpoint

DEFAULT_HOST = "https://generativelanguage.googleapis.com"
API_VERSION = "v1beta"
_CLIENTS: dict[tuple[str, str, float], Any] = {}


def _host(base_url: str | None) -> str:
    url = (base_url or DEFAULT_HOST).rstrip("/")
    for suffix in ("/v1beta", "/v1alpha", "/v1"):
        if url.endswith(suffix):
            return url[: -len(suffix)]
    return url


def model_path(model: str) -> str:
    """The request path of ``model`` (``gemini-3-pro`` -> ``models/gemini-3-pro``; a ``models/`` or
    ``tunedModels/`` name is kept)."""
    name = model if model.startswith(("models/", "tunedModels/")) else f"models/{model}"
    return f"{name}:streamGenerateContent?alt=sse"


class Chunks:
    """One streamed answer: each SSE ``data`` payload as a dict. The request is sent when iteration
    starts (on the thread that reads it: the stale guard's), and ``close`` closes its HTTP response."""

    def __init__(self, api_client: Any, path: str, body: JSON) -> None:
        self.api_client = api_client
        self.path = path
        self.body = body
        self.response: Any = None

    def __iter__(self) -> Iterator[JSON]:
        from google.genai import errors

        request = self.api_client._build_request("post", self.path, dict(self.body), None)
        self.response = self.api_client._request(request, None, stream=True)
        for chunk in self.response.segments():
            if isinstance(chunk, dict) and isinstance(chunk.get("error"), dict):
                # An error sent inside the stream: raised as the SDK raises it for a whole response.
                errors.APIError.raise_error(chunk["error"].get("code") or 500, chunk,
                                            self.response.response_stream)
            yield chunk

    def close(self) -> None:
        raw = getattr(self.response, "response_stream", None)
        close = getattr(raw, "close", None)
        if close is not None:
            close()


class GeminiTransport:
    def __init__(self, client: Any) -> None:
        self.client = client

    def open_stream(self, body: JSON) -> Chunks:
        rest = {k: v for k, v in body.items() if k != "model"}
        model = body.get("model")
        if not isinstance(model, str) or not model:
            from replaykit.core.errors import BadInput

            raise BadInput("--api google-gemini needs a model name (--model)")
        return Chunks(self.client._api_client, model_path(model), rest)


def open_transport(endpoint: Endpoint) -> GeminiTransport:
    from google import genai
    from google.genai import types

    host = _host(endpoint.base_url)
    key = (host, endpoint.api_key or "replaykit-no-key", endpoint.timeout)
    client = _CLIENTS.get(key)
    if client is None:
        options = types.HttpOptions(base_url=host, api_version=API_VERSION, timeout=int(endpoint.timeout * 1000),
                                    retry_options=types.HttpRetryOptions(attempts=1))
        client = _CLIENTS[key] = genai.Client(vertexai=False, api_key=key[1], http_options=options)
    return GeminiTransport(client)
