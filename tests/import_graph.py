"""The import graph of a package, read from its source (never imported), for the layering tests.

Every ``import`` and ``from ... import`` counts, wherever it is (module level, inside a function, under
``TYPE_CHECKING``), as do ``import_module("...")`` calls with a literal name: a cycle through a late import
is still a cycle a reader has to untangle. ``from pkg import name`` names the submodule when ``name`` is one.
"""

from __future__ import annotations

import ast
from pathlib import Path

# The core's subpackages and what each may import ("root": the modules directly in core/).
CORE_LAYERS: dict[str, set[str]] = {
    "root": set(),
    "trace": {"root"},
    "guard": {"root"},
    "redaction": {"root", "trace"},
    "replay": {"root", "trace", "guard"},
    "analysis": {"root", "trace", "replay"},
    "corpus": {"root", "trace", "guard", "redaction", "replay", "analysis"},
}


def _module_names(package_dir: Path) -> dict[str, Path]:
    names: dict[str, Path] = {}
    for path in package_dir.rglob("*.py"):
        rel = path.relative_to(package_dir.parent).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        names[".".join(parts)] = path
    return names


def _imported(here: str, path: Path, node: ast.AST, modules: dict[str, Path]) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            package = here if path.name == "__init__.py" else here.rsplit(".", 1)[0]
            for _ in range(node.level - 1):
                package = package.rsplit(".", 1)[0]
            base = f"{package}.{base}" if base else package
        return [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
    if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
            "import_module", "__import__"):
        return [a.value for a in node.args[:1] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return []


def import_graph(package_dir: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (itself excluded)."""
    modules = _module_names(package_dir)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            for target in _imported(name, path, node, modules):
                while target and target not in modules:  # a name inside a module: the module
                    target = target.rsplit(".", 1)[0] if "." in target else ""
                if target and target != name:
                    deps.add(target)
        graph[name] = deps
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component of more than one module (Tarjan, iterative), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def core_layer(module: str, package: str = "replaykit") -> str | None:
    """The core subpackage ``module`` belongs to ("root" for core/*.py), None outside the core."""
    parts = module.split(".")
    if parts[:2] != [package, "core"] or len(parts) < 3:
        return None
    return parts[2] if parts[2] in CORE_LAYERS else "root"


def core_layer_violations(graph: dict[str, set[str]], package: str = "replaykit",
                          layers: dict[str, set[str]] = CORE_LAYERS) -> list[str]:
    """Every import from one core subpackage into another that ``layers`` does not allow."""
    offenders = []
    for module, deps in sorted(graph.items()):
        here = core_layer(module, package)
        if here is None:
            continue
        for dep in sorted(deps):
            there = core_layer(dep, package)
            if there is not None and there != here and there not in layers.get(here, set()):
                offenders.append(f"{module} ({here}) imports {dep} ({there})")
    return offenders
