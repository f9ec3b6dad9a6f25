"""Recall and keep-rate on the labelled corpus, both modes, on each part.

Parts (replaykit.testing.redaction_corpus.PARTS): ``legacy`` (hand-written, issue 18), ``tuning`` and
``heldout`` and ``dev`` (tests/fixtures/redaction/build_split.py: disjoint templates and value
lists; the held-out part was frozen before the detectors of issue 26 were written and is what the
targets are measured on; ``dev`` was written for the third round, unseen until then, and tuned on
since). Scoring counts a value as removed only when no 6-character piece of it is left: a
secret must go whole. bench/bench_redaction_quality.py publishes the same measurement next to
Presidio and detect-secrets.
"""

from __future__ import annotations

import json

import pytest

from replaykit.core.redaction import Redactor
from replaykit.testing.redaction_corpus import Score, corpus_path, load_corpus, score

# issue 26, on the held-out part. The NER-mode PII target is not met yet (docs/redaction.md, Quality,
# has the trade-off of each option): it is kept as a strict xfail, not loosened, and the measured
# level is held as a floor so that a regression fails.
TARGETS = {"patterns": {"secrets": 0.995}, "ner": {"secrets": 0.995}}
PII_TARGET = {"patterns": 0.92, "ner": 0.97}
PII_MEASURED = {"patterns": 0.92, "ner": 0.93}  # 626/679 and 633/679, measured 2026-12-04
KEEP = 0.99
CATEGORY_FLOOR = {"email": 1.0, "credit_card": 1.0, "iban": 1.0}


def _score(mode: str, part: str) -> Score:
    redactor = Redactor(mode=mode)  # type: ignore[arg-type]
    records = load_corpus(part=part)
    redactor.redact_texts([r["text"] for r in records])  # one batch (one nlp.pipe); scoring hits the cache
    return score(redactor.redact_value, records)


@pytest.fixture(scope="module", params=["patterns", "ner"])
def heldout(request) -> tuple[str, Score]:
    return request.param, _score(request.param, "heldout")


def test_the_parts_are_large_varied_and_disjoint() -> None:
    tuning, held = load_corpus(part="tuning"), load_corpus(part="heldout")
    assert len(tuning) + len(held) + len(load_corpus()) >= 4 * 534  # several times issue 18's corpus
    for records in (tuning, held):
        cats = {r["category"].split(":")[0] for r in records}
        assert {"person", "email", "phone", "identity", "address", "iban", "credit_card", "secret",
                "hard_negative"} <= cats
        texts = "".join(r["text"] for r in records)
        for script in ("а", "α", "م", "र", "님"):  # Cyrillic, Greek, Arabic, Devanagari, Hangul
            assert script in texts
        assert any(r["category"] == "person" and r["sensitive"][0].islower() for r in records)
        for tld in (".example", ".internal", ".local", ".corp", ".lan"):
            assert any(tld in v for r in records if r["category"] == "email" for v in r["sensitive"])
    # no sensitive value and no hard negative of one part is in the other
    def values(records: list[dict]) -> set[str]:
        return {v for r in records for v in r["sensitive"]} | {r["text"] for r in records
                                                                if r["category"] == "hard_negative"}
    assert not values(tuning) & values(held)
    dev = load_corpus(part="dev")
    assert not values(dev) & values(held), "the dev part must not leak held-out values"


def test_the_fixture_files_are_what_the_generator_writes(tmp_path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_split", corpus_path("heldout").parent / "build_split.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for part, seed in (("tuning", 20261203), ("heldout", 31122026), ("dev", 4122026)):
        assert mod.build(part, seed) == load_corpus(part=part), part
    json.dumps(mod.build("heldout", 31122026))


def test_heldout_targets(heldout) -> None:
    mode, s = heldout
    for group, minimum in TARGETS[mode].items():
        assert s.recall(group) >= minimum, f"{mode} {group}: {s.recall(group):.3f} < {minimum}"
    assert s.keep_rate("hard negatives") >= KEEP, f"{mode} kept {s.keep_rate('hard negatives'):.3f}"


def test_heldout_pii_does_not_fall_below_what_was_measured(heldout) -> None:
    mode, s = heldout
    assert s.recall("PII") >= PII_MEASURED[mode], f"{mode} PII: {s.recall('PII'):.3f}"


def test_heldout_pii_target(heldout, request) -> None:
    mode, s = heldout
    if mode == "ner":  # met in pattern mode since the third round (0.922); NER mode is at 0.932
        request.applymarker(pytest.mark.xfail(strict=True, reason="issue 26 NER PII target not met (names)"))
    assert s.recall("PII") >= PII_TARGET[mode], f"{mode} PII: {s.recall('PII'):.3f} < {PII_TARGET[mode]}"


def test_heldout_category_floors(heldout) -> None:
    mode, s = heldout
    for cat, minimum in CATEGORY_FLOOR.items():  # 0 e-mail addresses left, at any domain
        assert s.recall(cat) >= minimum, f"{mode} {cat}: {s.recall(cat):.3f}"


@pytest.mark.parametrize("mode", ["patterns", "ner"])
def test_dev_part_holds_what_the_third_round_reached(mode: str) -> None:
    # Tuned on (1.000 everywhere when the round ended): a floor against regressions, not a quality claim.
    s = _score(mode, "dev")
    assert s.recall("secrets") >= 0.995 and s.recall("PII") >= 0.99, s.misses
    assert s.keep_rate("hard negatives") >= 0.99, s.damaged


@pytest.mark.parametrize("mode", ["patterns", "ner"])
def test_legacy_corpus_still_holds(mode: str) -> None:
    s = _score(mode, "legacy")
    assert s.recall("secrets") >= 0.995 and s.recall("PII") >= (0.95 if mode == "ner" else 0.90), s.misses
    assert s.keep_rate("hard negatives") >= 0.98, s.damaged


def test_the_leaks_of_issues_18_and_26_are_closed() -> None:
    red = Redactor(mode="ner").redact_text
    for text, value in [
        ("customer maria gonzalez called", "gonzalez"), ("客户王秀英说她的订单还没有到。", "王秀英"),
        ("Клиент Анна Смирнова просит вернуть деньги.", "Смирнова"),
        ("pay with 2223 0031 2200 3222", "3222"),
        ("date of birth is 07/22/1991", "1991"), ("born 12.08.1985 in Kraków", "1985"),
        ("UK mobile 07700 900123", "900123"), ("REDIS_URL=redis://:s3cretRedisPw@cache:6379/0", "RedisPw"),
        ("ping sergei about it", "sergei"), ("call 415.555.0143 after lunch", "0143"),
        ("Ship to 88 Rue des Martyrs, 75009 Paris", "Martyrs"), ("ssn 123456789 on file", "456789"),
        ("lucas.petrov52@northwind.example", "petrov52"), ("mail ops@router.lan", "router.lan"),
    ]:
        assert value not in red(text), text
    for keep in ["Senior Site Reliability Engineer", "Sydney CBD", "UPS Ground", "Porto warehouse",
                 "git@github.com:acme/replaykit.git", "Buchhaltung", "Meine IBAN lautet", "release 2024.06.11-3",
                 "How do we rotate API keys without downtime? (ticket corpusref-c0002)"]:
        assert red(keep) == keep
