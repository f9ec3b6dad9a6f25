"""Drive a real Hermes ``AIAgent`` from a JSON spec. Runs INSIDE a subprocess whose environment already
sets ``HERMES_HOME`` (Hermes computes paths at import time), so it is launched by
:mod:`replaykit.testing.hermes_harness`, never imported by a test process.

``python -m replaykit.testing.hermes_driver SPEC.json OUT.json``

Spec keys: base_url, model, api_mode (optional), provider ("custom"), toolsets, turns (list of user
messages), max_iterations, echo_tool (register the ``harness_echo`` tool), wait_subagents (seconds to wait
for background subagents), toolset harness_stop offers harness_interrupt (interrupts the agent), session_db,
cassette + cassette_mode (run the agent inside a ``replaykit.adapters.cassette.Cassette``: its model calls
are recorded into, or served from, that run file; the output gains the cassette's counters).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any


def _register_echo_tool() -> None:
    from tools.registry import registry

    def harness_echo(args: dict[str, Any], **_kw: Any) -> str:
        return json.dumps({"echo": str(args.get("text", "")).upper()})

    schema = {
        "name": "harness_echo",
        "description": "Echo the given text in upper case.",
        "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    }
    registry.register("harness_echo", "harness", schema, harness_echo, description="echo")

    def harness_interrupt(args: dict[str, Any], **_kw: Any) -> str:
        # Simulates the user pressing Ctrl-C while a tool runs.
        if _AGENT is not None:
            _AGENT.interrupt("harness interrupt")
        return json.dumps({"interrupted": True})

    stop_schema = {"name": "harness_interrupt", "description": "Interrupt the agent.",
                   "parameters": {"type": "object", "properties": {}}}
    registry.register("harness_interrupt", "harness_stop", stop_schema, harness_interrupt, description="stop")


_AGENT: Any = None


def _wait_for_subagents(seconds: float, parent_session_id: str) -> None:
    """Background delegations run on other threads: wait until every child session of this parent has
    ended in state.db (the delegation thread itself lingers), then a moment for subagent_stop."""
    import os
    import sqlite3

    db = os.path.join(os.environ["HERMES_HOME"], "state.db")
    deadline = time.time() + seconds
    seen = False
    while time.time() < deadline:
        try:
            with sqlite3.connect(db, timeout=1) as conn:
                rows = conn.execute("select ended_at from sessions where parent_session_id = ?",
                                    (parent_session_id,)).fetchall()
        except sqlite3.Error:
            rows = []
        seen = seen or bool(rows)
        if rows and all(r[0] is not None for r in rows):
            time.sleep(0.5)
            return
        time.sleep(0.1)


def _wait_for_titles(seconds: float) -> None:
    """Hermes 0.22 names a session on a background thread after the turn (a self-hosted endpoint such as
    the scripted server gets it once the turn settles): wait for it, so every run sends its title request
    and a test never depends on whether the process outlived that thread."""
    try:
        from agent.title_generator import _UPGRADE_THREADS
    except ImportError:  # Hermes 0.19.0 titles nothing in the background
        return
    deadline = time.time() + seconds
    for thread in list(_UPGRADE_THREADS):
        thread.join(max(0.0, deadline - time.time()))


def run(spec: dict[str, Any]) -> dict[str, Any]:
    t0 = time.perf_counter()
    import run_agent  # triggers plugin discovery
    from hermes_state import SessionDB

    t_import = time.perf_counter() - t0
    if spec.get("echo_tool", True):
        _register_echo_tool()
    kwargs: dict[str, Any] = {
        "base_url": spec["base_url"],
        "api_key": spec.get("api_key", "sk-harness-fake"),
        "provider": spec.get("provider", "custom"),
        "model": spec.get("model", "scripted-model"),
        "enabled_toolsets": spec.get("toolsets", ["harness", "todo"]),
        "quiet_mode": True,
        "skip_context_files": True,
        "skip_memory": True,
        "platform": spec.get("platform", "cli"),
        "max_iterations": spec.get("max_iterations", 8),
        "tool_delay": 0.0,
    }
    if spec.get("api_mode"):
        kwargs["api_mode"] = spec["api_mode"]
    if spec.get("save_trajectories"):  # Hermes appends trajectory_samples.jsonl in the cwd
        kwargs["save_trajectories"] = True
    if spec.get("session_db", True):
        kwargs["session_db"] = SessionDB()
    t1 = time.perf_counter()
    agent = run_agent.AIAgent(**kwargs)
    t_init = time.perf_counter() - t1
    global _AGENT
    _AGENT = agent
    results = []
    history: list[dict[str, Any]] | None = None
    t2 = time.perf_counter()
    cassette = None
    if spec.get("cassette"):
        from replaykit.adapters.cassette import Cassette

        cassette = Cassette(spec["cassette"], spec.get("cassette_mode", "once"), label="hermes", framework="hermes")
        cassette.start()
    try:
        for message in spec.get("turns", ["Say hello"]):
            res = agent.run_conversation(message, conversation_history=history)
            history = res.get("messages")
            results.append({k: res.get(k) for k in ("final_response", "completed", "interrupted", "failed",
                                                       "api_calls", "session_id", "turn_exit_reason")})
    finally:
        counters = None
        if cassette is not None:
            session = cassette.session
            counters = {**session.counters.to_json(), "misses": session.misses} if session else None
            cassette.stop()
    t_run = time.perf_counter() - t2
    t3 = time.perf_counter()
    _wait_for_titles(float(spec.get("wait_titles", 15)))
    if spec.get("wait_subagents"):
        _wait_for_subagents(float(spec["wait_subagents"]), agent.session_id)
    t_wait = time.perf_counter() - t3
    from hermes_cli import __version__ as hermes_version

    return {
        "session_id": agent.session_id,
        "api_mode": agent.api_mode,
        "results": results,
        "messages": history,
        "hermes_version": hermes_version,
        "timings": {"import": t_import, "init": t_init, "run": t_run, "wait": t_wait},
        "threads": [t.name for t in threading.enumerate()],
        "cassette": counters,
    }


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m replaykit.testing.hermes_driver SPEC.json OUT.json", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as fh:
        spec = json.load(fh)
    out = run(spec)
    with open(argv[1], "w", encoding="utf-8") as fh:
        json.dump(out, fh, default=repr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
