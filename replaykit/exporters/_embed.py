"""Embedding replaykit's own stdlib-only modules verbatim in generated code (the standalone script and
the LangGraph module embed ``core/trace/canonical.py``, ``core/trace/deltas.py``, ``core/replay/serve.py`` and
``core/replay/replay_doc.py`` so they
decide and compute exactly as the CLI does; the LangGraph module embeds ``core/replay/tool_ladder.py`` so its
tools climb the same live-tool ladder)."""

from __future__ import annotations

import ast
import inspect
from collections.abc import Sequence
from types import ModuleType


def module_body(module: ModuleType, rename: dict[str, str] | None = None,
                provided: Sequence[str] = ()) -> str:
    """A module's source without its docstring and ``from __future__`` line; ``rename`` renames
    top-level functions (``def old(`` -> ``def new(``). ``provided``: replaykit modules embedded before
    this one, whose ``from <module> import ...`` lines are dropped (their names are already defined).
    Any other replaykit import is an error: generated code must not need replaykit."""
    source = inspect.getsource(module)
    tree = ast.parse(source)
    drop: set[int] = set()
    for node in tree.body:
        is_doc = (node is tree.body[0] and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                  and isinstance(node.value.value, str))
        is_future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
        is_provided = isinstance(node, ast.ImportFrom) and node.module in provided
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("replaykit") and not is_provided:
            raise AssertionError(f"{module.__name__} imports {node.module}, which is not embedded before it")
        if is_doc or is_future or is_provided:
            drop.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    lines = [line for i, line in enumerate(source.splitlines(), 1) if i not in drop]
    body = "\n".join(lines).strip("\n") + "\n"
    for old, new in (rename or {}).items():
        body = body.replace(f"def {old}(", f"def {new}(")
    return body


def embedded_modules(modules: Sequence[ModuleType], rename: dict[str, str] | None = None) -> list[str]:
    """The bodies of ``modules`` in dependency order (each may import the ones before it), checked to
    define no top-level name twice (a later definition would silently replace an earlier one)."""
    bodies: list[str] = []
    seen: dict[str, str] = {}
    for n, module in enumerate(modules):
        body = module_body(module, rename, [m.__name__ for m in modules[:n]])
        for name in top_level_names(body):
            if name in seen:
                raise AssertionError(f"embedded modules {seen[name]} and {module.__name__} both define {name}")
            seen[name] = module.__name__
        bodies.append(body)
    return bodies


def top_level_names(source: str) -> set[str]:
    """Names a source defines at top level (functions, classes, assignments): to detect clashes."""
    names: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names
