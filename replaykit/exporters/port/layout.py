"""Generated statements laid out as ``ruff format`` (Black's style, line length 88) lays them out.

The port's code is product: a team keeps it under its own formatter, so ``ruff format --check`` must find
nothing to change. The fixed parts of the templates are written formatted; the parts built from a
recording (a signature, a ``Literal`` of enum values, a settings dict, a call with a list of tool names)
go through ``statement(indent, text)``, which applies Black's right-hand split:

- a line that fits in ``LINE_LENGTH`` stays as it is;
- else it is split at its last bracket pair (the one that closes last): the text before it and the
  opening bracket, the body indented one level, the closing bracket and the rest;
- the body stays one line when it fits, except a list/dict/set/tuple display with several items (Black
  always explodes those); else it is one item per line with a trailing comma (several items), or the
  one item laid out again (one item);
- a ``def``'s single parameter gets a trailing comma when the parameters are split.

The text is one statement as ``source.py_str`` and the signature builder write it: strings are
skipped as units, so trace content never steers the layout of code. ``tests/exporters/test_port_ruff.py``
checks the result with ruff itself.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

LINE_LENGTH = 88
INDENT = "    "
_OPEN = {"(": ")", "[": "]", "{": "}"}


@dataclass(frozen=True)
class _Group:
    open: str
    items: tuple[tuple[str | _Group, ...], ...]
    close: str
    display: bool  # a list/dict/set/tuple display (not a call, a subscript or a parameter list)
    trailing_comma: bool  # the source had a trailing comma (Black's magic trailing comma)


_Seq = tuple["str | _Group", ...]


def width(text: str) -> int:
    """The width ruff measures: East Asian wide and full-width characters count two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _flat(seq: _Seq) -> str:
    return "".join(part if isinstance(part, str) else _flat_group(part) for part in seq)


def _flat_group(group: _Group) -> str:
    return group.open + ", ".join(_flat(item) for item in group.items) + group.close


def _string_end(text: str, start: int) -> int:
    """The index after the string literal that starts at ``start`` (a quote or a prefix letter)."""
    i = start
    while text[i] not in "'\"":
        i += 1
    quote = text[i] * 3 if text.startswith(text[i] * 3, i) else text[i]
    i += len(quote)
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text.startswith(quote, i):
            return i + len(quote)
        i += 1
    raise ValueError("unterminated string")


def _parse(text: str, i: int, closer: str | None) -> tuple[list[list[str | _Group]], int, bool]:
    """Items (split at top-level commas) from ``i`` up to ``closer``; the index after it; a trailing comma."""
    items: list[list[str | _Group]] = [[]]
    buffer = ""
    while i < len(text):
        char = text[i]
        if char in "'\"" or (char in "bBrRuUfF" and i + 1 < len(text) and text[i + 1] in "'\""
                             and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_"))):
            end = _string_end(text, i)
            buffer += text[i:end]
            i = end
            continue
        if char in _OPEN:
            follows_name = bool(buffer) and (buffer[-1].isalnum() or buffer[-1] in "_])")
            if not buffer and items[-1] and not isinstance(items[-1][-1], str):
                follows_name = True  # a call or subscript of a bracketed expression: f(a)(b), x[a][b]
            display = char == "{" or not follows_name
            if buffer:
                items[-1].append(buffer)
                buffer = ""
            inner, i, comma = _parse(text, i + 1, _OPEN[char])
            group_items = tuple(tuple(item) for item in inner if item)
            items[-1].append(_Group(char, group_items, _OPEN[char], display, comma))
            continue
        if closer is not None and char == closer:
            if buffer.strip():
                items[-1].append(buffer.rstrip())
            comma = not items[-1] and len(items) > 1
            return items, i + 1, comma
        if closer is not None and char == ",":
            if buffer.strip():
                items[-1].append(buffer.rstrip())
            buffer = ""
            items.append([])
            i += 1
            while i < len(text) and text[i] == " ":
                i += 1
            continue
        buffer += char
        i += 1
    if closer is not None:
        raise ValueError("unbalanced brackets")
    if buffer:
        items[-1].append(buffer)
    return items, i, False


def statement(indent: str, text: str) -> str:
    """``text`` (one statement, without its indentation) laid out at ``indent`` (module docstring)."""
    items, _, _ = _parse(text, 0, None)
    is_def = text.startswith(("def ", "async def "))
    return "\n".join(_lay(indent, tuple(items[0]), "", is_def))


def _union_split(seq: _Seq) -> tuple[_Seq, _Seq] | None:
    """``seq`` cut before its first top-level `` | ``, or None."""
    for n, part in enumerate(seq):
        if isinstance(part, _Group):
            continue
        at = part.find(" | ")
        if at >= 0:
            return (*seq[:n], part[:at]) if part[:at] else seq[:n], (part[at + 1:], *seq[n + 1:])
    return None


def _lay(indent: str, seq: _Seq, trailer: str, is_def: bool = False) -> list[str]:
    flat = _flat(seq) + trailer
    groups = [n for n, part in enumerate(seq) if isinstance(part, _Group)]
    magic = any(isinstance(part, _Group) and part.trailing_comma for part in seq)
    if width(indent + flat) <= LINE_LENGTH and not magic:
        return [indent + flat]
    union = _union_split(seq) if trailer == "," else None
    if union is not None:  # a parameter ``a: X | None = None``: ruff breaks before the ``|``
        first, rest = union
        return _lay(indent, first, "") + _lay(indent, rest, trailer)
    split = next((n for n in reversed(groups) if isinstance(seq[n], _Group) and seq[n].items), None)  # type: ignore[union-attr]
    if split is None:
        return [indent + flat]
    group = seq[split]
    assert isinstance(group, _Group)
    head = _flat(seq[:split]) + group.open
    tail = group.close + _flat(seq[split + 1:]) + trailer
    inner = indent + INDENT
    body = ", ".join(_flat(item) for item in group.items)
    many = len(group.items) > 1
    lines = [indent + head]
    single_def = is_def and not many and split == groups[0]  # a def's one parameter gets a trailing comma
    body += "," if single_def else ""
    if width(inner + body) <= LINE_LENGTH and not (group.display and many) and not group.trailing_comma:
        lines.append(inner + body)
    elif many or group.trailing_comma or single_def:
        for item in group.items:
            lines += _lay(inner, item, ",")
    else:
        lines += _lay(inner, group.items[0], "")
    lines.append(indent + tail)
    return lines
