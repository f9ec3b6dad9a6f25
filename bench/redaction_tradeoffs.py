"""What each name option would buy and cost, measured (docs/redaction.md, "Third round").

    PYTHONPATH=. python bench/redaction_tradeoffs.py [patterns|ner ...]

Each option loosens one name rule (by replacing one function of the redaction package for the run) and
is measured in its own process, because the analysis engine and its cache are one per process: held-out
PII and person recall, hard negatives kept on the held-out, tuning and dev parts, and the PERSON
placeholders put into this repository's docs and README (technical prose, where almost every PERSON
hit is a false positive). Nothing here changes what ships; it reports the trade-off the issue asks for
where a recall target is missed.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OPTIONS = (
    "as shipped",
    "model PERSON without the evidence rule",
    "every lexicon name as if a person cue came with it",
    "any capitalised/unknown word accepted as a surname",
    "all three",
)


def measure(mode: str, option: str) -> str:
    from replaykit.core.redaction import Redactor, _filters, _names
    from replaykit.testing.redaction_corpus import load_corpus, score

    surname = _names._surname_evidence
    patches = {
        "model": lambda *a: True,
        "context": lambda *a: 2,
        "surname": lambda w: max(1, surname(w)),
    }
    wanted = {"model PERSON without the evidence rule": ["model"],
              "every lexicon name as if a person cue came with it": ["context"],
              "any capitalised/unknown word accepted as a surname": ["surname"],
              "all three": ["model", "context", "surname"]}.get(option, [])
    if "model" in wanted:
        _filters._model_name_ok = patches["model"]  # type: ignore[assignment]
    if "context" in wanted:
        _names._context = patches["context"]  # type: ignore[assignment]
    if "surname" in wanted:
        _names._surname_evidence = patches["surname"]  # type: ignore[assignment]
    scores = {}
    for part in ("heldout", "tuning", "dev"):
        redactor = Redactor(mode=mode)  # type: ignore[arg-type]
        records = load_corpus(part=part)
        redactor.redact_texts([r["text"] for r in records])
        scores[part] = score(redactor.redact_value, records)
    docs = "\n\n".join(p.read_text() for p in [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"])
    paragraphs = [p for p in docs.split("\n\n") if p.strip()]
    hits = sum(len(re.findall(r"<PERSON_\d+>", o)) for o in Redactor(mode=mode).redact_texts(paragraphs))  # type: ignore[arg-type]
    h = scores["heldout"]
    return (f"| {mode} | {option} | {h.found['PII']}/{h.total['PII']} ({h.recall('PII'):.3f}) | {h.recall('person'):.3f} | "
            f"{h.keep_rate('hard negatives'):.3f} | {scores['tuning'].keep_rate('hard negatives'):.3f} | "
            f"{scores['dev'].keep_rate('hard negatives'):.3f} | {hits} |")


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "--one":
        print(measure(argv[1], argv[2]))
        return 0
    print("| mode | option | held-out PII | held-out person | held-out kept | tuning kept | dev kept | PERSON hits in our docs |")
    print("|---|---|---|---|---|---|---|---|")
    for mode in argv or ["patterns", "ner"]:
        for option in OPTIONS:
            out = subprocess.run([sys.executable, __file__, "--one", mode, option], capture_output=True, text=True,
                                 check=True, cwd=ROOT)
            print(out.stdout.strip().splitlines()[-1], flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
