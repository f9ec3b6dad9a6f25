"""The in-process replay reads a loaded run through light views of its events (core/replay/replay.py); the
document must be the one the stdlib builder computes from the trace's own lines (what a standalone
script embeds), on real recordings, every event kind, a long session and step ranges."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from replaykit.core.replay.replay import replay_run
from replaykit.core.replay.replay_doc import build_replay_document
from replaykit.core.trace.run import Run
from tests.conftest import FIXTURES
from tests.core.every_kind_run import every_kind_run

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _without_clock(doc: dict[str, Any]) -> dict[str, Any]:
    doc.pop("replay_duration")
    for entry in doc["steps"] + doc["timing"]:
        entry.pop("t_replay")
    return doc


def _check(path: Path, ranges: list[tuple[int | None, int | None]]) -> None:
    lines = path.read_text().splitlines()
    header, events = json.loads(lines[0]), [json.loads(line) for line in lines[1:]]
    run = Run.load(path)
    for start, stop in ranges:
        expected = _without_clock(build_replay_document(header, events, start=start, stop=stop))
        got = _without_clock(replay_run(run, start=start, stop=stop))
        assert json.dumps(got, sort_keys=True) == json.dumps(expected, sort_keys=True)
        assert got["counters"]["provider_calls"] == 0 and got["counters"]["tool_executions"] == 0


@pytest.mark.parametrize("path", sorted((FIXTURES / "hermes").glob("*.jsonl")), ids=lambda p: p.name)
def test_recorded_hermes_runs(path: Path) -> None:
    steps = len(Run.load(path).steps)
    _check(path, [(None, None), (0, steps // 2), (steps // 2, None)])


def test_every_event_kind(tmp_path: Path) -> None:
    path = every_kind_run(tmp_path)
    _check(path, [(None, None), (1, 4), (5, None)])
    doc = replay_run(Run.load(path))
    assert doc["cost"] == 0.5 and [n["kind"] for n in doc["notes"]] == ["error", "error", "desync", "synthetic"]


def test_long_session(tmp_path: Path) -> None:
    sys.path.insert(0, str(BENCH))
    try:
        from long_session import write_long_session_run  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(BENCH))
    path = write_long_session_run(tmp_path / "long.jsonl", 100)
    _check(path, [(None, None), (37, 62)])
