"""Embedding replaykit's own stdlib-only modules verbatim in generated code (the standalone script and
the LangGraph module embed ``core/trace/canonical.py``, ``core/trace/deltas.py``, ``core/replay/serve.py`` and
``core/replay/replay_doc.py`` so they
decide and compute exactly as the CLI does; the LangGraph module embeds ``core/replay/tool_ladder.py`` so its
tools climb the same live-tool ladder; the standalone script embeds ``same_marks``' ``SameFiller`` so it
fills in the trace's ``same`` marks by the readers' own rule).

Sources are read from the modules' files (``importlib.util.find_spec``), so an exporter does not import
what it embeds: a ``replaykit export`` process stays as light as the code it writes."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from functools import cache
from importlib.util import find_spec
from types import ModuleType


def _name(module: ModuleType | str) -> str:
    return module if isinstance(module, str) else module.__name__


@cache
def _source(name: str) -> str:
    """A module's source text, read from its file (the module is not imported)."""
    spec = find_spec(name)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        raise AssertionError(f"cannot embed {name}: no Python source file")
    with open(spec.origin, encoding="utf-8") as handle:
        return handle.read()


@cache
def _parsed(name: str) -> tuple[str, ast.Module]:
    """A module's source text and its syntax tree."""
    source = _source(name)
    return source, ast.parse(source)


_DEFINITION = re.compile(r"^(?:def |async def |class |@)", re.M)
_TOP_LEVEL_IMPORT = re.compile(r"^(?:from|import) ", re.M)


@cache
def _head(name: str) -> tuple[str, list[ast.stmt]]:
    """A module's source and its top-level statements up to its first definition: the docstring and the
    imports, all ``module_body`` looks at, without parsing the whole module (a third of the time of a
    ``replaykit export`` otherwise). The whole module is parsed when an import may follow a definition,
    or when the cut falls inside a statement or a string (then the prefix does not parse)."""
    source = _source(name)
    first = _DEFINITION.search(source)
    if first is not None and not _TOP_LEVEL_IMPORT.search(source, first.start()):
        try:
            return source, ast.parse(source[: first.start()]).body
        except SyntaxError:
            pass
    return source, _parsed(name)[1].body


def _lines(source: str, nodes: Iterable[ast.stmt]) -> set[int]:
    out: set[int] = set()
    for node in nodes:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
        out.update(range(first, (node.end_lineno or node.lineno) + 1))
    return out


def module_body(module: ModuleType | str, rename: dict[str, str] | None = None,
                provided: Sequence[str] = ()) -> str:
    """A module's source without its docstring and ``from __future__`` line; ``rename`` renames
    top-level functions (``def old(`` -> ``def new(``). ``provided``: replaykit modules embedded before
    this one, whose ``from <module> import ...`` lines are dropped (their names are already defined).
    Any other replaykit import is an error: generated code must not need replaykit."""
    name = _name(module)
    source, statements = _head(name)
    drop: list[ast.stmt] = []
    for node in statements:
        is_doc = (node is statements[0] and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                  and isinstance(node.value.value, str))
        is_future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
        is_provided = isinstance(node, ast.ImportFrom) and node.module in provided
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("replaykit") and not is_provided:
            raise AssertionError(f"{name} imports {node.module}, which is not embedded before it")
        if is_doc or is_future or is_provided:
            drop.append(node)
    dropped = _lines(source, drop)
    lines = [line for i, line in enumerate(source.splitlines(), 1) if i not in dropped]
    body = "\n".join(lines).strip("\n") + "\n"
    for old, new in (rename or {}).items():
        body = body.replace(f"def {old}(", f"def {new}(")
    return body


def definitions(module: ModuleType | str, names: Sequence[str]) -> str:
    """The top-level definitions ``names`` of a module, verbatim, with every top-level definition and
    import they use (transitively), in source order: for a module whose other parts generated code must
    not carry (``same_marks``' ``SameFiller``). A replaykit import among them is an error."""
    name = _name(module)
    source, tree = _parsed(name)
    by_name: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            continue
        for bound in _bound_names(node):
            by_name.setdefault(bound, node)
    missing = [n for n in names if n not in by_name]
    if missing:
        raise AssertionError(f"{name} defines no {', '.join(missing)}")
    keep: list[ast.stmt] = []
    wanted = list(names)
    while wanted:
        found = by_name.get(wanted.pop())
        if found is None or any(found is k for k in keep):
            continue
        node = found
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("replaykit"):
            raise AssertionError(f"{name}: the embedded definitions need {node.module}")
        keep.append(node)
        wanted.extend(sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name))
    lines = source.splitlines()
    out: list[str] = []
    for node in sorted(keep, key=lambda n: n.lineno):
        span = sorted(_lines(source, [node]))
        is_def = isinstance(node, ast.FunctionDef | ast.ClassDef)
        if out and (is_def or out[-1].startswith(("def ", "class ", " ", ")", "]", "}", "@"))):
            out.append("\n")  # two blank lines around a definition, as in the module
        out.append("\n".join(lines[i - 1] for i in span))
    return "\n".join(out).replace("\n\n\n\n", "\n\n\n") + "\n"


def _bound_names(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.FunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Assign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [t.id for t in targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [(alias.asname or alias.name).split(".")[0] for alias in node.names]
    return []


def embedded_modules(modules: Sequence[ModuleType | str], rename: dict[str, str] | None = None, *,
                     check_names: bool = True) -> list[str]:
    """The bodies of ``modules`` in dependency order (each may import the ones before it), checked to
    define no top-level name twice (a later definition would silently replace an earlier one).
    ``check_names=False`` leaves that check (it parses every module whole) to the caller's tests."""
    bodies: list[str] = []
    seen: dict[str, str] = {}
    names = [_name(m) for m in modules]
    for n, module in enumerate(names):
        body = module_body(module, rename, names[:n])
        bodies.append(body)
        if not check_names:
            continue
        # the names its body defines, from the tree already parsed (a dropped line defines none)
        defined = {name for node in _parsed(module)[1].body if not isinstance(node, ast.Import | ast.ImportFrom)
                   for name in _bound_names(node)}
        for name in sorted((rename or {}).get(name, name) for name in defined):
            if name in seen:
                raise AssertionError(f"embedded modules {seen[name]} and {module} both define {name}")
            seen[name] = module
    return bodies


def top_level_names(source: str) -> set[str]:
    """Names a source defines at top level (functions, classes, assignments): to detect clashes."""
    names: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef | ast.Assign | ast.AnnAssign):
            names.update(_bound_names(node))
    return names
