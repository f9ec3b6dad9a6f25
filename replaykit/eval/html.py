"""``replaykit eval --html PATH``: the corpus report as one page, charts as inline SVG.

The page and its pieces are the stats page's (``exporters.stats_html``, ``exporters.html_report``): every
value escaped, no script, a Content-Security-Policy that loads nothing from the network, files 0600.
Each run that differs from its record links to its diff page, ``<PATH stem>-diffs/<run>.html``, written
beside it from ``core.diff`` (the same page as ``replaykit diff --html``).
"""

from __future__ import annotations

import urllib.parse
from pathlib import Path
from typing import Any

from replaykit.core.analysis.diff import diff_runs, lineage_edits
from replaykit.core.errors import ReplaykitError
from replaykit.core.files import write_private
from replaykit.core.trace.store import RunStore
from replaykit.exporters.html_report import esc, page, write_diff_html
from replaykit.exporters.stats_html import BAD, bar_chart, column_chart, table

from .report import VERDICTS


def _diff_pages(report: dict[str, Any], store: RunStore, folder: Path) -> dict[str, str]:
    """run id -> file name of its diff page, for every judged run that is not 'same'."""
    candidates = {r["run_id"]: r.get("candidate_runs") or [] for r in report["execution"].get("runs", [])}
    pages: dict[str, str] = {}
    for run in report["runs"]:
        ids = candidates.get(run["run_id"])
        if run["verdict"] in ("same", "not replayable") or not ids:
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


def render_eval(report: dict[str, Any], links: dict[str, str] | None = None) -> str:
    links = links or {}
    totals, candidate = report["totals"], report["candidate"]
    verdicts = totals["verdicts"]
    gate = report["thresholds"]
    failed = gate.get("failed") or []
    status = ('<span class="badge bad">gate failed</span> ' + esc("; ".join(failed))) if failed else \
        '<span class="badge ok">every threshold holds</span>'

    def run_link(run_id: str) -> str:
        if run_id in links:
            return f'<a href="{esc(urllib.parse.quote(links[run_id]))}">{esc(run_id)}</a>'
        return esc(run_id)

    rows = []
    for run in report["runs"]:
        first = run.get("first_divergence") or {}
        fid = run.get("fidelity") or {}
        rows.append("<tr>" + "".join([
            f"<td>{run_link(run['run_id'])}</td>", f"<td>{esc(run['verdict'])}</td>", f"<td>{esc(run.get('score'))}</td>",
            *(f"<td>{esc(fid.get(k, ''))}</td>" for k in ("reused", "exact", "divergent", "unmatched")),
            f"<td>{esc(first.get('step', ''))} {esc(first.get('field', ''))} {esc(first.get('cause', ''))}</td>",
            f"<td>{esc(run.get('reason') or '')}</td>"]) + "</tr>")
    fidelity = totals["fidelity"]
    body = [
        "<h1>replaykit eval</h1>",
        f'<p class="meta">candidate <b>{esc(candidate["model"])}</b> at {esc(candidate["base_url"])} with engine '
        f'{esc(candidate["engine"])}, live from {esc(candidate["at"])}</p>',
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
        table(["run", "verdict", "score", "first divergence"],
              [[w["run_id"], w["verdict"], w["score"], w.get("first_divergence") or w.get("reason") or "-"]
               for w in report["worst_runs"]]),
        "<h2>Tools</h2>",
        bar_chart([(t["tool"], t["divergent"] + t["unmatched"], f'{t["divergent"]} divergent, {t["unmatched"]} '
                    f'unmatched of {t["calls"]}') for t in report["per_tool"][:25]], color=BAD),
        "<h2>Recorded models</h2>",
        table(["model", "runs", *VERDICTS], [[m["model"], m["runs"], *(m[v] for v in VERDICTS)]
                                             for m in report["per_model"]]),
        "<h2>Runs</h2>",
        "<table><tr><th>run</th><th>verdict</th><th>score</th><th>reused</th><th>exact</th><th>divergent</th>"
        "<th>unmatched</th><th>first divergence</th><th>reason</th></tr>" + "".join(rows) + "</table>",
    ]
    return page("replaykit eval report", "\n".join(body))


def write_eval_html(report: dict[str, Any], path: Path, store: RunStore) -> dict[str, Any]:
    folder = path.with_name(f"{path.stem}-diffs")
    pages = _diff_pages(report, store, folder)
    links = {run_id: f"{folder.name}/{name}" for run_id, name in pages.items()}
    write_private(path, render_eval(report, links))
    return {"path": str(path), "diff_pages": len(pages)}
