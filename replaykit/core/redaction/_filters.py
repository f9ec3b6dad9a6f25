"""Post-filters on Presidio results: drop what is code, not a person; resolve overlaps.

spaCy's small English model was trained on news, not on agent traces: it calls ``JIRA-4521`` a person,
``os.path`` an organisation and ``get_user`` a place. These checks reject entities whose *shape* is
that of an identifier, a path or a version, which real names and places never have.
"""

from __future__ import annotations

import ipaddress
import re
from typing import NamedTuple

from ._names import FIRST_NAMES, NER_STOPWORDS, english_word, given_name, name_word
from ._secrets import PLACEHOLDER_REGEX, secret_entities


class Span(NamedTuple):
    start: int
    end: int
    entity: str
    score: float


_NON_LATIN = re.compile(r"[^\x00-\u024f\u1e00-\u1eff\s'’.-]")
_NER_ENTITIES = frozenset({"PERSON", "PERSON_NAME", "LOCATION", "ORGANIZATION", "NRP"})
#: names found by replaykit's own rules (lexicon, cues, scripts, the re-cased model pass): their case
#: was already judged by the rule that found them; reported as PERSON once filtered
TRUSTED_NAME = "PERSON_NAME"
_SECRET_ENTITIES = frozenset(secret_entities())
_PLACEHOLDER = re.compile(PLACEHOLDER_REGEX)
# Characters that never occur in a person's or a place's name but are everywhere in code.
_CODE_CHARS = re.compile(r"[0-9_/\\@#$%^&*()\[\]{}<>=+|`~:;\"]|\.\w|->|::")
_CAMEL = re.compile(r"^[a-z]+[A-Z]")  # getUser, iPhone-style identifiers
_ALL_CAPS_WORD = re.compile(r"^[A-Z]{2,}$")
# Unix times in seconds or milliseconds (2001..2033): bare digit runs that libphonenumber reads as
# US numbers; a dialled number is written with separators or a "+".
_UNIX_TIME = re.compile(r"1[0-9]{9}|1[0-9]{12}")



def _looks_like_code(text: str) -> bool:
    if _CODE_CHARS.search(text):
        return True
    words = text.split()
    if any(_CAMEL.match(w) for w in words):
        return True
    if len(words) == 1 and _ALL_CAPS_WORD.match(words[0]):
        return True
    return False


def _keep(text: str, span: Span) -> bool:
    value = text[span.start : span.end]
    if not value.strip():
        return False
    if _PLACEHOLDER.fullmatch(value.strip()):
        return False
    if span.entity in _NER_ENTITIES:
        stripped = value.strip(" \t\n'\".,;:!?")
        if len(stripped) < 2 or _looks_like_code(stripped):
            return False
        if stripped.lower() in NER_STOPWORDS or stripped.split()[0].lower() in NER_STOPWORDS:
            return False
        if span.entity != TRUSTED_NAME and not stripped[0].isupper() and not _name_like(stripped):
            return False
        if span.entity in ("PERSON", TRUSTED_NAME) and _not_a_person(text, span, stripped):
            return False
        if span.entity == "PERSON" and span.score >= 0.85 and _NON_LATIN.search(stripped):
            return False  # the English model on another script is noise; _names handles scripts
        if span.entity == "PERSON" and span.score >= 0.85 and not _model_name_ok(text, span, stripped):
            return False
        if span.entity == "PERSON" and span.score < 0.85 and not _cued_pair_ok(stripped):
            return False
    if span.entity == "PHONE_NUMBER" and (sum(c.isdigit() for c in value) < 7 or _UNIX_TIME.fullmatch(value)):
        return False
    if span.entity == "IP_ADDRESS" and (_is_non_personal_ip(value) or _in_remote(text, span)):
        return False
    if span.entity == "EMAIL_ADDRESS" and _in_remote(text, span):
        return False
    return True


_PERSON_VERB = re.compile(
    r"\s+(?:says|said|asked|asks|wants|wanted|approved|reported|joined|confirmed|wrote|replied|sent|"
    r"thinks|agreed|called|prefers|moved|reviewed)\b")
# Words right before a name: those only a person takes, and prepositions a product takes as often
# ("invite the team to Retool").
_STRONG_CUE_WORDS = r"mr|mrs|ms|dear|hi|hello|hey|thanks|customer|user|contact|cc|ask|tell|ping|named|called"
_PERSON_CUE = re.compile(r"(?i:\b(?:" + _STRONG_CUE_WORDS + r"|with|by|from|to|per|and)\.?,?)\s+$")
_STRONG_PERSON_CUE = re.compile(r"(?i:\b(?:" + _STRONG_CUE_WORDS + r")\.?,?)\s+$")


_PARTICLES = frozenset("van von de da del der den di al el bin ibn le la dos du".split())


def person_context(text: str, start: int, end: int) -> bool:
    return bool(_PERSON_CUE.search(text[max(0, start - 16):start])) or bool(_PERSON_VERB.match(text, end))


def strong_person_context(text: str, start: int, end: int) -> bool:
    """``person_context`` without the prepositions: a cue only a person takes, or a person's verb."""
    return bool(_STRONG_PERSON_CUE.search(text[max(0, start - 16):start])) or bool(_PERSON_VERB.match(text, end))


def _has_name_word(text: str, start: int, end: int) -> bool:
    """A word of the span (particles aside) is a given name or surname of the lexicon (60 k names of
    80+ locales, or a surname shape)."""
    return any(name_word(w) for w in text[start:end].split() if w not in _PARTICLES)


def name_evidence(text: str, start: int, end: int) -> bool:
    """A model's multi-word PERSON (``Zendesk Workspace``, ``Parquet Webhook`` are such hits) is a name
    when a word of it is a lexicon name, or a person's cue or verb is next to it."""
    return person_context(text, start, end) or _has_name_word(text, start, end)


def recased_name_evidence(text: str, start: int, end: int) -> bool:
    """``name_evidence`` for a hit of the re-cased pass (words written in lower case or capitals): a
    preposition before it is no evidence, since technical prose puts its own unknown words there
    ("retry with jittered backoff", "compressed with zstd level"); a lexicon name word, a cue only a
    person takes or a person's verb after it is."""
    return _has_name_word(text, start, end) or strong_person_context(text, start, end)


def _cued_pair_ok(value: str) -> bool:
    """A capitalised pair after "with", "and", "to" (the cue patterns of ``_pii``): "Google Meet",
    "Apple Music", "Adobe Sign" are products, each with an English word in it; a name with an English
    word in it has a lexicon word too ("Grace Park", "Chidi Baker")."""
    words = [w for w in value.split() if w.lower() not in _PARTICLES]
    if len(words) < 2:
        return True
    return not any(english_word(w.lower()) for w in words) or any(name_word(w) for w in words)


def _model_name_ok(text: str, span: Span, value: str) -> bool:
    """The model's PERSON hits that are capitalised nouns in other languages, products and acronyms
    (``Buchhaltung``, ``Grafana``, ``Meine IBAN``) are not names: a single word needs a given name,
    a cue before it or a person's verb after it; no word of a name is an acronym."""
    words = value.split()
    context = person_context(text, span.start, span.end)
    if len(words) > 1:
        if any(w[:1].islower() and w not in _PARTICLES for w in words):
            return False  # "Kundennummer und Bestellnummer": a name's words are capitalised
        if any(_ALL_CAPS_WORD.match(w) for w in words) and not all(_ALL_CAPS_WORD.match(w) for w in words):
            return False
        return name_evidence(text, span.start, span.end)
    if _name_like(value):
        return True
    if context and english_word(value) and not given_name(value):
        # "invite the team to Retool", "moved to Harbor": a word after "to"/"with"/"by" is a product
        # as often as a person; an English word there needs a cue that only a person takes
        return strong_person_context(text, span.start, span.end)
    return context


def _name_like(value: str) -> bool:
    # Lower-case and non-Latin names come from _names (lexicon and script rules), not from the model.
    return not value[0].isascii() or value.split()[0].casefold() in FIRST_NAMES


def _in_remote(text: str, span: Span) -> bool:
    """``git@github.com:org/repo.git``, ``ssh://git@host/...``, ``deploy@10.0.0.12:/var/log``: a
    user@host of a remote (scp-style or ssh URL) names a machine account, not a person's mailbox."""
    before = text[max(0, span.start - 8):span.start]
    after = text[span.end:span.end + 2]
    value = text[span.start:span.end]
    if ("://" in before and before.rstrip().endswith(("://", "@"))) or before.endswith("://"):
        return True
    if span.entity == "EMAIL_ADDRESS" and after.startswith(":") and not after[1:2].isdigit():
        return True
    if span.entity == "EMAIL_ADDRESS" and value.split("@")[0] in ("git", "hg", "svn", "deploy", "www-data"):
        return True
    return span.entity == "IP_ADDRESS" and before.endswith("@") and after.startswith(":")


# Words that make a capitalised phrase an organisation or a product, not a person ("created by Nous
# Research", "powered by Google Cloud").
_ORG_WORDS = frozenset(
    """
    research labs lab inc corp corporation company co ai systems technologies technology group foundation
    university institute team services solutions software cloud bank ltd llc gmbh plc agent agents api
    platform studio studios network networks project projects council committee department ministry
    ci cd ide sdk os db
    """.split()
)
# Job titles and the things a capitalised phrase names when it is not a person.
_TITLE_WORDS = frozenset(
    """
    engineer engineering developer manager director head chief officer lead principal senior junior staff
    architect representative supervisor scientist analyst designer consultant administrator specialist
    president vp ceo cto cfo coo intern success security operations support sales marketing product
    """.split()
)
_THING_WORDS = frozenset(
    """
    sequence law laws disease syndrome theorem effect principle station street stadium center centre square
    park bridge airport watch pixel phone apps app series season model ground express mail priority
    warehouse depot hub office branch region cbd
    """.split()
)
_HEADING = re.compile(r"(?m)^[ \t]*#{1,6}[ \t]*$")


def _not_a_person(text: str, span: Span, value: str) -> bool:
    words = [w.strip(".,").lower() for w in value.split()]
    if any(w in _ORG_WORDS or w in _TITLE_WORDS or w in _THING_WORDS for w in words):
        return True
    tail = text[span.end:span.end + 24].lower().split()
    if tail and tail[0].strip(".,;:") in _THING_WORDS | _TITLE_WORDS:
        return True  # "Fibonacci sequence", "Baker Street station", "Google Pixel apps"
    # A markdown heading's first word ("# Parallel tool calls") is not a name.
    line_start = text.rfind("\n", 0, span.start) + 1
    return len(words) == 1 and bool(_HEADING.match(text[line_start : span.start]))


def _is_non_personal_ip(value: str) -> bool:
    # ::1, 127.0.0.1 and 0.0.0.0 are in every config file and identify nobody.
    try:
        ip = ipaddress.ip_address(value.strip("[]"))
    except ValueError:
        return False
    return ip.is_loopback or ip.is_unspecified


def _priority(span: Span) -> tuple[int, int, float]:
    # Secrets beat PII (a key that happens to contain a phone-like digit run is still a key); then
    # longer spans beat the spans they contain; then the score.
    return (1 if span.entity in _SECRET_ENTITIES else 0, span.end - span.start, span.score)


ALIASES = {TRUSTED_NAME: "PERSON"}


def _merge_names(spans: list[Span]) -> list[Span]:
    """Name spans that overlap become one (``Müşteri Zeynep`` from the model and ``Zeynep Yılmaz``
    from a rule): keeping the longer alone would leave the other's surname in the clear."""
    names = sorted((s for s in spans if s.entity in ("PERSON", TRUSTED_NAME)), key=lambda s: s.start)
    if len(names) < 2:
        return spans
    merged: list[Span] = []
    for s in names:
        if merged and s.start < merged[-1].end:
            last = merged[-1]
            merged[-1] = Span(last.start, max(last.end, s.end), TRUSTED_NAME, max(last.score, s.score))
        else:
            merged.append(s)
    return [s for s in spans if s.entity not in ("PERSON", TRUSTED_NAME)] + merged


def resolve_overlaps(spans: list[Span]) -> tuple[Span, ...]:
    spans = _merge_names(spans)
    accepted: list[Span] = []
    for span in sorted(spans, key=_priority, reverse=True):
        if all(span.end <= a.start or span.start >= a.end for a in accepted):
            accepted.append(span)
    return tuple(sorted(accepted))


def _trim(text: str, span: Span) -> Span:
    # NER spans sometimes swallow trailing punctuation or a possessive; keep those out of the value so
    # "Alice's" and "Alice" get the same placeholder.
    start, end = span.start, span.end
    while end > start and text[end - 1] in " \t\n.,;:!?'\")":
        end -= 1
    if text[start:end].endswith(("'s", "’s")) and span.entity in _NER_ENTITIES:
        end -= 2
    while start < end and text[start] in " \t\n'\"(":
        start += 1
    if span.entity == "PERSON":
        # "Sorry John Smith" / "Dear Ann": the model often takes the sentence's first word along.
        first, _, rest = text[start:end].partition(" ")
        if rest and first.strip(",.:").lower() in _LEADING_NOT_NAME:
            start += len(first) + 1
            while start < end and text[start] == " ":
                start += 1
    return Span(start, end, span.entity, span.score)


_LEADING_NOT_NAME = frozenset(
    "sorry thanks thank hi hello hey dear welcome ok okay yes no please cc to from mr mrs ms dr prof "
    "regards cheers ask call email tell ping assign "
    # articles and determiners of other languages: "Der Mitarbeiter", "Meine IBAN" start no name
    "der die das den dem des ein eine einen meine mein unser unsere la le les el los las il lo gli une un".split()
)


def placeholder_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _PLACEHOLDER.finditer(text)] if "<" in text else []


def filter_spans(text: str, spans: list[Span]) -> tuple[Span, ...]:
    """Drop code-shaped NER hits and spans inside existing placeholders; make spans disjoint."""
    kept = [_trim(text, s) if s.entity in _NER_ENTITIES else s for s in spans]
    kept = [s for s in kept if s.end > s.start and _keep(text, s)]
    protected = placeholder_spans(text)
    if protected:
        kept = [s for s in kept if all(s.end <= a or s.start >= b for a, b in protected)]
    return tuple(Span(s.start, s.end, ALIASES.get(s.entity, s.entity), s.score) for s in resolve_overlaps(kept))
