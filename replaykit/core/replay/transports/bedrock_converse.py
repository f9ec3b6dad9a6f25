"""``bedrock-converse``: ConverseStream through ``boto3``, events as dicts (``{"contentBlockDelta": ...}``).

Credentials come from ``Endpoint.credentials`` only (``PlayOptions.aws_env``: the ``AWS_*`` environment
variables). The client is built on a botocore session whose ``profile``, ``config_file`` and
``credentials_file`` settings are pinned (no environment variable, no ``~/.aws/config`` or
``~/.aws/credentials`` is consulted), with the key, secret, session token and region passed
explicitly: boto3's default credential chain never runs. Only ``credentials["profile_name"]`` (an
explicit choice of the user) builds an ordinary session that reads the shared files for that profile.

The codec's body is the wire JSON; boto3 takes keyword arguments with ``bytes`` for blob fields, so
base64 ``bytes`` / ``redactedContent`` strings are decoded on the way out, and blob values in the
events are base64-encoded again on the way back. The model id is ``body["model"]``. botocore retries are
off (one attempt): retries are the core's. A throttling or model error inside the stream is raised by
botocore as ``EventStreamError`` while iterating (classified by its code in ``resilience``).
"""

from __future__ import annotations

import base64
import contextlib
import os
import socket
from collections.abc import Iterator
from typing import Any

from replaykit.core.replay.wire_apis import JSON, Endpoint

_CLIENTS: dict[tuple[Any, ...], Any] = {}
#: blob fields of the Converse API (base64 strings in the wire JSON): (parent key, key)
_BLOBS = frozenset({("source", "bytes"), ("reasoningContent", "redactedContent")})
#: free-form JSON the caller owns (tool arguments, JSON results, model-specific fields): never rewritten
_OPAQUE = frozenset({"input", "json", "additionalModelRequestFields", "promptVariables", "requestMetadata"})


def to_boto(value: Any, parent: str | None = None) -> Any:
    """Wire JSON -> boto3 parameters: blob fields decoded to ``bytes``."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if (parent, key) in _BLOBS and isinstance(item, str):
                out[key] = base64.b64decode(item)
            elif key in _OPAQUE:
                out[key] = item
            else:
                out[key] = to_boto(item, key)
        return out
    if isinstance(value, list):
        return [to_boto(v, parent) for v in value]
    return value


def to_json(value: Any) -> Any:
    """boto3 output -> wire JSON: ``bytes`` base64-encoded (datetimes never occur in Converse events)."""
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_json(v) for v in value]
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii")
    return value


class Events:
    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def __iter__(self) -> Iterator[JSON]:
        for event in self.stream:
            yield to_json(event)

    def close(self) -> None:
        # A stalled stream's reader thread holds the response's buffer lock inside a blocking read, so a
        # plain close would wait for the read to end (up to the read timeout): shutting the socket down
        # first ends that read at once.
        raw = getattr(self.stream, "_raw_stream", None)  # urllib3's response
        sock = getattr(getattr(raw, "connection", None), "sock", None)
        if sock is None:  # a response that closes its connection keeps the socket only in its file
            sock = getattr(getattr(getattr(getattr(raw, "_fp", None), "fp", None), "raw", None), "_sock", None)
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self.stream.close()


class BedrockTransport:
    def __init__(self, client: Any) -> None:
        self.client = client

    def open_stream(self, body: JSON) -> Events:
        model = body.get("model")
        if not isinstance(model, str) or not model:
            from replaykit.core.errors import BadInput

            raise BadInput("--api bedrock-converse needs a model id (--model)")
        params = to_boto({k: v for k, v in body.items() if k != "model"})
        response = self.client.converse_stream(modelId=model, **params)
        return Events(response["stream"])


def _endpoint_url(base_url: str | None) -> str | None:
    """``--base-url`` as boto3's ``endpoint_url``: botocore adds ``/model/...`` itself, so a URL ending in
    ``/v1`` (the OpenAI habit, as for the other transports) is taken without it. None: the regional host."""
    if not base_url:
        return None
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def _isolated_session() -> Any:
    """A botocore session that reads no environment profile and no shared config or credentials file."""
    import botocore.session

    pinned = {"profile": (None, None, None, None), "config_file": (None, None, os.devnull, None),
              "credentials_file": (None, None, os.devnull, None)}
    return botocore.session.Session(session_vars=pinned)


def open_transport(endpoint: Endpoint) -> BedrockTransport:
    import boto3
    from botocore.config import Config

    creds = dict(endpoint.credentials)
    profile = creds.pop("profile_name", None)
    key = (endpoint.base_url, profile, tuple(sorted(creds.items())), endpoint.timeout)
    client = _CLIENTS.get(key)
    if client is None:
        config = Config(retries={"total_max_attempts": 1, "mode": "standard"}, read_timeout=endpoint.timeout,
                        connect_timeout=min(endpoint.timeout, 30.0))
        if profile is not None:
            session = boto3.session.Session(profile_name=profile)  # the user chose a profile: its files are read
        else:
            session = boto3.session.Session(botocore_session=_isolated_session())
        client = _CLIENTS[key] = session.client(
            "bedrock-runtime", endpoint_url=_endpoint_url(endpoint.base_url), config=config,
            region_name=creds.get("region_name"), aws_access_key_id=creds.get("aws_access_key_id"),
            aws_secret_access_key=creds.get("aws_secret_access_key"),
            aws_session_token=creds.get("aws_session_token"))
    return BedrockTransport(client)
