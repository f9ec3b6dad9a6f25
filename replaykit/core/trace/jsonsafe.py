"""Exact JSON text for any string JSON can carry, written as valid UTF-8.

JSON can carry strings that UTF-8 cannot: a lone UTF-16 surrogate (``"\\ud800"``, what a client
leaves behind when it cuts an emoji in half) is legal JSON and decodes to a Python ``str`` holding
U+D800, but no UTF-8 byte sequence encodes it. pydantic's JSON serializer refuses such strings
("surrogates not allowed") and its JSON parser refuses the escape. replaykit keeps them exactly:

* writing: the fast serializer first (the common case costs nothing more); only when it refuses, the
  same data goes through ``json.dumps`` and every lone surrogate becomes its ``\\uXXXX`` escape. A
  raw surrogate can only occur inside a JSON string, where the escape means the same character, so
  the line is valid UTF-8 and decodes to the identical ``str``;
* reading: pydantic's parser first; only a line it refuses *and* that holds a surrogate escape is
  parsed by ``json.loads`` (which accepts it) and validated from Python objects.

Every other character (NUL, U+2028/2029, BOM, astral characters) is written raw as UTF-8 by both
serializers and needs nothing. See docs/trace-format.md, "Strings".
"""

from __future__ import annotations

import json
import math
import re
from enum import Enum
from json.encoder import encode_basestring as _encode_str  # the C encoder of json.dumps(ensure_ascii=False)
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pydantic is not imported here at run time: `replaykit runs` never loads it
    from pydantic import BaseModel

_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF][0-9a-fA-F]{2}")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def escape_surrogates(json_text: str) -> str:
    """``json_text`` (a JSON document) with every raw lone surrogate spelled as a ``\\uXXXX`` escape."""
    return _SURROGATE.sub(_escape, json_text)


def has_surrogate(text: str) -> bool:
    return _SURROGATE.search(text) is not None


def dumps(value: Any, **kwargs: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, **kwargs)`` that is always encodable as strict UTF-8."""
    kwargs.setdefault("ensure_ascii", False)
    text = json.dumps(value, **kwargs)
    return escape_surrogates(text) if not kwargs["ensure_ascii"] else text


def dumps_indented(value: Any) -> str:
    """``dumps(value, indent=2, default=str)``, the same text, about twice as fast on large documents.

    With ``indent`` the standard library encodes in pure Python through nested generators (0.25 s for
    the 7 MB ``inspect --json`` of a 10,000-step run); this writes into one list with the leaves of
    the common types inlined. Anything unusual (non-str keys, subclasses, NaN) takes the same rules
    as ``json.dumps``. tests/core/test_jsonsafe_indented.py compares the two on odd documents.
    """
    out: list[str] = []
    append = out.append
    pads = ["\n"]

    def pad(level: int) -> str:
        while len(pads) <= level:
            pads.append("\n" + "  " * len(pads))
        return pads[level]

    def write(o: Any, level: int) -> None:
        kind = type(o)
        if kind is str:
            append(_encode_str(o))
        elif o is None:
            append("null")
        elif o is True:
            append("true")
        elif o is False:
            append("false")
        elif kind is int:
            append(int.__repr__(o))
        elif isinstance(o, str):
            append(_encode_str(o))
        elif isinstance(o, int):
            append(int.__repr__(o))
        elif isinstance(o, float):
            append(_float_text(o))
        elif isinstance(o, dict):
            if not o:
                append("{}")
                return
            inner = pad(level + 1)
            sep, comma = "{" + inner, "," + inner
            for key, item in o.items():
                head = sep + _key_text(key) + ": "
                item_kind = type(item)
                if item_kind is str:
                    append(head + _encode_str(item))
                elif item is None:
                    append(head + "null")
                elif item_kind is int:
                    append(head + int.__repr__(item))
                else:
                    append(head)
                    write(item, level + 1)
                sep = comma
            append(pad(level) + "}")
        elif isinstance(o, list | tuple):
            if not o:
                append("[]")
                return
            inner = pad(level + 1)
            sep, comma = "[" + inner, "," + inner
            for item in o:
                append(sep)
                write(item, level + 1)
                sep = comma
            append(pad(level) + "]")
        else:
            write(str(o), level)  # default=str

    write(value, 0)
    return escape_surrogates("".join(out))


def _float_text(value: float) -> str:
    if value != value:
        return "NaN"
    if value == math.inf:
        return "Infinity"
    if value == -math.inf:
        return "-Infinity"
    return float.__repr__(value)


def _key_text(key: Any) -> str:
    """A dict key as ``json.dumps`` writes it (str, or a number, bool or None turned into one)."""
    if isinstance(key, str):
        return _encode_str(key)
    if key is True or key is False or key is None:
        return '"' + {True: "true", False: "false", None: "null"}[key] + '"'
    if isinstance(key, int):
        return '"' + int.__repr__(key) + '"'
    if isinstance(key, float):
        return '"' + _float_text(key) + '"'
    raise TypeError(f"keys must be str, int, float, bool or None, not {key.__class__.__name__}")


def model_json(model: BaseModel, *, exclude_none: bool = True) -> str:
    """``model.model_dump_json(exclude_none=...)``, or the same JSON when it holds lone surrogates."""
    try:
        return model.model_dump_json(exclude_none=exclude_none)
    except ValueError:  # pydantic_core.PydanticSerializationError (a ValueError): a lone surrogate
        return dumps(model_data(model, exclude_none=exclude_none), separators=(",", ":"))


def model_data(model: BaseModel, **kwargs: Any) -> Any:
    """``model.model_dump(mode="json", **kwargs)``, also when a dict *key* holds a lone surrogate.

    pydantic's "json" mode encodes keys of untyped dicts (tool arguments) as UTF-8 and refuses a
    surrogate there; the "python" mode does not, and for the IR differs from "json" mode only in str
    enums, tuples and non-finite floats, which ``_jsonable`` converts the way "json" mode does.
    """
    try:
        return model.model_dump(mode="json", **kwargs)
    except UnicodeEncodeError:
        return _jsonable(model.model_dump(mode="python", **kwargs))


def _jsonable(value: Any) -> Any:
    if isinstance(value, str):
        return value.value if isinstance(value, Enum) else value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {(k.value if isinstance(k, Enum) else k if isinstance(k, str) else json.dumps(k)): _jsonable(v)
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, Enum):
        return _jsonable(value.value)
    return value


def value_json(value: Any) -> str:
    """Compact JSON of a plain JSON value via pydantic-core (hot path) with the surrogate fallback."""
    from pydantic_core import to_json

    try:
        return to_json(value, inf_nan_mode="null").decode("utf-8")
    except ValueError:  # pydantic_core.PydanticSerializationError (a ValueError): a lone surrogate
        return dumps(_jsonable(value), separators=(",", ":"))


def may_hold_surrogate_escape(data: bytes | str) -> bool:
    """Whether JSON text spells a UTF-16 surrogate as an escape (only such text needs ``loads``)."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    return _SURROGATE_ESCAPE.search(raw) is not None


def utf8(text: str) -> bytes:
    """Strict UTF-8 bytes of JSON text; a raw lone surrogate that slipped through is escaped, not
    written as the invalid 3-byte sequence ``surrogatepass`` would give."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return escape_surrogates(text).encode("utf-8")
