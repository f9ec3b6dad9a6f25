"""Shared rules for the step-shaped interchange formats (ATIF, OpenTelemetry GenAI, Hermes trajectories).

Those formats keep a conversation (system, user, assistant, tool results) but not the exact request of
each LLM call. ``Conversation`` is the one rule for what the next request would be when an agent simply
appends to its history: importers use it to rebuild requests, exporters use it to find where a recorded
request differs from that rule, so that only the difference travels (as a ``MessageDelta``-shaped patch),
and a round trip stays exact and linear in size.

``Losses`` collects what a format cannot hold, by name, so an exporter never drops data silently.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from replaykit.core.errors import BadInput, ReplaykitError
from replaykit.core.trace.ir import (
    MESSAGES_ADAPTER,
    MediaPart,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)


@dataclass
class Losses:
    """Named losses: ``name -> [details]`` (e.g. ``failed_attempts -> ["event 3: HTTP 500"]``)."""

    items: dict[str, list[str]] = field(default_factory=dict)

    def add(self, name: str, detail: str) -> None:
        self.items.setdefault(name, []).append(detail)

    def as_list(self) -> list[str]:
        """One line per named loss, for ``--json`` summaries and warnings."""
        return [f"{name}: {len(details)} ({'; '.join(details[:3])}{'; ...' if len(details) > 3 else ''})"
                for name, details in sorted(self.items.items())]

    def to_json(self) -> dict[str, list[str]]:
        return {name: list(details) for name, details in sorted(self.items.items())}


class Conversation:
    """The messages an agent would send next if it only appended to its history."""

    def __init__(self) -> None:
        self.messages: list[Message] = []

    def add(self, message: Message) -> None:
        self.messages.append(message)

    def tool_result(self, call_id: str, name: str | None, content: str, *, is_error: bool = False) -> Message:
        message = Message(role="tool", parts=[ToolResultPart(tool_call_id=call_id, name=name, content=content,
                                                              is_error=is_error)])
        self.messages.append(message)
        return message

    def expected(self) -> list[Message]:
        return list(self.messages)

    def adopt(self, actual: Sequence[Message]) -> None:
        """The recorded request is the truth from here on (the next expectation extends it)."""
        self.messages = list(actual)

    # ------------------------------------------------------------------------------- patches

    def patch_for(self, actual: Sequence[Message]) -> dict[str, Any] | None:
        """None when ``actual`` is what the rule expects, else ``{"keep": k, "append": [...]}``."""
        expected = self.messages
        keep = 0
        limit = min(len(expected), len(actual))
        # Identity first: a run's requests share their prefix objects, so long runs compare pointers.
        while keep < limit and (expected[keep] is actual[keep] or expected[keep] == actual[keep]):
            keep += 1
        if keep == len(expected) == len(actual):
            return None
        return {"keep": keep, "append": MESSAGES_ADAPTER.dump_python(list(actual[keep:]), mode="json",
                                                                     exclude_none=True)}

    def apply_patch(self, patch: Any, where: str) -> list[Message]:
        """The request a patch written by ``patch_for`` describes (validated; bad patches are BadInput)."""
        if not isinstance(patch, dict) or not isinstance(patch.get("keep"), int) or patch["keep"] < 0:
            raise BadInput(f"{where}: malformed request patch (expected keep and append)")
        keep = patch["keep"]
        if keep > len(self.messages):
            raise BadInput(f"{where}: request patch keeps {keep} messages of a conversation of "
                           f"{len(self.messages)}")
        try:
            append = MESSAGES_ADAPTER.validate_python(patch.get("append") or [])
        except ValueError as exc:
            raise BadInput(f"{where}: request patch holds invalid messages ({_first_error(exc)})") from exc
        return self.messages[:keep] + append


def _first_error(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        found = errors()
        if found:
            first = found[0]
            return f"{'.'.join(str(p) for p in first.get('loc', ()))}: {first.get('msg')}"
    return str(exc).splitlines()[0]


# ----------------------------------------------------------------------- ATIF content (both directions)


def content_parts(content: Any) -> list[Any]:
    """IR parts of an ATIF message or observation content (a string, or ContentPart objects whose
    media ``source.path`` is a URL, a file path, or a ``data:`` URL for inline media)."""
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [TextPart(text=content)]
    parts: list[Any] = []
    for item in content:
        if not isinstance(item, dict):
            raise BadInput(f"content part is {type(item).__name__}, expected an object")
        if item.get("type") == "text":
            parts.append(TextPart(text=str(item.get("text") or "")))
            continue
        source: dict[str, Any] = item["source"] if isinstance(item.get("source"), dict) else {}
        path = str(source.get("path") or "")
        media_type = str(source.get("media_type") or "application/octet-stream")
        prefix = f"data:{media_type};base64,"
        if path.startswith(prefix):
            parts.append(MediaPart(media_type=media_type, data=path[len(prefix):]))
        else:
            parts.append(MediaPart(media_type=media_type, url=path))
    return parts


def rebuild_message(role: str, content: Any) -> Message:
    """The IR message a reader rebuilds from a step's message alone."""
    return Message(role=role, parts=content_parts(content))  # type: ignore[arg-type]


def rebuild_assistant(content: Any, reasoning: str | None, calls: Sequence[dict[str, Any]]) -> Message:
    """The IR assistant message a reader rebuilds from an agent step (reasoning, content, tool calls)."""
    parts: list[Any] = []
    if reasoning:
        parts.append(ReasoningPart(text=reasoning))
    parts.extend(content_parts(content))
    parts.extend(ToolCallPart(id=str(c["tool_call_id"]), name=str(c["function_name"]), arguments=c.get("arguments"))
                 for c in calls)
    return Message(role="assistant", parts=parts)


def validate_atif(document: Any, where: str) -> Any:
    """Validate an ATIF document with the ``atif`` package's Pydantic models of the spec (the ``atif``
    extra); the first problem becomes a one-line BadInput."""
    from replaykit.core.errors import MissingExtra

    try:
        import atif
    except ModuleNotFoundError as exc:
        raise MissingExtra("atif", "atif") from exc
    try:
        return atif.Trajectory.model_validate(document)
    except ValueError as exc:
        raise BadInput(f"{where}: not a valid ATIF trajectory ({_first_error(exc)})") from exc


if TYPE_CHECKING:
    from replaykit.core.trace.run import Run

#: how an exporter gets a subagent's run by id (``RunStore.load``, say); may raise or return None
ChildLoader = Callable[[str], "Run | None"]


def find_child(children: ChildLoader | None, run_id: str) -> Run | None:
    """The subagent's run, or None when it cannot be had (``children`` may raise, e.g. ``RunStore.load``)."""
    if children is None:
        return None
    try:
        return children(run_id)
    except ReplaykitError:
        return None
