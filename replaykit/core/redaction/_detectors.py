"""Detectors written as plain functions (text -> spans), for what regexes in Presidio cannot check.

* ``cards``: every current issuer range (Visa, Mastercard 51-55 and 2221-2720, Amex, Discover,
  JCB, Diners, UnionPay, Maestro, Mir, RuPay), 12-19 digits, Luhn-checked. Presidio's own card
  pattern misses the 2-series Mastercard and Mir ranges.
* ``birth_dates``: a date in a common format (07/22/1991, 12.08.1985, 1991-07-22, 22 July 1991,
  1985年8月12日 ...) when the words just before it say birth, in several languages.
* ``phones``: libphonenumber (``phonenumbers``) over international and national formats; a number
  that is only *possible* (not in an allocated range) counts when a phone word precedes it.
* ``names``: names that the English NER model cannot see: any case (``maria gonzalez``), and
  Cyrillic, Greek, CJK, Hangul, Arabic and Devanagari script names in context (see ``_names``).
* ``unprefixed_secrets``: a random-looking value (character classes and Shannon entropy) right after
  words that say secret, in several languages: the secrets with no vendor prefix.

``FunctionRecognizer`` turns any of them into a Presidio recognizer, so they run inside the same
analyzer (and the same cache) as everything else.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from ._names import find_names

Found = list[tuple[int, int, float]]

# ------------------------------------------------------------------------------------------- cards

_CARD = re.compile(r"(?<![\d.-])\d(?:[ -]?\d){11,18}(?![\d-])")


def _iin_ok(d: str) -> bool:
    n = len(d)
    p2, p3, p4, p6 = int(d[:2]), int(d[:3]), int(d[:4]), int(d[:6])
    if d[0] == "4":
        return n in (13, 16, 19)  # Visa
    if 51 <= p2 <= 55 or 222100 <= p6 <= 272099:
        return n == 16  # Mastercard
    if p2 in (34, 37):
        return n == 15  # Amex
    if p4 == 6011 or p2 == 65 or 644 <= p3 <= 649 or 622126 <= p6 <= 622925:
        return 16 <= n <= 19  # Discover
    if 3528 <= p4 <= 3589:
        return 16 <= n <= 19  # JCB
    if p2 in (36, 38, 39) or 300 <= p3 <= 305 or p4 == 3095:
        return 14 <= n <= 19  # Diners Club
    if p2 == 62 or p2 == 81:
        return 16 <= n <= 19  # UnionPay
    if 2200 <= p4 <= 2204:
        return 16 <= n <= 19  # Mir
    if p4 in (5018, 5020, 5038, 5893, 6304, 6759, 6761, 6762, 6763) or p2 in (50, 56, 57, 58, 67):
        return 12 <= n <= 19  # Maestro
    if p2 in (60, 82) or p3 == 508 or p4 in (6521, 6522) or 353 <= p3 <= 356:
        return n == 16  # RuPay
    return False


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


_DIGITS12 = re.compile(r"\d{4}")


def cards(text: str) -> Found:
    if not _DIGITS12.search(text):
        return []
    out: Found = []
    for m in _CARD.finditer(text):
        raw = m.group()
        digits = raw.replace(" ", "").replace("-", "")
        seps = {c for c in raw if not c.isdigit()}
        if len(seps) > 1 or not (12 <= len(digits) <= 19):
            continue
        if _iin_ok(digits) and luhn_ok(digits) and len(set(digits)) > 1:
            out.append((m.start(), m.end(), 0.9))
    return out


# ------------------------------------------------------------------------------------ dates of birth

_MONTH = (r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?")
_DATE = (
    r"(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}"
    r"|\d{1,2}[-/.]\d{1,2}[-/.](?:\d{4}|\d{2})"
    r"|\d{4}\s?年\s?\d{1,2}\s?月\s?\d{1,2}\s?日"
    r"|\d{1,2}(?:st|nd|rd|th)?\s+" + _MONTH + r",?\s+\d{4}"
    r"|" + _MONTH + r"\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4})"
)
_BIRTH_WORDS = (
    r"(?:d\.?o\.?b\.?|date\s+of\s+birth|birth\s*date|birthdate|birthday|born(?:\s+on)?|"
    r"geburtsdatum|geboren(?:\s+am)?|n[ée]e?\s+le|date\s+de\s+naissance|fecha\s+de\s+nacimiento|"
    r"nacid[oa]\s+el|data\s+de\s+nascimento|data\s+di\s+nascita|geboortedatum|дата\s+рождения|"
    r"родил(?:ся|ась)|生年月日|出生日期|生日|تاريخ\s+الميلاد)"
)
_DOB = re.compile(r"(?i:" + _BIRTH_WORDS + r")(?:[^\d\n]{0,32}?)(" + _DATE + r")(?!\d)", re.IGNORECASE)


_BIRTH_GATE = re.compile(r"(?i:birth|born|dob|d\.o\.b|geb|naiss|nacim|nasc|ne le|né|рожд|生|ميلاد)")


def birth_dates(text: str) -> Found:
    if not _BIRTH_GATE.search(text):
        return []
    return [(m.start(1), m.end(1), 0.85) for m in _DOB.finditer(text)]


# ------------------------------------------------------------------------------------------- e-mail

# By shape, whatever the domain: Presidio's recognizer validates the top-level domain against the
# Public Suffix List, so ``.example``, ``.internal``, ``.local``, ``.corp``, ``.lan`` (reserved or
# private names, everywhere in company traces) passed through. A mailbox is local@label(.label)+ with a
# last label of letters; ``actions/checkout@v4``, ``pkg@1.2.3`` and ``nginx@sha256:...`` have none.
_EMAIL = re.compile(
    r"(?<![\w.+%-])[\w.+%-]*\w@(?:[^\W_](?:[\w-]{0,61}[^\W_])?\.)+[^\W\d_]{2,24}(?![\w-])")


# A mailbox at an IP literal or at localhost; at a host name without a dot only after a mail cue
# ("email: admin@intranet"): alone, user@host is a shell prompt or an scp target as often.
_EMAIL_LITERAL = re.compile(r"(?<![\w.+%-])[\w.+%-]*\w@(?:\[(?:\d{1,3}\.){3}\d{1,3}\]|localhost\b)")
_EMAIL_DOTLESS = re.compile(r"(?i:\b(?:e-?mail|mail(?:box)?|mailto|cc|bcc|to|from|reply-to)\s*[:=]\s*)"
                            r"([\w.+%-]*\w@[^\W_][\w-]{0,61}[^\W_])(?![\w.@-])")
# Written to fool harvesters: jane(at)example.com, jane [at] example [dot] com, jane at example dot com
# (the last only with the dot spelt out too: "look at example.com" is prose)
_AT = r"(?:\s*(?:\[at\]|\(at\)|\{at\}|<at>)\s*)"
_DOT = r"(?:\s*(?:\[dot\]|\(dot\)|\{dot\}|<dot>)\s*|\.)"
_EMAIL_OBFUSCATED = re.compile(
    r"(?<![\w.+%-])[\w.+%-]*\w(?:" + _AT + r"[^\W_][\w-]*(?:" + _DOT + r"[^\W_][\w-]*)*" + _DOT + r"[^\W\d_]{2,24}"
    r"|\s+at\s+[^\W_][\w-]*(?:\s+dot\s+[^\W_][\w-]*)*\s+dot\s+(?i:com|org|net|edu|gov|io|co|de|fr|uk|example|"
    r"internal|local|corp|lan|test))(?![\w-])")
_OBFUSCATION_CUES = ("at]", "at)", "at}", "at>", " dot ")


def emails(text: str) -> Found:
    found: Found = []
    if "@" in text:
        found += [(m.start(), m.end(), 0.9) for m in _EMAIL.finditer(text)]
        found += [(m.start(), m.end(), 0.9) for m in _EMAIL_LITERAL.finditer(text)]
        found += [(m.start(1), m.end(1), 0.85) for m in _EMAIL_DOTLESS.finditer(text)]
    if any(cue in text for cue in _OBFUSCATION_CUES):  # "at" alone is in nearly every English text
        found += [(m.start(), m.end(), 0.8) for m in _EMAIL_OBFUSCATED.finditer(text)]
    return found


# ------------------------------------------------------------------------------------- identity numbers

_SSN_CUE = re.compile(r"(?i:\bssn\b|social\s+security(?:\s+(?:number|no\.?|#))?|\bsocial\s+sec\b|\bsocial\s*[:#]"
                      r"|\btax(?:payer)?\s+id(?:entification)?(?:\s+number)?\b|\bi?tin\b)")
_SSN = re.compile(r"(?<![\w-])(\d{3})([- ]?)(\d{2})\2(\d{4})(?![\w-])")
# Spanish DNI/NIE (checksum letter), Brazilian CPF (two check digits), UK National Insurance numbers
_DNI = re.compile(r"(?<![\w-])([XYZ]?)(\d{7,8})-?([A-Z])(?![\w-])")
_CPF = re.compile(r"(?<![\w.-])(\d{3})\.(\d{3})\.(\d{3})-(\d{2})(?![\w-])")
_NINO = re.compile(r"(?<![\w])(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![\w])")


def _ssn_ok(area: str, group: str, serial: str) -> bool:
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def _dni_ok(prefix: str, digits: str, letter: str) -> bool:
    number = int(str("XYZ".index(prefix)) + digits) if prefix else int(digits)
    return (len(digits) == 8 or bool(prefix)) and "TRWAGMYFPDXBNJZSQVHLCKE"[number % 23] == letter


def _cpf_ok(digits: str) -> bool:
    d = [int(c) for c in digits]
    if len(set(d)) == 1:
        return False
    for n in (9, 10):
        s = sum(v * w for v, w in zip(d[:n], range(n + 1, 1, -1), strict=True))
        if d[n] != (0 if s % 11 < 2 else 11 - s % 11):
            return False
    return True


def identity_numbers(text: str) -> Found:
    """Numbers that identify a person, by checksum or by a label just before them.

    A US SSN written with dashes is Presidio's; without dashes or with spaces a nine-digit run is
    everywhere (ids, amounts), so it counts only after an SSN word. DNI/NIE and CPF carry check
    digits, a National Insurance number has a shape no id or hash has."""
    if not any(c.isdigit() for c in text):
        return []
    out: Found = []
    if _SSN_CUE.search(text):
        for m in _SSN.finditer(text):
            if _ssn_ok(m.group(1), m.group(3), m.group(4)) and _SSN_CUE.search(text[max(0, m.start() - 40):m.start()]):
                out.append((m.start(), m.end(), 0.8))
    out += [(m.start(), m.end(), 0.8) for m in _DNI.finditer(text) if _dni_ok(m.group(1), m.group(2), m.group(3))]
    out += [(m.start(), m.end(), 0.85) for m in _CPF.finditer(text) if _cpf_ok("".join(m.groups()))]
    out += [(m.start(), m.end(), 0.7) for m in _NINO.finditer(text)]
    return out


# ------------------------------------------------------------------------------------------- phones

PHONE_REGIONS = ("US", "GB", "DE", "FR", "IN", "AU", "BR", "JP", "ES", "IT", "NL", "CA", "RU", "CN", "AE")
_PHONE_GATE = re.compile(r"(?:\d[\s().\-/]{0,3}){7,}")
_DATES_AND_TIMES = re.compile(
    r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?|\b\d{1,2}:\d{2}(?::\d{2})?\b")
_PHONE_WORDS = re.compile(
    r"(?i:phone|tel\b|tel\.|telephone|mobile|cell|call|text\s+me|sms|whatsapp|fax|office|rufnummer|handy|"
    r"(?:my|his|her|your|their|our)\s+number|reach\s+(?:me|him|her|them)|ring|dial|nummer|numéro|número|"
    r"t[ée]l[ée]phone|portable|m[óo]vil|celular|telefone|telefono|cellulare|bel\b|телефон|моб|手机|手機|電話|电话|"
    r"전화|휴대폰|핸드폰|연락처|"
    r"電話番号|هاتف|جوال)[^\d\n]{0,20}$")


# A letter, digit or hyphen glued to the number makes it part of a token; not a CJK character, since
# Chinese, Japanese and Korean put no space between a word and a number ("電話番号は03-1234-5678です").
_INSIDE_TOKEN = re.compile(r"[^\W\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]|-")
# 415.555.0143: the North American grouping with dots (a version has fewer digits per group)
_DOTTED = re.compile(r"\(?\d{3}\)?\.\d{3}\.\d{4}|\d{2}(?:\.\d{2}){4}")
_DATE_LIKE = re.compile(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}")


def phones(text: str) -> Found:
    if not _PHONE_GATE.search(text) or not _PHONE_GATE.search(_DATES_AND_TIMES.sub(" ", text)):
        return []
    import phonenumbers

    found: dict[tuple[int, int], float] = {}
    for region in PHONE_REGIONS:
        for m in phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.POSSIBLE):
            start, end = m.start, m.end
            if (start, end) in found or _INSIDE_TOKEN.match(text[start - 1:start]) or \
                    _INSIDE_TOKEN.match(text[end:end + 1]) or (text[end:end + 2][:1] == "." and text[end + 1:end + 2].isdigit()):
                continue  # part of an id, a hash, a version or a decimal number
            valid = phonenumbers.is_valid_number(m.number)
            cue = _PHONE_WORDS.search(text[max(0, start - 40):start]) is not None
            raw = m.raw_string
            if not cue and "." in raw and not raw.startswith("+") and not _DOTTED.fullmatch(raw):
                continue  # 2024.06.11-3, 10.0.0.12: versions and addresses with dots
            if not cue and (not (re.search(r"[\s()+-]", raw) or _DOTTED.fullmatch(raw)) or _DATE_LIKE.fullmatch(raw)):
                continue  # an unformatted digit run (EAN, build number, timestamp) or a date needs a phone word
            if valid or cue:
                found[(start, end)] = 0.75 if valid else 0.6
    return [(s, e, sc) for (s, e), sc in found.items()]


# -------------------------------------------------------------------------------- unprefixed secrets

_SECRET_CONTEXT = re.compile(
    r"(?i:secret|token|passw(?:or)?d|passphrase|credential|api[\s_-]?key|access[\s_-]?key|hmac|signing|"
    r"encryption\s+key|private|auth|session|login\s+with|clé|schlüssel|contraseña|senha|токен|ключ|пароль|"
    r"密钥|密码|秘密|トークン|パスワード|비밀번호|كلمة\s+المرور|passwort|kennwort|wachtwoord|"
    r"(?:deploy|ssh|licen[cs]e|master|root|shared|service|app|admin|host|product|activation|account|client|"
    r"server|license)[\s_-]?keys?\b)")
# "key" alone says secret only right before the value ("key: 8f3a...", "deploy key 9c1e..."): "sort key",
# "the key question" are prose, and a value after them still needs the shape of a secret
_KEY_JUST_BEFORE = re.compile(r"(?i:\bkey\b)[\s:=\"']{1,4}$")
_NOT_SECRET_CONTEXT = re.compile(
    r"(?i:commit|sha\d*|md5|digest|checksum|etag|trace|span|request[\s_-]?id|uuid|hash|build|version|"
    r"order|tracking|isbn|color|colour)[^\n]{0,12}$")
# a value may follow "=" (SECRET_KEY_BASE=...), not "==" (inside base64) nor a word character
_CANDIDATE = re.compile(r"(?<![\w/+.-])(?<!==)[A-Za-z0-9+/_!@#$%^&*~.-]{12,128}={0,2}(?![\w/+=-])")


def _entropy(value: str) -> float:
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def random_looking(value: str) -> bool:
    """Mixed character classes and high per-character entropy (hex needs length instead)."""
    value = value.rstrip("=.")
    if len(value) < 12 or value.isalpha() or value.isdigit():
        return False
    classes = sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[^A-Za-z0-9]"))
    if re.fullmatch(r"[0-9a-f]+", value):
        return len(value) >= 24 and _entropy(value) >= 3.0
    if not re.search(r"\d", value) or classes < 3:
        return False
    return _entropy(value) >= (3.0 if len(value) < 20 else 3.4)


# A word (or words) and then a number: ticket references, build ids, host names (``corpusref-c0002``,
# ``BUG-20240611``, ``INC0012345``, ``build-2024-17``). They follow "API keys" or "password" in
# prose all the time; a secret has its digits mixed in, not only at the end.
_IDENTIFIER = re.compile(r"[A-Za-z]{2,}(?:[-_.][A-Za-z]{2,})*(?:[-_.#]?[A-Za-z]?\d+){1,2}")


def secret_shaped(value: str) -> bool:
    """The shape of a secret, whatever word came before it (a keyword alone is not enough)."""
    if len(value) < 16 and not re.search(r"[!@#$%^&*~+]", value):
        return False  # fp_3aa7262c27, build-7f3a9c: short ids; a short secret has a symbol in it
    return not _IDENTIFIER.fullmatch(value) and random_looking(value)


def unprefixed_secrets(text: str) -> Found:
    if not _SECRET_CONTEXT.search(text) and "key" not in text.lower():
        return []
    out: Found = []
    for m in _CANDIDATE.finditer(text):
        value = m.group().rstrip(".,;:!?)")
        before = text[max(0, m.start() - 48):m.start()]
        if not (_SECRET_CONTEXT.search(before) or _KEY_JUST_BEFORE.search(before)) or _NOT_SECRET_CONTEXT.search(before):
            continue
        if "://" in text[max(0, m.start() - 12):m.start()] or value.count(".") > 2:
            continue  # a host name or a URL, not a value
        if secret_shaped(value):
            out.append((m.start(), m.start() + len(value), 0.7))
    return out


# ------------------------------------------------------------------------------- presidio adapter

DETECTORS: dict[str, tuple[str, Callable[[str], Found]]] = {
    "replaykit_cards": ("CREDIT_CARD", cards),
    "replaykit_birth_dates": ("DATE_OF_BIRTH", birth_dates),
    "replaykit_phones": ("PHONE_NUMBER", phones),
    "replaykit_emails": ("EMAIL_ADDRESS", emails),
    "replaykit_identity": ("ID_NUMBER", identity_numbers),
    # its own entity name: Presidio drops a lower-scored result that overlaps a same-entity one
    # ("Müşteri Zeynep" from the model would swallow "Zeynep Yılmaz"); _filters maps it to PERSON
    "replaykit_names": ("PERSON_NAME", find_names),
    "replaykit_unprefixed_secrets": ("SECRET", unprefixed_secrets),
}


def build_function_recognizers() -> list[Any]:
    """ONE Presidio recognizer running every detector: each recognizer call has a fixed cost in
    Presidio (result wrapping, explanations, de-duplication) that five separate ones would pay five
    times on every chunk."""
    from presidio_analyzer import EntityRecognizer, RecognizerResult

    class FunctionRecognizer(EntityRecognizer):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__(supported_entities=sorted({e for e, _ in DETECTORS.values()}),
                             name="replaykit_detectors", supported_language="en")

        def load(self) -> None:
            return None

        def analyze(self, text: str, entities: list[str], nlp_artifacts: Any = None) -> list[Any]:
            wanted = set(entities or self.supported_entities)
            return [RecognizerResult(entity, s, e, sc)
                    for entity, find in DETECTORS.values() if entity in wanted
                    for s, e, sc in find(text)]

    return [FunctionRecognizer()]
