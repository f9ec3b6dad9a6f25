"""JSON-in-a-string: parse it, and write it back in the style it came in.

Tool results are often JSON serialised into a string (compact from one tool, ``indent=2`` from
another, ``ensure_ascii`` from Python's default). After redacting values we re-serialise with the same
indent, separators and ASCII escaping, so a redacted result looks like the original one, and a string
in which nothing changed is never re-serialised at all (see ``Redactor._walk_str``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_NON_ASCII_ESCAPE = re.compile(r"\\u[0-9a-fA-F]{4}")


@dataclass(frozen=True)
class JsonStyle:
    indent: int | str | None
    item_sep: str
    key_sep: str
    ensure_ascii: bool
    leading: str
    trailing: str


def _detect(text: str) -> JsonStyle:
    core = text.strip()
    leading = text[: len(text) - len(text.lstrip())]
    trailing = text[len(text.rstrip()) :]
    indent: int | str | None = None
    if "\n" in core:
        m = re.search(r"\n([ \t]+)\S", core)
        if m:
            ws = m.group(1)
            indent = len(ws) if set(ws) == {" "} else ws
        else:
            indent = 0
    key_sep = ": " if re.search(r'"\s*:\s', core) else ":"
    if indent is not None:
        item_sep = ","
    else:
        item_sep = ", " if re.search(r"[\]}\"\d el],\s", core) else ","
    ensure_ascii = bool(_NON_ASCII_ESCAPE.search(core)) or core.isascii()
    return JsonStyle(indent, item_sep, key_sep, ensure_ascii, leading, trailing)


def try_parse_json(text: str) -> tuple[Any, JsonStyle] | None:
    """(value, style) when ``text`` is a JSON object or array, else None. Scalars are left as text."""
    head = text.lstrip()[:1]
    if head not in ("{", "[") or len(text) < 2:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict | list):
        return None
    return value, _detect(text)


def dumps_like(value: Any, style: JsonStyle) -> str:
    body = json.dumps(
        value,
        indent=style.indent,
        separators=(style.item_sep, style.key_sep),
        ensure_ascii=style.ensure_ascii,
    )
    return f"{style.leading}{body}{style.trailing}"
