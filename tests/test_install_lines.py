"""A newcomer installs what was tested: every ``pip install`` line of the README names a constraints set
of ``constraints/``, every extra it names exists, and that set pins every requirement of those extras at
a version inside pyproject.toml's range (so pip has nothing left to pick the newest release of)."""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
EXTRAS: dict[str, list[str]] = PYPROJECT["project"]["optional-dependencies"]
_INSTALL = re.compile(r"pip install (?P<args>[^#\n&]*)")


def install_lines() -> list[str]:
    """The arguments of every ``pip install`` in the README's shell blocks (commands, not prose)."""
    lines, fence = [], None  # the open fence's language, None outside
    for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fence = line[3:].strip() if fence is None else None
            continue
        found = _INSTALL.search(line) if fence in ("bash", "sh", "console", "") else None
        if found:
            lines.append(found["args"].strip())
    return lines


def pins(name: str) -> dict[str, str]:
    out = {}
    for line in (ROOT / "constraints" / name).read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            package, version = line.split("==", 1)
            out[canonicalize_name(package)] = version.strip()
    return out


def requirements(extras: list[str]) -> list[Requirement]:
    """The requirements an install of ``.[extras]`` brings, the package's own extras unfolded."""
    todo, seen, out = list(extras), set(), [Requirement(r) for r in PYPROJECT["project"]["dependencies"]]
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for spec in EXTRAS[extra]:
            req = Requirement(spec)
            if canonicalize_name(req.name) == "replaykit":
                todo += sorted(req.extras)
            else:
                out.append(req)
    return out


def test_the_readme_has_install_lines() -> None:
    lines = install_lines()
    assert len(lines) >= 10 and any("[demo]" in line for line in lines)


@pytest.mark.parametrize("args", install_lines())
def test_every_install_line_installs_a_tested_set(args: str) -> None:
    found = re.search(r"-c (constraints/(\S+\.txt))", args)
    assert found, f"`pip install {args}` has no -c constraints/<set>.txt"
    assert (ROOT / found[1]).is_file()
    target = re.search(r"-e '?\.(?:\[(?P<extras>[\w,-]+)\])?'?", args)
    assert target, f"`pip install {args}` installs no checkout (-e . or -e '.[extras]')"
    extras = target["extras"].split(",") if target["extras"] else []
    assert set(extras) <= set(EXTRAS), f"unknown extra in `pip install {args}`"
    pinned = pins(found[2])
    for req in requirements(extras):
        if req.marker is not None and not req.marker.evaluate():
            continue
        version = pinned.get(canonicalize_name(req.name))
        assert version is not None, f"{found[1]} does not pin {req.name} (needed by `pip install {args}`)"
        assert req.specifier.contains(version, prereleases=True), \
            f"{found[1]} pins {req.name}=={version}, outside pyproject.toml's {req.specifier}"


def test_refresh_latest_never_writes_the_hermes_set(tmp_path: Path) -> None:
    before = (ROOT / "constraints" / "hermes.txt").read_bytes()
    done = subprocess.run(["bash", str(ROOT / "scripts" / "refresh-latest.sh")], capture_output=True, text=True,
                          env={**os.environ, "RK_NEXT_OUT": "constraints/hermes.txt",
                               "RK_NEXT_VENV": str(tmp_path / "venv")}, timeout=60)
    assert done.returncode == 2 and "hermes" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "venv").exists()  # refused before anything was built
    assert (ROOT / "constraints" / "hermes.txt").read_bytes() == before


@pytest.mark.parametrize(("keep_going", "steps"), [("0", ["ruff"]), ("1", ["ruff", "mypy", "pytest"])])
def test_the_suite_steps_stop_or_go_on_after_a_failure(tmp_path: Path, keep_going: str, steps: list[str]) -> None:
    """scripts/suite-lib.sh: test.sh stops at the first failing step; refresh-latest runs them all, so a
    new ruff rule does not hide what new releases do to the tests. Either way the result is a failure."""
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text('#!/bin/sh\necho "ran $2 RK_ENV=$RK_ENV"\n[ "$2" != ruff ]\n')
    python.chmod(0o755)
    script = f'source scripts/suite-lib.sh; WORKERS=2 KEEP_GOING={keep_going} run_suite next "{tmp_path / "venv"}" -k x'
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 1
    assert [line.split()[1] for line in done.stdout.splitlines() if line.startswith("ran ")] == steps
    if "pytest" in steps:
        assert "ran pytest RK_ENV=next" in done.stdout  # the tests know their environment
