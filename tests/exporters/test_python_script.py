"""The standalone script end to end: exported by the real CLI, run as a real ``python -I`` process."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.exporters import export
from replaykit.exporters._embed import embedded_modules, top_level_names
from replaykit.testing.engine_runs import record_sample_run
from tests.conftest import FIXTURES, subprocess_env
from tests.exporters.script_support import make_run, masked, run_script

HERMES_FIXTURES = sorted((FIXTURES / "hermes").glob("*.jsonl"))
TRACE_FIXTURES = [*HERMES_FIXTURES, FIXTURES / "schema" / "v1.jsonl", FIXTURES / "schema" / "v2.jsonl"]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "replaykit", *args], capture_output=True, text=True,
                          env=subprocess_env(), timeout=120)


def exported(tmp_path: Path, run: Run, name: str = "run.py") -> Path:
    path = tmp_path / name
    export(run, "python", path)
    return path


def document(proc: subprocess.CompletedProcess[str]) -> dict:
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


# ------------------------------------------------------------------------------ equals replaykit replay


def test_cli_export_then_script_equals_replaykit_replay(tmp_path: Path, store_dir: Path) -> None:
    run_id = record_sample_run(RunStore(store_dir))
    out = tmp_path / "run.py"
    info = json.loads(cli("export", run_id, "--format", "python", "-o", str(out), "--json").stdout)
    assert info["run_id"] == run_id and info["steps"] == 9 and info["bytes"] == out.stat().st_size
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    before = out.read_bytes()
    proc = run_script(out)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("\n{") == 0 and proc.stdout.startswith("{")  # exactly one JSON document
    assert "step    0 llm" in proc.stderr  # progress goes to stderr
    expected = document(cli("replay", run_id, "--json"))
    assert masked(json.loads(proc.stdout)) == masked(expected)
    assert out.read_bytes() == before
    for args in (["--from", "3", "--to", "6"], ["--from", "8"], ["--to", "0"]):
        assert masked(document(run_script(out, *args))) == masked(document(cli("replay", run_id, "--json", *args)))


@pytest.mark.parametrize("fixture", TRACE_FIXTURES, ids=[p.stem for p in TRACE_FIXTURES])
def test_recorded_fixture_replays_identically(tmp_path: Path, fixture: Path) -> None:
    out = tmp_path / "run.py"
    export(Run.load(fixture), "python", out)
    got = document(run_script(out, "--quiet"))
    assert got["source_framework"] == Run.load(fixture).header.source.framework
    assert got["counters"]["provider_calls"] == 0 and got["counters"]["tool_executions"] == 0
    assert masked(got) == masked(document(cli("replay", str(fixture), "--json")))


def test_export_refuses_to_overwrite_and_reports_bad_input(tmp_path: Path, store_dir: Path) -> None:
    run_id = record_sample_run(RunStore(store_dir))
    out = tmp_path / "run.py"
    out.write_text("keep me")
    proc = cli("export", run_id, "--format", "python", "-o", str(out))
    assert proc.returncode == 2 and "exists" in proc.stderr and "Traceback" not in proc.stderr
    assert out.read_text() == "keep me"
    assert cli("export", run_id, "--format", "python", "-o", str(out), "--force").returncode == 0
    missing = cli("export", run_id, "--format", "python", "-o", str(tmp_path / "no" / "dir" / "run.py"))
    assert missing.returncode == 2 and "Traceback" not in missing.stderr


def test_script_needs_nothing_but_the_standard_library(tmp_path: Path) -> None:
    out = exported(tmp_path, make_run(2))
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": "/nonexistent"}
    proc = run_script(out, "--quiet", env=env)  # -I: no site-packages, no PYTHONPATH, no replaykit
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["final_answer"] == "done"
    source = out.read_text()
    assert source.startswith("#!/usr/bin/env python3\n")
    assert "replaykit" not in "".join(line for line in source.splitlines() if line.startswith(("import", "from")))


def test_two_exports_differ_only_in_their_data_and_dump_line_by_line(tmp_path: Path) -> None:
    a_path = exported(tmp_path, make_run(3, results=["r0", "r1", "r2"]), "a.py")
    b_path = exported(tmp_path, make_run(3, results=["r0", "CHANGED", "r2"]), "b.py")
    a, b = a_path.read_text().splitlines(), b_path.read_text().splitlines()
    changed = [i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y]
    # the code is the same line for line; only the packed trace (its literal lines) differs
    start = a.index("TRACE_ZLIB_BASE64 = (")
    assert changed and min(changed) > start and b.index("TRACE_ZLIB_BASE64 = (") == start
    assert a[:start] == b[:start]
    # --dump-trace prints one event per line: the readable way to diff two exports
    dump_a = run_script(a_path, "--dump-trace").stdout.splitlines()
    dump_b = run_script(b_path, "--dump-trace").stdout.splitlines()
    assert len(dump_a) == len(dump_b)
    differ = [j for j, (x, y) in enumerate(zip(dump_a, dump_b, strict=True)) if x != y]
    assert any('"CHANGED"' in dump_b[j] for j in differ)
    assert all(json.loads(dump_b[j].rstrip(",")) for j in differ)  # each a whole event on its own line


# ------------------------------------------------------------------------------------------- flags


def test_stop_at_shows_the_pending_step(tmp_path: Path) -> None:
    out = exported(tmp_path, make_run(2))
    doc = document(run_script(out, "--stop-at", "2", "--quiet"))
    assert [s["step"] for s in doc["steps"]] == [0, 1]
    assert doc["stopped_at"]["step"] == 2 and doc["stopped_at"]["kind"] == "llm"
    roles = [m["role"] for m in doc["stopped_at"]["request_messages"]]
    assert roles == ["system", "user", "assistant", "tool"]
    assert doc["step_count"] == 5
    tool = document(run_script(out, "--stop-at", "1", "--quiet"))["stopped_at"]
    assert tool["kind"] == "tool" and tool["arguments"] == {"q": "query 0"}
    first = document(run_script(out, "--stop-at", "0", "--quiet"))
    assert first["steps"] == [] and first["stopped_at"]["step"] == 0
    bad = run_script(out, "--stop-at", "9")
    assert bad.returncode == 2 and "out of range" in bad.stderr and bad.stdout == ""


def test_range_errors_are_one_line(tmp_path: Path) -> None:
    out = exported(tmp_path, make_run(2))
    for args in (["--from", "7"], ["--from", "3", "--to", "1"], ["--to", "-2"]):
        proc = run_script(out, *args)
        assert proc.returncode == 2 and proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1


def test_timed_follows_the_original_timeline(tmp_path: Path) -> None:
    out = exported(tmp_path, make_run(2, tick=0.05))
    doc = document(run_script(out, "--timed", "--quiet"))
    steps = doc["steps"]
    assert steps[-1]["t_replay"] >= steps[-1]["t_original"] - 1e-3  # it waited for the timeline
    assert all(abs(s["delta"]) < 1.0 for s in steps)  # generous: the test machine may be loaded
    assert doc["timed"]["max_abs_delta"] == max(abs(s["delta"]) for s in steps)
    assert [t["delta"] for t in doc["timing"]] == [s["delta"] for s in steps]
    assert doc["replay_duration"] >= steps[-1]["t_original"] - 1e-3


def test_edit_tool_result_invalidates_later_steps(tmp_path: Path) -> None:
    out = exported(tmp_path, make_run(2))
    proc = run_script(out, "--edit", "1", json.dumps({"result": "EDITED <result>"}))
    doc = document(proc)
    assert doc["mode"] == "replay-edit"
    assert doc["steps"][1]["provenance"] == "edited"
    assert doc["invalidated_steps"] == [2, 3, 4]
    assert all(doc["steps"][i].get("invalidated") for i in (2, 3, 4)) and "invalidated" not in doc["steps"][0]
    assert "INVALIDATED" in proc.stderr
    # later recorded requests predate the edit; the conversation a continuation starts from has it
    after = doc["edit"]["conversation_after_edit"]
    contents = [p.get("content") for m in after for p in m["parts"] if p["type"] == "tool_result"]
    assert contents == ["EDITED <result>"] and after[-2]["role"] == "assistant"
    assert doc["counters"]["provider_calls"] == 0 and doc["counters"]["tool_executions"] == 0


def test_edit_args_and_response(tmp_path: Path) -> None:
    out = exported(tmp_path, make_run(2))
    args = document(run_script(out, "--quiet", "--edit", "1", json.dumps({"args": {"q": "other"}})))
    assert args["edit"]["result"].startswith("not available")
    assert args["steps"][1]["status"] == "unavailable" and args["invalidated_steps"] == [2, 3, 4]
    assert "search({\"q\":\"other\"})" in args["steps"][1]["summary"]
    # new arguments equal to another recorded call of the same tool: that result is served
    same = document(run_script(out, "--quiet", "--edit", "1", json.dumps({"args": {"q": "query 1"}})))
    assert same["steps"][1]["status"] == "ok" and same["steps"][1]["summary"].endswith("result 1")
    response = document(run_script(out, "--quiet", "--edit", "4", json.dumps({"response": "a new answer"})))
    assert response["final_answer"] == "done"  # the run's recorded end; the edited step says the new text
    assert response["steps"][4]["summary"] == "model: a new answer" and response["invalidated_steps"] == []
    early = document(run_script(out, "--quiet", "--edit", "0", json.dumps({"response": "no tools"})))
    assert early["invalidated_steps"] == [1, 2, 3, 4]
    calls = {"content": "checking", "tool_calls": [{"function": {"name": "search", "arguments": '{"q": "x"}'}}]}
    with_calls = document(run_script(out, "--quiet", "--edit", "4", json.dumps({"response": calls})))
    assert with_calls["steps"][4]["summary"] == 'model -> search({"q":"x"})'
    assert with_calls["steps"][4]["status"] == "tool_calls"
    for bad in (["1", '{"response": "x"}'], ["0", '{"args": {}}'], ["1", "not json"], ["1", '{"x": 1}'],
                ["99", '{"result": "x"}'], ["0", '{"response": 5}'], ["0", '{"response": [{"arguments": {}}]}']):
        proc = run_script(out, "--edit", *bad)
        assert proc.returncode == 2 and proc.stdout == "" and "error" in proc.stderr, bad


def test_diff_compares_content_and_never_executes_the_other_file(tmp_path: Path) -> None:
    a = exported(tmp_path, make_run(2), "a.py")
    same = exported(tmp_path, make_run(2), "same.py")  # other ids and times, same content
    other = exported(tmp_path, make_run(2, results=["result 0", "result X"]), "b.py")
    equal = run_script(a, "--diff", str(same))
    assert equal.returncode == 0, equal.stderr
    assert json.loads(equal.stdout)["equal"] is True
    differ = run_script(a, "--diff", str(other))
    assert differ.returncode == 1
    first = json.loads(differ.stdout)["first_divergence"]
    assert first["step"] == 3 and first["field"] == "result" and first["b"] == "result X"

    # A file that would leave a mark if it were imported or executed: --diff only parses it.
    marker = tmp_path / "executed"
    trap = tmp_path / "trap.py"
    data = a.read_text().split("TRACE_ZLIB_BASE64 = ", 1)[1]
    trap.write_text(f"open({str(marker)!r}, 'w').write('x')\nTRACE_ZLIB_BASE64 = {data}")
    proc = run_script(a, "--diff", str(trap))
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists()
    (tmp_path / "plain.py").write_text("x = 1\n")
    (tmp_path / "broken.py").write_text("TRACE_JSON = '{\"header\": {}, \"events\": [1, 2]}'\n")
    (tmp_path / "syntax.py").write_text("TRACE_JSON = (\n")
    (tmp_path / "damaged.py").write_text("TRACE_ZLIB_BASE64 = 'eNqrVspITUxJLVKyUqhWKirNi89MATKV'\n")
    (tmp_path / "not_base64.py").write_text("TRACE_ZLIB_BASE64 = '{\"header\": {}}'\n")
    for bad in ("missing.py", "plain.py", "broken.py", "syntax.py", "damaged.py", "not_base64.py"):
        proc = run_script(a, "--diff", str(tmp_path / bad))
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, bad


def test_size_grows_linearly_with_steps(tmp_path: Path) -> None:
    sizes = {n: exported(tmp_path, make_run(n), f"r{n}.py").stat().st_size for n in (25, 50, 100)}
    per_step_low = (sizes[50] - sizes[25]) / 50  # two steps per round
    per_step_high = (sizes[100] - sizes[50]) / 100
    assert 0.8 < per_step_high / per_step_low < 1.25  # quadratic growth (full requests) would double it


def test_html_report_escapes_everything(tmp_path: Path) -> None:
    hostile = "<script>alert(1)</script>\"'&"
    out = exported(tmp_path, make_run(1, answer=hostile, results=[hostile], run_id="html-run"))
    report = tmp_path / "report.html"
    doc = document(run_script(out, "--quiet", "--html", str(report)))
    html = report.read_text()
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "http://" not in html and "https://" not in html
    assert stat.S_IMODE(report.stat().st_mode) == 0o600
    assert doc["final_answer"] == hostile


def test_dump_trace_is_the_trace(tmp_path: Path) -> None:
    run = Run.load(HERMES_FIXTURES[0])
    out = exported(tmp_path, run)
    dumped = document(run_script(out, "--dump-trace"))
    lines = HERMES_FIXTURES[0].read_text().splitlines()
    assert dumped["header"] == json.loads(lines[0])
    assert dumped["events"] == [json.loads(line) for line in lines[1:] if line.strip()]


def test_script_body_never_shadows_an_engine_name() -> None:
    from replaykit.exporters import python_script as ps

    embedded_modules(ps.ENGINE_MODULES)  # checks that no two define the same name (the export does not)
    engine = top_level_names(ps.engine_source())
    body = top_level_names(ps.template_body())
    assert {"build_replay_document", "step_summary", "RangeError", "SameFiller"} <= engine
    assert {"main", "replay", "live_replay", "diff_scripts"} <= body
    assert not engine & body


def test_compile_check_compiles_what_depends_on_the_run_and_all_of_anything_else() -> None:
    from replaykit.exporters import python_script as ps

    source = ps.render(make_run(1))
    compile(source, "run.py", "exec", dont_inherit=True)  # the whole script compiles (as in every test here)
    ps.compile_check(source, "run.py")
    broken_metadata = source.replace("RUN_ID, SOURCE_FRAMEWORK", "RUN_ID SOURCE_FRAMEWORK", 1)
    broken_code = source.replace("def main(", "def main((", 1)  # not the fixed code: compiled whole
    broken_docstring = source.replace('"""Standalone replay', '"""Standalone replay"""', 1)
    for broken in (broken_metadata, broken_code, broken_docstring):
        with pytest.raises(SyntaxError):
            ps.compile_check(broken, "run.py")


# ------------------------------------------------------------------------------- speed paths, same results


def test_plain_replay_options_are_argparse_defaults() -> None:
    """``python run.py`` with no argument skips argparse: the options are exactly the parser's defaults."""
    import argparse

    namespace = _script_namespace()
    parser = argparse.ArgumentParser()
    for flag, keywords in namespace["OPTIONS"]:
        parser.add_argument(flag, **keywords)
    assert vars(namespace["parse_args"]([])) == vars(parser.parse_args([]))
    assert vars(namespace["parse_args"](["--quiet"])) == {**vars(parser.parse_args([])), "quiet": True}


def test_output_pieces_are_the_readable_document() -> None:
    """The document is written in pieces through one C encoder: the text of one ``json.dumps`` per top-level
    field, step and message, laid out one per line (as before), in either escaping."""
    namespace = _script_namespace()
    odd = {"a": [1, 2.5, float("nan"), None, True, "x\u2028\"\\\ud800", {"k": object}]}
    document = {"steps": [{"step": i, "t": i / 3, "s": "…" * i} for i in range(150)], "empty": [],
                "nested": odd, "messages": [odd] * 70, "n": 1.0, "none": None}
    for ascii_only in (False, True):
        dump = json.JSONEncoder(ensure_ascii=ascii_only, default=str).encode
        fields = []
        for key, value in document.items():
            if isinstance(value, list) and value:
                fields.append(f"  {dump(key)}: [\n    " + ",\n    ".join(map(dump, value)) + "\n  ]")
            else:
                fields.append(f"  {dump(key)}: {dump(value)}")
        expected = "{\n" + ",\n".join(fields) + "\n}"
        assert "".join(namespace["readable_json"](document, ascii_only=ascii_only)) == expected
        assert namespace["json_encoder"](ascii_only)(odd) == dump(odd)
    assert namespace["readable_json"]({}, ascii_only=False) == ["{}"]
    assert namespace["readable_json"]([1, "a"], ascii_only=False) == ['[1, "a"]']


def test_compile_check_compiles_a_literal_it_did_not_write() -> None:
    """The check leaves out the packed trace's lines only when they are exactly what ``trace_literal``
    writes (base64 between quotes): any other text there is compiled."""
    from replaykit.exporters import python_script as ps

    source = ps.render(make_run(1))
    ps.compile_check(source, "run.py")
    opening = 'TRACE_ZLIB_BASE64 = (\n    "'
    assert source.count(opening) == 1
    for bad in ('")\nimport os\nx = ("', 'a"b', "\\", " ", "\u00e9"):
        broken = source.replace(opening, opening + bad, 1)
        assert ps._without_literal(broken) == broken
    for bad in ('a"b', '"'):
        with pytest.raises(SyntaxError):
            ps.compile_check(source.replace(opening, opening + bad, 1), "run.py")
    assert ps.is_base64("QUJD+/==") and not ps.is_base64('QUJD"') and not ps.is_base64("\u00e9")


def _script_namespace() -> dict:
    from replaykit.exporters import python_script as ps
    from tests.exporters.script_support import load_script

    return load_script(ps.render(make_run(1)))
