"""The provider wire APIs a live play can speak, and the one interface a transport implements.

``LiveModel`` (``core/replay/live_model.py``) is the only caller. For each live request it

1. encodes the IR history with the codec of the target API (``codecs.encode_request`` when the
   recording spoke that API: byte-faithful; ``codecs.translate_request`` otherwise: the history is
   first made legal for the target by ``codecs/conform.py`` and every loss is listed),
2. hands the encoded body to the API's transport (``Transport.open_stream(body)``),
3. reads the stream under the core resilience (``stale_guard``; each attempt inside ``retry_call``
   with the shared ``EndpointLimiter``; a length-cut answer continued) and assembles the chunks with
   ``codecs.assemble_stream(api, chunks)``.

Adding a wire API (what 36b does for ``google-gemini`` and ``bedrock-converse``)
-----------------------------------------------------------------------------------
1. A codec ``replaykit/core/trace/codecs/<name>.py`` registered in ``codecs.APIS`` under the API name,
   with ``encode_request``, ``decode_request``, ``decode_response``, ``encode_response`` and
   ``decode_stream(chunks)`` (the chunks the transport yields, in order). Its ``encode_request`` takes
   the params in the API's own shape; cross-API params are mapped by ``conform.translate_params`` from
   the per-API table ``conform.PARAMS`` (add the API's row there) and its history rules are a
   ``conform.WireRules`` row in ``conform.RULES`` (system placement, tool results in the next user
   turn, same-role merging, first message user, tool-call id pattern and length, media by URL or
   bytes). The codec itself never re-maps ids: ``conform`` did, once, for every API.
2. A transport module ``replaykit/core/replay/transports/<module>.py`` with a factory
   ``open_transport(endpoint: Endpoint) -> Transport``. It imports the provider SDK *inside* the
   factory (an ``ImportError`` there becomes ``MissingExtra(<extra>)`` naming the extra, one line),
   builds the SDK client from ``endpoint`` only (``endpoint.base_url``: None means the SDK's default
   host; ``endpoint.api_key`` / ``endpoint.credentials``: already read by the core from the variables
   the user named, never from a file; SDK retries OFF: retries are the core's).
3. ``Transport.open_stream(body)`` sends ONE streamed request with exactly ``body`` (the codec's
   output, ``model`` included) and returns a ``WireStream``: iterating it yields plain JSON dicts,
   the API's stream events in order, which the codec's ``decode_stream`` assembles; ``close()`` drops
   the connection (called on success, on error and when the stale guard gives up).
4. Errors: let the SDK's exceptions propagate unchanged. The core ``resilience.classify`` names them
   by duck typing: an HTTP status (``status_code`` / ``status`` / ``code`` on the exception or its
   ``response``), ``Retry-After`` headers, and the provider error codes of ``resilience.PROVIDER_CODES``
   (``overloaded_error``, ``RESOURCE_EXHAUSTED``, ``ThrottlingException``, ...) found on the exception
   (``code``, ``status``, ``body["error"]["type"]``, botocore's ``response["Error"]["Code"]``) or in
   its text. An error that arrives INSIDE a stream (an Anthropic ``error`` event, a Bedrock
   ``throttlingException`` frame) is raised by the transport while iterating, as
   ``resilience.StreamFailure(code, message, status_code)`` when the SDK does not raise one itself.
   A provider whose errors these rules miss adds its codes to ``PROVIDER_CODES`` (one place), not a
   classifier of its own.
5. A row in ``WIRE_APIS`` below: name, label, provider prefixes for ``provider:model`` strings, the
   extra, the transport module, the genai-prices provider id (cost), whether the SDK has a default
   host (``--base-url`` optional), and how credentials are read (``"key"``: ``--api-key-env``;
   ``"aws-env"``: the ``AWS_*`` environment variables, see ``PlayOptions.aws_env``).

Selection (``resolve_wire``): ``--api NAME``, or a ``provider:model`` string (``anthropic:claude-...``,
``google:gemini-...``, ``bedrock:...``, ``openai:...``, or an API name as the prefix:
``openai-responses:gpt-5``). With neither, the API is ``openai-chat`` and ``--base-url`` is required
(what replaykit always did). ``--base-url`` is optional only when an API was chosen and its SDK has
a default host.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from replaykit.core.errors import BadInput, MissingExtra

JSON = dict[str, Any]


@dataclass(frozen=True)
class Endpoint:
    """Where and as whom a transport talks. Built by the core; holds the key in memory only."""

    api: str
    base_url: str | None  # None: the SDK's default host for a native provider
    api_key: str | None = field(default=None, repr=False)  # from the variable the user named; never logged
    credentials: Mapping[str, str] = field(default_factory=dict, repr=False)  # "aws-env": AWS_* values
    timeout: float = 120.0


@runtime_checkable
class WireStream(Protocol):
    """One streamed answer: the API's events as plain dicts, in order (what ``decode_stream`` takes)."""

    def __iter__(self) -> Iterator[JSON]: ...

    def close(self) -> None: ...


@runtime_checkable
class Transport(Protocol):
    """One API's client. ``open_stream`` sends one request (``body`` exactly as the codec made it)."""

    def open_stream(self, body: JSON) -> WireStream: ...


@dataclass(frozen=True)
class WireApi:
    name: str  # the --api value, ``LLMRequest.api`` and the codec's key in ``codecs.APIS``
    label: str  # for messages
    providers: tuple[str, ...]  # ``provider:`` prefixes that select it
    extra: str  # pip extra installing the SDK
    sdk: str  # the SDK's import name (named in the MissingExtra line)
    transport: str  # module with ``open_transport(endpoint) -> Transport``
    price_provider: str | None  # genai-prices provider id the live steps are priced as
    default_base_url: str | None  # the SDK's default host (None: --base-url is required)
    credentials: Literal["key", "aws-env"] = "key"


_T = "replaykit.core.replay.transports."

WIRE_APIS: dict[str, WireApi] = {
    "openai-chat": WireApi("openai-chat", "OpenAI Chat Completions", ("openai",), "openai", "openai",
                           _T + "openai_chat", "openai", "https://api.openai.com/v1"),
    "openai-responses": WireApi("openai-responses", "OpenAI Responses", (), "openai", "openai",
                                _T + "openai_responses", "openai", "https://api.openai.com/v1"),
    "anthropic-messages": WireApi("anthropic-messages", "Anthropic Messages", ("anthropic",), "anthropic",
                                  "anthropic", _T + "anthropic_messages", "anthropic", "https://api.anthropic.com"),
    "google-gemini": WireApi("google-gemini", "Google Gemini", ("google", "gemini", "google-gla"), "google",
                             "google-genai", _T + "google_gemini", "google",
                             "https://generativelanguage.googleapis.com"),
    "bedrock-converse": WireApi("bedrock-converse", "AWS Bedrock Converse", ("bedrock", "aws"), "bedrock",
                                "boto3", _T + "bedrock_converse", "aws", None, credentials="aws-env"),
}

#: the API a play speaks when nothing chose one (what replaykit always did)
DEFAULT_API = "openai-chat"

_PREFIX = re.compile(r"([a-z][a-z-]*):(.+)", re.DOTALL)


def wire_api(name: str) -> WireApi:
    """The API called ``name`` (``anthropic`` is accepted for ``anthropic-messages``), or a one-line error."""
    api = WIRE_APIS.get("anthropic-messages" if name == "anthropic" else name)
    if api is None:
        raise BadInput(f"unknown --api {name!r} (known: {', '.join(WIRE_APIS)})")
    return api


def _prefixes() -> dict[str, str]:
    out = {api.name: api.name for api in WIRE_APIS.values()}
    for api in WIRE_APIS.values():
        out.update({prefix: api.name for prefix in api.providers})
    return out


def split_model(model: str) -> tuple[str | None, str]:
    """(API named by the ``provider:`` prefix or None, model name). A prefix that is not a known
    provider leaves the string whole (``llama3:8b``, ``gpt-oss:20b`` and Bedrock's ``...-v1:0`` are
    model names)."""
    match = _PREFIX.fullmatch(model)
    if match is None:
        return None, model
    api = _prefixes().get(match.group(1))
    return (api, match.group(2)) if api is not None else (None, model)


@dataclass(frozen=True)
class Wire:
    """What a play's live side talks to: the API, the model name sent, the endpoint (None: SDK default)."""

    api: WireApi
    model: str
    base_url: str | None
    chosen: bool  # an API was chosen (--api or a provider prefix), not the default


def resolve_wire(api: str | None, model: str, base_url: str | None) -> Wire:
    """The wire of ``--api`` / ``--model`` / ``--base-url`` (one-line errors for what cannot work)."""
    prefixed, name = split_model(model or "")
    if api is not None:
        chosen = wire_api(api)
        if prefixed is not None and prefixed != chosen.name:
            raise BadInput(f"--model {model!r} names the {prefixed} API but --api is {chosen.name}")
    elif prefixed is not None:
        chosen = WIRE_APIS[prefixed]
    else:
        match = _PREFIX.fullmatch(model or "")
        if match is not None and not base_url:
            raise BadInput(f"unknown provider prefix {match.group(1)!r} in --model {model!r} (known: "
                           f"{', '.join(sorted(_prefixes()))}); or give --base-url for a model name with a colon")
        if not base_url:
            raise BadInput("--base-url is required unless --api or a provider:model string selects a native "
                           f"provider (known APIs: {', '.join(WIRE_APIS)})")
        return Wire(WIRE_APIS[DEFAULT_API], name, base_url, chosen=False)
    if not base_url and chosen.default_base_url is None and chosen.credentials != "aws-env":
        raise BadInput(f"--api {chosen.name} has no default endpoint: give --base-url")
    return Wire(chosen, name, base_url or None, chosen=True)


def open_transport(api: WireApi, endpoint: Endpoint) -> Transport:
    """The transport of ``api`` (its SDK imported now; missing: one line naming the extra)."""
    try:
        module = importlib.import_module(api.transport)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith(_T.rstrip(".")):
            raise BadInput(f"--api {api.name}: no transport is installed for it in this replaykit") from exc
        raise MissingExtra(api.extra, api.sdk) from exc
    try:
        transport: Transport = module.open_transport(endpoint)
    except ImportError as exc:
        raise MissingExtra(api.extra, api.sdk) from exc
    return transport
