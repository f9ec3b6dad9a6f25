"""Core never imports adapters, exporters or the CLI (the layering the architecture promises)."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / "replaykit" / "core"
FORBIDDEN = ("replaykit.adapters", "replaykit.exporters", "replaykit.cli")


def test_core_imports_nothing_above_it() -> None:
    offenders = []
    for path in CORE.rglob("*.py"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
                "import_module", "__import__"
            ):
                names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            for name in names:
                if name.startswith(FORBIDDEN):
                    offenders.append(f"{path.relative_to(CORE.parent)}:{node.lineno} imports {name}")
    assert not offenders, "\n".join(offenders)


def test_importing_replaykit_stays_light() -> None:
    import subprocess
    import sys

    from tests.conftest import subprocess_env

    code = (
        "import sys, replaykit.core.ir, replaykit.core.store, replaykit.core.run, replaykit.cli.main\n"
        "heavy = [m for m in ('openai', 'pydantic_ai', 'langgraph', 'presidio_analyzer', 'spacy', 'run_agent')"
        " if m in sys.modules]\nprint(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env(),
                         check=True)
    assert out.stdout.strip() == ""
