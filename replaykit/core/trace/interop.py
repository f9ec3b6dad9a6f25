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
    RunHeader,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from replaykit.core.trace.not_imported import KEY as NOT_IMPORTED_KEY
from replaykit.core.trace.not_imported import entries


@dataclass
class Losses:
    """Named losses: ``name -> [details]`` (e.g. ``failed_attempts -> ["event 3: HTTP 500"]``).

    Exporters name what a format cannot hold; importers name what a source held that the run does not
    (``stamp`` writes that into the run header, where ``inspect`` shows it: the one record of what an
    import left out, with why). ``reasons`` says why per name, ``fields`` which source fields a name
    covers (a checker can account every field of a source: mapped into the run, or named here)."""

    items: dict[str, list[str]] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    fields: dict[str, list[str]] = field(default_factory=dict)

    def add(self, name: str, detail: str, *, reason: str | None = None, fields: Sequence[str] = ()) -> None:
        self.items.setdefault(name, []).append(detail)
        if reason and name not in self.reasons:
            self.reasons[name] = reason
        for key in fields:
            known = self.fields.setdefault(name, [])
            if key not in known:
                known.append(key)

    def as_list(self) -> list[str]:
        """One line per named loss, for ``--json`` summaries and warnings."""
        return [f"{name}: {len(details)} ({'; '.join(details[:3])}{'; ...' if len(details) > 3 else ''})"
                for name, details in sorted(self.items.items())]

    def to_json(self) -> dict[str, list[str]]:
        return {name: list(details) for name, details in sorted(self.items.items())}

    def record(self) -> list[dict[str, Any]]:
        """The ``not_imported`` entries: ``{what, count, reason, examples, items?, fields?}`` per name
        (``items``: all details, up to 1000, when there are more than the five examples)."""
        out = []
        for name, details in sorted(self.items.items()):
            entry: dict[str, Any] = {"what": name, "count": len(details),
                                     "reason": self.reasons.get(name) or details[0], "examples": details[:5]}
            if len(details) > 5:  # every one, for a reader that accounts each (capped: a record stays small)
                entry["items"] = details[:1000]
            if self.fields.get(name):
                entry["fields"] = list(self.fields[name])
            out.append(entry)
        return out

    def stamp(self, header: RunHeader) -> None:
        """Append these losses to the header's ``metadata.not_imported`` (an entry of the same name is
        merged: counts add up)."""
        if not self.items:
            return
        merged = {str(e.get("what")): e for e in entries(header.metadata)}
        for entry in self.record():
            known = merged.get(entry["what"])
            if known is None:
                merged[entry["what"]] = entry
                continue
            known["count"] = int(known.get("count") or 0) + entry["count"]
            known["examples"] = (list(known.get("examples") or []) + entry["examples"])[:5]
            if entry.get("items") or known.get("items") or len(known["examples"]) < known["count"]:
                known["items"] = (list(known.get("items") or known.get("examples") or [])
                                  + list(entry.get("items") or entry["examples"]))[:1000]
            if entry.get("fields"):
                known["fields"] = sorted(set(known.get("fields") or []) | set(entry["fields"]))
        header.metadata[NOT_IMPORTED_KEY] = list(merged.values())


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


#: Every published ATIF version (Harbor RFC 0001's version history) and what it changed. Readers take
#: all of them (``upgrade_atif`` brings an older document to the newest shape); writers write the newest.
ATIF_HISTORY: dict[str, str] = {
    "1.0": "initial release: root, agent, steps (system / user / agent), tool calls, observations, metrics",
    "1.1": "root `extra`",
    "1.2": "observations on system steps; `prompt_tokens` counts cached tokens too",
    "1.3": "`metrics.completion_token_ids`",
    "1.4": "`metrics.prompt_token_ids`",
    "1.5": "`agent.tool_definitions` (OpenAI function form)",
    "1.6": "multimodal `ContentPart` arrays (text, image) in step messages and observation results",
    "1.7": "`extra` on tool calls and observation results; embedded `subagent_trajectories` with "
           "`trajectory_id`; `session_id` optional; a subagent ref resolves by `trajectory_id` or "
           "`trajectory_path` (a v1.6 ref by `session_id` alone no longer validates); `llm_call_count`, "
           "`is_copied_context`",
    "1.8": "audio content parts",
}
ATIF_VERSIONS = tuple(f"ATIF-v{v}" for v in ATIF_HISTORY)
ATIF_NEWEST = next(reversed(ATIF_HISTORY))


def atif_minor(version: Any) -> int | None:
    """The minor number of a known ``ATIF-v1.N`` tag, else None."""
    return int(version.rsplit(".", 1)[1]) if version in ATIF_VERSIONS else None


def upgrade_atif(document: dict[str, Any]) -> dict[str, Any]:
    """An older ATIF document in the newest version's shape (a copy where anything changes; newer
    documents come back as they are). The one incompatible change in the history: before v1.7 a
    subagent ref named its trajectory by ``session_id`` alone; v1.7 resolves refs by ``trajectory_id``
    (embedded) or ``trajectory_path`` (a file), so such a ref keeps its session id as the
    ``trajectory_id`` it referred to (no pre-v1.7 file embeds subagents: it is never found embedded,
    and readers keep it as a reference)."""
    minor = atif_minor(document.get("schema_version"))
    if minor is None or minor >= 7:
        return document
    steps = []
    for step in document.get("steps") or []:
        results = ((step or {}).get("observation") or {}).get("results") if isinstance(step, dict) else None
        if not isinstance(results, list) or not any(_session_only_refs(r) for r in results):
            steps.append(step)
            continue
        new_results = [dict(r, subagent_trajectory_ref=[_upgraded_ref(ref) for ref in r["subagent_trajectory_ref"]])
                       if _session_only_refs(r) else r for r in results]
        steps.append({**step, "observation": {**step["observation"], "results": new_results}})
    return {**document, "steps": steps}


def _session_only_refs(result: Any) -> bool:
    refs = result.get("subagent_trajectory_ref") if isinstance(result, dict) else None
    return isinstance(refs, list) and any(isinstance(ref, dict) and ref.get("trajectory_id") is None
                                          and ref.get("trajectory_path") is None for ref in refs)


def _upgraded_ref(ref: Any) -> Any:
    if isinstance(ref, dict) and ref.get("trajectory_id") is None and ref.get("trajectory_path") is None \
            and isinstance(ref.get("session_id"), str):
        return {**ref, "trajectory_id": ref["session_id"]}
    return ref


def validate_atif(document: Any, where: str) -> Any:
    """Validate an ATIF document (of the newest version's shape: ``upgrade_atif``) with the ``atif``
    package's Pydantic models of the spec (the ``atif`` extra); the first problem becomes a one-line
    BadInput."""
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
