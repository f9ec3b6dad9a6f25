"""``replaykit eval`` scoring costs, in one bench run: the judge's grading calls per second through the
endpoint limiter, next to the same calls through the live model with no limiter; and ``--repeat K``
next to K separate evals of the same runs.

    PYTHONPATH=. python bench/bench_eval_scoring.py [--grades 60] [--runs 12] [--repeat 3] [--json]

Judge: ``--grades`` distinct answers graded (no cache hit) against the shipped scripted judge on
127.0.0.1 (``replaykit.testing.eval_judge``), by 4 threads at once: through ``eval``'s limiter
(``core.resilience.EndpointLimiter``, slot files and flock; ``--max-concurrency 2``), and through the same
core live model without a limiter (the baseline). Ratio = limited calls/s / unlimited calls/s: what the
limiter's bookkeeping costs per call, plus the bound itself (2 in flight instead of 4).

Repeat: ``--runs`` generated runs, each played K times by one ``eval --repeat K`` (the offline control
once per run, one manifest, one report) against K separate evals of the same runs (K controls per run).
Ratio = K separate evals' wall / the repeat eval's wall (above 1: the repeat is cheaper).

Page: the ``eval --html`` page of a 10,000-run report opened in headless Chromium (Debian's, through
Playwright; skipped when either is missing), milliseconds to the load event, the best of 3, next to the
same rows as one plain table (the page before the chunked run table). Ratio = plain / chunked.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))


def _grade_all(config: dict[str, Any], answers: list[str], threads: int) -> float:
    from replaykit.eval import grader

    queue = list(answers)
    lock = threading.Lock()

    def work() -> None:
        while True:
            with lock:
                if not queue:
                    return
                answer = queue.pop()
            grader.grade(config, "[user turn 1]\nWhat is the weather in Paris?", "Sunny, 21 C.", answer)

    started = time.perf_counter()
    pool = [threading.Thread(target=work) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return time.perf_counter() - started


def _page_open_ms() -> tuple[float, float] | None:
    import shutil

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if chromium is None:
        return None
    from replaykit.eval.html import render_eval
    from replaykit.testing.eval_reports import synthetic_report

    document, links = synthetic_report(10_000)
    chunked = render_eval(document, links)
    start, end = chunked.index('<div class="runs"'), chunked.index("</div>\n<script>")
    rows = "".join(part.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
                   for part in chunked[start:end].split('<div class="chunk">')[1:])
    plain = chunked[:start] + f"<table><tbody>{rows}</tbody></table>" + chunked[end + len("</div>"):]
    with tempfile.TemporaryDirectory(prefix="rk-bench-page-") as tmp:
        times: dict[str, float] = {}
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--headless", "--no-sandbox", "--disable-gpu"])
            page = browser.new_page()
            for name, text in (("chunked", chunked), ("plain", plain)):
                path = Path(tmp) / f"{name}.html"
                path.write_text(text, encoding="utf-8")
                best = 1e9
                for _ in range(3):
                    page.goto(path.as_uri(), wait_until="load")
                    best = min(best, page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd"))
                times[name] = best
            browser.close()
    return times["chunked"], times["plain"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grades", type=int, default=60)
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    from replaykit.core.replay.resilience import EndpointLimiter
    from replaykit.core.trace.store import RunStore
    from replaykit.eval import evaluate, grader
    from replaykit.testing.corpus_runs import write_corpus
    from replaykit.testing.eval_candidate import mirror_policy
    from replaykit.testing.eval_judge import grade
    from replaykit.testing.scripted_server import ScriptedServer

    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="rk-bench-scoring-") as tmp:
        work = Path(tmp)
        answer = lambda request: grade(0.8, "close to the reference")  # noqa: E731
        with ScriptedServer(answer) as judge, ScriptedServer(answer) as bounded:
            def config(server: ScriptedServer, cache: str, limiter: str | None) -> dict[str, Any]:
                return {"model": "grader", "api": grader.DEFAULT_API, "base_url": server.base_url,
                        "api_key_env": None, "rubric": grader.DEFAULT_RUBRIC, "stale_timeout": 30.0, "extra": {},
                        "safe_base_url": server.base_url, "cache": str(work / cache), "limiter": limiter}

            _grade_all(config(judge, "warm", None), ["warm-up"], 1)
            walls: dict[str, float] = {}
            for attempt in range(2):  # the better of two: the machine is shared
                answers = [f"answer {attempt}-{i}" for i in range(args.grades)]
                walls["free"] = min(walls.get("free", 1e9),
                                    _grade_all(config(judge, f"free-{attempt}", None), answers, 4))
                limiter = str(work / f"limiter-{attempt}")
                EndpointLimiter.create(limiter, 2)
                walls["limited"] = min(walls.get("limited", 1e9),
                                       _grade_all(config(bounded, f"limited-{attempt}", limiter), answers, 4))
            print(f"judge: {walls}; in flight at most {judge.peak_in_flight} without the limiter, "
                  f"{bounded.peak_in_flight} with it", file=sys.stderr)
        free_rate, limited_rate = args.grades / walls["free"], args.grades / walls["limited"]
        rows.append({"bench": "judge grades/s through the limiter (4 threads, max 2) vs no limiter",
                     "replaykit": round(limited_rate, 1), "baseline": round(free_rate, 1),
                     "ratio": round(limited_rate / free_rate, 2), "note": f"{args.grades} grades, scripted judge"})

        store = RunStore(work / "store")
        write_corpus(store, args.runs, steps=8)
        run_ids = [r.run_id for r in (store.load(p.stem) for p in sorted(store.root.glob("*.jsonl")))
                   if r.status == "completed"]
        runs = [store.load(r) for r in run_ids]
        k = args.repeat
        with ScriptedServer(mirror_policy(runs)) as srv:
            def one(out: str, repeat: int) -> float:
                started = time.perf_counter()
                evaluate(run_ids, engine="openai", base_url=srv.base_url, model="candidate", out=work / out,
                         store=store, workers=1, repeat=repeat)
                return time.perf_counter() - started

            one("eval-warm", 1)
            repeated = one("repeat", k)
            separate = sum(one(f"separate-{i}", 1) for i in range(k))
        rows.append({"bench": f"eval --repeat {k} vs {k} separate evals (s)", "replaykit": round(repeated, 2),
                     "baseline": round(separate, 2), "ratio": round(separate / repeated, 2),
                     "note": f"{len(run_ids)} runs of 8 steps; ratio > 1: the repeat is cheaper"})
    page = _page_open_ms()
    if page is not None:
        chunked, plain = page
        rows.append({"bench": "eval --html, 10,000 runs: ms to open in Chromium (best of 3)",
                     "replaykit": round(chunked), "baseline": round(plain), "ratio": round(plain / chunked, 2),
                     "note": "baseline: the same rows as one plain table"})
    if args.json:
        print(json.dumps(rows))
    else:
        for row in rows:
            print(f"{row['bench']:<70} {row['replaykit']:>8} {row['baseline']:>8} {row['ratio']:>6}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
