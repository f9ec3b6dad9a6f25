"""Self-contained HTML reports: one run (``export --format html``) and a diff (``diff --html``).

Safety: every piece of trace content goes through ``html.escape`` (quotes included) and nothing else
ever reaches the page; the page carries no script (a report page with a sortable table, ``eval --html``,
carries one fixed script allowed by its hash alone) and a Content-Security-Policy that forbids any other
script, frames, forms and any network load, so even an escaping bug could not execute data or phone
home. Files are written 0600.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from replaykit.core.analysis.timeline import timeline_rows
from replaykit.core.files import write_private
from replaykit.core.trace.ir import (
    MediaPart,
    Message,
    OpaquePart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from replaykit.core.trace.run import Run

CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src 'none'; "
    "script-src 'none'; connect-src 'none'; frame-src 'none'; form-action 'none'; base-uri 'none'"
)

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:24px;color:#1d2330;background:#fafbfc}
h1{font-size:20px;margin:0 0 4px} h2{font-size:16px;margin:28px 0 8px;border-bottom:1px solid #dde}
.meta{color:#556;margin:2px 0} .meta b{color:#223}
table{border-collapse:collapse;width:100%;background:#fff} th,td{border:1px solid #e3e6ea;padding:4px 6px;
vertical-align:top;text-align:left} th{background:#f0f2f5;font-weight:600}
tr.failing td{background:#ffe9e9;color:#8a1111;font-weight:600} tr.error td{background:#fff4e5}
.prov{font:12px ui-monospace,monospace;padding:1px 5px;border-radius:8px;background:#eef}
.prov-live{background:#e2f5e6}.prov-edited{background:#fff0c2}.prov-desync{background:#ffd9d9}
.prov-synthetic{background:#eadcff}.prov-served{background:#e4efff}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;border:1px solid #e3e6ea;padding:8px;
margin:4px 0;font:12px/1.4 ui-monospace,monospace;max-height:420px;overflow:auto}
details{background:#fff;border:1px solid #e3e6ea;margin:6px 0;padding:4px 8px} summary{cursor:pointer}
details.failing{border:2px solid #d33} .role{font-weight:600;color:#335}
del{background:#ffd9d9;text-decoration:line-through} ins{background:#d7f5dd;text-decoration:none}
tr.op-removed td{background:#fff1f1} tr.op-inserted td{background:#eefbf0}
.cols{display:grid;grid-template-columns:1fr 1fr;gap:12px} .diverge td{background:#fff0c2}
.first td{background:#ffd9d9;font-weight:600} .badge{display:inline-block;padding:2px 8px;border-radius:10px;
background:#223;color:#fff;font-size:12px} .ok{background:#1b7f3b} .bad{background:#b42318}
"""


def esc(value: Any) -> str:
    """Escape anything for HTML text or attribute context."""
    if value is None:
        return ""
    if not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False, indent=2, default=str)
    # What an HTML page cannot carry (a lone surrogate has no UTF-8 form; NUL and other C0 controls
    # are turned into U+FFFD or dropped by parsers) is shown as its visible \\uXXXX escape instead.
    value = _NOT_IN_HTML.sub(_visible_escape, value)
    return html.escape(value, quote=True)


_NOT_IN_HTML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")


def _visible_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def _page(title: str, body: str, script: str | None = None) -> str:
    """The page shell. ``script``: one fixed piece of code of ours (never data), allowed by its hash in the
    CSP and by nothing else, so no other script (an escaping bug's) could run; pages without it have none."""
    csp, tail = CSP, ""
    if script is not None:
        digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
        csp = CSP.replace("script-src 'none'", f"script-src 'sha256-{digest}'")
        tail = f"\n<script>{script}</script>"
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">"
        "<meta name=\"referrer\" content=\"no-referrer\">"
        f"<meta name=\"viewport\" content=\"width=device-width\"><title>{esc(title)}</title>"
        f"<style>{STYLE}</style></head><body>\n{body}{tail}\n</body></html>\n"
    )


def _prov(provenance: str) -> str:
    return f'<span class="prov prov-{esc(provenance)}">{esc(provenance)}</span>'


def _message_html(message: Message) -> str:
    chunks = [f'<div class="msg"><span class="role">{esc(message.role)}</span>']
    for part in message.parts:
        if isinstance(part, TextPart):
            chunks.append(f"<pre>{esc(part.text)}</pre>")
        elif isinstance(part, ReasoningPart):
            chunks.append(f"<details><summary>reasoning</summary><pre>{esc(part.text)}</pre></details>")
        elif isinstance(part, ToolCallPart):
            chunks.append(f"<div>tool call <b>{esc(part.name)}</b> <code>{esc(part.id)}</code>"
                          f"<pre>{esc(part.arguments_json())}</pre></div>")
        elif isinstance(part, ToolResultPart):
            flag = " (error)" if part.is_error else ""
            chunks.append(f"<div>tool result for <code>{esc(part.tool_call_id)}</code>{flag}"
                          f"<pre>{esc(part.content)}</pre></div>")
        elif isinstance(part, MediaPart):
            chunks.append(f"<div>media {esc(part.media_type)} {esc(part.url or '(inline data)')}</div>")
        elif isinstance(part, OpaquePart):
            chunks.append(f"<div>opaque {esc(part.format)}<pre>{esc(part.data)}</pre></div>")
    chunks.append("</div>")
    return "".join(chunks)


def cost_info(run: Run) -> dict[str, Any]:
    """The run's cost ledger as JSON (``replaykit cost --json``); unknown stays None, never 0."""
    from replaykit.core.analysis import cost

    try:
        ledger = cost.to_json(cost.run_cost(run))
    except Exception:  # the cost is an extra section; the report must still render
        return {}
    paid = ledger.get("paid") or {}
    return {"total_cost": paid.get("cost"), "steps": ledger.get("steps", []),
            "unknown_reasons": paid.get("unknown_reasons", [])}


def health_html(run: Run, cost_usd: float | None) -> str:
    """The run's health score and its reasons (``core.health``)."""
    from replaykit.core.analysis.health import run_health

    return health_block(run_health(run, cost_usd=cost_usd, with_cost=False))


def health_block(health: Any) -> str:
    """A ``core.analysis.health.Health`` as the report shows it: the score and its reasons, escaped."""
    badge = "ok" if health.score >= 80 else "bad" if health.score < 50 else ""
    items = "".join(f"<li>{esc(r.detail)} <small>(-{r.penalty})</small></li>" for r in health.reasons)
    return (f'<h2>Health</h2><p><span class="badge {badge}">{health.score}/100</span></p>'
            + (f"<ul>{items}</ul>" if items else '<p class="meta">no problems found</p>'))


def _mermaid(run: Run) -> str | None:
    """The run's LangGraph drawing; None without the langgraph extra (or for a run it cannot draw)."""
    from replaykit.engines.langgraph.graph import mermaid_for_run

    try:
        return str(mermaid_for_run(run))
    except Exception:  # MissingExtra, or a run the graph builder rejects: the report goes without it
        return None


def graph_svg(run: Run) -> str:
    """A small offline drawing of the agent loop with this run's counts (no JS, no network)."""
    llm = sum(1 for s in run.steps if s.kind == "llm")
    return loop_svg(llm, len(run.steps) - llm)


def loop_svg(llm: int, tools: int) -> str:
    """The agent loop drawn with ``llm`` model calls and ``tools`` tool calls (integers: nothing to escape)."""
    llm, tools = int(llm), int(tools)
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" width="520" height="90" role="img" '
        'aria-label="agent loop"><defs><marker id="a" markerWidth="8" markerHeight="8" refX="7" refY="4" '
        'orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#556"/></marker></defs>'
        '<g font-family="sans-serif" font-size="13">'
        '<rect x="5" y="30" width="70" height="30" rx="15" fill="#eef"/><text x="22" y="50">start</text>'
        f'<rect x="130" y="25" width="110" height="40" rx="6" fill="#e4efff"/><text x="142" y="50">model ×{llm}</text>'
        f'<rect x="300" y="25" width="110" height="40" rx="6" fill="#e2f5e6"/><text x="314" y="50">tools ×{tools}</text>'
        '<rect x="450" y="30" width="60" height="30" rx="15" fill="#eef"/><text x="466" y="50">end</text>'
        '<line x1="75" y1="45" x2="128" y2="45" stroke="#556" marker-end="url(#a)"/>'
        '<path d="M240,38 L298,38" stroke="#556" marker-end="url(#a)"/>'
        '<path d="M300,55 L242,55" stroke="#556" marker-end="url(#a)"/>'
        '<path d="M185,65 C185,88 480,88 480,62" fill="none" stroke="#556" marker-end="url(#a)"/>'
        "</g></svg>"
    )


def render_run(run: Run) -> str:
    header = run.header
    rows = timeline_rows(run)
    failing = run.failing_step
    cost = cost_info(run)
    parts: list[str] = [f"<h1>replaykit run {esc(run.run_id)}</h1>"]
    meta = [
        ("source", f"{header.source.framework} {header.source.framework_version or ''}".strip()),
        ("model", run.model), ("provider", header.provider), ("base url", header.base_url),
        ("created", header.created_at), ("status", run.status), ("steps", len(run.steps)),
        ("duration", f"{run.duration:.3f} s"),
        ("failing step", "none" if failing is None else failing),
    ]
    if cost:
        total = cost.get("total_cost")
        reasons = "; ".join(cost.get("unknown_reasons") or [])
        meta.append(("cost", f"unknown ({reasons})" if total is None and reasons else
                     "unknown" if total is None else f"${total:.6f}"))
    if header.lineage:
        lin = header.lineage
        meta.append(("lineage", f"{lin.relation} of {lin.parent_run_id} at step {lin.parent_step}"))
    parts += [f'<p class="meta"><b>{esc(k)}</b>: {esc(v)}</p>' for k, v in meta]
    parts.append(health_html(run, cost.get("total_cost") if cost else None))
    if run.final_answer is not None:
        parts.append(f"<h2>Final answer</h2><pre>{esc(run.final_answer)}</pre>")

    parts.append("<h2>Graph</h2>" + graph_svg(run))
    mermaid = _mermaid(run)
    if mermaid:
        parts.append(f"<details><summary>LangGraph drawing (Mermaid source)</summary><pre>{esc(mermaid)}</pre></details>")

    parts.append("<h2>Timeline</h2><table><tr><th>step</th><th>t (s)</th><th>duration</th><th>kind</th>"
                 "<th>provenance</th><th>status</th><th>what</th></tr>")
    for row in rows:
        cls = "failing" if row["failing"] else ("error" if row["kind"] == "error" else "")
        step_link = "" if row["step"] is None else f'<a href="#step-{row["step"]}">{row["step"]}</a>'
        duration = "" if row["duration"] is None else f"{row['duration']:.3f}"
        parts.append(
            f'<tr class="{cls}"><td>{step_link}</td><td>{row["t"]:.3f}</td><td>{duration}</td><td>{esc(row["kind"])}</td>'
            f'<td>{_prov(row["provenance"])}</td><td>{esc(row["status"])}</td><td>{esc(row["summary"])}'
            f'{" ✗ failing step" if row["failing"] else ""}</td></tr>'
        )
    parts.append("</table>")

    from replaykit.core.analysis.step_detail import step_costs, step_detail

    costs = step_costs(run)
    parts.append("<h2>Steps</h2>")
    for step in run.steps:
        # The same step document as `inspect --step N` and the viewer, without the rebuilt request
        # (only the messages new at each call), so the report stays linear in the run's size.
        d = step_detail(run, step.index, whole_request=False, costs=costs)
        failing_cls = ' class="failing" open' if d["failing"] else ""
        body: list[str] = []
        if d["kind"] == "llm":
            request, response = d["request"], d["response"]
            title = f"step {step.index}: LLM call ({d['model'] or run.model or 'model'})"
            body.append(f"<p>request: {request['message_count']} messages "
                        f"({request['new_messages']} new since the previous call)</p>")
            body.extend(_message_html(Message.model_validate(m)) for m in request["appended"])
            body.append("<p><b>response</b> finish_reason=" + esc(response["finish_reason"]) + "</p>")
            body.append(_message_html(Message.model_validate(response["message"])))
            if response["usage"]:
                body.append(f"<p>usage: {esc(response['usage'])}</p>")
            if d["cost"] is not None:
                value = d["cost"]["cost"]
                body.append(f"<p>cost: {esc('unknown' if value is None else value)}</p>")
        else:
            title = f"step {step.index}: tool {d['tool']} [{d['status']}]"
            body.append(f"<p>call id <code>{esc(d['call_id'])}</code></p>")
            body.append(f"<p>arguments</p><pre>{esc(d['raw_arguments'] or d['arguments'])}</pre>")
            if d["error"]:
                body.append(f"<p>error</p><pre>{esc(d['error'])}</pre>")
            body.append(f"<p>result</p><pre>{esc(d['result'])}</pre>")
        timing = f"t={d['t']:.3f}s" + (f", {d['duration']:.3f}s" if d["duration"] is not None else "")
        parts.append(
            f'<details id="step-{step.index}"{failing_cls}><summary>{esc(title)} {_prov(d["provenance"])} '
            f"<small>{esc(timing)}</small></summary>{''.join(body)}</details>"
        )
    return _page(f"replaykit {run.run_id}", "\n".join(parts))


def render(run: Run, **_options: Any) -> str:
    """The run report (``replaykit export --format html``)."""
    return render_run(run)


# ------------------------------------------------------------------------------------------- diff


def _rows(items: Iterable[Any]) -> list[dict[str, Any]]:
    out = []
    for item in items:
        out.append(item if isinstance(item, dict) else getattr(item, "__dict__", {"value": str(item)}))
    return out


def inline_diff_html(segments: Iterable[dict[str, str]]) -> str:
    """Inline diff segments (``core.message_diff``) as escaped text with ``<del>``/``<ins>``."""
    out = []
    for seg in segments:
        text = esc(seg.get("text", ""))
        op = seg.get("op")
        out.append(f"<del>{text}</del>" if op == "delete" else f"<ins>{text}</ins>" if op == "insert" else text)
    return "".join(out)


def message_changes_html(changes: Iterable[dict[str, Any]]) -> str:
    """Which messages of a request changed, and how: index in each run, role, inline diff."""
    rows = []
    for change in changes:
        rows.append(
            f"<tr><td>{esc(change.get('op'))}</td><td>{esc(change.get('index_a'))}</td>"
            f"<td>{esc(change.get('index_b'))}</td><td>{esc(change.get('role'))}</td>"
            f"<td><pre>{inline_diff_html(change.get('diff') or [])}</pre></td></tr>"
        )
    return ("<table class=\"msgdiff\"><tr><th>change</th><th>A #</th><th>B #</th><th>role</th><th>text</th></tr>"
            + "".join(rows) + "</table>")


def render_diff(diff: dict[str, Any]) -> str:
    """Render a diff document (``replaykit diff --json`` shape): first divergence and its cause on top
    (with the messages that changed), then the two runs aligned side by side."""
    equal = bool(diff.get("equal"))
    first = diff.get("first_divergence") or {}
    first_step = first.get("step") if isinstance(first, dict) else None
    parts = [
        f"<h1>replaykit diff: {esc(diff.get('run_a'))} vs {esc(diff.get('run_b'))}</h1>",
        f'<p><span class="badge {"ok" if equal else "bad"}">{"equal" if equal else "differ"}</span></p>',
    ]
    alignment = diff.get("alignment")
    if isinstance(alignment, dict):
        parts.append("<p class=\"meta\">" + ", ".join(f"{esc(v)} {esc(k)}" for k, v in alignment.items()) + "</p>")
    if first:
        shown = {k: v for k, v in first.items() if k != "messages"}
        parts.append("<h2>First divergence</h2><table>" + "".join(
            f"<tr><th>{esc(k)}</th><td><pre>{esc(v)}</pre></td></tr>" for k, v in shown.items()) + "</table>")
        if first.get("messages"):
            parts.append("<h3>What the model saw changed</h3>" + message_changes_html(first["messages"]))
    parts.append("<h2>Steps side by side</h2><table><tr><th>A #</th><th>"
                 f"{esc(diff.get('run_a'))}</th><th>B #</th><th>{esc(diff.get('run_b'))}</th><th>difference</th></tr>")
    for row in _rows(diff.get("steps", [])):
        step = row.get("step")
        op = row.get("op") or ("changed" if row.get("differs") else "equal")
        cls = "first" if step is not None and step == first_step and row.get("differs") else (
            f"op-{op}" + (" diverge" if row.get("differs") else ""))
        a, b = row.get("a") or {}, row.get("b") or {}
        side_a = f"{_prov(str(a.get('provenance', '')))} {esc(a.get('summary', ''))}" if a else "<i>(none)</i>"
        side_b = f"{_prov(str(b.get('provenance', '')))} {esc(b.get('summary', ''))}" if b else "<i>(none)</i>"
        parts.append(
            f'<tr class="{cls}"><td>{esc(row.get("step_a", step))}</td><td>{side_a}</td>'
            f'<td>{esc(row.get("step_b", step))}</td><td>{side_b}</td>'
            f"<td>{esc(op)} {esc(row.get('field') or '')} {esc(row.get('cause') or '')}</td></tr>"
        )
    parts.append("</table>")
    differences = diff.get("differences") or []
    if differences:
        parts.append("<h2>All differences</h2>")
        for d in _rows(differences):
            detail = {k: v for k, v in d.items() if k != "messages"}
            parts.append(f"<pre>{esc(detail)}</pre>")
            if d.get("messages"):
                parts.append(message_changes_html(d["messages"]))
    return _page(f"replaykit diff {diff.get('run_a')} {diff.get('run_b')}", "\n".join(parts))


def write_diff_html(diff: Any, path: Path) -> dict[str, Any]:
    document = diff if isinstance(diff, dict) else diff.to_json()
    text = render_diff(document)
    write_private(path, text)
    return {"bytes": len(text.encode("utf-8"))}


#: The page shell (CSP, no script, nothing from the network) for other report pages (``eval --html``).
page = _page
