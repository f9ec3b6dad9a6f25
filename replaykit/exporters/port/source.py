"""Safe pieces of generated Python: trace content enters a generated file only through these.

Every string from a trace becomes a literal built by ``repr`` (``py_str``) or a checked triple-quoted
docstring (``docstring``); every name becomes an identifier checked by ``str.isidentifier`` and
``keyword`` (``identifier``); every default value a literal ``ast.literal_eval`` reads back to an equal
value (``py_literal``). Whole files are compile-checked before they are written (``check_compiles``).
"""

from __future__ import annotations

import ast
import builtins
import keyword
import math
import re
import unicodedata
from typing import Any

from replaykit.core.errors import BadInput

_NOT_WORD = re.compile(r"[^0-9A-Za-z_]+")


def py_str(text: str) -> str:
    """A Python literal for ``text``, valid for every string (lone surrogates included), quoted as
    ``ruff format`` quotes it: double quotes unless the text holds more double than single quotes, only
    the chosen quote and backslashes escaped, non-printable characters as ``repr`` escapes them."""
    text = str(text)
    quote = "'" if text.count('"') > text.count("'") else '"'
    out: list[str] = []
    for char in text:
        if char == quote or char == "\\":
            out.append("\\" + char)
        elif char in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[char])
        elif char.isprintable():
            out.append(char)
        else:
            out.append(repr(char)[1:-1])
    return quote + "".join(out) + quote


def _plain(text: str) -> bool:
    for char in text:
        if char in "\n\t":
            continue
        category = unicodedata.category(char)
        if category[0] == "C" or category in ("Zl", "Zp"):  # controls, surrogates, line separators
            return False
    return True


def docstring(text: str, indent: str = "    ") -> str:
    """A docstring literal for ``text``, indented for a body at ``indent``, as ``ruff format`` leaves it:
    triple-quoted (raw when the text holds a backslash: ruff's D301), each line without trailing
    whitespace, the lines after the first dedented to the body's indentation. A docstring is
    documentation (what the model is told is in tool_schemas.json), so what such a literal cannot hold
    is replaced: a control or line-separator character by "?", a tab by spaces, a triple quote by
    ``"''``. Never code: the text stays inside one string literal (``check_compiles`` proves it)."""
    text = "".join(c if c == "\n" or _plain(c) else "?" for c in text.expandtabs(4))
    lines = [line.rstrip() for line in text.replace('"""', "\"''").strip().split("\n")]
    rest = [line for line in lines[1:] if line.strip()]
    common = min((len(line) - len(line.lstrip(" ")) for line in rest), default=0)
    lines = [lines[0], *[(indent + line[common:]) if line.strip() else "" for line in lines[1:]]]
    body = "\n".join(lines)
    if body.startswith('"'):
        body = " " + body  # as ruff writes it: a quote next to the opening quotes would be read with them
    prefix = "r" if "\\" in body else ""
    if len(lines) > 1:
        return f'{prefix}"""{body}\n{indent}"""'
    trailing = len(body) - len(body.rstrip("\\"))
    if not body or (body.endswith('"') and not body.endswith('\\"')) or trailing % 2:
        body += " "  # ...and next to the closing ones (an odd backslash would escape them)
    return f'{prefix}"""{body}"""'


def comment(text: str, limit: int = 100) -> str:
    """``text`` fit for a ``#`` comment or a line of a docstring: one line, printable, no quote or
    backslash, bounded."""
    flat = " ".join(text.split())
    # printable, and no quote or backslash: a comment may also sit inside a docstring
    flat = "".join(c if _plain(c) and c not in '\\"' else "?" for c in flat)
    return flat[:limit] + ("..." if len(flat) > limit else "")


_BUILTINS = frozenset(dir(builtins))


def identifier(name: str, taken: set[str], prefix: str = "tool") -> str:
    """A Python identifier for ``name`` (ASCII, not a keyword nor a builtin, not in ``taken``), added to
    ``taken``."""
    base = _NOT_WORD.sub("_", name).strip("_")[:60] or prefix
    if base[0].isdigit():
        base = f"{prefix}_{base}"
    if keyword.iskeyword(base) or keyword.issoftkeyword(base) or base in _BUILTINS:
        # a builtin too: a tool named ``dict`` must not hide the ``dict`` the module's annotations use
        base = f"{base}_"
    candidate, n = base, 2
    while candidate in taken:
        candidate = f"{base}_{n}"
        n += 1
    assert candidate.isidentifier() and not keyword.iskeyword(candidate)
    taken.add(candidate)
    return candidate


def class_name(*words: str, taken: set[str]) -> str:
    """A CamelCase class name from ``words``, unique in ``taken``."""
    parts = [p for w in words for p in re.sub(r"[^0-9A-Za-z]+", " ", w).split()]
    base = "".join(p[:1].upper() + p[1:] for p in parts)[:60] or "Item"
    if base[0].isdigit():
        base = f"T{base}"
    return identifier(base, taken, prefix="T")


def is_parameter_name(name: str) -> bool:
    """Whether a JSON property can be a Python parameter of the same name (keyword-called)."""
    return name.isidentifier() and name.isascii() and not keyword.iskeyword(name) and not name.startswith("__")


def py_literal(value: Any) -> str | None:
    """A Python literal equal to the JSON value ``value``, else None (NaN, infinities, odd types)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    try:
        text = _literal_text(value)
    except (TypeError, RecursionError):
        return None
    try:
        return text if ast.literal_eval(text) == value else None
    except (ValueError, SyntaxError, RecursionError, MemoryError):
        return None


def _literal_text(value: Any) -> str:
    if isinstance(value, str):
        return py_str(value)
    if value is None or isinstance(value, bool | int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_literal_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_literal_text(k)}: {_literal_text(v)}" for k, v in value.items()) + "}"
    raise TypeError(type(value).__name__)


def typing_imports(body: str) -> tuple[str, str]:
    """The ``from typing import ...`` line and the ``from typing_extensions import TypedDict`` line ('' when
    unused) a generated module's ``body`` needs: only the names it uses (``Any`` always). TypedDict comes
    from typing_extensions: Pydantic needs it on Python 3.11."""
    names = {node.id for node in ast.walk(ast.parse(body)) if isinstance(node, ast.Name)}
    used = ["Any"] + [name for name in ("Literal", "NotRequired") if name in names]
    extensions = "from typing_extensions import TypedDict" if "TypedDict" in names else ""
    return f"from typing import {', '.join(used)}", extensions


def check_compiles(text: str, filename: str) -> None:
    """Refuse generated code that does not compile (a replaykit bug: trace content is only literals)."""
    try:
        compile(text, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise BadInput(f"generated {filename} does not compile ({type(exc).__name__}: {exc}); nothing written") \
            from exc
