"""Compacted runs (``replaykit compact``): closed runs only, the same file read the same by every reader."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest

from replaykit.cli.main import main
from replaykit.core.analysis.inspect_view import inspect_trace
from replaykit.core.errors import TraceError
from replaykit.core.replay.replay import replay_path
from replaykit.core.trace.compact import RunNotClosed, compact_run, expand_run
from replaykit.core.trace.ir import RunHeader, Source
from replaykit.core.trace.reader import iter_trace
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore, RunWriter
from replaykit.core.trace.store_index import COMPACT_MAGIC, first_line, is_compacted, iter_summaries

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import long_session

RUN_ID = "hermes-" + long_session.SESSION_ID


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("recorded")
    long_session.write_long_session_run(store / f"{RUN_ID}.jsonl", 20)
    return store / f"{RUN_ID}.jsonl"


@pytest.fixture
def store(tmp_path: Path, recorded: Path) -> Path:
    (tmp_path / recorded.name).write_bytes(recorded.read_bytes())
    return tmp_path


def _events(path: Path) -> list[str]:
    return [e.model_dump_json() for e in Run.load(path).events]


def test_a_closed_run_compacts_and_every_reader_reads_it_the_same(store: Path) -> None:
    path = store / f"{RUN_ID}.jsonl"
    plain = path.read_bytes()
    before_events, before_view = _events(path), inspect_trace(path).to_json()
    before_summary = next(iter_summaries(store)).to_json()
    done = compact_run(path)
    assert not done.already and done.before == len(plain) and done.after == path.stat().st_size < len(plain) / 3
    assert path.read_bytes()[:2] == COMPACT_MAGIC and gzip.decompress(path.read_bytes()) == plain
    assert path.stat().st_mode & 0o777 == 0o600
    assert _events(path) == before_events
    assert inspect_trace(path).to_json() == before_view
    summary = next(iter_summaries(store)).to_json()
    assert {**summary, "size_bytes": 0} == {**before_summary, "size_bytes": 0}
    assert json.loads(first_line(path))["run_id"] == RUN_ID
    assert sum(1 for _ in iter_trace(path)) == plain.count(b"\n")
    assert replay_path(path)["counters"]["trace_bytes_changed"] == 0
    # Compacting again changes nothing; the same run always compacts to the same bytes.
    packed = path.read_bytes()
    assert compact_run(path).already and path.read_bytes() == packed


def test_a_live_or_unfinished_run_is_never_compacted(store: Path) -> None:
    path = store / f"{RUN_ID}.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    unfinished = store / "unfinished.jsonl"
    unfinished.write_bytes(b"".join(lines[:-1]))  # no run_end: live elsewhere, or interrupted
    with pytest.raises(RunNotClosed, match="no run_end"):
        compact_run(unfinished)
    torn = store / "torn.jsonl"
    torn.write_bytes(b"".join(lines)[:-5])
    with pytest.raises(RunNotClosed):
        compact_run(torn)
    header = RunHeader(run_id="live", created_at="2026-01-01T00:00:00Z", source=Source(framework="test"))
    writer = RunStore(store).create(header)
    writer.append_raw(lines[-1].rstrip(b"\n"))  # even a run_end does not make a run someone writes closed
    try:
        with pytest.raises(RunNotClosed, match="being recorded"):
            compact_run(writer.path)
    finally:
        writer.close()
    assert not is_compacted(writer.path) and not is_compacted(unfinished)
    assert compact_run(writer.path).after > 0  # once its writer closed it


def test_appending_to_a_compacted_run_expands_it_first(store: Path) -> None:
    path = store / f"{RUN_ID}.jsonl"
    plain = path.read_bytes()
    compact_run(path)
    header = Run.load(path).header
    with RunWriter(path, header, exist_ok=True) as writer:
        writer.append_raw(plain.splitlines()[-1])
    assert not is_compacted(path) and path.read_bytes() == plain + plain.splitlines(keepends=True)[-1]
    assert expand_run(path) is False  # plain already


def test_a_damaged_compacted_run_is_a_one_line_error(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = store / f"{RUN_ID}.jsonl"
    compact_run(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(TraceError, match="compacted trace is damaged"):
        Run.load(path)
    assert main(["inspect", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("replaykit: error:") and "damaged" in err and "\n" not in err


def test_the_command(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = store / f"{RUN_ID}.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    (store / "open.jsonl").write_bytes(b"".join(lines[:-1]).replace(RUN_ID.encode(), b"open", 1))
    assert main(["compact", "--all", "--store", str(store), "--json"]) == 0  # a run not closed is skipped
    rows = {Path(r["path"]).name: r for r in json.loads(capsys.readouterr().out)["runs"]}
    assert rows[path.name]["status"] == "compacted" and rows["open.jsonl"]["status"] == "skipped"
    assert main(["compact", "open", "--store", str(store)]) == 1  # named, and refused
    assert "skipped" in capsys.readouterr().out
    assert main(["compact", RUN_ID, "--store", str(store)]) == 0
    assert "already compacted" in capsys.readouterr().out
    assert main(["compact", "--store", str(store)]) == 2
    assert main(["compact", "nope", "--store", str(store)]) == 2
    assert "no run 'nope'" in capsys.readouterr().err
