"""Every RunHeader field, classified: structure (ids, versions, the model) or content (taken from
messages or from what a user typed: the title is the first user message, metadata holds anything, a
branch's edit holds the value it put in).

One table, used wherever content must not leave in the clear:
  * ``redact_header`` (``_ir``) redacts every content field with the run's placeholders;
  * ``content_free_header`` drops them, for exports written without content (OTel without
    ``--include-content``).
A field added to ``RunHeader`` later and not classified here fails tests/core/redaction/test_header_fields.py.
"""

from __future__ import annotations

from typing import Literal

from replaykit.core.trace.ir import Lineage, RunHeader

Kind = Literal["structure", "content"]

HEADER_FIELDS: dict[str, Kind] = {
    "kind": "structure",
    "schema_name": "structure",
    "schema_version": "structure",
    "run_id": "structure",  # made by the recorder (or given by the user as an id)
    "created_at": "structure",
    "source": "structure",  # framework, versions, adapter
    "model": "structure",
    "provider": "structure",
    "base_url": "content",  # a host name can name a customer; credentials never stay in it
    "api_mode": "structure",
    "platform": "structure",
    "session_id": "structure",  # an id of the agent's session store
    "title": "content",  # the first user message, cut
    "lineage": "content",  # relation and parent ids are structure; edit and details are content
    "tags": "structure",  # labels the user or replaykit chose (imported, redacted, corpus names)
    "metadata": "content",  # anything
}
#: Lineage's own fields that carry content (the rest are relation, ids, step numbers, the engine)
LINEAGE_CONTENT = ("edit", "details")


def content_fields() -> tuple[str, ...]:
    return tuple(name for name, kind in HEADER_FIELDS.items() if kind == "content")


def content_free_header(header: RunHeader) -> RunHeader:
    """A copy of ``header`` without anything derived from content (structure kept as it is)."""
    updates: dict[str, object] = {}
    for name in content_fields():
        if name == "lineage":
            lin = header.lineage
            updates[name] = None if lin is None else Lineage.model_validate(
                {**lin.model_dump(), **dict.fromkeys(LINEAGE_CONTENT)})
        elif name == "metadata":
            updates[name] = {}
        else:
            updates[name] = None
    return header.model_copy(update=updates)
