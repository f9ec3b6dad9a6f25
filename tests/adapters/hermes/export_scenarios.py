"""Real `hermes sessions export` files from real Hermes runs (offline, scripted server on 127.0.0.1).

Each scenario runs the installed Hermes with the replaykit plugin (the live recording), then Hermes's own
CLI in the same HERMES_HOME: ``hermes sessions export OUT`` (jsonl: every session of the home, one per
line) and ``hermes sessions export OUT --format trace --session-id ID`` per session (Hermes writes one
session per trace file; redaction left at Hermes's default, on). Written per scenario NAME:

- ``NAME.export.jsonl``: the jsonl export
- ``NAME.trace.jsonl`` (and ``NAME.child.trace.jsonl`` for a subagent's session): the trace exports
- ``NAME.recorded.jsonl`` (and ``NAME.child.recorded.jsonl``): the runs the plugin recorded live
- ``two_turns.save.json`` (Hermes 0.22): the session as ``/save json`` writes it (Hermes's own
  ``load_save_snapshot`` + ``render_session_for_save``)

Used by ``tests/fixtures/hermes_export/regenerate.py`` (the committed fixtures) and by the slow test that
exports and imports afresh.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replaykit.core.trace.run import Run
from replaykit.testing.hermes_harness import HermesSandbox
from replaykit.testing.scripted_server import (
    ScriptedServer,
    ToolCall,
    fail_first,
    hermes_default_policy,
    routed_policy,
    sequence_policy,
)

TOOL_SEARCH_OFF = "tools:\n  tool_search:\n    enabled: \"off\"\n"
_CHILD = sequence_policy([ToolCall("todo", {"todos": [{"id": "c1", "content": "child work", "status": "completed"}]})],
                         "Child finished: one todo written.")


def _scenarios() -> dict[str, dict[str, Any]]:
    """Fresh policies per call (a policy keeps its own position)."""
    return {
        # Hermes 0.22's default: Tool Search on (plugin tools and todo_list reached through `tool_call`)
        "tools": {"policy": hermes_default_policy(), "spec": {"turns": ["Please echo hello, then track it."]}},
        "tools_search_off": {"policy": hermes_default_policy(), "config": TOOL_SEARCH_OFF, "since": (0, 22),
                             "spec": {"turns": ["Please echo hello, then track it."]}},
        "two_turns": {"policy": hermes_default_policy(), "spec": {"turns": ["First: echo hello.", "Second: once more."]}},
        "subagent": {
            "policy": routed_policy([("CHILD-TASK", _CHILD)], sequence_policy(
                [ToolCall("delegate_task", {"goal": "CHILD-TASK: write one todo"})], "Parent finished after delegating.")),
            "spec": {"turns": ["Delegate a small task."], "toolsets": ["harness", "todo", "delegation"],
                     "wait_subagents": 30},
        },
        "retry_500": {"policy": fail_first(1, hermes_default_policy()), "spec": {"turns": ["Please echo hello."]}},
    }


NAMES = tuple(_scenarios())


def names_for(release: tuple[int, ...]) -> tuple[str, ...]:
    """The scenarios that mean something on a Hermes release (Tool Search exists from 0.22)."""
    return tuple(name for name, s in _scenarios().items() if release >= s.get("since", (0,)))


@dataclass
class Generated:
    name: str
    export: Path
    traces: list[Path] = field(default_factory=list)      # parent first
    recorded: list[Path] = field(default_factory=list)    # parent first, in the order of ``traces``
    session_ids: list[str] = field(default_factory=list)  # parent first
    save: Path | None = None  # two_turns on 0.22: the `/save json` snapshot


def generate(name: str, out: Path, work: Path) -> Generated:
    """Run scenario ``name`` in a sandbox under ``work``; write its files into ``out``."""
    scenario = _scenarios()[name]
    out.mkdir(parents=True, exist_ok=True)
    sandbox = HermesSandbox(work, extra_config=scenario.get("config", ""))
    with ScriptedServer(scenario["policy"]) as srv:
        sandbox.run_agent({"base_url": srv.base_url, **scenario["spec"]})
    runs = [Run.load(p) for p in sorted(sandbox.store.glob("*.jsonl"))]
    runs.sort(key=lambda r: r.header.lineage is not None)  # the parent first
    assert runs and runs[0].header.lineage is None, f"{name}: no top-level run recorded"
    result = Generated(name, out / f"{name}.export.jsonl")
    _hermes(sandbox, ["sessions", "export", str(result.export)])
    for n, run in enumerate(runs):
        stem = name if n == 0 else f"{name}.child" if n == 1 else f"{name}.child{n}"
        sid = str(run.header.session_id)
        trace = out / f"{stem}.trace.jsonl"
        _hermes(sandbox, ["sessions", "export", str(trace), "--format", "trace", "--session-id", sid])
        recorded = out / f"{stem}.recorded.jsonl"
        shutil.copyfile(sandbox.store / f"{run.run_id}.jsonl", recorded)
        result.traces.append(trace)
        result.recorded.append(recorded)
        result.session_ids.append(sid)
    if name == "two_turns":  # what `/save json` writes (Hermes 0.22), with Hermes's own code
        result.save = _save_json(sandbox, result.session_ids[0], out / f"{name}.save.json")
    return result


_SAVE_JSON = """
import sys
from hermes_state import SessionDB
try:
    from hermes_cli.session_export import load_save_snapshot, render_session_for_save
except ImportError:  # Hermes before 0.22 has no /save json
    raise SystemExit(0)
export = load_save_snapshot(SessionDB(), sys.argv[1], "json")
open(sys.argv[2], "w", encoding="utf-8").write(render_session_for_save(export, "json"))
"""


def _save_json(sandbox: HermesSandbox, session_id: str, target: Path) -> Path | None:
    import subprocess

    proc = subprocess.run([sandbox.python, "-c", _SAVE_JSON, session_id, str(target)], cwd=sandbox.cwd,
                          env=sandbox.env, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"/save json failed: {proc.stderr[-2000:]}")
    return target if target.is_file() else None


def _hermes(sandbox: HermesSandbox, args: list[str]) -> None:
    proc = sandbox.run_cli(args)
    target = Path(args[2])
    if proc.returncode != 0 or not target.is_file():
        raise RuntimeError(f"hermes {' '.join(args[:2])} failed ({proc.returncode}): {proc.stdout[-800:]} {proc.stderr[-2000:]}")
