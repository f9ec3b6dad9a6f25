"""Redaction throughput on trace-like text: replaykit's engine vs Presidio called once per message.

Run:  PYTHONPATH=. python bench/bench_redaction.py [--runs N] [--modes patterns,ner] [--ner-model NAME|PATH ...]

Trace-like text repeats itself: every run carries the same system prompt, tools return the same files
and listings, assistants repeat boilerplate; user messages and some tool results are unique. Both
sides process the same messages in the same process:
  * baseline: ``AnalyzerEngine.analyze`` + ``AnonymizerEngine.anonymize`` per message (the usual way
    to call Presidio), with stock Presidio recognizers for the same entities (same patterns, same
    model, no pre-checks);
  * "same config": the same per-message loop over replaykit's own analyzer (pre-checks included), to
    show what the content-hash cache and batching add on their own;
  * replaykit: ``Redactor.redact_texts`` per run (content-hash cache, NER batched through nlp.pipe).
Throughput is input characters per second of wall time, after one warm-up call on each side.
``--ner-model`` (repeatable) measures NER mode once per spaCy pipeline named, baseline included (both
sides use that pipeline), so two pipelines are compared in the same run.
"""

from __future__ import annotations

import argparse
import json
import random
import time

from replaykit.core.redaction import AnalysisEngine, EngineConfig, Redactor
from replaykit.core.redaction._engine import build_analyzer
from replaykit.core.redaction._engine_models import describe_model

SYSTEM = (
    "You are Hermes, a coding assistant working in the repository at /home/dev/project. Follow the "
    "style guide: small modules, typed functions, tests for every change. Escalate security issues to "
    "Maria Gonzalez (maria.gonzalez@acme-corp.com). Tools: read_file, write_file, run_shell, search. "
) * 12
FILE = "\n".join(f"def handler_{i}(request):\n    return process(request, retries={i % 5})\n" for i in range(40))
LISTING = "\n".join(f"src/module_{i}.py  {1000 + i * 37} bytes  2024-01-{(i % 28) + 1:02d}" for i in range(60))
NAMES = ["John Smith", "Priya Patel", "Wei Zhang", "Olga Ivanova", "Carlos Hernández", "Aisha Bello"]


def make_runs(n_runs: int, seed: int = 7) -> list[list[str]]:
    rnd = random.Random(seed)
    runs = []
    for r in range(n_runs):
        name = rnd.choice(NAMES)
        msgs = [SYSTEM, f"Hi, I'm {name} ({name.split()[0].lower()}{r}@example.com). Please fix bug #{r} in handler_{r % 40}."]
        for step in range(8):
            msgs.append(f"I'll look at the code first (step {step}).")
            msgs.append(FILE if step % 2 == 0 else LISTING)
            msgs.append(f"Ran tests: {rnd.randint(100, 200)} passed, {rnd.randint(0, 3)} failed in {rnd.random():.2f}s.")
        msgs.append(f"Done. I emailed {name} at +1 (415) 555-{r % 10000:04d} with the summary.")
        runs.append(msgs)
    return runs


def bench_mode(mode: str, runs: list[list[str]], model: str | None = None) -> dict[str, float]:
    from presidio_anonymizer import AnonymizerEngine
    from presidio_anonymizer.entities import OperatorConfig

    config = EngineConfig(mode=mode, model=model) if model else EngineConfig(mode=mode)  # type: ignore[arg-type]
    analyzer = build_analyzer(config)
    stock = build_analyzer(config, gated=False)  # same entities, plain Presidio recognizers
    entities = list(config.resolved_entities())
    anonymizer = AnonymizerEngine()
    total_chars = sum(len(m) for run in runs for m in run)

    def baseline(engine: object) -> None:
        for run in runs:
            for m in run:
                res = engine.analyze(text=m, language="en", entities=entities,  # type: ignore[attr-defined]
                                     score_threshold=0.35)
                anonymizer.anonymize(text=m, analyzer_results=res,
                                     operators={"DEFAULT": OperatorConfig("replace", {})})

    def ours() -> None:
        engine = AnalysisEngine(config, analyzer=analyzer)  # cold cache: nothing carried over
        for run in runs:
            Redactor(mode=mode, engine=engine).redact_texts(run)  # type: ignore[arg-type]

    analyzer.analyze(text="warm up John Smith", language="en")
    stock.analyze(text="warm up John Smith", language="en")
    Redactor(mode=mode, engine=AnalysisEngine(config, analyzer=analyzer)).redact_text("warm up John Smith")  # type: ignore[arg-type]
    t0 = time.perf_counter()
    baseline(stock)
    t_base = time.perf_counter() - t0
    t0 = time.perf_counter()
    baseline(analyzer)
    t_same = time.perf_counter() - t0
    t0 = time.perf_counter()
    ours()
    t_ours = time.perf_counter() - t0
    return {"chars": total_chars, "baseline_cps": total_chars / t_base, "ours_cps": total_chars / t_ours,
            "speedup": t_base / t_ours, "same_config_cps": total_chars / t_same, "cache_speedup": t_same / t_ours}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--modes", default="patterns,ner")
    ap.add_argument("--json", action="store_true", help="also print the rows as JSON (last line; bench/run_all.py)")
    ap.add_argument("--ner-model", action="append", default=[], metavar="NAME|PATH",
                    help="spaCy pipeline of NER mode (repeat to compare several in one run)")
    args = ap.parse_args()
    rows: list[dict[str, object]] = []
    runs = make_runs(args.runs)
    targets = {"patterns": 1_000_000, "ner": 60_000}
    print(f"{'mode':9} {'chars':>9} {'presidio/msg c/s':>17} {'same-cfg/msg':>13} {'replaykit c/s':>14} "
          f"{'speedup':>8} {'cache':>6}  target")
    cases = [(mode, model) for mode in args.modes.split(",")
             for model in ((args.ner_model or [None]) if mode == "ner" else [None])]
    for mode, model in cases:
        r = bench_mode(mode, runs, model)
        ok = r["ours_cps"] >= targets[mode] and r["speedup"] >= 5
        label = mode if model is None else f"{mode} ({describe_model(model)})"
        rows.append({"bench": f"redaction {label} (chars/s)", "replaykit": r["ours_cps"], "baseline": r["baseline_cps"],
                     "ratio": r["speedup"], "note": f"target >= {targets[mode]:,} c/s and 5x: {'ok' if ok else 'MISSED'}"})
        print(f"{mode:9} {r['chars']:>9.0f} {r['baseline_cps']:>17,.0f} {r['same_config_cps']:>13,.0f} "
              f"{r['ours_cps']:>14,.0f} {r['speedup']:>7.1f}x {r['cache_speedup']:>5.1f}x  "
              f"{'ok' if ok else 'MISSED'} (>= {targets[mode]:,} c/s and 5x)" + (f"  {describe_model(model)}" if model else ""))
    if args.json:
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
