"""Redaction of personal data and secrets (Presidio based), text- and JSON-level.

    from replaykit.core.redaction import Redactor
    r = Redactor(mode="patterns")            # or "ner" for names and places (spaCy model)
    r.redact_text("mail jane@example.com")    # 'mail <EMAIL_ADDRESS_1>'
    r.redact_value({"args": '{"to": "jane@example.com"}'})  # keys, structure, JSON style kept

One ``Redactor`` = one run's placeholder numbering. Presidio is the optional extra ``redact``;
importing this package is cheap, Presidio is imported on first use.
"""

import os as _os

# Presidio's EmailRecognizer uses tldextract, which downloads the Public Suffix List on first use
# unless this is empty *when presidio is imported* (also via presidio_anonymizer). Set it before any
# import of Presidio can happen in this process; the bundled snapshot is then used, offline.
_os.environ["TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS"] = ""

from ._engine import MODES, NER_ENTITIES, PATTERN_ENTITIES, AnalysisEngine, EngineConfig, get_engine
from ._engine_models import NER_MODEL_ENV, choose_ner_model, installed_models
from ._errors import RedactExtraMissing, RedactionError
from ._filters import Span
from ._header import HEADER_FIELDS, content_free_header
from ._hook import REDACT_ENV, RedactingWriter, maybe_redacting
from ._ir import make_event_redactor, redact_event, redact_events, redact_messages
from ._placeholders import PlaceholderMap
from ._redactor import Redactor
from ._runs import (
    RedactionResult,
    iter_redacted,
    redact_corpus,
    redact_run,
    redact_trace_file,
)
from ._secrets import PLACEHOLDER_REGEX, SECRET_PATTERNS, secret_entities

__all__ = [
    "HEADER_FIELDS",
    "MODES",
    "NER_ENTITIES",
    "NER_MODEL_ENV",
    "PATTERN_ENTITIES",
    "PLACEHOLDER_REGEX",
    "REDACT_ENV",
    "SECRET_PATTERNS",
    "AnalysisEngine",
    "EngineConfig",
    "PlaceholderMap",
    "RedactExtraMissing",
    "RedactingWriter",
    "RedactionError",
    "RedactionResult",
    "Redactor",
    "Span",
    "choose_ner_model",
    "content_free_header",
    "get_engine",
    "installed_models",
    "iter_redacted",
    "make_event_redactor",
    "maybe_redacting",
    "redact_corpus",
    "redact_event",
    "redact_events",
    "redact_messages",
    "redact_run",
    "redact_trace_file",
    "secret_entities",
]
