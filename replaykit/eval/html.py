"""``replaykit eval --html PATH``: the corpus report as one page, charts as inline SVG.

The page and its pieces are the stats page's (``exporters.stats_html``, ``exporters.html_report``): every
value escaped, a Content-Security-Policy that loads nothing from the network and runs no script but the
run table's own (``html_table``: sortable, filterable, allowed by its hash), files 0600. Every judged run
whose candidate play is in the store links to its diff page, ``<PATH stem>-diffs/<run>.html``, written
beside it from ``core.diff`` (the same page as ``replaykit diff --html``); a run without one (its play
never started) is still a row of the table, with why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from replaykit.core.analysis.diff import diff_runs, lineage_edits
from replaykit.core.errors import ReplaykitError
from replaykit.core.files import write_private
from replaykit.core.trace.store import RunStore
from replaykit.exporters.html_report import esc, write_diff_html
from replaykit.exporters.stats_html import BAD, bar_chart, column_chart, table

from .html_table import data_table, script_page
from .report import VERDICTS


def _diff_pages(report: dict[str, Any], store: RunStore, folder: Path) -> dict[str, str]:
    """run id -> file name of its diff page, for every judged run whose candidate play is in the store."""
    candidates = {r["run_id"]: r.get("candidate_runs") or [] for r in report["execution"].get("runs", [])}
    pages: dict[str, str] = {}
    for run in report["runs"]:
        ids = candidates.get(run["run_id"])
        if run["verdict"] == "not replayable" or not ids:
            continue
        try:
            original, candidate = store.load(run["run_id"]), store.load(ids[0])
        except ReplaykitError:
            continue
        name = f"{run['run_id']}.html"
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_diff_html(diff_runs(original, candidate, edits=lineage_edits(store, [candidate])), folder / name)
        pages[run["run_id"]] = name
    return pages


def _widths(repeated: bool) -> list[float]:
    """Column widths (percent) of the run table: the id and the reason get the room."""
    fixed = [18, 8, 6, *([6, 6] if repeated else []), 5, 5, 6, 6, 14]
    return [*fixed, 100 - sum(fixed)]


def render_eval(report: dict[str, Any], links: dict[str, str] | None = None) -> str:
    links = links or {}
    totals, candidate = report["totals"], report["candidate"]
    verdicts = totals["verdicts"]
    gate = report["thresholds"]
    failed = gate.get("failed") or []
    status = ('<span class="badge bad">gate failed</span> ' + esc("; ".join(failed))) if failed else \
        '<span class="badge ok">every threshold holds</span>'

    repeated = int(candidate.get("repeat") or 1) > 1
    headers = ["run", "verdict", "score", *(["pass rate", "unstable"] if repeated else []),
               "reused", "exact", "divergent", "unmatched", "first divergence", "judge reason / reason"]
    rows = []
    for run in report["runs"]:
        first = run.get("first_divergence") or {}
        fid = run.get("fidelity") or {}
        divergence = " ".join(str(first.get(k, "")) for k in ("step", "field", "cause")).strip()
        why = (run.get("reasons") or {}).get("judge") or run.get("reason") or ""
        rows.append([(run["run_id"], links.get(run["run_id"])), (run["verdict"], None), (run.get("score"), None),
                     *([(run.get("pass_rate", ""), None), ("unstable" if run.get("unstable") else "", None)]
                       if repeated else []),
                     *((fid.get(k, ""), None) for k in ("reused", "exact", "divergent", "unmatched")),
                     (divergence, None), (why, None)])
    fidelity = totals["fidelity"]
    body = [
        "<h1>replaykit eval</h1>",
        f'<p class="meta">candidate <b>{esc(candidate["model"])}</b> at {esc(candidate["base_url"])} with engine '
        f'{esc(candidate["engine"])}, live from {esc(candidate["at"])}</p>',
        f'<p class="meta">scorers {esc(", ".join(candidate.get("scorers") or ["normalized"]))} (gate: '
        f'<b>{esc(candidate.get("gate_scorer") or "normalized")}</b>)'
        + (f'; judge <b>{esc(candidate["judge"]["model"])}</b> ({esc(candidate["judge"]["api"])}, rubric '
           f'{esc(candidate["judge"]["rubric"])})' if candidate.get("judge") else "")
        + (f'; each run played {esc(candidate["repeat"])} times, {esc(totals.get("unstable", 0))} unstable, '
           f'pass rate {esc(totals.get("pass_rate"))}' if int(candidate.get("repeat") or 1) > 1 else "") + "</p>",
        f"<p>{status}</p>",
        f'<p class="meta"><b>{esc(totals["selected"])}</b> runs selected, <b>{esc(totals["judged"])}</b> judged, '
        f'{esc(totals["left"])} left by a budget, {esc(totals["damaged"])} damaged; mean score '
        f'<b>{esc(totals["score"]["mean"])}</b></p>',
        "<h2>Verdicts</h2>",
        bar_chart([(v, verdicts[v], str(verdicts[v])) for v in VERDICTS]),
        "<h2>Fidelity (steps)</h2>",
        bar_chart([(k, v, str(v)) for k, v in fidelity.items()]),
        "<h2>Scores</h2>",
        column_chart(totals["score"]["histogram"]),
        "<h2>Worst runs</h2>",
        table(["run", "verdict", "score", "first divergence", "judge reason"],
              [[w["run_id"], w["verdict"], w["score"], w.get("first_divergence") or w.get("reason") or "-",
                w.get("judge_reason") or "-"] for w in report["worst_runs"]]),
        "<h2>Tools</h2>",
        bar_chart([(t["tool"], t["divergent"] + t["unmatched"], f'{t["divergent"]} divergent, {t["unmatched"]} '
                    f'unmatched of {t["calls"]}') for t in report["per_tool"][:25]], color=BAD),
        "<h2>Recorded models</h2>",
        table(["model", "runs", *VERDICTS], [[m["model"], m["runs"], *(m[v] for v in VERDICTS)]
                                             for m in report["per_model"]]),
        "<h2>Runs</h2>",
        f'<p class="meta">{esc(len(links))} of {esc(totals["judged"])} judged runs link to the diff of their '
        "candidate play against the record; click a column to sort, type to filter.</p>",
        data_table(headers, rows, filter_column=1, filter_label="every verdict", widths=_widths(repeated)),
    ]
    return script_page("replaykit eval report", "\n".join(body))


def write_eval_html(report: dict[str, Any], path: Path, store: RunStore) -> dict[str, Any]:
    folder = path.with_name(f"{path.stem}-diffs")
    pages = _diff_pages(report, store, folder)
    links = {run_id: f"{folder.name}/{name}" for run_id, name in pages.items()}
    write_private(path, render_eval(report, links))
    return {"path": str(path), "diff_pages": len(pages)}
