"""Upgrading older trace lines to the current schema on load.

Every schema version ever published keeps loading: a reader migrates each raw JSON line (a dict) from
its version to ``SCHEMA_VERSION`` before validating it. Each version has a stored fixture under
``tests/fixtures/schema/`` (``v1.jsonl``, ``v2.jsonl``) that must keep loading.

- 1 -> 2: version 2 only adds ``MessageRef`` items to ``MessageDelta.append``; every v1 line is a valid
  v2 line, so nothing is rewritten (``VERBATIM_VERSIONS``: such lines take the reader's fast path).
"""

from __future__ import annotations

from typing import Any

from replaykit.core.trace.store_index import SCHEMA_VERSION

#: Versions whose event lines are valid current-version lines as they stand (no migration step).
VERBATIM_VERSIONS = frozenset({1, SCHEMA_VERSION})


def migrate_header(raw: dict[str, Any]) -> dict[str, Any]:
    # The header keeps the version its file was written with (``replaykit validate`` reports it).
    return raw


def migrate_event(raw: dict[str, Any], from_version: int) -> dict[str, Any]:
    if from_version in VERBATIM_VERSIONS:
        return raw
    # Future versions: chain per-version upgrade functions here, e.g. _event_2_to_3.
    return raw
