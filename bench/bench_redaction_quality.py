"""Redaction quality and speed on the labelled corpus, side by side in one run.

Run:  PYTHONPATH=. python bench/bench_redaction_quality.py [--part heldout|tuning|legacy] [--json]
                                                           [--ner-model NAME|PATH ...]

The default part is ``heldout`` (tests/fixtures/redaction/heldout.jsonl): templates and values no
detector was tuned on, so its figures are the ones to quote. Contenders, each called once per corpus
record (see
replaykit.testing.redaction_corpus for the scoring: a value counts as removed only when no 6-character
piece of it is left):
  * replaykit patterns / replaykit ner: ``Redactor.redact_value`` (JSON-aware, run-wide placeholders);
    with ``--ner-model`` (repeatable), one NER row per spaCy pipeline named (a package or a folder),
    so two pipelines are compared in the same run;
  * Presidio defaults: ``AnalyzerEngine`` with every predefined recognizer and the same spaCy model
    (given explicitly: nothing downloads), all entities, then ``AnonymizerEngine`` ``replace``;
  * Hermes 0.19.0's own redactor: ``agent.redact.redact_sensitive_text(force=True,
    redact_url_credentials=True)`` from the installed hermes-agent (skipped where it is not installed);
  * detect-secrets 1.5.0 alone (a secret scanner, default plugins and filters): every value it reports
    is replaced.
Characters per second are input characters over wall time for the whole corpus, after one warm-up
call on each side. Recall per category, per group (secrets, PII), and hard negatives kept.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from replaykit.testing.redaction_corpus import PARTS, Score, load_corpus, score

CATEGORIES = ("person", "email", "phone", "credit_card", "iban", "address", "identity")


def replaykit(mode: str, model: str | None = None) -> Callable[[str], str]:
    from replaykit.core.redaction import Redactor
    from replaykit.core.redaction._engine import EngineConfig, get_engine

    engine = get_engine(EngineConfig(mode=mode, model=model)) if model else None  # type: ignore[arg-type]
    redactor = Redactor(mode=mode, engine=engine)  # type: ignore[arg-type]
    redactor.redact_text("warm up John Smith")
    return lambda text: str(redactor.redact_value(text))


def presidio_defaults() -> Callable[[str], str]:
    os.environ["TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS"] = ""
    from presidio_analyzer import AnalyzerEngine, RecognizerRegistry
    from presidio_analyzer.nlp_engine import SpacyNlpEngine
    from presidio_anonymizer import AnonymizerEngine

    from replaykit.core.redaction._engine import DEFAULT_MODEL, _load_spacy_pipeline

    nlp = SpacyNlpEngine(models=[{"lang_code": "en", "model_name": DEFAULT_MODEL}])  # same model as ours
    nlp.nlp = {"en": _load_spacy_pipeline(DEFAULT_MODEL)}  # the default model would be downloaded
    registry = RecognizerRegistry(supported_languages=["en"])
    registry.load_predefined_recognizers(nlp_engine=nlp, languages=["en"])
    registry.add_nlp_recognizer(nlp_engine=nlp)
    analyzer = AnalyzerEngine(nlp_engine=nlp, registry=registry, supported_languages=["en"])
    anonymizer = AnonymizerEngine()

    def redact(text: str) -> str:
        return str(anonymizer.anonymize(text=text, analyzer_results=analyzer.analyze(text=text, language="en")).text)

    redact("warm up John Smith")
    return redact


def hermes() -> Callable[[str], str] | None:
    try:
        from agent.redact import redact_sensitive_text  # hermes-agent 0.19.0, installed package
    except ImportError:
        return None
    return lambda text: str(redact_sensitive_text(text, force=True, redact_url_credentials=True))


def detect_secrets_alone() -> Callable[[str], str] | None:
    try:
        from detect_secrets import SecretsCollection
        from detect_secrets.settings import default_settings
    except ImportError:
        return None
    tmp = Path(tempfile.mkdtemp(prefix="rk-ds-"))

    def redact(text: str) -> str:
        path = tmp / "record.txt"  # detect-secrets scans files; its plugins and filters run per line
        path.write_text(text, encoding="utf-8")
        found = SecretsCollection()
        with default_settings():
            found.scan_file(str(path))
        values = sorted({s.secret_value for f in found.files for s in found[f] if s.secret_value},
                        key=len, reverse=True)
        for value in values:
            text = text.replace(value, "<SECRET>")
        return text

    return redact


def contenders(ner_models: list[str]) -> list[tuple[str, Callable[[str], str] | None]]:
    from replaykit.core.redaction._engine_models import describe_model

    ner = ([("replaykit ner", replaykit("ner"))] if not ner_models else
           [(f"replaykit ner, {describe_model(m)}", replaykit("ner", m)) for m in ner_models])
    return [("replaykit patterns", replaykit("patterns")), *ner,
            ("Presidio defaults", presidio_defaults()), ("Hermes 0.19.0 redactor", hermes()),
            ("detect-secrets alone", detect_secrets_alone())]


def _cell(value: float) -> str:
    return "n/a" if value != value else f"{value:.3f}"  # NaN: no item of that kind


def table(results: list[tuple[str, Score]]) -> str:
    cols = ["secrets", "PII", *CATEGORIES]
    head = "| | " + " | ".join(["secrets recall", "PII recall", *CATEGORIES, "hard negatives kept", "chars/s"]) + " |"
    lines = [head, "|" + "---|" * (len(cols) + 3)]
    for name, s in results:
        cells = [_cell(s.recall(c)) for c in cols]
        lines.append(f"| {name} | " + " | ".join([*cells, _cell(s.keep_rate("hard negatives")),
                                                   f"{s.chars / s.seconds:,.0f}"]) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", action="store_true", help="also print the rows as JSON (last line)")
    ap.add_argument("--part", default="heldout", choices=PARTS, help="corpus part (default: heldout)")
    ap.add_argument("--ner-model", action="append", default=[], metavar="NAME|PATH",
                    help="a spaCy pipeline for the NER row (repeat to compare several in one run)")
    args = ap.parse_args()
    records = load_corpus(part=args.part)
    n_neg = sum(r["category"] == "hard_negative" for r in records)
    print(f"corpus part {args.part}: {len(records)} records ({n_neg} hard negatives), "
          f"{sum(len(r['text']) for r in records):,} characters")
    results = []
    for name, fn in contenders(args.ner_model):
        if fn is None:
            print(f"{name}: not installed here, skipped")
            continue
        results.append((name, score(fn, records)))
    print(table(results))
    if args.json:
        print(json.dumps([{"name": n, "secrets": s.recall("secrets"), "pii": s.recall("PII"),
                           "hard_negatives_kept": s.keep_rate("hard negatives"), "email": s.recall("email"),
                           "person": s.recall("person"), "chars_per_s": s.chars / s.seconds}
                          for n, s in results]))


if __name__ == "__main__":
    main()
