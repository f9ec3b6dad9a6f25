"""Helpers for the port tests: export a port, run its conformance suite (in process or as ``pytest DIR``),
edit a tool body the way a user does."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from replaykit.exporters.port import conformance
from replaykit.exporters.port.writer import write_port

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "hermes"
HERMES_FIXTURES = ["two_turns", "parallel_tools", "tools_sequence", "retry_500", "anthropic_messages",
                   "codex_responses", "subagent"]


def export(sources: list[Path], out: Path, fmt: str = "pydantic-ai", **options: object) -> dict[str, object]:
    return write_port(sources, fmt, out, **options)  # type: ignore[arg-type]


def suite_failures(port: Path, fmt: str = "pydantic-ai") -> tuple[list[str], list[conformance.TurnDriver]]:
    """Run every case of the port's suite in this process: the failure messages and the drivers."""
    import importlib

    framework = importlib.import_module(f"replaykit.exporters.port.{fmt.replace('-', '_')}")
    failures: list[str] = []
    drivers: list[conformance.TurnDriver] = []
    saved, saved_flag = list(sys.path), sys.dont_write_bytecode
    # A test rewrites agent_tools.py within the second it was last imported, often at the same size: a
    # cached .pyc (stamped with the source's whole-second mtime and size) would then run the old body.
    shutil.rmtree(port / "__pycache__", ignore_errors=True)
    sys.dont_write_bytecode = True
    try:
        for case in conformance.cases(port):
            try:
                drivers.append(conformance.run_case(case, port, framework))
            except conformance.ConformanceFailure as failure:
                failures.append(str(failure))
    finally:
        sys.path[:] = saved
        sys.dont_write_bytecode = saved_flag
        sys.modules.pop(conformance.TOOLS_MODULE, None)
    return failures, drivers


def run_pytest(port: Path) -> subprocess.CompletedProcess[str]:
    """``pytest DIR`` in a subprocess, as a user runs the suite."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", str(port)], cwd=port,
                          capture_output=True, text=True, env=env, timeout=600)


def set_body(port: Path, tool: str, body: str) -> None:
    """Replace the stub of ``tool`` in agent_tools.py with ``body`` (indented lines), as a user ports it."""
    path = port / "agent_tools.py"
    text = path.read_text(encoding="utf-8")
    # the stub's raise, on one line or laid out over three (a long message)
    pattern = re.compile(r"    raise NotImplementedError\(\s*(['\"])port the " + re.escape(tool) + r" tool.*\n(?:    \)\n)?")
    new, count = pattern.subn(lambda _: body, text)
    assert count == 1, f"no stub for {tool} in {path}"
    path.write_text(new, encoding="utf-8")
