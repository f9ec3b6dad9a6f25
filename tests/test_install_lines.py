"""A newcomer installs what was tested: every ``pip install`` line of the README names a constraints set
of ``constraints/``, every extra it names exists, and that set pins every requirement of those extras at
a version inside pyproject.toml's range (so pip has nothing left to pick the newest release of)."""

from __future__ import annotations

import re
import tomllib

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
