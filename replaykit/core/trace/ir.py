"""The trace IR: one neutral, typed model of an agent run.

A run is one JSONL file: a ``RunHeader`` line, then one ``Event`` per line. Every event carries a
``kind`` discriminator, a sequence number, a stable id, its time offset from the run's start, a
duration, the correlation ids of its source, and a provenance (recorded, served, live, edited,
synthetic, desync, reconstructed).

Messages are normalized to role + parts (text, reasoning, tool call, tool result, media, opaque).
Codecs in ``replaykit.core.trace.codecs`` convert them to and from OpenAI Chat Completions, OpenAI Responses
and Anthropic Messages; what a part cannot express in a target format is reported, never dropped
silently. Anything the IR does not model goes into ``provider_details`` (on parts, messages, requests,
responses and events) or into an ``opaque`` event.

LLM requests are stored as deltas against an earlier request of the same run (``MessageDelta``), and
tool declarations once per distinct set (``ToolsEvent``), so a 500-call run grows linearly while every
request stays reconstructable exactly (``replaykit.core.trace.run.Run.request_messages``). A tool result is
stored once: a request message that is exactly the tool message of an earlier ``tool_call`` event is
written as a reference to that event (``MessageRef``).

Version history (each version has a stored fixture under ``tests/fixtures/schema/`` that must keep
loading through ``replaykit.core.trace.migrate``):

- 1: first published schema.
- 2: ``MessageDelta.append`` items may be a ``MessageRef`` (``{"ref": <tool_call event id>}``, with
  ``"strip": true`` for the whitespace-stripped result): the tool message of an earlier tool call event
  of the run, so each tool result is stored once. A ``Correlation`` may be marked ``same``: the session,
  task, turn and api request ids it leaves out are the previous event's; an ``LLMRequest`` marked
  ``same`` takes the model, tools, params and provider details it leaves out from the previous request.
  Every v1 line is a valid v2 line: v1 traces load unchanged.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from replaykit.core.trace.store_index import (  # noqa: F401
    READABLE_SCHEMA_VERSIONS,
    SAME_CORR_KEYS,
    SAME_REQUEST_KEYS,
    SCHEMA_NAME,
    SCHEMA_VERSION,
)

JSONDict = dict[str, Any]


class _Model(BaseModel):
    # forbid: a typo or a hostile field in a trace is an error, not silently ignored data.
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Provenance(StrEnum):
    """Where an event's content came from."""

    RECORDED = "recorded"  # captured from a real run as it happened
    SERVED = "served"  # replayed from the record (no provider call, no tool run)
    LIVE = "live"  # produced by a real provider call or tool execution during replay/play
    EDITED = "edited"  # changed by the user (the one edit of a branch)
    SYNTHETIC = "synthetic"  # made up by replaykit (e.g. end-of-turn after the record ended)
    DESYNC = "desync"  # live because the request no longer matched the record
    RECONSTRUCTED = "reconstructed"  # inferred by an importer from incomplete data


# --------------------------------------------------------------------------------------------- parts


class TextPart(_Model):
    type: Literal["text"] = "text"
    text: str
    provider_details: JSONDict | None = None


class ReasoningPart(_Model):
    """Model reasoning. ``signature`` (Anthropic) and ``encrypted`` (Responses) only survive in their
    own provider's format; codecs report them as lost elsewhere."""

    type: Literal["reasoning"] = "reasoning"
    text: str = ""
    id: str | None = None
    signature: str | None = None
    encrypted: str | None = None
    redacted: bool = False  # Anthropic redacted_thinking: content withheld by the provider
    provider: str | None = None
    provider_details: JSONDict | None = None


class ToolCallPart(_Model):
    type: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    # Parsed arguments (usually a dict). ``raw_arguments`` keeps the provider's exact string, which may
    # differ in whitespace or even be invalid JSON; it wins when re-encoding.
    arguments: Any = None
    raw_arguments: str | None = None
    provider_details: JSONDict | None = None

    def arguments_json(self) -> str:
        """The arguments as the provider sent them (raw string if known, else compact JSON)."""
        if self.raw_arguments is not None:
            return self.raw_arguments
        from replaykit.core.trace.canonical import dumps_compact

        return dumps_compact({} if self.arguments is None else self.arguments)


class MediaPart(_Model):
    """An image, audio or file: by URL, or inline base64 ``data``."""

    type: Literal["media"] = "media"
    media_type: str = "application/octet-stream"
    url: str | None = None
    data: str | None = None
    provider_details: JSONDict | None = None


class OpaquePart(_Model):
    """A content block the IR does not model; kept verbatim for its own format."""

    type: Literal["opaque"] = "opaque"
    format: str  # e.g. "openai-chat", "anthropic"
    data: Any
    provider_details: JSONDict | None = None


ResultBlock = Annotated[TextPart | MediaPart | OpaquePart, Field(discriminator="type")]


class ToolResultPart(_Model):
    type: Literal["tool_result"] = "tool_result"
    tool_call_id: str
    name: str | None = None
    content: str = ""
    # Non-string results (Anthropic content lists, multimodal tool output) keep their blocks here;
    # ``content`` then holds their text for formats that only take a string.
    blocks: list[ResultBlock] | None = None
    is_error: bool = False
    provider_details: JSONDict | None = None


Part = Annotated[
    TextPart | ReasoningPart | ToolCallPart | ToolResultPart | MediaPart | OpaquePart,
    Field(discriminator="type"),
]

Role = Literal["system", "developer", "user", "assistant", "tool"]


class Message(_Model):
    role: Role
    parts: list[Part] = Field(default_factory=list)
    name: str | None = None
    provider_details: JSONDict | None = None

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    @property
    def tool_calls(self) -> list[ToolCallPart]:
        return [p for p in self.parts if isinstance(p, ToolCallPart)]

    @property
    def tool_results(self) -> list[ToolResultPart]:
        return [p for p in self.parts if isinstance(p, ToolResultPart)]


class ToolSpec(_Model):
    """A tool as declared to the model (function name, description, JSON schema)."""

    name: str
    description: str | None = None
    parameters: JSONDict | None = None
    provider_details: JSONDict | None = None


class Usage(_Model):
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None
    total_tokens: int | None = None
    details: JSONDict | None = None


# ------------------------------------------------------------------------------------------ requests

ApiFormat = Literal["openai-chat", "openai-responses", "anthropic-messages", "google-gemini", "bedrock-converse",
                    "unknown"]


class MessageRef(_Model):
    """In ``MessageDelta.append`` (schema 2): the tool-role message of the earlier ``tool_call`` event
    whose id is ``ref``, exactly ``replaykit.core.trace.deltas.tool_message`` of that event (its call id, tool
    name, result text, ``is_error`` from its status); with ``strip``, the result text with surrounding
    whitespace removed (``str.strip``: Hermes strips every message it sends). Recorders write one only
    where the message they would write is equal to it, so every request still rebuilds byte-equal;
    readers expand it with ``replaykit.core.trace.deltas.expand_refs``. A reference to an unknown, later or
    non-tool-call event is an error when the run is loaded."""

    ref: str
    strip: Literal[True] | None = None


class MessageDelta(_Model):
    """A request's messages as a delta: the first ``keep`` messages of the request of event ``base``
    (an earlier ``llm_call`` or ``error`` event of the same run), followed by ``append`` (messages, or
    references to the tool message of an earlier tool call: ``MessageRef``)."""

    base: str | None = None
    keep: int = Field(default=0, ge=0)
    # left_to_right: a message validates as a Message at once; only a reference tries MessageRef.
    append: list[Annotated[Message | MessageRef, Field(union_mode="left_to_right")]] = Field(default_factory=list)


class LLMRequest(_Model):
    api: ApiFormat = "openai-chat"
    model: str | None = None
    context: MessageDelta = Field(default_factory=MessageDelta)
    # Hash of a ``ToolsEvent`` earlier in the run; ``None`` means no tools were offered.
    tools_ref: str | None = None
    # Every other body field (max_tokens, temperature, stream, tool_choice, ...), verbatim.
    params: JSONDict = Field(default_factory=dict)
    # Fingerprint of the request ignoring volatile fields (replaykit.core.trace.canonical.fingerprint).
    fingerprint: str | None = None
    provider_details: JSONDict | None = None
    # Schema 2, written by hot-path recorders only: ``model``, ``tools_ref``, ``params`` and
    # ``provider_details`` empty here (absent, null, ``{}``: ``SAME_REQUEST_KEYS``) are those of the
    # previous request in the file (the previous ``llm_call`` or ``error`` event with a request). The reader fills them in and clears ``same`` as it
    # reads (``replaykit.core.trace.reader.iter_trace``): a loaded request is always whole.
    same: Literal[True] | None = None


class LLMResponse(_Model):
    message: Message
    finish_reason: str | None = None
    usage: Usage | None = None
    model: str | None = None
    response_id: str | None = None
    # Fields of the raw response that the IR does not model (created, system_fingerprint, ...).
    provider_details: JSONDict | None = None


# ----------------------------------------------------------------------------------- run and events


class Correlation(_Model):
    """Ids of the event in its source framework (Hermes session, turn, api request, tool call).

    ``same`` (schema 2, written by hot-path recorders only): each of ``SAME_CORR_KEYS`` empty here is
    the value of the previous event's (in file order, among events that have a ``corr``). The reader
    fills them in and clears ``same`` as it reads (``replaykit.core.trace.reader.iter_trace``), so a loaded
    event always exposes its whole correlation."""

    session_id: str | None = None
    task_id: str | None = None
    turn_id: str | None = None
    api_request_id: str | None = None
    tool_call_id: str | None = None
    extra: JSONDict | None = None
    same: Literal[True] | None = None


class Edit(_Model):
    """The one change a branch makes, at step ``step`` of its parent."""

    target: Literal["args", "result", "response"]
    step: int = Field(ge=0)
    value: Any
    tool_call_id: str | None = None


class Lineage(_Model):
    relation: Literal["branch", "subagent", "redaction", "replay", "play", "import", "copy"]
    parent_run_id: str
    parent_step: int | None = None
    parent_event_id: str | None = None
    edit: Edit | None = None
    engine: str | None = None
    details: JSONDict | None = None


class Source(_Model):
    framework: str = "unknown"  # "hermes", "openai-chat", "pydantic-ai", ...
    framework_version: str | None = None
    adapter: str | None = None
    replaykit_version: str | None = None


class RunHeader(_Model):
    kind: Literal["run"] = "run"
    schema_name: str = SCHEMA_NAME
    schema_version: int = SCHEMA_VERSION
    run_id: str
    created_at: str  # ISO 8601, UTC
    source: Source = Field(default_factory=Source)
    model: str | None = None
    provider: str | None = None
    base_url: str | None = None  # never carries credentials
    api_mode: str | None = None
    platform: str | None = None
    session_id: str | None = None
    title: str | None = None
    lineage: Lineage | None = None
    tags: list[str] = Field(default_factory=list)
    metadata: JSONDict = Field(default_factory=dict)


class _Event(_Model):
    seq: int = Field(ge=0)
    id: str
    t: float = 0.0  # seconds since the run started
    duration: float | None = None
    provenance: Provenance = Provenance.RECORDED
    corr: Correlation | None = None
    provider_details: JSONDict | None = None


class ToolsEvent(_Event):
    """A distinct set of tool declarations, referenced by ``LLMRequest.tools_ref``."""

    kind: Literal["tools"] = "tools"
    hash: str
    tools: list[ToolSpec]


class TurnStartEvent(_Event):
    """A new user turn (the user's message as the agent received it)."""

    kind: Literal["turn_start"] = "turn_start"
    message: Message
    turn: int = 0


class LLMCallEvent(_Event):
    """One completed LLM call: the exact request and the whole response."""

    kind: Literal["llm_call"] = "llm_call"
    request: LLMRequest
    response: LLMResponse
    attempt: int = 1


class UnderlyingCall(_Model):
    """The tool a bridge call stands for (Hermes's Tool Search ``tool_call``), as the agent ran it: see
    ``replaykit.core.trace.bridge``."""

    name: str
    arguments: Any = None


class ToolCallEvent(_Event):
    """One tool execution (or a served / blocked / dry-run stand-in for it). ``name`` / ``arguments`` are
    the call as the model made it; for a bridged call ``underlying`` is the tool that actually ran."""

    kind: Literal["tool_call"] = "tool_call"
    call_id: str
    name: str
    arguments: Any = None
    raw_arguments: str | None = None
    result: str | None = None
    result_blocks: list[ResultBlock] | None = None
    status: Literal["ok", "error", "blocked", "dry_run", "unavailable"] = "ok"
    error: str | None = None
    llm_call_id: str | None = None  # the llm_call event whose response asked for this call
    underlying: UnderlyingCall | None = None  # a bridged call's real tool (core.trace.bridge)


class ErrorEvent(_Event):
    """A failed attempt (provider error, retry, tool crash, adapter problem). Not a step."""

    kind: Literal["error"] = "error"
    where: Literal["llm", "tool", "run", "adapter", "replay"] = "llm"
    error_type: str | None = None
    message: str = ""
    status_code: int | None = None
    retryable: bool | None = None
    attempt: int | None = None
    request: LLMRequest | None = None


class SubagentEvent(_Event):
    kind: Literal["subagent"] = "subagent"
    phase: Literal["start", "stop"]
    child_run_id: str | None = None
    child_session_id: str | None = None
    role: str | None = None
    goal: str | None = None
    status: str | None = None
    summary: str | None = None
    launched_by: str | None = None  # id of the tool_call event (or call id) that launched it


class DesyncEvent(_Event):
    """The live side asked for something the record does not hold at this position."""

    kind: Literal["desync"] = "desync"
    step: int
    expected: str | None = None
    actual: str | None = None
    reason: str = ""


class SyntheticEvent(_Event):
    """replaykit answered on its own (e.g. end of turn after the record ended)."""

    kind: Literal["synthetic"] = "synthetic"
    step: int
    reason: str = ""


class TurnEndEvent(_Event):
    kind: Literal["turn_end"] = "turn_end"
    final_answer: str | None = None
    status: Literal["completed", "interrupted", "failed"] = "completed"
    reason: str | None = None


class MetaEvent(_Event):
    """Run metadata learned after the header was written (model, skills, system prompt, ...)."""

    kind: Literal["meta"] = "meta"
    data: JSONDict


class OpaqueEvent(_Event):
    """Data from a source that the IR does not model yet: kept, never dropped."""

    kind: Literal["opaque"] = "opaque"
    source: str
    name: str
    data: Any = None


class RunEndEvent(_Event):
    kind: Literal["run_end"] = "run_end"
    status: Literal["completed", "interrupted", "failed"] = "completed"
    final_answer: str | None = None
    reason: str | None = None


Event = Annotated[
    ToolsEvent
    | TurnStartEvent
    | LLMCallEvent
    | ToolCallEvent
    | ErrorEvent
    | SubagentEvent
    | DesyncEvent
    | SyntheticEvent
    | TurnEndEvent
    | MetaEvent
    | OpaqueEvent
    | RunEndEvent,
    Field(discriminator="kind"),
]

#: Event kinds that are steps (numbered 0.. in recorded order; ``--at N`` refers to these).
STEP_KINDS = frozenset({"llm_call", "tool_call"})

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)
HEADER_ADAPTER: TypeAdapter[RunHeader] = TypeAdapter(RunHeader)
MESSAGES_ADAPTER: TypeAdapter[list[Message]] = TypeAdapter(list[Message])


def json_schema() -> JSONDict:
    """The published JSON Schema of a trace line (a header or an event)."""
    line: TypeAdapter[Any] = TypeAdapter(RunHeader | Event)
    schema = line.json_schema()
    schema["$id"] = f"https://replaykit.dev/schema/{SCHEMA_NAME}/{SCHEMA_VERSION}.json"
    schema["title"] = f"{SCHEMA_NAME} v{SCHEMA_VERSION} (one JSONL line: a run header or an event)"
    return schema
