"""What differs between Hermes releases, checked without running Hermes: the Tool Search bridge rule
(core.trace.bridge), the supported-version warning, state.db imports of 0.19.0 and 0.22 (unknown and
binary columns skipped and named, unknown schemas refused, nothing written by a failed import), and the
0.22 fixtures' requests reconstructed exactly (auxiliary calls and the marked re-issued attempt included)."""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from replaykit.adapters.hermes.reconstruct import attempt_bodies, auxiliary_bodies
from replaykit.adapters.hermes.versions import (
    TESTED_VERSIONS,
    supported,
    unsupported_warning,
    warn_if_unsupported,
)
from replaykit.core.trace.bridge import event_underlying, is_bridged, underlying_call
from replaykit.core.trace.ir import ErrorEvent
from replaykit.core.trace.run import Run

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "hermes"
FIX_22 = FIX / "0.22"
ROOT = Path(__file__).resolve().parents[3]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "replaykit", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


# ------------------------------------------------------------------ the bridge rule


@pytest.mark.parametrize(("name", "arguments", "expected"), [
    ("tool_call", {"calls": [{"name": "todo_list", "arguments": {"todos": []}}]}, ("todo_list", {"todos": []})),
    ("tool_call", '{"calls": [{"name": "harness_echo", "arguments": "{\\"text\\": \\"hi\\"}"}]}',
     ("harness_echo", {"text": "hi"})),
    ("tool_call", {"name": "read_file", "arguments": None}, ("read_file", {})),  # the legacy single shape
    ("tool_call", {"calls": '[{"name": "x", "arguments": ""}]'}, ("x", {})),
    ("tool_call", {"calls": {"name": "x", "arguments": {"a": 1}}}, ("x", {"a": 1})),
])
def test_underlying_call_of_a_bridged_call(name, arguments, expected):
    assert underlying_call(name, arguments) == expected
    assert is_bridged(name, arguments)


@pytest.mark.parametrize(("name", "arguments"), [
    ("todo", {"calls": [{"name": "x", "arguments": {}}]}),  # not the bridge
    ("tool_call", {"calls": [{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}]}),  # a batch
    ("tool_call", {"calls": [{"name": "tool_call", "arguments": {}}]}),  # a bridge cannot invoke a bridge
    ("tool_call", "not json"), ("tool_call", {"calls": []}), ("tool_call", None), ("tool_call", {"calls": [3]}),
])
def test_anything_else_is_its_own_call(name, arguments):
    assert underlying_call(name, arguments) == (name, arguments)
    assert not is_bridged(name, arguments)


def test_what_the_recorder_saw_wins():
    recorded = {"name": "todo_list", "arguments": {"todos": [1]}}
    assert underlying_call("tool_call", {"calls": [{"name": "other", "arguments": {}}]}, recorded=recorded) \
        == ("todo_list", {"todos": [1]})
    assert event_underlying({"name": "tool_call", "arguments": None, "underlying": recorded}) == ("todo_list", {"todos": [1]})


# ------------------------------------------------------------------ versions


def test_supported_versions_and_the_warning(caplog):
    assert TESTED_VERSIONS == ("0.19.0", "0.22.2")
    for version in ("0.19.0", "0.22.2.post1", "0.21.3", "0.20.1.2"):
        assert supported(version) and unsupported_warning(version) is None
    for version in ("0.18.2", "0.23.0", "1.0", None, "main"):
        message = unsupported_warning(version)
        assert message is not None and "0.19.0, 0.22.2" in message and "\n" not in message
    with caplog.at_level(logging.WARNING, logger="replaykit.hermes"):
        assert warn_if_unsupported("0.23.1") is not None
        assert warn_if_unsupported("0.22.2.post1") is None
    assert [r.getMessage() for r in caplog.records] == [unsupported_warning("0.23.1")]


def test_plugin_load_on_an_unsupported_hermes_warns_once_and_still_records(tmp_path, monkeypatch, caplog):
    from replaykit.adapters.hermes import plugin

    class Ctx:
        def __init__(self) -> None:
            self.hooks: dict[str, object] = {}
            self.middleware: dict[str, object] = {}

        def register_middleware(self, kind, cb):
            self.middleware[kind] = cb

        def register_hook(self, name, cb):
            self.hooks[name] = cb

        def register_command(self, *args, **kwargs):
            pass

    monkeypatch.setattr(plugin, "_capture", None)
    monkeypatch.setattr(plugin, "build_capture", lambda: _capture_for(tmp_path, "0.30.0"))
    ctx = Ctx()
    with caplog.at_level(logging.WARNING, logger="replaykit.hermes"):
        plugin.register(ctx)
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and "Hermes 0.30.0 is outside the supported range" in warnings[0]
    assert {"llm_execution", "tool_execution"} <= set(ctx.middleware) and "pre_llm_call" in ctx.hooks
    ctx.hooks["pre_llm_call"](session_id="s1", user_message="hi", is_first_turn=True)
    ctx.hooks["on_session_end"](session_id="s1", completed=True)
    plugin._capture.close_all()
    run = Run.load(next((tmp_path / "store").glob("*.jsonl")))
    assert run.header.source.framework_version == "0.30.0" and run.user_turns()[0].message.text == "hi"


def _capture_for(root: Path, version: str):
    from replaykit.adapters.hermes.capture import HermesCapture
    from replaykit.core.trace.store import RunStore

    return HermesCapture(RunStore(root / "store"), hermes_version=version)


# ------------------------------------------------------------------ state.db imports


@pytest.mark.parametrize(("db", "recording"), [
    (FIX / "state.db", FIX / "two_turns.jsonl"),
    (FIX_22 / "state.db", FIX_22 / "two_turns.jsonl"),
    (FIX.parent / "hermes_export" / "0.22" / "two_turns.export.jsonl", FIX_22 / "two_turns.jsonl"),
], ids=["state-db-0.19.0", "state-db-0.22", "sessions-export-0.22"])
def test_import_state_db_of_each_version(tmp_path, db, recording):
    """A state.db of each release, and what `hermes sessions export` (0.22, jsonl) writes of the same session."""
    if not db.exists():
        pytest.skip(f"{db} not recorded")
    result = cli("import", str(db), "--format", "hermes-session", "--store", str(tmp_path / "s"), "--json")
    assert result.returncode == 0, result.stderr
    runs = [Run.load(Path(r["path"])) for r in json.loads(result.stdout)["runs"]]
    parent = next(r for r in runs if r.user_turns())
    recorded = Run.load(recording)
    assert [t.message.text for t in parent.user_turns()] == [t.message.text for t in recorded.user_turns()]
    assert [event_underlying(c)[0] for c in parent.tool_calls()] == [event_underlying(c)[0] for c in recorded.tool_calls()]
    assert parent.final_answer == recorded.final_answer


def _db_with_binary_column(tmp_path: Path) -> Path:
    db = tmp_path / "state.db"
    shutil.copyfile(FIX / "state.db", db)
    with sqlite3.connect(db) as conn:
        conn.execute("alter table messages add column display_identity TEXT")
        conn.execute("alter table messages add column future_flag INTEGER")
        conn.execute("update messages set display_identity = cast(x'ff00fe9a' as text), future_flag = 1")
        conn.execute("alter table sessions add column handle TEXT")
        conn.execute("update sessions set handle = cast(x'c3' as text)")
    return db


def test_unknown_and_binary_columns_are_skipped_and_named(tmp_path):
    db = _db_with_binary_column(tmp_path)
    result = cli("import", str(db), "--format", "hermes-session", "--store", str(tmp_path / "s"), "--json")
    assert result.returncode == 0, result.stderr
    entry = json.loads(result.stdout)["runs"][0]
    notes = " ".join(entry["warnings"])
    assert "display_identity" in notes and "future_flag" in notes
    run = Run.load(Path(entry["path"]))
    assert run.final_answer == Run.load(FIX / "two_turns.jsonl").final_answer


def test_an_unknown_schema_is_refused_in_one_line_and_writes_nothing(tmp_path):
    db = tmp_path / "state.db"
    with sqlite3.connect(db) as conn:
        conn.execute("create table sessions (id text, started_at real)")
        conn.execute("create table messages (session_id text, body blob)")
        conn.execute("insert into sessions values ('s1', 1.0)")
    store = tmp_path / "s"
    result = cli("import", str(db), "--format", "hermes-session", "--store", str(store))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "unknown state.db schema" in result.stderr
    assert not list(store.glob("*.jsonl")) if store.exists() else True


def test_a_failed_import_leaves_no_run_behind(tmp_path, monkeypatch):
    from replaykit.cli import main as cli_main
    from replaykit.core.trace import store as store_module

    original = store_module.RunWriter.append
    calls = {"n": 0}

    def failing_append(self, event):
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError("disk full")
        return original(self, event)

    monkeypatch.setattr(store_module.RunWriter, "append", failing_append)
    store = tmp_path / "s"
    try:
        code = cli_main.main(["import", str(FIX / "state.db"), "--format", "hermes-session", "--store", str(store)])
    except SystemExit as exc:
        code = exc.code
    assert code not in (0, None)
    assert not list(store.glob("*.jsonl"))


# ------------------------------------------------------------------ 0.22 fixtures


@pytest.mark.parametrize("name", ["tools_sequence", "two_turns", "retry_500", "codex_responses", "anthropic_messages"])
def test_022_fixture_reconstructs_every_request(name):
    path = FIX_22 / f"{name}.jsonl"
    if not path.exists():
        pytest.skip(f"{path} not recorded")
    run = Run.load(path)
    bodies = json.loads((FIX_22 / f"{name}.requests.json").read_text())
    auxiliary = auxiliary_bodies(run)
    agent = [b for b in bodies if b not in auxiliary]
    unhooked = [b for b in agent if "input" in b and str(b.get("instructions")).startswith("You name chat sessions.")]
    if name == "codex_responses":  # KNOWN GAP: Hermes fires no auxiliary hook for this title request
        assert len(unhooked) == 1 and not auxiliary
        agent.remove(unhooked[0])
    else:
        # Hermes 0.22 titles a new session with an auxiliary call (not in anthropic_messages mode):
        # kept, and never an agent step.
        assert len(auxiliary) == (0 if name == "anthropic_messages" else 1) and not unhooked
    assert len(agent) + len(auxiliary) + len(unhooked) == len(bodies)  # each auxiliary call one the server received
    assert attempt_bodies(run) == agent
    assert not any(body in auxiliary for body in attempt_bodies(run))
    assert len(run.steps) == len(run.llm_calls()) + len(run.tool_calls())
    if name == "retry_500":
        (error,) = [e for e in run.events if isinstance(e, ErrorEvent)]
        assert error.provider_details["observed"] is False and error.request is not None
