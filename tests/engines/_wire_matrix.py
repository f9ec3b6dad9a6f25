"""The wire APIs the live proof runs on (each with a scripted route on 127.0.0.1), and their helpers."""

from __future__ import annotations

from typing import Any

from replaykit.testing.scripted_server import ScriptedServer

#: wire APIs with a scripted route
LIVE_APIS = ["openai-chat", "openai-responses", "anthropic-messages", "google-gemini", "bedrock-converse"]

#: the scripted server's route name of each wire API
ROUTE = {"openai-chat": "chat", "openai-responses": "responses", "anthropic-messages": "anthropic",
         "google-gemini": "gemini", "bedrock-converse": "bedrock"}

#: what Bedrock reads from the environment (the only place it reads credentials from): test values
AWS_TEST_ENV = {"AWS_ACCESS_KEY_ID": "AKIDREPLAYKITTEST", "AWS_SECRET_ACCESS_KEY": "aws-test-secret",
                "AWS_REGION": "us-east-1"}


def base_url(srv: ScriptedServer, api: str) -> str:
    """What a user passes as --base-url for ``api`` (Anthropic's SDK adds /v1 itself; both forms work;
    google-genai and boto3 take the bare origin and add their own paths)."""
    return srv.root_url if api in ("google-gemini", "bedrock-converse") else srv.base_url


def fast(**extra: Any) -> dict[str, Any]:
    return {"retry_base_delay": 0.01, "retry_max_delay": 0.05, **extra}
