"""JSON Schema -> a typed Python function signature (the port's tool functions).

What is typed: ``string``/``integer``/``number``/``boolean``/``null`` -> ``str``/``int``/``float``/
``bool``/``None``; ``enum`` (or ``const``) of strings, integers, booleans -> ``Literal[...]``; ``array``
-> ``list[item]``; an ``object`` with ``properties`` -> a ``TypedDict`` (``NotRequired`` for the keys
not ``required``; the functional form when a key is not an identifier); an object without properties
-> ``dict[str, value]``; a type list or ``anyOf``/``oneOf`` -> a union; parameters not ``required``
-> optional with the schema's ``default`` (a JSON scalar) or ``None``.

Widened from the recordings: an argument the recorded calls pass that the declared schema does not
name (``spec.undeclared_arguments``; e.g. Hermes 0.22's ``delegate_task`` called with its legacy
``goal``) becomes an optional parameter typed from the recorded values, with a comment saying why, so
the signature accepts every recorded call.

Fallback (documented in docs/porting.md): what cannot be typed (``$ref``, ``allOf``, ``not``,
conditionals, float enums, nesting deeper than ``MAX_DEPTH``) becomes ``Any``; a property whose name is
not a Python identifier or is a keyword goes to ``**extra``. Nothing is dropped: the recorded schema
itself is what the port declares to the model (``tool_schemas.json``), and the arguments arrive as
they were sent. Nested objects are TypedDicts, not models, so a tool body receives plain dicts however
it is called (the framework's validation, ``play --tools-module``, the standalone script).

Every name is checked (``source.identifier``), every text goes through ``source.py_str`` /
``source.docstring``: no schema can change the generated program.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from replaykit.exporters.port import layout
from replaykit.exporters.port import source as src

MAX_DEPTH = 6
#: names the tool module itself defines or imports (a class or function must not take one)
RESERVED = frozenset({"Any", "Literal", "NotRequired", "TypedDict", "TOOLS", "json", "os", "annotations",
                      "hermes_tool", "HERMES_TOOLS", "USE_HERMES_TOOLS", "NORMALIZERS"})


@dataclass
class Param:
    name: str  # the JSON property name (== the Python parameter name)
    annotation: str
    default: str | None  # Python source of the default, None: required
    description: str
    undeclared: bool = False  # not in the declared schema: the recorded calls pass it


@dataclass
class ToolSignature:
    """One tool as Python source pieces."""

    tool_name: str  # the recorded name
    func: str  # the Python function name
    params: list[Param]
    extra: str | None  # the ``**extra`` parameter's name, when some properties are not identifiers
    extra_names: list[str]
    description: str
    classes: list[str] = field(default_factory=list)  # TypedDict definitions, in dependency order
    fallbacks: list[str] = field(default_factory=list)  # what became Any, and why

    def signature(self) -> str:
        """``(a: str, b: int | None = None, **extra: Any)`` without the name and the return type."""
        required = [p for p in self.params if p.default is None]
        optional = [p for p in self.params if p.default is not None]
        parts = [f"{p.name}: {p.annotation}" for p in required]
        parts += [f"{p.name}: {p.annotation} = {p.default}" for p in optional]
        if self.extra:
            parts.append(f"**{self.extra}: Any")
        return "(" + ", ".join(parts) + ")"

    def doc(self) -> str:
        """The docstring text: the description and an ``Args:`` section."""
        lines = [self.description.strip() or f"The {self.tool_name} tool."]
        documented = [p for p in self.params if p.description.strip()]
        if documented or self.extra:
            lines += ["", "Args:"]
            for p in documented:
                text = " ".join(p.description.split())
                lines.append(f"    {p.name}: {text}")
            if self.extra:
                lines.append(f"    {self.extra}: arguments whose names are not Python identifiers: "
                             + ", ".join(self.extra_names))
        return "\n".join(lines)

    def comments(self) -> list[str]:
        """``# ...`` lines for the function body: what became ``Any``, and the parameters the declared
        schema does not name."""
        lines = [f"# untyped (Any): {src.comment(note)}; the recorded schema is in tool_schemas.json"
                 for note in self.fallbacks]
        for p in self.params:
            if p.undeclared:
                lines.append(f"# {p.name}: not in the declared schema, but recorded calls pass it (accepted)")
        return lines


class _Typer:
    def __init__(self, tool: str, taken: set[str]) -> None:
        self.tool = tool
        self.taken = taken
        self.classes: list[str] = []
        self.fallbacks: list[str] = []

    def fallback(self, where: str, why: str) -> str:
        self.fallbacks.append(f"{where}: {why}")
        return "Any"

    def type_of(self, schema: Any, where: str, depth: int = 0) -> str:
        if depth > MAX_DEPTH:
            return self.fallback(where, f"nested deeper than {MAX_DEPTH}")
        if schema is True or schema == {}:
            return "Any"
        if not isinstance(schema, dict):
            return self.fallback(where, "not a schema object")
        for key in ("$ref", "allOf", "not", "if", "patternProperties"):
            if key in schema:
                return self.fallback(where, f"{key} is not typed")
        if "const" in schema:
            return self._literal([schema["const"]], where)
        if "enum" in schema:
            values = schema["enum"]
            return self._literal(values, where) if isinstance(values, list) and values else \
                self.fallback(where, "an empty or malformed enum")
        for key in ("anyOf", "oneOf"):
            if key in schema:
                options = schema[key]
                if not isinstance(options, list) or not options:
                    return self.fallback(where, f"a malformed {key}")
                return _union([self.type_of(o, where, depth + 1) for o in options])
        kind = schema.get("type")
        if isinstance(kind, list):
            return _union([self.type_of({**schema, "type": k}, where, depth + 1) for k in kind]) if kind else "Any"
        if kind == "string":
            return "str"
        if kind == "integer":
            return "int"
        if kind == "number":
            return "float"
        if kind == "boolean":
            return "bool"
        if kind == "null":
            return "None"
        if kind == "array":
            items = schema.get("items")
            if items is None:
                return "list[Any]"
            return f"list[{self.type_of(items, where + '[]', depth + 1)}]"
        if kind == "object" or (kind is None and "properties" in schema):
            props = schema.get("properties")
            if isinstance(props, dict) and props:
                return self._typed_dict(schema, props, where, depth)
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict) and extra:
                return f"dict[str, {self.type_of(extra, where + '{}', depth + 1)}]"
            return "dict[str, Any]"
        if kind is None:
            return "Any"
        return self.fallback(where, f"type {str(kind)[:40]!r} is not typed")

    def _literal(self, values: list[Any], where: str) -> str:
        out: list[str] = []
        for value in values:
            if value is None or isinstance(value, bool | int | str):
                out.append(src.py_str(value) if isinstance(value, str) else repr(value))
            else:
                return self.fallback(where, "an enum of values Literal cannot hold")
        unique = list(dict.fromkeys(out))
        return f"Literal[{', '.join(unique)}]"

    def _typed_dict(self, schema: dict[str, Any], props: dict[str, Any], where: str, depth: int) -> str:
        listed = schema.get("required")
        required: list[Any] = listed if isinstance(listed, list) else []
        last = where.split(".")[-1]
        name = src.class_name(self.tool, last.strip("[]{}") or "item", "item" if last.endswith(("[]", "{}")) else "",
                              taken=self.taken)
        fields: list[tuple[str, str]] = []
        for key, sub in props.items():
            annotation = self.type_of(sub, f"{where}.{key}", depth + 1)
            if key not in required:
                annotation = f"NotRequired[{annotation}]"
            fields.append((str(key), annotation))
        description = schema.get("description") if isinstance(schema.get("description"), str) else ""
        if all(src.is_parameter_name(k) for k, _ in fields):
            lines = [f"class {name}(TypedDict):"]
            if description:
                lines.append(f"    # {src.comment(description)}")
            for key, sub in props.items():
                annotation = dict(fields)[str(key)]
                text = sub.get("description") if isinstance(sub, dict) else None
                if isinstance(text, str) and text.strip():
                    lines.append(f"    # {src.comment(text)}")
                lines.append(layout.statement("    ", f"{key}: {annotation}"))
            if len(lines) == 1:
                lines.append("    pass")
        else:  # keys that are not identifiers: the functional form takes any string
            body = ", ".join(f"{src.py_str(k)}: {a}" for k, a in fields)
            lines = [layout.statement("", f"{name} = TypedDict({src.py_str(name)}, {{{body}}})")]
        self.classes.append("\n".join(lines))
        return name


def _union(types: list[str]) -> str:
    unique = list(dict.fromkeys(types))
    if "Any" in unique:
        return "Any"
    return " | ".join(unique) if len(unique) > 1 else unique[0]


def tool_signature(name: str, description: str | None, parameters: Any, taken: set[str],
                   undeclared: dict[str, Any] | None = None) -> ToolSignature:
    """The typed signature of one tool (``taken``: module-level names already used; updated).
    ``undeclared``: argument -> schema of the arguments recorded calls pass that ``parameters`` does not
    name (module docstring)."""
    func = src.identifier(name, taken | RESERVED)
    taken.add(func)
    typer = _Typer(name, taken | RESERVED)
    schema = parameters if isinstance(parameters, dict) else {}
    found = schema.get("properties")
    props: dict[str, Any] = found if isinstance(found, dict) else {}
    required = [r for r in schema.get("required", []) if isinstance(r, str)] \
        if isinstance(schema.get("required"), list) else []
    params: list[Param] = []
    extra_names: list[str] = []
    for key, sub in props.items():
        key = str(key)
        if not src.is_parameter_name(key):
            extra_names.append(key)
            continue
        annotation = typer.type_of(sub, key)
        described = sub.get("description") if isinstance(sub, dict) else None
        text = described if isinstance(described, str) else ""
        if key in required:
            default = None
        else:
            recorded = sub.get("default") if isinstance(sub, dict) else None
            literal = src.py_literal(recorded) if isinstance(recorded, bool | int | float | str) else None
            if literal is None:
                default = "None"
                if annotation != "Any" and "None" not in annotation.split(" | "):
                    annotation = f"{annotation} | None"
            else:
                default = literal
        params.append(Param(key, annotation, default, text))
    for key, sub in (undeclared or {}).items():
        if key in props:
            continue
        if not src.is_parameter_name(key):
            extra_names.append(key)
            continue
        annotation = typer.type_of(sub, key)
        if annotation != "Any" and "None" not in annotation.split(" | "):
            annotation = f"{annotation} | None"
        params.append(Param(key, annotation, "None", "not in the declared schema; recorded calls pass it",
                            undeclared=True))
    extra = None
    if extra_names or (not props and schema.get("additionalProperties") is not False):
        extra = src.identifier("extra", {p.name for p in params} | {"self"}, prefix="extra")
    taken.update(c.split("(")[0].split()[1] if c.startswith("class ") else c.split(" = ")[0]
                 for c in typer.classes)
    return ToolSignature(name, func, params, extra, extra_names, description or "", typer.classes, typer.fallbacks)
