"""The sortable, filterable run table of the eval pages (``eval --html``, ``eval --compare --html``).

The table is plain HTML, every cell escaped, every row (and its link) present: without script the page still
lists every run. ``SCRIPT`` (fixed code of ours, allowed by its hash in the page's CSP, reading only the
table's own text, writing only ``textContent``) adds sorting (click a column head; again to reverse; empty cells last either way) and
filtering (free text over the whole row, and a choice of the values of one column, e.g. the verdict).
Built to open fast at 10,000 rows: the rows are cut into chunks the browser lays out only when on screen
(``content-visibility``), and the script does nothing at load but fill the choice.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Sequence
from typing import Any

from replaykit.exporters.html_report import esc, page

#: (text shown, link or None) of one cell
Cell = tuple[Any, str | None]

#: rows per chunk: each chunk is its own fixed-layout table in a ``content-visibility: auto`` box, so the
#: browser lays out only the chunks on screen (10,000 rows open as fast as a few hundred)
CHUNK = 100

TABLE_STYLE = """<style>
.runs table{table-layout:fixed;width:100%;border-top:0} .runs td{overflow-wrap:anywhere}
.runs .head th{cursor:pointer;user-select:none;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.runs .head th[aria-sort=ascending]::after{content:" \\25B2"} .runs .head th[aria-sort=descending]::after{content:" \\25BC"}
.runs .chunk{content-visibility:auto;contain-intrinsic-size:auto 3200px}
.filters{margin:8px 0;display:flex;gap:8px;align-items:center} .filters input{flex:1;max-width:420px;padding:4px 6px}
</style>"""

SCRIPT = """(function(){
"use strict";
function key(row,i){var c=row.cells[i];var v=c?c.textContent.trim():"";var n=Number(v);
return v===""?[2,""]:isFinite(n)?[0,n]:[1,v.toLowerCase()];}
function cmp(a,b){return a[1]<b[1]?-1:a[1]>b[1]?1:0;}
document.querySelectorAll("div.runs").forEach(function(box){
var per=Number(box.getAttribute("data-chunk")),col=Number(box.getAttribute("data-filter-column"));
var heads=box.querySelector("table.head").tHead.rows[0].cells;
var chunks=Array.prototype.slice.call(box.querySelectorAll("div.chunk"));
var rows=[];chunks.forEach(function(c){rows.push.apply(rows,c.querySelector("tbody").rows);});
var controls=document.getElementById(box.id+"-filters"),text=controls.querySelector("input");
var pick=controls.querySelector("select"),shown=controls.querySelector(".shown"),lower=null,state={col:-1,dir:1};
var values=new Set();rows.forEach(function(r){if(r.cells[col])values.add(r.cells[col].textContent);});
Array.from(values).sort().forEach(function(v){var o=document.createElement("option");o.value=v;o.textContent=v;pick.appendChild(o);});
function place(){var on=rows.filter(function(r){return !r.hidden;}),off=rows.filter(function(r){return r.hidden;});
chunks.forEach(function(c,k){var part=k<chunks.length-1?on.slice(k*per,(k+1)*per):on.slice(k*per).concat(off);
var body=c.querySelector("tbody"),frag=document.createDocumentFragment();part.forEach(function(r){frag.appendChild(r);});
body.appendChild(frag);c.hidden=!part.some(function(r){return !r.hidden;});});
shown.textContent=on.length+" of "+rows.length+" runs shown";}
function apply(){var q=text.value.trim().toLowerCase(),p=pick.value;
if(q&&!lower){lower=new Map();rows.forEach(function(r){lower.set(r,r.textContent.toLowerCase());});}
rows.forEach(function(r){r.hidden=!((!p||r.cells[col].textContent===p)&&(!q||lower.get(r).indexOf(q)>=0));});place();}
Array.prototype.forEach.call(heads,function(head,i){head.addEventListener("click",function(){
state.dir=state.col===i?-state.dir:1;state.col=i;
var keyed=rows.map(function(r,at){return [key(r,i),at,r];});
keyed.sort(function(a,b){return a[0][0]-b[0][0]||cmp(a[0],b[0])*state.dir||a[1]-b[1];});
rows=keyed.map(function(k){return k[2];});place();
Array.prototype.forEach.call(heads,function(h){h.removeAttribute("aria-sort");});
head.setAttribute("aria-sort",state.dir>0?"ascending":"descending");});});
text.addEventListener("input",apply);pick.addEventListener("change",apply);});
})();"""


def _cell(cell: Cell) -> str:
    text, href = cell
    if href:
        return f'<td><a href="{esc(urllib.parse.quote(href))}">{esc(text)}</a></td>'
    return f"<td>{esc(text)}</td>"


def data_table(headers: Sequence[str], rows: Sequence[Sequence[Cell]], *, filter_column: int = 0,
               table_id: str = "runs", filter_label: str = "every value",
               widths: Sequence[float] | None = None) -> str:
    """Controls (text filter, a choice on ``filter_column``, the count shown), the head, and the rows in
    chunks of ``CHUNK`` (one fixed-layout table each, the same column widths: ``widths`` in percent)."""
    if widths is None:
        widths = [100 / len(headers)] * len(headers)
    cols = "<colgroup>" + "".join(f'<col style="width:{w:.2f}%">' for w in widths) + "</colgroup>"
    head = "".join(f'<th scope="col" title="sort by {esc(h)}">{esc(h)}</th>' for h in headers)
    chunks = []
    for start in range(0, max(len(rows), 1), CHUNK):
        body = "\n".join("<tr>" + "".join(_cell(c) for c in row) + "</tr>" for row in rows[start:start + CHUNK])
        chunks.append(f'<div class="chunk"><table>{cols}<tbody>\n{body}\n</tbody></table></div>')
    return (
        TABLE_STYLE
        + f'<div class="filters" id="{esc(table_id)}-filters"><input type="search" placeholder="filter: any text in the row"'
        f' aria-label="filter rows"><select aria-label="{esc(headers[filter_column])}"><option value="">'
        f'{esc(filter_label)}</option></select><span class="shown">{len(rows)} of {len(rows)} runs shown</span></div>'
        f'<div class="runs" id="{esc(table_id)}" data-filter-column="{filter_column}" data-chunk="{CHUNK}">'
        f'<table class="head">{cols}<thead><tr>{head}</tr></thead></table>' + "\n".join(chunks) + "</div>"
    )


def script_page(title: str, body: str) -> str:
    """The report page shell (``exporters.html_report``) with the table script, allowed by its hash."""
    return page(title, body, script=SCRIPT)
