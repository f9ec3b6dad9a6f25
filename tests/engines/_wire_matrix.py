"""The wire APIs the live proof runs on (each with a scripted route on 127.0.0.1), and their helpers."""

from __future__ import annotations

from typing import Any

from replaykit.testing.scripted_server import ScriptedServer

#: wire APIs with a scripted route; 36b's Gemini and Bedrock join once their routes answer
LIVE_APIS = ["openai-chat", "openai-responses", "anthropic-messages"]

#: the scripted server's route name of each wire API
ROUTE = {"openai-chat": "chat", "openai-responses": "responses", "anthropic-messages": "anthropic"}


def base_url(srv: ScriptedServer, api: str) -> str:
    """What a user passes as --base-url for ``api`` (Anthropic's SDK adds /v1 itself; both forms work)."""
    return srv.base_url


def fast(**extra: Any) -> dict[str, Any]:
    return {"retry_base_delay": 0.01, "retry_max_delay": 0.05, **extra}
