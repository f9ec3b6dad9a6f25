"""The viewer's pages: runs list, run, step, diff, branch and play (Starlette, Jinja2 autoescaped).

Server-rendered HTML and no JavaScript: filters and sorting are GET forms, live refresh is a
``<meta http-equiv="refresh">`` on pages that change (a run being recorded, a play in progress), so the
Content-Security-Policy can forbid scripts outright. Every piece of trace content reaches the page
through Jinja2's autoescaping; the only ``|safe`` fragments are the run page's health block and loop
graph, built by ``exporters.html_report`` (which escapes every value it puts in them, the same code
as the HTML report's). The views themselves come from the core
(``timeline_rows``, ``step_detail``, ``diff_runs``, ``branch``), the same code as the CLI and the HTML
report.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

from replaykit.core.errors import BadInput, ReplaykitError, RunNotFound
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.viewer.catalog import MAX_PAGE_SIZE, PAGE_SIZE, Catalog, Query, RunRow
from replaykit.viewer.jobs import Jobs, PlayForm, engine_names, wire_api_names
from replaykit.viewer.run_views import (
    MESSAGES_PER_PAGE,
    PRICE_LIMIT,
    ROWS_PER_PAGE,
    PageOutOfRange,
    RunView,
    RunViews,
    check_page,
)
from replaykit.viewer.security import CsrfTokens, Guard, origin_ok

TEMPLATES = Path(__file__).with_name("templates")
MAX_FORM_BYTES = 1 << 20
#: Content longer than this is folded (``<details>`` closed) on the step page.
FOLD_CHARS = 1200
PROVENANCES = ("recorded", "served", "live", "edited", "synthetic", "desync", "reconstructed")


class Viewer:
    """The application state: the store, the token, CSRF tokens, the catalog, the plays."""

    def __init__(self, store: RunStore, token: str) -> None:
        self.store = store
        self.token = token
        self.csrf = CsrfTokens()
        self.catalog = Catalog(store)
        self.runs = RunViews(store)
        self.jobs = Jobs(store)
        self.port = 0  # set once the socket is bound
        self._last_play: dict[str, str] = {}  # endpoint, model, key variable NAME of the last play form

    def remember_play(self, form: PlayForm) -> None:
        if not form.offline:
            self._last_play = {"engine": form.engine, "base_url": form.base_url, "model": form.model,
                               "api": form.api or "", "api_key_env": form.api_key_env or ""}

    def play_defaults(self, run: RunView, descendants: list[RunRow] | None = None) -> dict[str, str]:
        """What the play form starts with: the last play made here, else the endpoint and model this
        run (a play) or its newest play was made against, else the engine alone."""
        if self._last_play:
            return dict(self._last_play)
        candidates = [run.header] if run.header.lineage is not None and run.header.lineage.relation == "play" else []
        children = self.catalog.descendants(run.run_id) if descendants is None else descendants
        newest = sorted((r for r in children if r.parent_run_id == run.run_id and r.relation == "play"),
                        key=lambda r: r.created_at, reverse=True)
        for row in newest[:1]:
            try:
                candidates.append(self.runs.get(row.run_id).header)
            except (ReplaykitError, OSError):
                pass
        for header in candidates:
            if header.base_url:
                engine = header.lineage.engine if header.lineage is not None and header.lineage.engine else "openai"
                return {"engine": engine, "base_url": header.base_url, "model": header.model or "", "api": "",
                        "api_key_env": ""}
        return {"engine": "openai", "base_url": "", "model": "", "api": "", "api_key_env": ""}

    def hosts(self) -> set[str]:
        return {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}

    def origins(self) -> set[str]:
        return {f"http://{host}" for host in self.hosts()}

    def url(self, path: str, **params: Any) -> str:
        """A link inside the viewer: the path, the given parameters and the access token."""
        query = [(k, str(v)) for k, v in params.items() if v is not None and v != ""]
        query.append(("token", self.token))
        return f"{path}?{urlencode(query)}"


def _pretty(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def _split_message(item: Any) -> tuple[str | None, Any]:
    """A provider message as (its text content, everything else): the text reads raw, the rest as JSON."""
    if not isinstance(item, dict):
        return None, item
    content = item.get("content")
    rest = {k: v for k, v in item.items() if k not in ("content", "_from") and not (k == "role")}
    return (content if isinstance(content, str) else None), (rest if isinstance(content, str) else
                                                             {k: v for k, v in item.items() if k != "_from"})


def _message_text(message: dict[str, Any]) -> str:
    from replaykit.core.analysis.step_detail import message_text

    return message_text(message)


def _templates(viewer: Viewer) -> Any:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

    env = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=select_autoescape(default=True),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.globals.update(url=viewer.url, csrf=viewer.csrf.issue, FOLD_CHARS=FOLD_CHARS, engines=engine_names, wire_apis=wire_api_names,
                       token=viewer.token)
    env.filters["pretty"] = _pretty
    env.filters["split_message"] = _split_message
    env.filters["seconds"] = lambda v: "" if v is None else f"{v:.3f}"
    env.filters["usage"] = usage_line
    env.filters["message_text"] = _message_text
    return env


def usage_line(usage: Any) -> str:
    """Token usage as one readable line: ``251 in + 10 out = 261 tokens (cache read 64)``."""
    if not isinstance(usage, dict) or not usage:
        return ""
    given, taken = usage.get("input_tokens"), usage.get("output_tokens")
    total = usage.get("total_tokens")
    if total is None and isinstance(given, int) and isinstance(taken, int):
        total = given + taken
    line = f"{given if given is not None else '?'} in + {taken if taken is not None else '?'} out"
    line += f" = {total:,} tokens" if isinstance(total, int) else " tokens"
    extras = [f"{label} {usage[key]:,}" for key, label in (("cache_read_tokens", "cache read"),
                                                            ("cache_write_tokens", "cache write"),
                                                            ("reasoning_tokens", "reasoning"))
              if isinstance(usage.get(key), int) and usage[key]]
    return line + (f" ({', '.join(extras)})" if extras else "")


def run_summary(run: RunView) -> dict[str, Any]:
    """What the run page shows beside the timeline, built by the static report's own pieces (one
    health score, one drawing): each is HTML the report escaped itself."""
    from importlib.util import find_spec

    from replaykit.exporters.html_report import health_block, loop_svg

    priced = find_spec("genai_prices") is not None
    cost = ("unknown" if run.cost is None else f"${run.cost:.6f}") if priced else \
        "unavailable (genai-prices not installed)"
    if run.cost_skipped:
        cost = (f"not computed on this page ({run.llm_calls:,} LLM calls; the page prices at most "
                f"{PRICE_LIMIT:,}): replaykit cost {run.run_id}")
    return {"health_html": health_block(run.health), "graph_svg": loop_svg(run.llm_calls, run.steps - run.llm_calls),
            "cost": cost}


def query_int(params: Any, name: str, default: int, *, most: int | None = None) -> int:
    """A positive integer query parameter (``page``, ``limit``); BadInput (a 400) for anything else."""
    text = params.get(name)
    if text is None or text == "":
        return default
    if not text.isdigit() or int(text) < 1 or (most is not None and int(text) > most):
        bound = f" from 1 to {most}" if most is not None else " of at least 1"
        raise BadInput(f"{name}={text[:20]!r}: give a whole number{bound}")
    return int(text)


def build_app(viewer: Viewer) -> Any:
    """The ASGI application (Starlette routes wrapped in the security guard)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, RedirectResponse, Response
    from starlette.routing import Route

    env = _templates(viewer)
    # Compile every template in the background now, not on the first visit of each page.
    import threading

    threading.Thread(target=lambda: [env.get_template(t.name) for t in TEMPLATES.glob("*.html")], daemon=True,
                     name="replaykit-view-templates").start()

    def page(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        nonce = request.scope.get("replaykit.nonce", "")
        html = env.get_template(name).render(nonce=nonce, **context)
        return HTMLResponse(html, status_code=status)

    def error(request: Request, message: str, status: int = 400) -> HTMLResponse:
        return page(request, "error.html", status=status, title="error", message=message)

    def load(run_id: str) -> Run:
        run: Run = viewer.store.load(run_id)
        return run

    async def form_of(request: Request) -> dict[str, str] | Response:
        """The POST's form after both cross-site checks; a 403 response when either fails."""
        if not origin_ok(request.headers.get("origin"), viewer.origins()):
            return error(request, "403 Forbidden: cross-site request refused (Origin)", 403)
        body = await request.body()
        if len(body) > MAX_FORM_BYTES:
            return error(request, "413: form too large", 413)
        form = dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
        if not viewer.csrf.redeem(form.get("csrf"), request.url.path):
            return error(request, "403 Forbidden: missing or stale form token (CSRF); reload the page", 403)
        return form

    def failed(request: Request, exc: Exception) -> HTMLResponse:
        """A page's error: 404 for a run or page that is not there, 400 for any other bad input."""
        return error(request, str(exc), 404 if isinstance(exc, RunNotFound | PageOutOfRange) else 400)

    async def runs(request: Request) -> Response:
        query = Query.from_params(request.query_params)
        try:
            number = query_int(request.query_params, "page", 1)
            limit = query_int(request.query_params, "limit", PAGE_SIZE, most=MAX_PAGE_SIZE)
            listing = viewer.catalog.page(query, number, limit)
        except BadInput as exc:
            return failed(request, exc)
        entries = listing.entries
        facets = {
            "framework": sorted({r.framework for r in entries}),
            "model": sorted({r.model for r in entries if r.model}),
            "status": sorted({r.status for r in entries if r.counted and r.status} | {"completed", "failed",
                                                                                       "incomplete", "failing"}),
            "tag": sorted({t for r in entries for t in r.tags}),
        }
        recording = any(r.recording for r in listing.rows)
        return page(request, "runs.html", title="runs", listing=listing, rows=listing.rows, total=listing.total,
                    query=query, facets=facets, recording=recording, store=str(viewer.store.root))

    def run_view(run_id: str) -> RunView:
        return viewer.runs.get(run_id)

    async def run_page(request: Request) -> Response:
        try:
            run = run_view(request.path_params["run_id"])
            number = query_int(request.query_params, "page", 1)
            pages = check_page(number, run.rows, ROWS_PER_PAGE, "timeline rows")
            rows = run.rows_page((number - 1) * ROWS_PER_PAGE, number * ROWS_PER_PAGE)
        except (ReplaykitError, OSError) as exc:
            return failed(request, exc)
        children = viewer.runs.children(rows)
        import time

        recording = (run.status == "incomplete" and time.time() - run.mtime < 60.0
                     and (run.header.lineage is None or run.header.lineage.relation != "branch"))
        descendants = viewer.catalog.descendants(run.run_id)
        return page(request, "run.html", title=f"run {run.run_id}", run=run, rows=rows, children=children,
                    lineage=run.header.lineage, recording=recording, provenances=PROVENANCES,
                    descendants=descendants, summary=run_summary(run),
                    play_defaults=viewer.play_defaults(run, descendants),
                    page_number=number, pages=pages, per_page=ROWS_PER_PAGE)

    async def step_page(request: Request) -> Response:
        try:
            run = run_view(request.path_params["run_id"])
            shown = viewer.runs.step(run, int(request.path_params["step"]))
        except (ReplaykitError, OSError) as exc:
            return failed(request, exc)
        detail = shown["d"]
        response_edit = ""
        if detail["kind"] == "llm":
            calls = detail["response"]["tool_calls"]
            response_edit = detail["response"]["text"] if not calls else _pretty(
                {"content": detail["response"]["text"],
                 "tool_calls": [{"name": c["name"], "arguments": c["arguments"]} for c in calls]})
        return page(request, "step.html", title=f"{run.run_id} step {detail['step']}", run=run, d=detail,
                    steps=run.steps, response_edit=response_edit, tool_wait=shown["tool_wait"],
                    base_step=shown["base_step"], rows_per_page=ROWS_PER_PAGE)

    async def request_page(request: Request) -> Response:
        try:
            run = run_view(request.path_params["run_id"])
            step = int(request.path_params["step"])
            number = query_int(request.query_params, "page", 1)
            detail = viewer.runs.whole_request(run, step)
            messages = detail["provider_messages"]
            if messages is None:
                messages = detail["messages"]
            pages = check_page(number, len(messages), MESSAGES_PER_PAGE, "messages")
        except (ReplaykitError, OSError) as exc:
            return failed(request, exc)
        first = (number - 1) * MESSAGES_PER_PAGE
        return page(request, "request.html", title=f"{run.run_id} step {step} request", run=run, d=detail,
                    step=step, messages=messages[first:first + MESSAGES_PER_PAGE], first=first,
                    provider=detail["provider_messages"] is not None, page_number=number, pages=pages,
                    count=len(messages), whole_body=pages == 1)

    async def diff_page(request: Request) -> Response:
        from replaykit.core.analysis.diff import diff_runs, lineage_edits

        a_id, b_id = request.query_params.get("a", ""), request.query_params.get("b", "")
        try:
            a, b = load(a_id), load(b_id)
        except ReplaykitError as exc:
            return error(request, str(exc), 404 if isinstance(exc, RunNotFound) else 400)
        result = diff_runs(a, b, edits=lineage_edits(viewer.store, [a, b]))
        return page(request, "diff.html", title=f"diff {a.run_id} {b.run_id}", a=a, b=b, diff=result.to_json())

    async def branch_post(request: Request) -> Response:
        from replaykit.core.replay.branch import branch

        form = await form_of(request)
        if isinstance(form, Response):
            return form
        target = form.get("target", "")
        if target not in ("args", "result", "response"):
            return error(request, "choose what to edit: the tool's arguments, its result, or the model's response")
        try:
            run = load(request.path_params["run_id"])
            at = int(form.get("at", ""))
            child = branch(viewer.store, run, at, **{target: form.get("value", "")})
        except ValueError:
            return error(request, "the step number is not a number")
        except ReplaykitError as exc:
            return error(request, str(exc))
        return RedirectResponse(viewer.url(f"/run/{child.run_id}"), status_code=303)

    async def play_post(request: Request) -> Response:
        form = await form_of(request)
        if isinstance(form, Response):
            return form
        try:
            run = load(request.path_params["run_id"])
            play_form = PlayForm.parse(form, run)
            job = viewer.jobs.start(run, play_form)
            viewer.remember_play(play_form)
        except ReplaykitError as exc:
            return error(request, str(exc))
        return RedirectResponse(viewer.url(f"/job/{job.id}"), status_code=303)

    async def job_page(request: Request) -> Response:
        job = viewer.jobs.get(request.path_params["job_id"])
        if job is None:
            return error(request, "no such play (the viewer was restarted?)", 404)
        if job.done and job.status == "completed" and request.query_params.get("stay") != "1":
            return RedirectResponse(viewer.url("/diff", a=job.compare_to, b=job.run_id), status_code=303)
        return page(request, "job.html", title=f"play {job.id}", job=job, progress=viewer.jobs.progress(job))

    async def evals_page(request: Request) -> Response:
        from replaykit.eval.registry import list_evals

        return page(request, "evals.html", title="evals", evals=list_evals(viewer.store))

    async def eval_page(request: Request) -> Response:
        from replaykit.eval.registry import load_eval

        report = load_eval(viewer.store, request.path_params["eval_id"])
        if report is None:
            return error(request, "no such eval in this store (or its report.json is gone)", 404)
        played = {r["run_id"]: r.get("candidate_runs") or [] for r in report["execution"].get("runs", [])}
        return page(request, "eval.html", title="eval", report=report, played=played,
                    eval_id=request.path_params["eval_id"])

    async def not_found(request: Request, exc: Exception) -> Response:
        return error(request, "404: no such page", 404)

    routes = [
        Route("/", runs),
        Route("/run/{run_id}", run_page),
        Route("/run/{run_id}/step/{step:int}", step_page),
        Route("/run/{run_id}/step/{step:int}/request", request_page),
        Route("/run/{run_id}/branch", branch_post, methods=["POST"]),
        Route("/run/{run_id}/play", play_post, methods=["POST"]),
        Route("/job/{job_id}", job_page),
        Route("/diff", diff_page),
        Route("/evals", evals_page),
        Route("/eval/{eval_id}", eval_page),
    ]
    app = Starlette(routes=routes, exception_handlers={404: not_found, 405: not_found})
    return Guard(app, token=viewer.token, allowed_hosts=viewer.hosts)

