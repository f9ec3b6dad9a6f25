"""The labelled redaction corpus (tests/fixtures/redaction/corpus.jsonl) and how a redactor is scored.

Each record: ``category`` (``person``, ``email``, ``phone``, ``credit_card``, ``iban``, ``address``,
``identity``, ``json``, ``secret:<family>`` or ``hard_negative``), ``text``, ``sensitive`` (values that
must disappear) and ``keep`` (values that must survive verbatim). Used by tests/core/redaction and by
bench/bench_redaction_quality.py, so the test thresholds and the published table are one measurement.

Scoring is strict about "nothing of it visible": a sensitive value counts as removed only when no
piece of it of ``min(len, 6)`` characters is left in the output more often than it occurs in the rest
of the input (so the key name in ``password: password123`` does not count against the redactor, but
a kept ``...1234`` tail or a first-and-last-characters mask does).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

GROUPS = {"secret": "secrets", "hard_negative": "hard negatives"}  # every other category is PII


#: the parts of the corpus: ``legacy`` is the hand-written corpus.jsonl of issue 18; ``tuning`` and
#: ``heldout`` are written by build_split.py from disjoint templates and value lists, and the held-out
#: part is never used while a detector is changed (its figure measures generalisation); ``dev``, from
#: templates and values of its own again, is the part a later round checks its changes on before the
#: held-out part is measured
PARTS = ("legacy", "tuning", "heldout", "dev")


def corpus_path(part: str = "legacy") -> Path:
    if part not in PARTS:
        raise ValueError(f"unknown corpus part {part!r} (expected one of: {', '.join(PARTS)})")
    name = "corpus.jsonl" if part == "legacy" else f"{part}.jsonl"
    return Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "redaction" / name


def load_corpus(path: Path | None = None, part: str = "legacy") -> list[dict[str, Any]]:
    text = (path or corpus_path(part)).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.split("\n") if line.strip()]


def group_of(category: str) -> str:
    return GROUPS.get(category.split(":")[0], "PII")


def leaked(value: str, text: str, output: str) -> bool:
    """Whether any ``min(len, 6)``-character piece of ``value`` survives into ``output``."""
    width = min(len(value), 6)
    rest = text.replace(value, "\x00")
    return any(output.count(value[i:i + width]) > rest.count(value[i:i + width])
               for i in range(len(value) - width + 1))


@dataclass
class Score:
    found: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    total: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    kept: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    keep_total: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    misses: list[tuple[str, str]] = field(default_factory=list)
    damaged: list[str] = field(default_factory=list)
    chars: int = 0
    seconds: float = 0.0

    def recall(self, key: str) -> float:
        return self.found[key] / self.total[key] if self.total[key] else float("nan")

    def keep_rate(self, key: str) -> float:
        return self.kept[key] / self.keep_total[key] if self.keep_total[key] else float("nan")


def score(redact: Callable[[str], str], records: Sequence[dict[str, Any]]) -> Score:
    """Run ``redact`` once per record text; tally recall per category and per group, keep rates."""
    import time

    result = Score()
    outputs = []
    start = time.perf_counter()
    for record in records:
        outputs.append(redact(record["text"]))
    result.seconds = time.perf_counter() - start
    for record, out in zip(records, outputs, strict=True):
        text = record["text"]
        result.chars += len(text)
        category = record["category"]
        for key in {category.split(":")[0], category, group_of(category)}:
            for value in record["sensitive"]:
                result.total[key] += 1
                result.found[key] += not leaked(value, text, out)
            for value in record["keep"]:
                result.keep_total[key] += 1
                result.kept[key] += value in out
        result.misses += [(category, v) for v in record["sensitive"] if leaked(v, text, out)]
        if any(k not in out for k in record["keep"]):
            result.damaged.append(text)
    return result
