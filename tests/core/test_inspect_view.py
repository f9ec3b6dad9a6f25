"""The streaming ``inspect`` (core/analysis/inspect_view.py) against the model-based output it replaced
(tests/core/inspect_reference.py, the code of replaykit 0.1): the same summary, timeline and health on
real recorded runs, the same one-line errors on torn and malformed traces, no pydantic on the way."""

from __future__ import annotations

import json
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from replaykit.cli.main import main
from replaykit.core.analysis.inspect_view import (
    EDIT_FIELDS,
    EVENT_FIELDS,
    HEADER_FIELDS,
    LINEAGE_FIELDS,
    PROVENANCES,
    SOURCE_FIELDS,
    NeedsFullReader,
    inspect_run,
    inspect_trace,
)
from replaykit.core.errors import ReplaykitError
from replaykit.core.trace import ir
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.testing.engine_runs import record_sample_run
from replaykit.testing.sample_runs import sample_header, write_weather_run
from tests.conftest import FIXTURES
from tests.core import inspect_reference as reference
from tests.core.every_kind_run import every_kind_run

BENCH = Path(__file__).resolve().parents[2] / "bench"
RECORDED = [*sorted((FIXTURES / "hermes").glob("*.jsonl")), FIXTURES / "schema" / "v1.jsonl",
            FIXTURES / "schema" / "v2.jsonl"]


def _reference(path: Path, include_bookkeeping: bool = False) -> dict[str, Any]:
    """What ``inspect --json`` printed before the streaming pass."""
    run = Run.load(path)
    return {**reference.summary(run), "timeline": reference.timeline_rows(run, include_bookkeeping=include_bookkeeping),
            "health": reference.run_health(run).to_json()}


def _same(left: dict[str, Any], right: dict[str, Any]) -> None:
    # Through JSON: what the CLI prints (tuples and lists, float spellings) is what must match.
    assert json.dumps(left, indent=1, default=str) == json.dumps(right, indent=1, default=str)


@pytest.fixture(scope="module")
def long_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sys.path.insert(0, str(BENCH))
    try:
        from long_session import write_long_session_run  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(BENCH))
    path: Path = write_long_session_run(tmp_path_factory.mktemp("long") / "long.jsonl", 200)
    return path


def test_the_fast_reader_knows_the_ir_fields() -> None:
    # A field added to the IR must be added here too, or every trace holding it takes the slow path.
    events = {cls.model_fields["kind"].default: set(cls.model_fields) for cls in ir.Event.__args__[0].__args__}
    assert {kind: set(fields) for kind, fields in EVENT_FIELDS.items()} == events
    assert set(HEADER_FIELDS) == set(ir.RunHeader.model_fields)
    assert set(PROVENANCES) == {p.value for p in ir.Provenance}
    assert SOURCE_FIELDS == tuple(ir.Source.model_fields)
    assert LINEAGE_FIELDS == tuple(ir.Lineage.model_fields) and EDIT_FIELDS == tuple(ir.Edit.model_fields)


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.name)
@pytest.mark.parametrize("include_bookkeeping", [False, True])
def test_streaming_equals_the_model_based_output_on_recorded_runs(path: Path, include_bookkeeping: bool) -> None:
    view = inspect_trace(path, include_bookkeeping=include_bookkeeping)  # never falls back on these
    _same(view.to_json(), _reference(path, include_bookkeeping))
    _same(inspect_run(Run.load(path), include_bookkeeping=include_bookkeeping).to_json(), view.to_json())


def test_streaming_equals_the_model_based_output_on_every_event_kind(tmp_path: Path) -> None:
    path = every_kind_run(tmp_path / "store")
    view = inspect_trace(path, include_bookkeeping=True).to_json()
    _same(view, _reference(path, include_bookkeeping=True))
    codes = {r["code"] for r in view["health"]["reasons"]}
    assert codes >= {"failed", "errors", "retries", "loop", "tool_failures", "desyncs", "truncated",
                     "budget_exhausted", "subagent_failures", "tokens"}
    assert view["model"] == "m1" and view["failing_step"] == 5 and view["status"] == "interrupted"
    assert view["health"]["cost_usd"] is not None and view["health"]["cost_usd"] > 0  # priced by genai-prices


def test_streaming_equals_the_model_based_output_on_engine_and_long_runs(tmp_path: Path, long_session: Path) -> None:
    store = RunStore(tmp_path)
    record_sample_run(store, "a")
    with store.create(sample_header("weather")) as writer:
        write_weather_run(writer)
    for path in (store.path_for("a"), store.path_for("weather"), long_session):
        _same(inspect_trace(path).to_json(), _reference(path))


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["inspect", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _error_of_full_reader(path: Path) -> str:
    with pytest.raises(ReplaykitError) as caught:
        Run.load(path)
    return f"replaykit: error: {caught.value}\n"


def test_torn_last_line_is_reported_and_skipped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = FIXTURES / "hermes" / "tools_sequence.jsonl"
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(source.read_bytes() + b'{"kind":"meta","seq":99,"da')
    view = inspect_trace(torn)
    assert view.report is not None and view.report.torn_tail and view.report.torn_tail_bytes == 27
    _same(view.to_json(), inspect_trace(source).to_json())
    code, out, err = _cli(capsys, str(torn), "--json")
    lines = source.read_bytes().count(b"\n") + 1
    assert code == 0 and json.loads(out)["events"] == lines - 2
    assert err == (f"replaykit: warning: {torn}: line {lines}: torn last line (27 bytes) skipped; "
                   "every complete event before it was kept\n")


@pytest.mark.parametrize("damage", ["not json", '{"kind":"tool_call","seq":"x"}', '{"kind":"nope","seq":1,"id":"q"}',
                                    "[1, 2]", '{"kind":"meta","seq":3,"id":"m","data":{},"extra":1}'])
@pytest.mark.parametrize("where", ["middle", "last"])
def test_a_malformed_line_gives_the_validating_readers_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              damage: str, where: str) -> None:
    lines = (FIXTURES / "hermes" / "two_turns.jsonl").read_text().splitlines(keepends=True)
    at = 3 if where == "middle" else len(lines)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(lines[:at]) + damage + "\n" + "".join(lines[at:]))
    with pytest.raises(NeedsFullReader):
        inspect_trace(bad)
    for argv in ([str(bad), "--json"], [str(bad)]):
        code, out, err = _cli(capsys, *argv)
        assert (code, out, err) == (2, "", _error_of_full_reader(bad))
        assert f"line {at + 1}" in err


def test_a_broken_delta_reference_gives_the_validating_readers_error(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    text = (FIXTURES / "hermes" / "two_turns.jsonl").read_text()
    base = json.loads(text.splitlines()[-2])  # an llm_call / turn_end late in the run
    events = [json.loads(line) for line in text.splitlines()[1:]]
    with_base = [e for e in events if e.get("kind") == "llm_call" and e["request"].get("context", {}).get("base")]
    assert with_base and base
    broken = text.replace(f'"base":"{with_base[0]["request"]["context"]["base"]}"', '"base":"nowhere"', 1)
    path = tmp_path / "broken.jsonl"
    path.write_text(broken)
    with pytest.raises(NeedsFullReader):
        inspect_trace(path)
    code, out, err = _cli(capsys, str(path), "--json")
    assert (code, out) == (2, "") and err == _error_of_full_reader(path) and "unknown earlier request" in err


@pytest.mark.parametrize(("first_line", "message"), [
    (b"", "empty file; not a replaykit trace"),
    (b'{"kind":"run","schema_name":"replaykit.trace","schema_version":7,"run_id":"r","created_at":"x"}\n',
     "trace schema version 7 is not supported by this replaykit (reads [1, 2]); upgrade replaykit"),
    (b'{"kind":"run","schema_name":"replay', "line 1 is not JSON"),
    (b'{"kind":"llm_call"}\n', "line 1 is not a run header; not a replaykit trace"),
])
def test_a_bad_header_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], first_line: bytes,
                                         message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(first_line)
    code, out, err = _cli(capsys, str(path), "--json")
    assert (code, out) == (2, "") and err == _error_of_full_reader(path) and message in err


def test_an_invalid_header_field_takes_the_validating_reader(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = (FIXTURES / "hermes" / "two_turns.jsonl").read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    header["tags"] = "not-a-list"
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    code, out, err = _cli(capsys, str(path), "--json")
    assert (code, out) == (2, "") and err == _error_of_full_reader(path) and "invalid run header" in err


def test_memory_is_rows_not_trace(long_session: Path) -> None:
    # The model-based inspect held every validated event (about 9x the file); the stream holds its rows.
    size = long_session.stat().st_size
    tracemalloc.start()
    try:
        view = inspect_trace(long_session, with_cost=False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert view.summary["steps"] == 200
    # Schema 2 stores each tool result once, so the file is about 40% smaller than the schema-1 file this
    # bound was set on; the rows held are the same.
    assert peak < 1.5 * size, (peak, size)


def test_a_branch_with_its_lineage_and_edit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from replaykit.core.replay.branch import branch

    store = RunStore(tmp_path)
    with store.create(sample_header("weather")) as writer:
        write_weather_run(writer)
    child = branch(store, store.load("weather"), 1, result="Paris: 31C, heatwave")
    path = store.path_for(child.run_id)
    view = inspect_trace(path).to_json()
    _same(view, _reference(path))
    assert view["lineage"]["relation"] == "branch" and view["lineage"]["edit"]["target"] == "result"
    assert [r["provenance"] for r in view["timeline"] if r["step"] is not None][:2] == ["served", "edited"]
    code, out, _ = _cli(capsys, str(path))
    assert code == 0 and "branch of weather at step 1" in out


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.name)
def test_run_health_and_rows_of_a_loaded_run_equal_the_model_based_ones(path: Path) -> None:
    # The viewer, the HTML report, stats and training export score and list loaded runs.
    from replaykit.core.analysis.health import run_health
    from replaykit.core.analysis.timeline import timeline_rows

    run = Run.load(path)
    _same(run_health(run).to_json(), reference.run_health(run).to_json())
    _same({"rows": timeline_rows(run)}, {"rows": reference.timeline_rows(run)})


def test_run_health_of_every_event_kind(tmp_path: Path) -> None:
    from replaykit.core.analysis.health import run_health

    run = Run.load(every_kind_run(tmp_path))
    for with_cost in (True, False):
        _same(run_health(run, with_cost=with_cost).to_json(), reference.run_health(run, with_cost=with_cost).to_json())


def test_describe_of_loaded_events_equals_the_model_based_one(tmp_path: Path) -> None:
    from replaykit.core.analysis.timeline import describe  # diff rows describe loaded steps one at a time

    for path in [*RECORDED, every_kind_run(tmp_path)]:
        for event in Run.load(path).events:
            assert describe(event) == reference.describe(event)
