"""How the MCP server keeps results small without ever cutting them silently.

Two mechanisms, both visible in the result:

- **Pages**: a long list (runs, timeline rows, diff rows, replayed steps) is returned a page at a time;
  ``next_cursor`` fetches the next page. A cursor is bound to the tool and the arguments it was issued
  for (a digest inside it), so a cursor from another query is refused instead of returning the wrong
  slice.
- **Clipping**: a string longer than ``max_chars`` is shortened and a list longer than ``max_items`` is
  cut, and every cut is listed in ``truncated`` (where, how long it was, how much is shown) with a note
  naming the way to get it whole (a larger ``max_chars``, or the ``replaykit://`` resource).
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from replaykit.core.errors import BadInput

#: Default page size for lists, and the most a caller may ask for in one page.
DEFAULT_PAGE = 50
MAX_PAGE = 500
#: Default longest string shown whole (characters) and longest list inside a document (items).
DEFAULT_MAX_CHARS = 4000
DEFAULT_MAX_ITEMS = 200
MARK = "…[truncated]"


def _digest(tool: str, query: dict[str, Any]) -> str:
    text = json.dumps([tool, query], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def encode_cursor(tool: str, query: dict[str, Any], offset: int) -> str:
    payload = json.dumps({"o": offset, "q": _digest(tool, query)}, separators=(",", ":"))
    return base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")


def decode_cursor(tool: str, query: dict[str, Any], cursor: str | None) -> int:
    """The offset a cursor stands for (0 without one); BadInput for a forged or foreign cursor."""
    if not cursor:
        return 0
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()).decode())
        offset, digest = int(data["o"]), str(data["q"])
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise BadInput("invalid cursor: pass the next_cursor of the previous page unchanged") from None
    if digest != _digest(tool, query) or offset < 0:
        raise BadInput("this cursor belongs to another query: repeat the same arguments with it, "
                       "or drop the cursor to start again")
    return offset


def page_size(limit: int | None) -> int:
    if limit is None:
        return DEFAULT_PAGE
    if not 1 <= limit <= MAX_PAGE:
        raise BadInput(f"limit must be between 1 and {MAX_PAGE}")
    return limit


@dataclass
class Page:
    """One page of ``items``: the slice, where it starts, the total, and the cursor of the next one."""

    items: list[Any]
    offset: int
    total: int
    next_cursor: str | None

    def note(self, what: str) -> str | None:
        if self.next_cursor is None:
            return None
        end = self.offset + len(self.items)
        return (f"showing {what} {self.offset}-{end - 1} of {self.total}; "
                f"call again with cursor=next_cursor for the rest")


def paginate(tool: str, query: dict[str, Any], items: list[Any], cursor: str | None, limit: int | None) -> Page:
    size = page_size(limit)
    offset = decode_cursor(tool, query, cursor)
    if offset > len(items):
        raise BadInput(f"cursor points past the end ({len(items)} items): drop it to start again")
    chunk = items[offset:offset + size]
    end = offset + len(chunk)
    following = encode_cursor(tool, query, end) if end < len(items) else None
    return Page(chunk, offset, len(items), following)


@dataclass
class Clipper:
    """Shortens long strings and lists inside a JSON document, remembering every cut."""

    max_chars: int = DEFAULT_MAX_CHARS
    max_items: int = DEFAULT_MAX_ITEMS
    cuts: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.max_chars < 0 or self.max_items < 0:
            raise BadInput("max_chars must be 0 (no limit) or a positive number of characters")

    def clip(self, value: Any, path: str = "") -> Any:
        if isinstance(value, str):
            if self.max_chars and len(value) > self.max_chars:
                self.cuts.append({"path": path or "$", "length": len(value), "shown": self.max_chars,
                                  "unit": "chars"})
                return value[: self.max_chars] + MARK
            return value
        if isinstance(value, dict):
            return {k: self.clip(v, f"{path}.{k}" if path else str(k)) for k, v in value.items()}
        if isinstance(value, list | tuple):
            items = list(value)
            if self.max_items and len(items) > self.max_items:
                self.cuts.append({"path": path or "$", "length": len(items), "shown": self.max_items,
                                  "unit": "items"})
                items = items[: self.max_items]
            return [self.clip(v, f"{path}[{i}]") for i, v in enumerate(items)]
        return value

    def notes(self, whole: str) -> list[str]:
        """One note when anything was cut, saying where the whole thing is."""
        if not self.cuts:
            return []
        return [f"{len(self.cuts)} value(s) were truncated (listed in 'truncated'); {whole}"]
