"""The live-tool ladder: rung order, one wording, guard only in front of executions, stdlib only, and
wired to a play's cursor (``LiveTools``) with ``--tools-module``."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from replaykit.core.errors import BadInput
from replaykit.core.replay import tool_ladder
from replaykit.core.replay.tool_ladder import Found, climb, unavailable_text


def _guard(name: str, arguments: object) -> tuple[str, str] | None:
    return ("[replaykit dry-run] blocked", "dry_run") if name.startswith("write") else None


def test_rungs_in_order() -> None:
    served = lambda: Found("from the record")  # noqa: E731
    stand_in = lambda: Found("recorded elsewhere")  # noqa: E731
    impl = lambda **kw: {"ran": kw}  # noqa: E731
    assert climb("read", {}, served=served, guard=_guard, implementation=impl).rung == "served"
    blocked = climb("write_file", {}, guard=_guard, implementation=impl, stand_in=stand_in)
    assert (blocked.rung, blocked.status, blocked.executed) == ("guard", "dry_run", False)
    ran = climb("read", {"a": 1}, guard=_guard, implementation=impl, stand_in=stand_in)
    assert (ran.rung, ran.content, ran.provenance, ran.executed) == ("implementation", '{"ran": {"a": 1}}', "live",
                                                                      True)
    assert climb("read", {}, guard=_guard, stand_in=stand_in).rung == "stand_in"
    # No implementation: nothing would execute, so the guard is not asked (a stand-in still answers).
    assert climb("write_file", {}, guard=_guard, stand_in=stand_in).content == "recorded elsewhere"
    last = climb("write_file", {}, guard=_guard)
    assert (last.rung, last.status, last.provenance, last.content) == (
        "unavailable", "unavailable", "synthetic", unavailable_text("write_file"))
    assert last.is_error


def test_a_failing_implementation_is_a_result() -> None:
    def boom(**_kw: object) -> str:
        raise ValueError("no such city")

    answer = climb("weather", {"city": "x"}, implementation=boom)
    assert (answer.status, answer.executed, answer.is_error) == ("error", True, True)
    assert answer.content == "Error: ValueError: no such city"


#: replaykit modules the ladder may import: embedded before it in generated code, stdlib-only themselves
EMBEDDED_BEFORE = {"replaykit.core.trace.bridge"}


def test_the_ladder_module_is_stdlib_only() -> None:
    """The generated LangGraph module embeds it verbatim: no third-party import, and no replaykit import but
    the stdlib-only modules embedded before it (the bridge rule)."""
    import importlib
    import sys

    def imports(module: object) -> set[str]:
        tree = ast.parse(inspect.getsource(module))  # type: ignore[arg-type]
        names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        return names | {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}

    names = imports(tool_ladder)
    assert {n for n in names if n.startswith("replaykit")} <= EMBEDDED_BEFORE, names
    for embedded in EMBEDDED_BEFORE:
        names |= {n for n in imports(importlib.import_module(embedded)) if not n.startswith("replaykit")}
    tops = {n.split(".")[0] for n in names if not n.startswith("replaykit")}
    assert tops - {"__future__"} <= set(sys.stdlib_module_names), tops


def test_live_tools_on_a_cursor_with_a_tools_module(tmp_path: Path) -> None:
    from replaykit.core.replay.live_tools import LiveTools
    from replaykit.core.replay.play import PlayOptions, start_play
    from replaykit.core.trace.store import RunStore
    from replaykit.testing.engine_runs import record_sample_run

    module = tmp_path / "my_tools.py"
    module.write_text("def read_file(path):\n    return 'real ' + path\n\n"
                      "def write_file(path, content):\n    raise AssertionError('must be dry-run')\n")
    store = RunStore(tmp_path / "store")
    run = store.load(record_sample_run(store, "src"))
    options = PlayOptions(base_url="http://127.0.0.1:9/v1", model="m", store=store, cut=0,
                          extra={"tools_module": str(module)})
    session = start_play(run, options, engine="test")
    tools = LiveTools(session.cursor, options)
    assert tools.answer("c1", "read_file", {"path": "new.txt"}).content == "real new.txt"
    assert tools.answer("c2", "write_file", {"path": "a", "content": "b"}).status == "dry_run"
    recorded = tools.answer("c3", "web_search", {"query": "weather Paris"})  # no implementation: stand-in
    assert recorded.rung == "stand_in"
    assert session.cursor.counters.tool_executions == 1
    session.finish("done")
    events = [e for e in store.load(session.run_id).tool_calls()]
    assert [(e.name, e.status) for e in events] == [("read_file", "ok"), ("write_file", "dry_run"),
                                                    ("web_search", "ok")]


def test_offline_never_executes(tmp_path: Path) -> None:
    from replaykit.core.replay.live_tools import LiveTools
    from replaykit.core.replay.play import PlayOptions, start_play
    from replaykit.core.trace.store import RunStore
    from replaykit.testing.engine_runs import record_sample_run

    store = RunStore(tmp_path / "store")
    run = store.load(record_sample_run(store, "src"))
    ran: list[str] = []
    options = PlayOptions(store=store, serve_only=True, extra={"tool_impls": {"read_file": ran.append}})
    session = start_play(run, options, engine="test")
    answer = LiveTools(session.cursor, options).answer("x", "read_file", {"path": "elsewhere"})
    assert answer.rung == "unavailable" and ran == []


def test_a_bad_tools_module_is_one_line(tmp_path: Path) -> None:
    from replaykit.core.replay.live_tools import load_tools_module

    bad = tmp_path / "bad.py"
    bad.write_text("raise RuntimeError('nope')\n")
    with pytest.raises(BadInput, match="importing it failed"):
        load_tools_module(bad)
    with pytest.raises(BadInput, match="not a Python file"):
        load_tools_module(tmp_path / "missing.py")
