"""The live side of a replay graph's model node: an endpoint on any wire API (``LiveEndpoint``; Chat
Completions unless ``api`` says otherwise) called through the one core live model (``make_live_model``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from replaykit.core.errors import BadInput
from replaykit.core.trace import jsonsafe

JSON = dict[str, Any]


@dataclass(frozen=True)
class LiveEndpoint:
    """Any OpenAI-compatible Chat Completions endpoint. The key comes from the environment variable
    ``api_key_env`` names; it is never written anywhere."""

    base_url: str
    model: str
    api_key_env: str | None = None
    timeout: float = 60.0
    max_retries: int = 2
    params: Mapping[str, Any] = field(default_factory=dict)
    api: str | None = None  # the wire API (replaykit.core.replay.wire_apis); None: Chat Completions

    def api_key(self) -> str:
        if self.api_key_env is None:
            return "replaykit-no-key"  # local endpoints need none; the client insists on a value
        value = os.environ.get(self.api_key_env)
        if not value:
            raise BadInput(f"environment variable {self.api_key_env} (--api-key-env) is not set")
        return value


def make_live_model(endpoint: LiveEndpoint) -> Callable[[list[JSON], list[JSON]], JSON]:
    """The model node's live side: the one core live model (``replaykit.core.replay.live_model``: classified
    errors, Retry-After, backoff, stale-stream guard, length continuation), IR dicts in and out."""
    from replaykit.core.replay.live_model import LiveModel
    from replaykit.core.replay.play import PlayOptions
    from replaykit.core.trace.ir import MESSAGES_ADAPTER, ToolSpec

    options = PlayOptions(base_url=endpoint.base_url, model=endpoint.model, api_key_env=endpoint.api_key_env,
                          api=endpoint.api,
                          request_timeout=endpoint.timeout, max_attempts=endpoint.max_retries + 1)
    options.api_key()  # a named but unset variable fails before the graph runs
    model = LiveModel(options)

    def live(messages: list[JSON], tools: list[JSON]) -> JSON:
        specs = [ToolSpec.model_validate(t) for t in tools] or None
        response = model.complete(MESSAGES_ADAPTER.validate_python(messages), specs, dict(endpoint.params))
        dumped: JSON = jsonsafe.model_data(response, exclude_none=True)
        return dumped

    return live
