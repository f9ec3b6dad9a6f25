"""The checker behind tests/test_layering.py fails on what it must catch: a cycle (also through a late
import), an upward import between core subpackages; and it passes a clean tree."""

from __future__ import annotations

from pathlib import Path

from tests.import_graph import core_layer_violations, find_cycles, import_graph


def _package(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / "replaykit" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "replaykit"


CLEAN = {
    "__init__.py": "",
    "core/__init__.py": "",
    "core/errors.py": "",
    "core/trace/__init__.py": "",
    "core/trace/ir.py": "from replaykit.core.errors import x\n",
    "core/replay/__init__.py": "",
    "core/replay/serve.py": "from replaykit.core.trace import ir\n",
    "core/analysis/__init__.py": "",
    "core/analysis/diff.py": "from replaykit.core.replay.serve import y\nfrom ..trace import ir\n",
}


def test_a_clean_tree_passes(tmp_path: Path) -> None:
    graph = import_graph(_package(tmp_path, CLEAN))
    assert graph["replaykit.core.analysis.diff"] == {"replaykit.core.replay.serve", "replaykit.core.trace.ir"}
    assert find_cycles(graph) == []
    assert core_layer_violations(graph) == []


def test_a_cycle_through_a_function_level_import_is_found(tmp_path: Path) -> None:
    files = {**CLEAN, "core/trace/ir.py": "def f():\n    from replaykit.core.trace.run import Run\n",
             "core/trace/run.py": "from replaykit.core.trace.ir import f\n"}
    assert find_cycles(import_graph(_package(tmp_path, files))) == [
        ["replaykit.core.trace.ir", "replaykit.core.trace.run"]]


def test_a_type_checking_and_relative_cycle_is_found(tmp_path: Path) -> None:
    files = {**CLEAN, "adapters/__init__.py": "", "adapters/a.py": "from . import b\n",
             "adapters/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import A\n"}
    assert find_cycles(import_graph(_package(tmp_path, files))) == [["replaykit.adapters.a", "replaykit.adapters.b"]]


def test_an_upward_import_between_core_subpackages_is_found(tmp_path: Path) -> None:
    files = {**CLEAN, "core/trace/run.py": "from replaykit.core.analysis.diff import z\n"}
    offenders = core_layer_violations(import_graph(_package(tmp_path, files)))
    assert offenders == ["replaykit.core.trace.run (trace) imports replaykit.core.analysis.diff (analysis)"]
