"""The exported LangGraph module: compiles, is safe for any trace content, replays like `replaykit replay`."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("langgraph")

from replaykit.core.replay.replay import replay_run
from replaykit.core.trace.ir import LLMResponse, Message, RunHeader, Source, TextPart, ToolCallPart, ToolSpec
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore, utc_now_iso
from replaykit.exporters import export, langgraph_source

from .lg_fixtures import BUILDERS, hermes_traces

ROOT = Path(__file__).resolve().parents[2]
VOLATILE = ("replay_duration",)


def _stable(document: dict[str, Any]) -> dict[str, Any]:
    doc = {k: v for k, v in document.items() if k not in VOLATILE}
    doc["steps"] = [{k: v for k, v in s.items() if k != "t_replay"} for s in doc["steps"]]
    doc["timing"] = [{k: v for k, v in s.items() if k != "t_replay"} for s in doc["timing"]]
    return doc


def _run_module(path: Path) -> subprocess.CompletedProcess[str]:
    # No PYTHONPATH: the generated module needs langgraph, not replaykit.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=180,
                          cwd=path.parent)


def _data_of(source: str) -> Any:
    """RUN_DATA read back without executing anything: the literal strings of its json.loads call."""
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "RUN_DATA":
            call = node.value
            assert isinstance(call, ast.Call) and len(call.args) == 1
            return json.loads(ast.literal_eval(call.args[0]))
    raise AssertionError("no RUN_DATA")


_HARNESS = """
import contextlib, io, json, runpy, sys
out = []
for path in sys.argv[1:]:
    sys_argv, sys.argv = sys.argv, [path]  # as `python path` runs it
    buffer = io.StringIO()
    code = 0
    with contextlib.redirect_stdout(buffer):
        try:
            runpy.run_path(path, run_name="__main__")
        except SystemExit as exc:
            code = exc.code or 0
    sys.argv = sys_argv
    out.append({"code": code, "stdout": buffer.getvalue()})
print(json.dumps(out))
"""


def test_exported_module_replays_like_replaykit_replay(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    runs = [store.load(build(store)) for build in BUILDERS.values()] + [Run.load(p) for p in hermes_traces()]
    paths = []
    for n, run in enumerate(runs):
        out = tmp_path / f"graph_{n}.py"
        info = export(run, "langgraph", out)
        assert info["compiled"] is True and info["steps"] == len(run.steps)
        assert out.stat().st_mode & 0o777 == 0o600
        paths.append(out)
    # Each module runs as __main__ (one interpreter for all of them: langgraph imports once).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", _HARNESS, *map(str, paths)], capture_output=True, text=True,
                          env=env, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout)
    for run, result in zip(runs, results, strict=True):
        assert result["code"] == 0, run.run_id
        assert _stable(json.loads(result["stdout"])) == _stable(replay_run(run)), run.run_id


def test_module_is_readable_and_editable(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    run = store.load(BUILDERS["weather"](store))
    out = tmp_path / "graph.py"
    export(run, "langgraph", out)
    source = out.read_text()
    tree = ast.parse(source)
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert {"get_weather", "write_file", "build_graph", "main"} <= functions
    assert "StateGraph(" in source and "ToolNode(" in source and "tools_condition" in source
    # Replacing a tool body with real code changes the result the graph sees: it is really used.
    patched = source.replace(
        '    return _ROUTER[0].answer(TOOL_SPECS[0]["name"], arguments)',
        '    return json.dumps({"temp_c": 99, "city": arguments["city"]})', 1)
    assert patched != source
    script = tmp_path / "use_graph.py"
    (tmp_path / "patched_graph.py").write_text(patched)
    script.write_text(
        "import json\n"
        "from patched_graph import build_graph, HEADER, EVENTS, Record, drive, lc_to_ir\n"
        "g = build_graph(live_model=lambda messages, tools: {'message': {'role': 'assistant', 'parts': "
        "[{'type': 'text', 'text': 'live after ' + messages[-1]['parts'][0]['content']}]}})\n"
        "print(json.dumps([lc_to_ir(m) for m in drive(g, g.replay_record)]))\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert done.returncode == 0, done.stderr[-2000:]
    messages = json.loads(done.stdout)
    assert messages[-1]["parts"][0]["text"] == 'live after {"temp_c": 99, "city": "Paris"}'


def test_cli_export_and_errors(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    run_id = BUILDERS["sample"](store)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = tmp_path / "g.py"
    cmd = [sys.executable, "-m", "replaykit", "export", run_id, "--format", "langgraph", "-o", str(out),
           "--store", str(store.root), "--json"]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["run_id"] == run_id and doc["format"] == "langgraph" and doc["compiled"] is True
    again = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert again.returncode == 2 and "exists" in again.stderr and "Traceback" not in again.stderr


_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
_name = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=20)


def _hostile_run(store: RunStore, run_id: str, names: list[str], texts: list[str]) -> Run:
    header = RunHeader(run_id=run_id, created_at=utc_now_iso(), source=Source(framework=texts[0][:10] or "x"),
                       title=texts[-1])
    rec = Recorder(header, store.create(header))
    tools = [ToolSpec(name=n, description=t, parameters={"type": "object", "properties": {t or "k": {"type": "string"}}})
             for n, t in zip(names, texts, strict=False)]
    msgs = [Message(role="system", parts=[TextPart(text=texts[0])]), Message(role="user", parts=[TextPart(text=texts[-1])])]
    calls = [ToolCallPart(id=f"c{i}", name=n, arguments={"k": t}) for i, (n, t) in enumerate(zip(names, texts, strict=False))]
    answer = Message(role="assistant", parts=calls)
    rec.llm_call(msgs, LLMResponse(message=answer, finish_reason="tool_calls"), tools=tools)
    for call, text in zip(calls, texts, strict=False):
        rec.tool_call(call.id, call.name, call.arguments, result=text)
    rec.run_end(texts[0])
    rec.close()
    return store.load(run_id)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(_name, min_size=1, max_size=4, unique=True), texts=st.lists(_text, min_size=1, max_size=4))
def test_any_trace_content_stays_data(tmp_path_factory: pytest.TempPathFactory, names: list[str],
                                      texts: list[str]) -> None:
    store = RunStore(tmp_path_factory.mktemp("fuzz"))
    run = _hostile_run(store, "fuzz", names, texts)
    source = langgraph_source.render(run)
    compile(source, "graph.py", "exec")
    data_block = source.split("RUN_DATA = json.loads(\n")[1].split("\n)\n")[0]
    assert data_block.isascii() and all(line[4] in "'\"" for line in data_block.splitlines())
    data = _data_of(source)
    assert data["header"] == run.header.model_dump(mode="json", exclude_none=True)
    assert data["events"] == [e.model_dump(mode="json", exclude_none=True) for e in run.events]
    # No trace text appears in the program outside the data literal.
    tree = ast.parse(source)
    program = [n for n in tree.body if not (isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "RUN_DATA")]
    identifiers = {n.name for n in program if isinstance(n, ast.FunctionDef)}
    assert all(i.isascii() and i.isidentifier() for i in identifiers)


def test_hostile_run_executes_as_data(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    evil = ['"); import os; os.system("touch PWNED"); ("', "'''\n\"\"\"", "\u2028\x00\\", "__import__"]
    run = _hostile_run(store, "evil", ["x\"); os.system('touch PWNED') #", "class", "del", "__init__"], evil)
    out = tmp_path / "evil.py"
    export(run, "langgraph", out)
    done = _run_module(out)
    assert done.returncode == 0, done.stderr[-2000:]
    assert not (tmp_path / "PWNED").exists()
    assert _stable(json.loads(done.stdout)) == _stable(replay_run(run))


def test_exported_module_checkpoints_every_node_with_checkpoint_db(tmp_path: Path) -> None:
    run = Run.load(hermes_traces()[0])
    out = tmp_path / "graph.py"
    export(run, "langgraph", out)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

    def module(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, str(out), *args], capture_output=True, text=True, env=env,
                              timeout=180, cwd=tmp_path)

    plain = module()
    db = tmp_path / "cp.sqlite"
    checkpointed = module("--checkpoint-db", str(db))
    assert plain.returncode == checkpointed.returncode == 0, checkpointed.stderr
    assert _stable(json.loads(checkpointed.stdout)) == _stable(json.loads(plain.stdout))
    assert db.stat().st_mode & 0o777 == 0o600
    import sqlite3

    with sqlite3.connect(db) as conn:
        (count,), = conn.execute("SELECT COUNT(*) FROM checkpoints WHERE thread_id = ?", (f"replay-{run.run_id}",))
    assert count >= len(run.steps)  # at least one checkpoint per node (model step or tools step)
    again = module("--checkpoint-db", str(db))  # the thread is taken: a one-line error, exit 2
    assert again.returncode == 2 and "already has checkpoints" in again.stderr and again.stderr.count("\n") == 1
    assert module("--checkpoint-db", str(db), "--thread-id", "second").returncode == 0


# ------------------------------------------------------------- porting a tool body (issue 35)

_ECHO_STUB = '''def harness_echo(**arguments: Any) -> Any:
    """Tool TOOL_SPECS[0] (see its name, description and JSON schema there)."""
    return _ROUTER[0].answer(TOOL_SPECS[0]["name"], arguments)'''


def _ported(source: str, body: str) -> str:
    assert _ECHO_STUB in source
    return source.replace(_ECHO_STUB, "def harness_echo(**arguments: Any) -> Any:\n" + body)


def test_a_correct_tool_body_conforms_and_a_wrong_one_is_named(tmp_path: Path) -> None:
    """The module says to replace a tool's body with the real implementation. A body that returns the
    recorded result conforms (exit 0, the same document, said to have run for real); a wrong body fails
    in one screen naming the tool, step, user turn, expected and actual value, with no traceback."""
    run = Run.load(ROOT / "tests" / "fixtures" / "hermes" / "two_turns.jsonl")
    source = langgraph_source.render(run)
    correct = '    return json.dumps({"echo": arguments["text"].upper()})\n'
    wrong = '    return json.dumps({"echo": arguments["text"]})\n'
    raising = '    raise OSError("disk on fire")\n'
    results = {}
    for name, body in (("stub", None), ("correct", correct), ("wrong", wrong), ("raising", raising)):
        path = tmp_path / f"graph_{name}.py"
        path.write_text(source if body is None else _ported(source, body))
        results[name] = _run_module(path)
    stub, good = results["stub"], results["correct"]
    assert stub.returncode == 0 and good.returncode == 0, good.stderr[-2000:]
    assert "ran for real and matched the record: harness_echo (2 calls)" in good.stderr
    expected = _stable(json.loads(stub.stdout))
    got = _stable(json.loads(good.stdout))
    assert got["counters"]["tool_executions"] == 2 and got["counters"]["served_tool_steps"] == 2
    for doc in (expected, got):
        doc["counters"] = {}
    assert got == expected  # the same steps and messages: the body reproduced the record
    bad = results["wrong"]
    assert bad.returncode == 1 and bad.stdout == ""
    lines = bad.stderr.strip().splitlines()
    assert "Traceback" not in bad.stderr and len(lines) <= 6, bad.stderr
    assert lines[0] == "error: tool 'harness_echo' does not match the record (step 1, user turn 1, call call_001)"
    assert """expected:  '{"echo": "HELLO REPLAYKIT"}'""" in bad.stderr
    assert """actual:    '{"echo": "hello replaykit"}'""" in bad.stderr
    assert "arguments: '{\"text\":\"hello replaykit\"}'" in bad.stderr
    boom = results["raising"]
    assert boom.returncode == 1 and "Traceback" not in boom.stderr
    assert "tool 'harness_echo' does not match the record (step 1," in boom.stderr and "disk on fire" in boom.stderr


def test_build_graph_signature_is_the_documented_one(tmp_path: Path) -> None:
    """docs/langgraph.md documents build_graph's parameters; the exported module has exactly those."""
    import inspect
    import re

    store = RunStore(tmp_path / "store")
    run = store.load(BUILDERS["weather"](store))
    out = tmp_path / "graph_doc.py"
    export(run, "langgraph", out)
    namespace: dict[str, Any] = {}
    exec(compile(out.read_text(), str(out), "exec"), namespace)  # defines only: __name__ is not __main__
    documented = re.search(r"`build_graph\(([^)]*)\)`", (ROOT / "docs" / "langgraph.md").read_text())
    assert documented is not None
    parameters = inspect.signature(namespace["build_graph"]).parameters.values()
    assert documented.group(1) == ", ".join(f"{p.name}={p.default!r}" for p in parameters)
