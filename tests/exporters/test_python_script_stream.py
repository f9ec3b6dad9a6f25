"""The streaming python export, the CLI's path: the trace file read line by line as plain dicts (no run
loaded, no pydantic), the trace's own lines packed into the script. It gives the same script as a
loaded run (docstring, code, metadata, behaviour), for every fixture and for hostile content written
through the real store; what it cannot vouch for goes to the validating reader, which words the error."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from replaykit.core.trace.raw_check import NeedsFullReader
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.exporters.python_script import render, render_trace
from tests.conftest import FIXTURES, subprocess_env
from tests.exporters.script_support import (
    call_main,
    int_digits_unbounded,
    load_script,
    make_run,
    masked,
    run_script,
)
from tests.exporters.test_python_script_properties import NASTY, baseline_shape, program_shape

TRACE_FIXTURES = [*sorted((FIXTURES / "hermes").glob("*.jsonl")), FIXTURES / "schema" / "v1.jsonl",
                  FIXTURES / "schema" / "v2.jsonl"]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "replaykit", *args], capture_output=True, text=True,
                          env=subprocess_env(), timeout=120)


def code_part(source: str) -> str:
    """Everything above the packed trace: docstring, code, metadata constants."""
    return source[: source.index("TRACE_ZLIB_BASE64 = (")]


def outputs(source: str) -> dict[str, Any]:
    namespace = load_script(source)
    out: dict[str, Any] = {}
    for flag in ("--quiet", "--dump-trace"):
        with int_digits_unbounded():
            code, data, err = call_main(namespace, [flag])
        assert code == 0, err
        out[flag] = json.loads(data)
    out["--quiet"] = masked(out["--quiet"])
    return out


def trace_lines(path: Path) -> dict[str, Any]:
    lines = [json.loads(line) for line in path.read_bytes().split(b"\n") if line.strip()]  # not splitlines: U+2028
    return {"header": lines[0], "events": lines[1:]}


@pytest.mark.parametrize("fixture", TRACE_FIXTURES, ids=[p.stem for p in TRACE_FIXTURES])
def test_streamed_and_loaded_exports_are_the_same_script(fixture: Path) -> None:
    run = Run.load(fixture)
    streamed, loaded = render_trace(fixture), render(run)
    assert code_part(streamed.text) == code_part(loaded)  # step counts, model, duration: the same rules
    assert streamed.report["steps"] == len(run.steps) and streamed.report["events"] == len(run.events)
    a, b = outputs(streamed.text), outputs(loaded)
    assert a == b  # the replay document, and --dump-trace: the loaded run's events (``same`` filled in)
    if b"same" not in fixture.read_bytes():
        assert a["--dump-trace"] == trace_lines(fixture)


def test_hostile_content_through_the_store_and_the_cli(tmp_path: Path) -> None:
    nasty = "".join(NASTY)
    huge = (nasty + '"""' + "'''" + "\\" * 7 + "\u2028\x00") * 20_000  # about 1.5 MB of the worst characters
    run = make_run(2, run_id="hostile-run", answer=nasty, results=[huge, nasty[::-1]], user=nasty, model=nasty)
    store = RunStore(tmp_path / "store")
    path = store.write_run(run.header, run.events)
    out = tmp_path / "run.py"
    proc = cli("export", "hostile-run", "--store", str(store.root), "--format", "python", "-o", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    assert info["bytes"] == out.stat().st_size and info["steps"] == 5 and info["events"] == len(run.events)
    source = out.read_text()
    assert program_shape(compile(source, "run.py", "exec", dont_inherit=True)) == baseline_shape()
    dumped = run_script(out, "--dump-trace")
    assert dumped.returncode == 0, dumped.stderr
    assert json.loads(dumped.stdout) == trace_lines(path)
    replayed = json.loads(run_script(out, "--quiet").stdout)
    as_json = json.loads(json.dumps([nasty, huge]))  # JSON's meaning: a surrogate pair is one character
    assert replayed["final_answer"] == as_json[0] and replayed["messages"][3]["parts"][0]["content"] == as_json[1]


def test_cli_export_streams_a_compacted_run_and_writes_to_stdout(tmp_path: Path) -> None:
    plain = FIXTURES / "schema" / "v2.jsonl"
    compacted = tmp_path / "compacted.jsonl"
    compacted.write_bytes(gzip.compress(plain.read_bytes()))
    proc = cli("export", str(compacted), "--format", "python", "-o", "-")
    assert proc.returncode == 0, proc.stderr
    assert code_part(proc.stdout) == code_part(render_trace(plain).text)
    assert outputs(proc.stdout) == outputs(render(Run.load(plain)))


def test_torn_last_line_is_skipped_with_a_warning(tmp_path: Path) -> None:
    lines = (FIXTURES / "hermes" / "tools_sequence.jsonl").read_text().splitlines(keepends=True)
    torn = tmp_path / "torn.jsonl"
    torn.write_text("".join(lines) + lines[-1][: len(lines[-1]) // 2])
    out = tmp_path / "run.py"
    proc = cli("export", str(torn), "--format", "python", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "warning" in proc.stderr and "torn last line" in proc.stderr and proc.stderr.count("\n") == 1
    assert json.loads(run_script(out, "--dump-trace").stdout)["events"] == trace_lines(torn_free(lines, tmp_path))["events"]


def torn_free(lines: list[str], tmp_path: Path) -> Path:
    whole = tmp_path / "whole.jsonl"
    whole.write_text("".join(lines))
    return whole


@pytest.mark.parametrize("damage", ["not json", '{"kind": "tool_call", "seq": "x"}', "[1, 2]"])
def test_a_damaged_line_is_one_error_line_and_nothing_written(tmp_path: Path, damage: str) -> None:
    lines = (FIXTURES / "hermes" / "tools_sequence.jsonl").read_text().splitlines(keepends=True)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(lines[:3]) + damage + "\n" + "".join(lines[3:]))
    with pytest.raises(NeedsFullReader):
        render_trace(bad)  # the streaming pass does not judge it ...
    out = tmp_path / "run.py"
    proc = cli("export", str(bad), "--format", "python", "-o", str(out))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr  # ... the reader
    assert "line 4" in proc.stderr and not out.exists()


def test_what_the_stream_cannot_vouch_for_is_exported_from_the_loaded_run(tmp_path: Path) -> None:
    # NaN is JSON to json.loads but not to the IR (its JSON form has null): the validating reader loads it
    lines = (FIXTURES / "hermes" / "tools_sequence.jsonl").read_text().splitlines(keepends=True)
    event = json.loads(lines[1])
    event["t"] = 0.5
    odd = tmp_path / "odd.jsonl"
    odd.write_text(lines[0] + json.dumps(event).replace("0.5", "NaN", 1) + "\n" + "".join(lines[2:]))
    with pytest.raises(NeedsFullReader):
        render_trace(odd)
    out = tmp_path / "run.py"
    proc = cli("export", str(odd), "--format", "python", "-o", str(out))
    if proc.returncode == 0:  # accepted by the validating reader: exported from the loaded run
        assert "NaN" not in json.dumps(json.loads(run_script(out, "--dump-trace").stdout))
    else:
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and not out.exists()


def test_export_by_run_id_uses_the_default_name_and_refuses_to_overwrite(tmp_path: Path) -> None:
    run = make_run(1, run_id="named-run")
    store = RunStore(tmp_path / "store")
    store.write_run(run.header, run.events)
    work = tmp_path / "work"
    work.mkdir()
    args = [sys.executable, "-m", "replaykit", "export", "named-run", "--store", str(store.root), "--format", "python"]
    first = subprocess.run(args, capture_output=True, text=True, env=subprocess_env(), cwd=work, timeout=120)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == f"exported named-run as python -> {Path('named-run.py')}"
    again = subprocess.run(args, capture_output=True, text=True, env=subprocess_env(), cwd=work, timeout=120)
    assert again.returncode == 2 and "exists" in again.stderr and again.stderr.count("\n") == 1
