"""The examples of README.md and docs/ are code: every Python block compiles, and every block marked
``<!-- docs-test: NAME -->`` (the line before its fence) runs, as written, in a fresh directory with its
neighbours of the same NAME, in page order. So the docs and the code cannot drift apart.

How a marked block runs:

- ``python`` whose first line is ``# PATH`` (``# tests/test_weather.py``): written to PATH;
- other ``python``: run as a script (``python -c``);
- ``json`` / ``text`` marked ``<!-- docs-test: NAME file=PATH -->``: written to PATH;
- ``bash``: run with ``bash -e``
  (a ``python sketch`` block is an outline, not code: neither compiled nor run) (``python``, ``pytest`` and ``replaykit`` are this environment's).

Each example gets a scripted provider on 127.0.0.1 (``replaykit.testing.scripted_server``, looping a
weather script) named by ``OPENAI_BASE_URL`` (which the openai client reads), a private store
(``REPLAYKIT_HOME``), and ``PORT``: a free port for a block that starts a server of its own.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from replaykit.testing.scripted_server import ScriptedServer, call, sequence_policy
from tests.conftest import ROOT, subprocess_env

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^(?:<!-- docs-test: (?P<name>[\w.-]+)(?: file=(?P<file>\S+))? -->\n)?"
                    r"```(?P<lang>\w*)(?P<info>[^\n]*)\n(?P<body>.*?)^```$", re.M | re.S)


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    body: str
    example: str | None
    file: str | None
    sketch: bool = False  # ```python sketch: an outline with ``...`` in it, not code


def blocks() -> list[Block]:
    out = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in _FENCE.finditer(text):
            out.append(Block(page, text.count("\n", 0, m.start()) + 1, m["lang"], m["body"], m["name"], m["file"],
                             "sketch" in m["info"].split()))
    return out


def examples() -> dict[str, list[Block]]:
    named: dict[str, list[Block]] = {}
    for block in blocks():
        if block.example is not None:
            named.setdefault(block.example, []).append(block)
    return named


def _where(block: Block) -> str:
    return f"{block.page.relative_to(ROOT)}:{block.line}"


@pytest.mark.parametrize("block", [b for b in blocks() if b.lang == "python" and not b.sketch], ids=_where)
def test_every_python_block_compiles(block: Block) -> None:
    compile(block.body, _where(block), "exec", dont_inherit=True)


def test_the_examples_that_matter_are_marked() -> None:
    names = set(examples())
    assert {"record-serve", "cassette-openai"} <= names, names


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run(block: Block, cwd: Path, env: dict[str, str]) -> None:
    if block.file is not None:
        (cwd / block.file).parent.mkdir(parents=True, exist_ok=True)
        (cwd / block.file).write_text(block.body)
        return
    first = block.body.splitlines()[0] if block.body else ""
    if block.lang == "python" and re.fullmatch(r"# [\w./-]+\.py", first):
        target = cwd / first[2:]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block.body)
        return
    if block.lang == "python":
        command = [sys.executable, "-c", block.body]
    elif block.lang == "bash":
        command = ["bash", "-e", "-c", block.body]
    else:
        raise AssertionError(f"{_where(block)}: a docs-test block must be python or bash, or name a file=")
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{_where(block)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


def test_pytest_plugin_is_registered_for_autoload() -> None:
    from importlib.metadata import entry_points

    assert [e.value for e in entry_points(group="pytest11") if e.name == "replaykit"] == ["replaykit.pytest_plugin"]


@pytest.mark.parametrize("name", sorted(examples()))
def test_example_runs_as_written(name: str, tmp_path: Path) -> None:
    script = sequence_policy([call("weather", {"city": "Paris"})], final_text="Sunny, 21 C in Paris.")
    with ScriptedServer(script) as srv:
        bin_dir = str(Path(sys.executable).parent)
        env = subprocess_env(OPENAI_BASE_URL=srv.base_url, OPENAI_API_KEY="sk-test",
                             REPLAYKIT_HOME=str(tmp_path / "store"), PORT=str(_free_port()))
        env["PATH"] = os.pathsep.join([bin_dir, env.get("PATH", "")])
        env.pop("PYTEST_ADDOPTS", None)
        # A child pytest loads only replaykit's plugin: the environment's other plugins (langsmith's,
        # hypothesis's) cost seconds of imports per run and are not what the example shows.
        # test_pytest_plugin_is_registered_for_autoload checks the entry point a user's pytest finds.
        env.update(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", PYTEST_PLUGINS="replaykit.pytest_plugin")
        for block in examples()[name]:
            _run(block, tmp_path, env)
