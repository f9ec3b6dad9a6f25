"""Upgrading older trace lines to the current schema on load.

Every schema version ever published keeps loading: a reader migrates each raw JSON line (a dict) from
its version to ``SCHEMA_VERSION`` before validating it. Version 1 is the first published version, so
today these are identities; the stored fixture ``tests/fixtures/schema/v1.jsonl`` must keep loading
when version 2 arrives (add a step here and a ``v2.jsonl`` fixture then).
"""

from __future__ import annotations

from typing import Any

from replaykit.core.store_index import SCHEMA_VERSION


def migrate_header(raw: dict[str, Any]) -> dict[str, Any]:
    version = raw.get("schema_version")
    if version == SCHEMA_VERSION:
        return raw
    # Future versions: chain per-version upgrade functions here, e.g. _header_1_to_2.
    return raw


def migrate_event(raw: dict[str, Any], from_version: int) -> dict[str, Any]:
    if from_version == SCHEMA_VERSION:
        return raw
    return raw
