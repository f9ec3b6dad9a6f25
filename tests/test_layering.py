"""The layering the architecture promises: core never imports adapters, engines, exporters or the CLI;
the core's subpackages depend in one direction only; no import cycle anywhere in the package; no engine
imports another engine's modules; nothing imports another package's private (``_``) names."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.import_graph import core_layer_violations, find_cycles, import_graph

CORE = Path(__file__).resolve().parents[1] / "replaykit" / "core"
PACKAGE = CORE.parent
FORBIDDEN = ("replaykit.adapters", "replaykit.engines", "replaykit.exporters", "replaykit.cli", "replaykit.viewer",
             "replaykit.eval", "replaykit.mcp")


def _imports(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, module, imported names) for every import in ``path``, including import_module("...")."""
    found: list[tuple[int, str, list[str]]] = []
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.lineno, node.module, [alias.name for alias in node.names]))
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
            "import_module", "__import__"
        ):
            found += [(node.lineno, a.value, []) for a in node.args
                      if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return found


def _engine_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["replaykit", "engines"] else None


def test_no_engine_imports_another_engine() -> None:
    offenders = []
    for path in (PACKAGE / "engines").rglob("*.py"):
        own = path.relative_to(PACKAGE / "engines").parts[0].removesuffix(".py")
        for line, module, _names in _imports(path):
            other = _engine_of(module)
            if other is not None and other != own:
                offenders.append(f"engines/{path.relative_to(PACKAGE / 'engines')}:{line} imports {module}")
    assert not offenders, "\n".join(offenders)


def test_no_module_imports_private_names_of_another_package() -> None:
    """``from replaykit.x.y import _name`` is allowed only inside the package ``replaykit.x.y`` lives in."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        here = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        for line, module, names in _imports(path):
            if not module.startswith("replaykit."):
                continue
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            private_module = any(p.startswith("_") and not p.startswith("__") for p in module.split("."))
            home = module.rsplit(".", 1)[0] if private_module else module
            if (private or private_module) and not here.startswith(home.rsplit(".", 1)[0] + "."):
                offenders.append(f"{here}:{line} imports {module} {private}")
    assert not offenders, "\n".join(offenders)


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
        "import sys, replaykit.core.trace.ir, replaykit.core.trace.store, replaykit.core.trace.run, replaykit.cli.main\n"
        "heavy = [m for m in ('openai', 'pydantic_ai', 'langgraph', 'presidio_analyzer', 'spacy', 'run_agent')"
        " if m in sys.modules]\nprint(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env(),
                         check=True)
    assert out.stdout.strip() == ""


def test_no_import_cycle_in_the_package() -> None:
    """Module-level imports, imports inside functions and ``TYPE_CHECKING`` imports alike."""
    cycles = find_cycles(import_graph(PACKAGE))
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c + c[:1]) for c in cycles)


def test_core_subpackages_depend_in_one_direction() -> None:
    offenders = core_layer_violations(import_graph(PACKAGE))
    assert not offenders, "\n".join(offenders)
