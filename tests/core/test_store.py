"""The run store: ids, paths, permissions, tolerant reading, hostile files."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from replaykit.core.errors import InvalidRunId, RunExists, RunNotFound, TraceError
from replaykit.core.trace.reader import iter_trace
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore, default_store_root, validate_run_id
from replaykit.core.trace.store_index import ReadReport
from replaykit.testing.sample_runs import sample_header, write_weather_run


@pytest.mark.parametrize(
    "bad",
    ["../x", "..", ".", ".hidden", "/etc/passwd", "a/b", "a\\b", "x\x00y", "", "a" * 129, "white space",
     "ünïcode", "a\nb", "~root"],
)
def test_hostile_run_ids_are_refused(tmp_path: Path, bad: str) -> None:
    store = RunStore(tmp_path)
    with pytest.raises(InvalidRunId):
        store.path_for(bad)


@pytest.mark.parametrize("good", ["run-1", "a", "A.b_c-d", "x" * 128, "20261130_101010_abc123"])
def test_valid_run_ids(good: str) -> None:
    assert validate_run_id(good) == good


def test_symlink_escape_is_refused(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    store.ensure()
    outside = tmp_path / "outside.jsonl"
    outside.write_text("x")
    (store.root / "evil.jsonl").symlink_to(outside)
    with pytest.raises(InvalidRunId, match="outside"):
        store.path_for("evil")


def test_permissions_and_no_overwrite(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "deep" / "store")
    header = sample_header("perm-run")
    with store.create(header) as writer:
        write_weather_run(writer)
    path = store.path_for("perm-run")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.root.stat().st_mode) == 0o700
    before = path.read_bytes()
    with pytest.raises(RunExists):
        store.create(header)
    assert path.read_bytes() == before


def test_default_store_root_order(tmp_path: Path) -> None:
    assert default_store_root({"REPLAYKIT_HOME": str(tmp_path / "a"), "HERMES_HOME": "/h"}) == tmp_path / "a"
    assert default_store_root({"HERMES_HOME": str(tmp_path)}) == tmp_path / "replaykit"
    assert default_store_root({}) == Path("~/.replaykit").expanduser()


def test_resolve_accepts_ids_and_paths(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "s")
    with store.create(sample_header("r1")) as writer:
        write_weather_run(writer)
    assert store.resolve("r1") == store.path_for("r1")
    assert store.resolve(str(store.path_for("r1"))) == store.path_for("r1")
    with pytest.raises(RunNotFound):
        store.resolve("nope")
    with pytest.raises(RunNotFound):
        store.resolve("./missing.jsonl")


def _weather_file(tmp_path: Path) -> Path:
    store = RunStore(tmp_path / "s")
    with store.create(sample_header("w")) as writer:
        write_weather_run(writer)
    return store.path_for("w")


def test_torn_tail_is_reported_and_everything_before_kept(tmp_path: Path) -> None:
    path = _weather_file(tmp_path)
    full = Run.load(path)
    data = path.read_bytes()
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(data[:-25])  # cut inside the last line
    run = Run.load(torn)
    assert run.report is not None and run.report.torn_tail
    assert len(run.events) == len(full.events) - 1
    assert [e.id for e in run.events] == [e.id for e in full.events[:-1]]


def test_garbled_middle_line_names_the_line(tmp_path: Path) -> None:
    path = _weather_file(tmp_path)
    lines = path.read_text().splitlines()
    lines[3] = lines[3][:10] + "#garbage#"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(TraceError, match="line 4"):
        Run.load(bad)


def test_invalid_event_shape_is_a_trace_error(tmp_path: Path) -> None:
    path = _weather_file(tmp_path)
    lines = path.read_text().splitlines()
    event = json.loads(lines[2])
    event["kind"] = "bogus_kind"
    lines[2] = json.dumps(event)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(TraceError, match="line 3"):
        Run.load(bad)


@pytest.mark.parametrize(
    "content",
    [b"", b"\n", b"not json\n", b"[1,2]\n", b'{"kind":"llm_call"}\n', b"\x00\xff\xfe binary", b'{"kind":"run"}\n'],
)
def test_not_a_trace(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(content)
    with pytest.raises(TraceError):
        Run.load(path)


def test_dangling_delta_base_is_detected(tmp_path: Path) -> None:
    path = _weather_file(tmp_path)
    lines = path.read_text().splitlines()
    out = []
    for line in lines:
        doc = json.loads(line)
        if doc.get("kind") == "llm_call" and doc["request"]["context"].get("base"):
            doc["request"]["context"]["base"] = "e999-nothere"
        out.append(json.dumps(doc))
    bad = tmp_path / "dangling.jsonl"
    bad.write_text("\n".join(out) + "\n")
    with pytest.raises(TraceError, match="unknown earlier request"):
        Run.load(bad)


def test_streaming_reader_is_lazy(tmp_path: Path) -> None:
    path = _weather_file(tmp_path)
    report = ReadReport(path)
    items = iter_trace(path, report)
    assert next(items).kind == "run"
    assert next(items).kind in {"tools", "turn_start"}


def test_directory_is_not_a_trace(tmp_path: Path) -> None:
    with pytest.raises(TraceError):
        Run.load(tmp_path)


def test_file_mode_of_run_files_ignores_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        store = RunStore(tmp_path / "u")
        with store.create(sample_header("m")) as writer:
            write_weather_run(writer)
        assert stat.S_IMODE(store.path_for("m").stat().st_mode) == 0o600
    finally:
        os.umask(old)


def test_store_records_behave_as_the_dataclasses_they_were() -> None:
    """``RunSummary`` (frozen) and ``ReadReport`` are plain classes now (``replaykit export`` does not import
    dataclasses): equality and repr by field, a summary hashable and immutable, a report mutable."""
    from replaykit.core.trace.store_index import RunSummary

    fields = {"run_id": "r", "path": Path("r.jsonl"), "created_at": "2026", "framework": "hermes", "model": None,
              "title": None, "parent_run_id": None, "relation": None, "size_bytes": 3}
    a, b = RunSummary(**fields), RunSummary(**fields, tags=("x",))
    assert a == RunSummary(**fields) and a != b and hash(a) == hash(RunSummary(**fields)) and a.tags == ()
    assert repr(a).startswith("RunSummary(run_id='r', path=") and {a, RunSummary(**fields)} == {a}
    with pytest.raises(AttributeError):
        a.run_id = "other"  # type: ignore[misc]
    report = ReadReport(Path("p"))
    report.torn(3, b"abc")
    assert report.torn_tail and report.torn_tail_bytes == 3 and len(report.warnings) == 1
    assert report != ReadReport(Path("p")) and ReadReport(Path("p")) == ReadReport(Path("p"))
    assert ReadReport(Path("p")).warnings is not ReadReport(Path("p")).warnings
    with pytest.raises(TypeError):
        hash(report)


def test_dumps_compact_is_the_compact_encoder() -> None:
    """``dumps_compact`` calls json's C encoder directly: the same text, and the same errors."""
    from replaykit.core.trace.canonical import _COMPACT_ENCODER, dumps_compact

    for value in ({"a": 1, "b": [1.5, None, True, "x\u2028\ud800"]}, 'q"', 1, 0.1, float("nan"), [], {},
                  {1: 2, None: 3, 2.5: 4, False: 5}):
        assert dumps_compact(value) == _COMPACT_ENCODER.encode(value)
    loop: list = []
    loop.append(loop)
    for bad in ({"a": object()}, {(1, 2): 3}, loop):
        with pytest.raises((TypeError, ValueError)) as expected:
            _COMPACT_ENCODER.encode(bad)
        with pytest.raises(expected.type, match=str(expected.value).split("(")[0]):
            dumps_compact(bad)
    assert dumps_compact({"a": [1]}) == '{"a":[1]}'  # after an error: no stale circular-reference memo
