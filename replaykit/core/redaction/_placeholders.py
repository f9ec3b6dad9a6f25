"""Run-wide placeholder numbering: the same value is ``<PERSON_1>`` everywhere in a run.

Values are normalised before lookup so trivial variants of one value share a placeholder (``John
Smith`` / ``john  smith``, ``+1 415 555 0132`` / ``(415) 555-0132`` is not attempted: only case and
whitespace for text, digits for numbers). Different values always get different numbers.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

_DIGIT_TYPES = frozenset({"PHONE_NUMBER", "CREDIT_CARD", "IBAN_CODE", "US_SSN", "US_ITIN"})
_WS = re.compile(r"\s+")


def normalise(entity: str, value: str) -> str:
    value = unicodedata.normalize("NFC", value)
    if entity in _DIGIT_TYPES:
        return "".join(c for c in value if c.isalnum()).upper()
    return _WS.sub(" ", value.strip()).casefold()


@dataclass
class PlaceholderMap:
    """(entity, normalised value) -> placeholder. Keep it secret: it reverses the redaction."""

    _by_value: dict[tuple[str, str], str] = field(default_factory=dict)
    _counters: dict[str, int] = field(default_factory=dict)
    originals: dict[str, str] = field(default_factory=dict)
    #: written between the type and the number (``<PERSON_live1>``): placeholders minted for a live
    #: request, told apart from a redacted cassette's own (``adapters/redacted_cassette.py``)
    tag: str = ""

    def placeholder(self, entity: str, value: str) -> str:
        key = (entity, normalise(entity, value))
        found = self._by_value.get(key)
        if found is not None:
            return found
        n = self._counters.get(entity, 0) + 1
        self._counters[entity] = n
        ph = f"<{entity}_{self.tag}{n}>"
        self._by_value[key] = ph
        self.originals[ph] = value
        return ph

    def __len__(self) -> int:
        return len(self._by_value)

    def counts(self) -> dict[str, int]:
        """Distinct values per entity type (safe to print: no values)."""
        return dict(sorted(self._counters.items()))

    def to_json(self) -> dict[str, Any]:
        """The reversal table. Never write it next to the redacted output."""
        return {"placeholders": dict(self.originals)}
