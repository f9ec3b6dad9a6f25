"""runs / inspect / validate / schema end to end, with exit codes and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from replaykit.cli.main import main
from replaykit.core.trace.store import RunStore
from replaykit.testing.sample_runs import sample_header, write_weather_run
from tests.conftest import subprocess_env


@pytest.fixture
def weather(store_dir: Path) -> str:
    store = RunStore(store_dir)
    with store.create(sample_header("weather-1")) as writer:
        write_weather_run(writer)
    return "weather-1"


def test_runs_json(weather: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["run_id"] for r in doc["runs"]] == [weather]


def test_inspect_json_and_text(weather: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", weather, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["run_id"] == weather and doc["steps"] == 4 and doc["final_answer"] == "London is warmer."
    assert [r["kind"] for r in doc["timeline"] if r["step"] is not None] == ["llm_call", "tool_call", "tool_call", "llm_call"]
    assert main(["inspect", weather]) == 0
    out = capsys.readouterr().out
    assert "get_weather" in out and "London is warmer." in out


def test_inspect_highlights_failing_step(store_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from replaykit.core.trace.recorder import Recorder

    store = RunStore(store_dir)
    header = sample_header("failing")
    with store.create(header) as writer:
        rec = Recorder(header, writer)
        rec.tool_call("c1", "read_file", {"path": "a"}, result="ok")
        rec.tool_call("c2", "terminal", {"command": "make"}, status="error", error="exit 2: no rule")
    assert main(["inspect", "failing", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["failing_step"] == 1
    assert [r["failing"] for r in doc["timeline"]] == [False, True]
    assert main(["inspect", "failing"]) == 0
    assert "FAILING STEP" in capsys.readouterr().out


def test_validate(weather: str, store_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", weather, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["valid"] is True
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(RunStore(store_dir).path_for(weather).read_bytes()[:-10])
    assert main(["validate", str(torn), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["valid"] is False and doc["torn_tail"] is True


def test_schema_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    assert "llm_call" in json.loads(capsys.readouterr().out)["$defs"]["LLMCallEvent"]["properties"]["kind"]["const"]


@pytest.mark.parametrize(
    "argv",
    [["inspect", "../etc/passwd"], ["inspect", "no-such-run"], ["inspect", "a\x00b"], ["validate", "/nonexistent.jsonl"],
     ["inspect"], ["runs", "--bogus"], ["import", "x", "--format", "nope"]],
)
def test_bad_input_exit_2_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        code = main(argv)
        raise SystemExit(code)
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("replaykit: error:") and "\n" not in err and "Traceback" not in err


def test_subprocess_entrypoint_on_garbage(tmp_path: Path) -> None:
    garbage = tmp_path / "g.jsonl"
    garbage.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    out = subprocess.run([sys.executable, "-m", "replaykit", "inspect", str(garbage)], capture_output=True,
                         text=True, env=subprocess_env())
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr


def _validate_peak_kb(path: Path) -> int:
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss across fork+exec, so a child of a big pytest
    # process would report the parent's peak. VmHWM belongs to the child's own address space.
    code = (
        "import sys; from replaykit.cli.main import main; rc = main(['validate', sys.argv[1], '--json']);"
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0].split()[1];"
        "print(hwm, file=sys.stderr); sys.exit(rc)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                         env=subprocess_env())
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["valid"] is True
    return int(out.stderr.strip().splitlines()[-1])


def _big_trace(path: Path, events: int) -> Path:
    from replaykit.core.trace.recorder import Recorder
    from replaykit.core.trace.store import RunWriter

    header = sample_header(path.stem)
    blob = "z" * (1024 * 1024)
    with RunWriter(path, header) as writer:
        rec = Recorder(header, writer, keep_events=False)
        for i in range(events):
            rec.tool_call(f"c{i}", "read_file", {"path": f"f{i}"}, result=blob)
    return path


def test_big_trace_is_streamed_with_bounded_memory(tmp_path: Path) -> None:
    """A ~200 MB trace validates with the same peak memory as a ~20 MB one (streamed, not loaded)."""
    big = _big_trace(tmp_path / "big.jsonl", 200)
    assert big.stat().st_size > 200 * 1024 * 1024
    small = _big_trace(tmp_path / "small.jsonl", 20)
    peak_big, peak_small = _validate_peak_kb(big), _validate_peak_kb(small)
    assert peak_big - peak_small < 32 * 1024, (peak_small, peak_big)
    assert peak_big * 1024 < big.stat().st_size  # never holds the whole file
