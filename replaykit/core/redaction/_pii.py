"""Extra PII recognizers (pattern based, so they work in both modes) and the tuned built-in set.

Presidio's built-ins are tuned for documents, not agent traces. In traces they fire on file names
(``main.py`` is a URL: .py is Paraguay), on build numbers (US_DRIVER_LICENSE, US_BANK_NUMBER), on
timestamps (UK_NHS has a mod-11 checksum that one 10-digit number in eleven passes), on versions and
ports (DATE_TIME in NER mode). Those recognizers are not loaded at all; see ``BUILTIN_RECOGNIZERS``.
"""

from __future__ import annotations

from typing import Any

# Presidio built-in recognizer class name -> kept? Only the ones with a checksum or a distinctive
# shape survive in traces full of ids, hashes, versions and paths.
BUILTIN_RECOGNIZERS: dict[str, bool] = {
    "EmailRecognizer": False,  # validates the TLD: misses .example/.internal/.local; see _detectors.emails
    "PhoneRecognizer": False,  # replaced by _detectors.phones (more regions, context for national numbers)
    "CreditCardRecognizer": False,  # misses 2-series Mastercard and Mir; see _detectors.cards
    "IbanRecognizer": True,  # mod-97
    "IpRecognizer": True,  # validated by ipaddress
    "UsSsnRecognizer": True,
    "UsItinRecognizer": True,
    "CryptoRecognizer": True,  # base58/bech32 checksum
    "MacAddressRecognizer": True,
    "UrlRecognizer": False,  # main.py, README.md, os.path.join are "URLs"; secrets in URLs are ours
    "UuidRecognizer": False,  # UUIDs are ids in traces (tool call ids, run ids), never PII
    "DateRecognizer": False,  # dates are not personal on their own and collide with versions
    "UsLicenseRecognizer": False,  # matches any letter+digits token (v1, A1234567, a456)
    "UsBankRecognizer": False,  # any 8-17 digit number: build ids, timestamps
    "UsPassportRecognizer": False,  # any 9 digit number
    "NhsRecognizer": False,  # any 10 digit number passing mod 11: unix timestamps
    "MedicalLicenseRecognizer": False,  # two letters + 7 digits: order ids
}


_STREET_SUFFIX = (
    r"(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Way|Court|Ct|Place|Pl|Square|Sq|"
    r"Terrace|Parkway|Pkwy|Highway|Hwy|Close|Crescent|Row|Gardens|Mews|Circle|Cir|Loop|Alley|Trail|Walk)"
)
_TAIL = (
    r"(?:\s+(?:N|S|E|W|NE|NW|SE|SW)\b)?"
    r"(?:,?\s+(?:Apt|Apartment|Suite|Ste|Unit|Flat|#)\.?\s*[0-9A-Za-z-]{1,6})?"
    r"(?:,\s*[A-Z][a-z][A-Za-z.'-]*(?:\s[A-Z][a-z][A-Za-z.'-]*){0,2}){0,2}"
    r"(?:,?\s+(?:[A-Z]{2}\s+\d{5}(?:-\d{4})?|(?:[A-Z]{2}\s+)?[A-Z]\d[A-Z]\s?\d[A-Z]\d|[A-Z]{1,2}\d[A-Z\d]?\s*\d[A-Z]{2}"
    r"|(?:[A-Z]{2,3}\s+)?\d{4,5}))?"
)
# ", 111 43 Stockholm", ", 1016 GV Amsterdam", ", 00-514 Warszawa", ", 4050-262 Porto", ", D-10115 Berlin",
# ", 8001 Zürich": the postcode of many countries, then the town (one or two capitalised words)
_POSTCODE_TOWN = (
    r"(?:,?\s*(?:\d{3}\s\d{2}|\d{4}\s?[A-Z]{2}(?=\s)|\d{2}-\d{3}|\d{4}-\d{3}|[A-Z]{1,2}-\d{4,5}|\d{4,5})"
    r"\s+[A-ZÄÖÜÅÆØÉŁŚŻ][\w-]+(?:\s[A-Z][\w-]+)?)?"
)
ADDRESS_PATTERNS: tuple[tuple[str, str, float], ...] = (
    # 42 Elm Street, Springfield, IL 62704 / 221B Baker St, London NW1 6XE
    ("street_number_first", r"\b\d{1,5}[A-Za-z]?\s+(?:[A-Z][A-Za-z'.-]*\s+){1,4}" + _STREET_SUFFIX + r"\b\.?" + _TAIL, 0.7),
    # Hauptstraße 5, 10115 Berlin / Kirchweg 12a
    (
        "germanic_street",
        r"\b[A-ZÄÖÜ][a-zäöüß]+(?:straße|strasse|str\.|weg|gasse|platz|allee|ring|damm|laan|straat|gracht|vej|gatan)"
        r"\s+\d{1,4}[a-z]?\b" + _POSTCODE_TOWN,
        0.7,
    ),
    # 12 rue de la Paix, 75002 Paris / 5, avenue Victor Hugo
    (
        "romance_number_first",
        r"\b\d{1,4}(?:\s?(?:bis|ter))?,?\s+(?i:rue|avenue|boulevard|bd|place|allée|chemin|impasse|quai|cours)"
        r"\s+(?:(?:de|du|des|la|le|l'|d')\s*)*[A-ZÉ][\w'-]+(?:\s[A-Z][\w'-]+){0,3}"
        r"(?:,\s*\d{5}\s+[A-Z][\w-]+)?",
        0.7,
    ),
    # Calle Mayor 10 / Via Roma 1 / Rua Augusta 274 (capitalised street word, name, then a number)
    (
        "romance_name_first",
        r"\b(?:Rue|Avenue|Calle|Avenida|Via|Viale|Piazza|Rua|Plaza|Praça|Carrer|Paseo)\s+"
        r"(?:(?:de|del|la|le|des|da|do|di|du|dos|das)\s+)*[A-Z][\w'-]+(?:\s[A-Z][\w'-]+){0,3},?\s+\d{1,4}\b"
        r"(?:,\s*(?:\d{4,5}(?:-\d{3})?\s+)?[A-Z][\w-]+(?:\s[A-Z][\w-]+)?)?",
        0.7,
    ),
)


# Words of the number-first shape that are English prose, not a street's name ("5 miles down the road").
_PROSE = r"(?!(?:on|the|to|a|an|of|in|at|by|for|and|or|down|up|this|that|my|our|your|his|her|their|along|across|off|into|onto|main)\b)"
_ADDRESS_MORE: tuple[tuple[str, str, float], ...] = (
    # 742 evergreen terrace: number first in lower case, with the unambiguous street words only
    ("street_number_first_any_case",
     r"\b\d{1,5}[a-z]?\s+(?:" + _PROSE + r"[a-z][a-z'.-]+\s+){1,3}(?:street|avenue|boulevard|terrace|road)\b", 0.6),
    # Berliner Straße 12 / Váci utca 12 / Aleksanterinkatu 52 / Kungsgatan 44: street word, then a number
    ("street_word_then_number",
     r"\b[A-ZÄÖÜÅÆØ][\wäöüßåæø-]+\s(?:Straße|Strasse|Str\.|Weg|Platz|Allee|Gasse|Ring|Damm|Ufer|utca|út|tér)\s+\d{1,4}[a-z]?\b"
     r"|\b[A-ZÄÖÜÅÆØ][a-zäöüßåæø]+(?:gata|gade|veien|vei|vägen|väg|steeg|plein|kade|singel|dreef|katu|tie|kuja)"
     r"\s+\d{1,4}[a-z]?\b" + _POSTCODE_TOWN, 0.7),
    # ul. Marszałkowska 84/92, 00-514 Warszawa / aleja Jana Pawła II 12
    ("slavic_street",
     r"\b(?:ul\.|ulica|al\.|aleja|pl\.|nám\.|ulice|trg|ulitsa)\s*[A-ZŁŚŻŹĆČŠŽ][\w.-]+(?:\s[A-ZŁŚŻŹĆČŠŽI][\w.-]*){0,3}"
     r"\s+\d{1,4}[a-z]?(?:/\d{1,4})?" + _POSTCODE_TOWN, 0.7),
    # ул. Тверская, д. 7 / проспект Мира 10
    ("cyrillic_street",
     r"(?:ул\.|улица|пр\.|пр-т|проспект|пер\.|переулок|наб\.|набережная|бульвар|б-р|шоссе|пл\.|площадь|вул\.|вулиця)"
     r"\s*[А-ЯЁІЇЄ0-9][\wА-Яа-яЁё-]*(?:\s[\wА-Яа-яЁё-]+){0,2},?\s*(?:д\.|дом|буд\.)?\s*\d{1,4}[а-я]?"
     r"(?:,?\s*(?:кв\.|квартира)\s*\d{1,4})?", 0.7),
    # Corso Buenos Aires 43 / Avda. de la Constitución 5 / Travessa do Carmo 3 (more street words, name first)
    ("romance_name_first_more",
     r"\b(?:Corso|Largo|Vicolo|Strada|Avda\.|Av\.|Camino|Ronda|Travessa|Travesía|Alameda|Estrada|Rambla|Calzada|"
     r"Carretera|Chaussée|Route|Quai|Boulevard|Bd)\s+(?:(?:de|del|la|le|des|da|do|di|du|dos|das)\s+)*"
     r"[A-ZÁÉÍÓÚ][\w'-]+(?:\s[A-Z][\w'-]+){0,3},?\s+\d{1,4}\b", 0.7),
    # 88 rue des martyrs: after "rue", "chemin", ... the name may be in any case
    ("romance_number_first_any_case",
     r"\b\d{1,4}(?:\s?(?:bis|ter))?,?\s+(?i:rue|allée|chemin|impasse|quai)\s+(?:(?:de|du|des|la|le|l'|d')\s*)*"
     r"[\w'-]{2,}(?:\s(?!et\b|and\b)[\w'-]{2,}){0,2}(?:,\s*\d{5}\s+[\w-]+)?", 0.65),
    # 東京都千代田区丸の内1-9-1 / 上海市黄浦区南京东路100号 / 서울특별시 강남구 테헤란로 152
    ("japanese_address",
     r"(?:東京都|北海道|大阪府|京都府|[\u4e00-\u9fff]{2,3}県)[\u4e00-\u9fff]{1,5}[市区町村郡][\u4e00-\u9fff\u3040-\u30ff]{0,10}?"
     r"\d{1,4}(?:[-−－丁目番]\d{1,4}){1,3}号?", 0.7),
    ("chinese_address", r"[\u4e00-\u9fff]{2,12}(?:路|街|大道|巷|胡同)\d{1,5}号(?:[\u4e00-\u9fff0-9]{0,8}室)?", 0.7),
    ("korean_address", r"(?:[가-힣]+(?:시|도|구|군)\s)+[가-힣0-9]+(?:로|길|대로)\s?\d{1,4}(?:-\d{1,4})?(?![\d가-힣])", 0.7),
)
ADDRESS_PATTERNS = ADDRESS_PATTERNS + _ADDRESS_MORE


# Dates of birth and identity numbers introduced by their label (Presidio's DATE_TIME is off: dates on
# their own are not personal, a date of birth is).
LABELLED_PATTERNS: tuple[tuple[str, str, str, float], ...] = (
    (
        "DATE_OF_BIRTH",
        "dob",
        r"(?<=\b(?i:dob|d\.o\.b\.|date of birth|birth ?date|born(?: on)?)[\"']?\s*[:=]?\s*[\"']?)"
        r"(?:\d{4}-\d{2}-\d{2}|\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}|\d{1,2}(?:st|nd|rd|th)?\s+[A-Z][a-z]+\.?,?\s+\d{4}"
        r"|[A-Z][a-z]+\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4})",
        0.8,
    ),
    (
        "ID_NUMBER",
        "labelled_id",
        r"(?<=(?<![A-Za-z0-9_])(?i:passport(?: (?:no|number|#))?|national id|id card|driver'?s? licen[cs]e(?: (?:no|number|#))?|"
        r"tax id|nino|national insurance(?: number)?|ni number|reisepass(?:nummer)?|passeport|pasaporte|passaporto|passaporte|"
        # national ID labels of other countries, each named by its own word (DE, IT, NL, IN, PL, FR, SE, FI,
        # DK, MX, CN, KR, JP): the label says ID, so the value needs only an ID's shape
        r"personalausweis(?:nummer|-?nr\.?)?|ausweisnummer|steuer-?id|sozialversicherungsnummer|codice fiscale|"
        r"carta d'identit[àa]|bsn|burgerservicenummer|pan(?: (?:no|number|card))?|aadhaar|pesel|nir|insee|"
        r"num[ée]ro de s[ée]curit[ée] sociale|personnummer|henkil[öo]tunnus|cpr(?:-nummer)?|curp|"
        r"身份证(?:号码|号)?|居民身份证|주민등록번호|マイナンバー|個人番号)"
        r"[.:#\"'：]?\s*(?:[:=#：]|(?i:is|was|ist|est|es|é)\b|是|は|은|는)?\s*[\"']?)"
        r"(?=[A-Z0-9 -]*\d)[A-Z0-9][A-Z0-9 -]{5,22}[A-Z0-9](?![A-Za-z0-9])",
        0.8,
    ),
)

_NAME_WORD = r"(?:[A-Z]['’])?[A-Z][a-zà-ÿ]+(?:[A-Z][a-zà-ÿ]+)?(?:-[A-Z]?[a-zà-ÿ]+)?"
_PARTICLE = r"(?:(?:van|von|de|da|del|der|den|di|al|el|bin|ibn|le|la|dos|du)\s+)"
# Names after words that introduce a person. High precision, so they run in both modes (pattern mode
# then finds "Dear Maria," and "assign to Rajesh Kumar" without a model); NER finds the rest.
NAME_PATTERNS: tuple[tuple[str, str, float], ...] = (
    (
        "name_after_cue",
        r"(?<=\b(?:(?i:dear|hi|hello|hey|thanks|regards|sincerely|mr|mrs|ms|miss|mx|dr|prof)[.,:]?"
        r"|to|by|with|from|cc|contact|customer:?|user|called|named|ask|asked|told|and|for|of)\s+)"
        + _NAME_WORD + r"(?:\s+" + _PARTICLE + r"?" + _NAME_WORD + r"){1,2}\b",
        0.6,
    ),
    ("greeting_first_name", r"(?<=\b(?i:dear|hi|hello|hey|thanks)\s+)" + _NAME_WORD + r"(?=\s*[,!])", 0.6),
    ("signature", r"(?<=(?i:regards|sincerely|cheers|best|thanks),?\s*\n\s*)" + _NAME_WORD + r"(?:\s+" + _NAME_WORD + r")?\b", 0.6),
)


def _plain(cls: Any, **_ignored: Any) -> Any:
    def make(*, hints: tuple[str, ...], **kwargs: Any) -> Any:
        return cls(**kwargs)

    return make


def build_pii_recognizers(*, gated: bool = True) -> list[Any]:
    import regex
    from presidio_analyzer import Pattern, PatternRecognizer

    from ._secrets import gated_pattern_recognizer_class

    gate_cls = gated_pattern_recognizer_class()
    # every address pattern has a house number or postcode
    address = (gate_cls if gated else _plain(PatternRecognizer, hints=tuple("0123456789")))(
        hints=tuple("0123456789"),
        supported_entity="STREET_ADDRESS",
        name="replaykit_street_address",
        patterns=[Pattern(n, r, s) for n, r, s in ADDRESS_PATTERNS],
        global_regex_flags=regex.MULTILINE,  # case matters: "via the API" is not an address
    )
    names = PatternRecognizer(
        supported_entity="PERSON",
        name="replaykit_name_cues",
        patterns=[Pattern(n, r, sc) for n, r, sc in NAME_PATTERNS],
        global_regex_flags=regex.MULTILINE,
    )
    labelled = [
        PatternRecognizer(
            supported_entity=entity,
            name=f"replaykit_{name}",
            patterns=[Pattern(name, rx, sc)],
            global_regex_flags=regex.MULTILINE,
        )
        for entity, name, rx, sc in LABELLED_PATTERNS
    ]
    return [address, names, *labelled]
