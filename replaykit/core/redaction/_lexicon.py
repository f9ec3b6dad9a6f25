"""Given names and surnames of many countries, read from Faker's person providers (MIT licence).

Why Faker: it is a well-kept package on PyPI (monthly releases), 2 MB, no dependencies, MIT, and
its ``faker.providers.person`` modules hold curated first- and last-name lists of 80+ locales in
their own scripts (Latin, Cyrillic, Greek, Arabic, Devanagari, CJK, Hangul, ...) plus romanised
forms: about 31 k given names and 30 k surnames. ``names-dataset`` (the other candidate) is a
55 MB wheel of 730 k "first names" extracted from the 2021 Facebook leak: personal data from a
breach, and so noisy that most English words are in it.

The lists are read once per process (about half a second) and only in memory; nothing is written.
Without Faker (it comes with the ``redact`` extra) the small built-in list of ``_names`` is used.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

_LATIN = re.compile(r"^[a-zà-öø-ÿā-žƀ-ɏḁ-ỿ'’-]+$")


@dataclass(frozen=True)
class Lexicon:
    given: frozenset[str]  # casefolded, any script
    surnames: frozenset[str]
    source: str  # "faker X.Y.Z" or "built-in"
    #: in how many locales' lists a given name is: "john" 24, "rachel" 15, "bob" 4, but "media",
    #: "price", "author" 1 (Faker's big ``en`` list holds many words): how much a word that is also an
    #: English word can be trusted as a name
    given_locales: Mapping[str, int] = field(default_factory=dict)

    def latin_given(self) -> frozenset[str]:
        return frozenset(w for w in self.given if _LATIN.match(w))

    def in_script(self, words: frozenset[str], pattern: str) -> frozenset[str]:
        rx = re.compile(pattern)
        return frozenset(w for w in words if rx.fullmatch(w))


_LEXICON: Lexicon | None = None


def lexicon() -> Lexicon:
    global _LEXICON
    if _LEXICON is None:
        _LEXICON = _load()
    return _LEXICON


def _values(value: object) -> list[str]:
    if isinstance(value, dict):
        value = list(value)
    if not isinstance(value, (list, tuple, set, frozenset)):
        return []
    return [v for v in value if isinstance(v, str)]


def _load() -> Lexicon:
    try:
        import faker
        import faker.providers.person as person
    except ImportError:
        return Lexicon(frozenset(), frozenset(), "built-in")
    given: set[str] = set()
    surnames: set[str] = set()
    locales: Counter[str] = Counter()
    for module in pkgutil.iter_modules(person.__path__):
        try:
            provider = importlib.import_module(f"{person.__name__}.{module.name}").Provider
        except (ImportError, AttributeError):
            continue
        seen: set[str] = set()  # one count per locale, whatever the number of its lists
        for attr in dir(provider):
            # first_names, first_names_female, first_romanized_names, last_names_male, ...
            if attr.startswith("first_") and "name" in attr:
                names = {v.casefold() for v in _values(getattr(provider, attr))}
                locales.update(names - seen)
                seen |= names
                given |= names
            elif attr.startswith("last_") and "name" in attr:
                surnames.update(v.casefold() for v in _values(getattr(provider, attr)))
    # a one-letter Latin "name" is an initial; CJK surnames are one character
    clean = {w for w in given | surnames if " " not in w and (len(w) >= 2 or not w.isascii())}
    return Lexicon(frozenset(given & clean), frozenset(surnames & clean), f"faker {faker.VERSION}", dict(locales))
