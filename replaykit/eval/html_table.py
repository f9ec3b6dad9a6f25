"""The sortable, filterable run table of the eval pages (``eval --html``, ``eval --compare --html``).

The table is plain HTML, every cell escaped, every row present: without script the page still lists every
run. ``SCRIPT`` (fixed code of ours, allowed by its hash in the page's CSP, reading only the table's own
text) adds sorting (click a column head; again to reverse) and filtering (free text over the whole row,
and a choice of the values of one column, e.g. the verdict). Built to stay fast at 10,000 rows: the rows
are sorted as an array and put back with one fragment, filtering toggles ``hidden``.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Sequence
from typing import Any

from replaykit.exporters.html_report import esc, page

#: (text shown, link or None) of one cell
Cell = tuple[Any, str | None]

TABLE_STYLE = """<style>
table.runs{table-layout:fixed} table.runs th{cursor:pointer;user-select:none;white-space:nowrap}
table.runs th[aria-sort=ascending]::after{content:" \\25B2"} table.runs th[aria-sort=descending]::after{content:" \\25BC"}
table.runs td{overflow-wrap:anywhere} .filters{margin:8px 0;display:flex;gap:8px;align-items:center}
.filters input{flex:1;max-width:420px;padding:4px 6px}
</style>"""

SCRIPT = """(function(){
"use strict";
function key(row,i){var c=row.cells[i];var v=c?c.textContent.trim():"";var n=Number(v);
return v!==""&&isFinite(n)?[0,n]:[1,v.toLowerCase()];}
function cmp(a,b){if(a[0]!==b[0])return a[0]-b[0];return a[1]<b[1]?-1:a[1]>b[1]?1:0;}
document.querySelectorAll("table.runs").forEach(function(table){
var body=table.tBodies[0],heads=table.tHead.rows[0].cells,rows=Array.prototype.slice.call(body.rows);
var box=document.getElementById(table.id+"-filters"),text=box.querySelector("input"),pick=box.querySelector("select");
var shown=box.querySelector(".shown"),col=Number(table.getAttribute("data-filter-column"));
var lower=new Map(),values=new Set();
rows.forEach(function(r){lower.set(r,r.textContent.toLowerCase());if(r.cells[col])values.add(r.cells[col].textContent);});
Array.from(values).sort().forEach(function(v){var o=document.createElement("option");o.value=v;o.textContent=v;pick.appendChild(o);});
var state={col:-1,dir:1};
function apply(){var q=text.value.trim().toLowerCase(),p=pick.value,n=0;
rows.forEach(function(r){var ok=(!p||r.cells[col].textContent===p)&&(!q||lower.get(r).indexOf(q)>=0);r.hidden=!ok;if(ok)n++;});
shown.textContent=n+" of "+rows.length+" runs shown";}
Array.prototype.forEach.call(heads,function(head,i){head.addEventListener("click",function(){
state.dir=state.col===i?-state.dir:1;state.col=i;
var keyed=rows.map(function(r,at){return [key(r,i),at,r];});
keyed.sort(function(a,b){return cmp(a[0],b[0])*state.dir||a[1]-b[1];});
var frag=document.createDocumentFragment();rows=keyed.map(function(k){frag.appendChild(k[2]);return k[2];});
body.appendChild(frag);
Array.prototype.forEach.call(heads,function(h){h.removeAttribute("aria-sort");});
head.setAttribute("aria-sort",state.dir>0?"ascending":"descending");});});
text.addEventListener("input",apply);pick.addEventListener("change",apply);apply();});
})();"""


def _cell(cell: Cell) -> str:
    text, href = cell
    if href:
        return f'<td><a href="{esc(urllib.parse.quote(href))}">{esc(text)}</a></td>'
    return f"<td>{esc(text)}</td>"


def data_table(headers: Sequence[str], rows: Sequence[Sequence[Cell]], *, filter_column: int = 0,
               table_id: str = "runs", filter_label: str = "every value") -> str:
    """Controls (text filter, a choice on ``filter_column``, the count shown) and the table itself."""
    head = "".join(f'<th scope="col" title="sort by {esc(h)}">{esc(h)}</th>' for h in headers)
    body = "\n".join("<tr>" + "".join(_cell(c) for c in row) + "</tr>" for row in rows)
    return (
        TABLE_STYLE
        + f'<div class="filters" id="{esc(table_id)}-filters"><input type="search" placeholder="filter: any text in the row"'
        f' aria-label="filter rows"><select aria-label="{esc(headers[filter_column])}"><option value="">'
        f"{esc(filter_label)}</option></select><span class=\"shown\">{len(rows)} runs</span></div>"
        f'<table class="runs" id="{esc(table_id)}" data-filter-column="{filter_column}"><thead><tr>{head}</tr></thead>'
        f"<tbody>\n{body}\n</tbody></table>"
    )


def script_page(title: str, body: str) -> str:
    """The report page shell (``exporters.html_report``) with the table script, allowed by its hash."""
    return page(title, body, script=SCRIPT)
