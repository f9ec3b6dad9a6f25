"""Embedding replaykit's own stdlib-only modules verbatim in generated code (the standalone script and
the LangGraph module embed ``core/replay_doc.py`` so they compute the same document as the CLI; the
LangGraph module embeds ``core/tool_ladder.py`` so its tools climb the same live-tool ladder)."""

from __future__ import annotations

import ast
import inspect
from types import ModuleType


def module_body(module: ModuleType, rename: dict[str, str] | None = None) -> str:
    """A module's source without its docstring, its ``from __future__`` line and its top-level imports
    from replaykit (the generated file embeds those modules themselves, above this one); ``rename``
    renames top-level functions (``def old(`` -> ``def new(``)."""
    source = inspect.getsource(module)
    tree = ast.parse(source)
    drop: set[int] = set()
    for node in tree.body:
        is_doc = (node is tree.body[0] and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                  and isinstance(node.value.value, str))
        is_future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
        is_own = isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "replaykit"
        if is_doc or is_future or is_own:
            drop.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    lines = [line for i, line in enumerate(source.splitlines(), 1) if i not in drop]
    body = "\n".join(lines).strip("\n") + "\n"
    for old, new in (rename or {}).items():
        body = body.replace(f"def {old}(", f"def {new}(")
    return body


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
