"""The ``replaykit stats --html`` page: the corpus report with charts drawn as inline SVG.

Same safety as the other reports (``html_report``): every value goes through ``esc``, the page has no
script and the same Content-Security-Policy (nothing loaded from the network), the file is 0600.
SVG is plain markup here (rects and text), so it needs no script and no external resource.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from replaykit.core.files import write_private

from .html_report import _page, esc

BAR = "#3b6fd4"
BAD = "#b42318"


def _bars(rows: list[tuple[str, float, str]], *, color: str = BAR, width: int = 640) -> str:
    """A horizontal bar chart: (label, value, shown text) per row, scaled to the largest value."""
    if not rows:
        return "<p class=\"meta\">nothing to show</p>"
    label_w, bar_w, row_h = 200, width - 290, 22
    top = max((v for _, v, _ in rows), default=0) or 1
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{row_h * len(rows) + 4}" '
             f'role="img" font-family="system-ui,sans-serif" font-size="12">']
    for i, (label, value, shown) in enumerate(rows):
        y = i * row_h + 2
        w = max(0.0, value) / top * bar_w
        parts.append(f'<text x="{label_w - 6}" y="{y + 15}" text-anchor="end">{esc(label[:40])}</text>')
        parts.append(f'<rect x="{label_w}" y="{y + 3}" width="{w:.1f}" height="{row_h - 6}" fill="{color}"/>')
        parts.append(f'<text x="{label_w + w + 6:.1f}" y="{y + 15}">{esc(shown)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _columns(buckets: dict[str, int], *, width: int = 640, height: int = 180) -> str:
    """A vertical bar chart of the health histogram (red for low scores, blue for high)."""
    items = list(buckets.items())
    top = max(buckets.values(), default=0) or 1
    col_w = width / max(1, len(items))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 36}" role="img" '
             'font-family="system-ui,sans-serif" font-size="11">']
    for i, (label, count) in enumerate(items):
        h = count / top * height
        x = i * col_w
        color = BAD if i < 5 else BAR
        parts.append(f'<rect x="{x + 4:.1f}" y="{height - h + 14:.1f}" width="{col_w - 8:.1f}" height="{h:.1f}" '
                     f'fill="{color}"/>')
        parts.append(f'<text x="{x + col_w / 2:.1f}" y="{height - h + 10:.1f}" text-anchor="middle">{count}</text>')
        parts.append(f'<text x="{x + col_w / 2:.1f}" y="{height + 30}" text-anchor="middle">{esc(label)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def render_stats(report: dict[str, Any]) -> str:
    tokens, cost, dur, health = report["tokens"], report["cost_usd"], report["duration_s"], report["health"]
    unknown = f" + {cost['runs_with_unknown_cost']} runs of unknown cost" if cost["runs_with_unknown_cost"] else ""
    body = [
        "<h1>replaykit corpus report</h1>",
        f'<p class="meta"><b>{esc(report["runs"])}</b> runs, <b>{esc(report["steps"])}</b> steps '
        f'({esc(report["llm_calls"])} LLM calls, {esc(report["tool_calls"])} tool calls), '
        f'<b>{esc(len(report["damaged"]))}</b> damaged</p>',
        f'<p class="meta">tokens <b>{esc(tokens["input"])}</b> in / <b>{esc(tokens["output"])}</b> out; '
        f'cost <b>${esc(format(cost["known"], ".4f"))}</b>{esc(unknown)}</p>',
        f'<p class="meta">duration total {esc(dur["total"])} s, p50 {esc(dur["p50"])} s, p90 {esc(dur["p90"])} s, '
        f'max {esc(dur["max"])} s</p>',
        "<h2>Health</h2>",
        f'<p class="meta">mean <b>{esc(health["mean"])}</b>, min <b>{esc(health["min"])}</b></p>',
        _columns(health["histogram"]),
        "<h2>Status</h2>",
        _bars([(k, v, str(v)) for k, v in report["status"].items()]),
        "<h2>Models</h2>",
        _bars([(m["model"], m["calls"], f'{m["calls"]} calls, {m["failure_rate"]:.1%} failed')
               for m in report["models"][:25]]),
        _table(["model", "runs", "calls", "failures", "failure rate", "tokens", "cost (USD, known)"],
               [[m["model"], m["runs"], m["calls"], m["failures"], f'{m["failure_rate"]:.1%}', m["tokens"],
                 m["cost_usd"]] for m in report["models"]]),
        "<h2>Tools</h2>",
        _bars([(t["tool"], t["failure_rate"], f'{t["failure_rate"]:.1%} of {t["calls"]}') for t in report["tools"][:25]],
              color=BAD),
        _table(["tool", "calls", "failures", "failure rate"],
               [[t["tool"], t["calls"], t["failures"], f'{t["failure_rate"]:.1%}'] for t in report["tools"]]),
        "<h2>Worst runs</h2>",
        _table(["run", "health", "reasons"],
               [[w["run_id"], w["health"], "; ".join(w["reasons"]) or "-"] for w in report["worst_runs"]]),
    ]
    if report["damaged"]:
        body += ["<h2>Damaged runs (skipped)</h2>",
                 _table(["source", "error"], [[d["source"], d["error"]] for d in report["damaged"]])]
    return _page("replaykit corpus report", "\n".join(body))


def write_stats_html(report: dict[str, Any], path: Path) -> dict[str, Any]:
    write_private(path, render_stats(report))
    return {"path": str(path)}


# The chart and table pieces, for other corpus pages (``eval --html``) to draw the same way.
bar_chart = _bars
column_chart = _columns
table = _table
