"""The MCP server's tools: each a thin call into the core (or the engines, or the exporters), the same
functions the command line and the viewer use, with the result paged and clipped (``limits.py``).

Nothing here imports the MCP SDK: ``server.py`` registers these methods as tools (their signatures are
the input schemas, their return models the output schemas), maps errors and scrubs secrets. The
methods raise ``ReplaykitError`` for bad input, worded once by the core.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from replaykit.core.errors import BadInput, ReplaykitError
from replaykit.core.trace import jsonsafe
from replaykit.core.trace.store import RunStore
from replaykit.mcp import models as m
from replaykit.mcp.limits import DEFAULT_MAX_CHARS, Clipper, Page, paginate
from replaykit.mcp.runs import RunAccess
from replaykit.mcp.search import RunQuery

EXPORTS_DIR = "exports"
#: File suffix of each export format (the default file name is ``<run id><suffix>``).
EXPORT_SUFFIX = {"python": ".py", "langgraph": ".py", "pydantic-ai": ".py", "html": ".html", "atif": ".json",
                 "otel": ".json"}

RunId = Annotated[str, Field(description="a run id from list_runs (ids only, never a path)")]
Cursor = Annotated[str | None, Field(description="next_cursor of the previous page")]
Limit = Annotated[int, Field(description="items per page (1-500)")]
MaxChars = Annotated[int, Field(description="longest string shown whole; 0 shows everything")]


def resource_of(run_id: str, step: int | None = None) -> str:
    return f"replaykit://run/{run_id}" + ("" if step is None else f"/step/{step}")


def _cuts(clipper: Clipper) -> list[m.Cut]:
    return [m.Cut(**cut) for cut in clipper.cuts]


def _page_fields(page: Page, what: str, clipper: Clipper, whole: str) -> dict[str, Any]:
    notes = [n for n in (page.note(what),) if n] + clipper.notes(whole)
    return {"total": page.total, "offset": page.offset, "next_cursor": page.next_cursor, "notes": notes,
            "truncated": _cuts(clipper)}


@dataclass(frozen=True)
class LiveEndpoint:
    """What ``--allow-live`` fixed when the server started: the client cannot choose another endpoint,
    model or key variable."""

    base_url: str
    model: str
    api_key_env: str | None
    api: str | None = None  # the wire API (``--api``); None: from the model's provider: prefix, else Chat


class Tools:
    """One store, one optional live endpoint; every method is one MCP tool."""

    def __init__(self, store: RunStore, live: LiveEndpoint | None = None) -> None:
        self.runs = RunAccess(store)
        self.store = self.runs.store  # ids only, for the core and the engines too
        self.live = live

    # ---------------------------------------------------------------- finding runs
    def list_runs(
        self,
        text: Annotated[str | None, Field(description="case-insensitive text in the id, title, tags, model, "
                                                      "tools, or anywhere in the record")] = None,
        tool: Annotated[str | None, Field(description="runs that called this tool")] = None,
        model: Annotated[str | None, Field(description="runs of this model")] = None,
        status: Annotated[str | None, Field(description="completed, failed, interrupted, incomplete, "
                                                        "or failing (any failed step)")] = None,
        framework: Annotated[str | None, Field(description="source framework (hermes, openai-chat, ...)")] = None,
        min_health: Annotated[int | None, Field(description="health score at least (0-100)")] = None,
        max_health: Annotated[int | None, Field(description="health score at most (0-100)")] = None,
        cursor: Cursor = None,
        limit: Limit = 50,
    ) -> m.RunList:
        """List and search the runs in the store, oldest first: id, status, steps, health, failing step,
        tools used, lineage. Every filter is optional; they combine (AND)."""
        query = RunQuery(text=text, tool=tool, model=model, status=status, framework=framework,
                         min_health=min_health, max_health=max_health)
        rows = []
        for facts in self.runs.facts():
            where = query.matches(facts, self.store.path_for(facts.run_id))
            if where is not None:
                rows.append(facts.to_json() | {"matched_in": None if where == "all" else where})
        page = paginate("list_runs", query.as_dict(), rows, cursor, limit)
        return m.RunList(store=str(self.store.root), query=query.as_dict(), runs=[m.RunRow(**r) for r in page.items],
                         **_page_fields(page, "runs", Clipper(), ""))

    # ---------------------------------------------------------------- one run
    def inspect_run(
        self,
        run_id: RunId,
        include_bookkeeping: Annotated[bool, Field(description="also tools/meta rows")] = False,
        cursor: Cursor = None,
        limit: Limit = 100,
        max_chars: MaxChars = DEFAULT_MAX_CHARS,
    ) -> m.RunView:
        """A run's timeline (replaykit inspect): summary, health, and one row per event with its step
        number, kind, provenance, status and a one-line summary; the failing step is marked."""
        from replaykit.core.analysis.inspect_view import inspect_run

        view = inspect_run(self.runs.load(run_id), include_bookkeeping=include_bookkeeping)
        page = paginate("inspect_run", {"run_id": run_id, "bookkeeping": include_bookkeeping}, view.rows,
                        cursor, limit)
        clipper = Clipper(max_chars=max_chars)
        summary = clipper.clip(view.summary, "run")
        rows = clipper.clip(page.items, "timeline")
        return m.RunView(run=summary, health=view.health.to_json(), timeline=rows, resource=resource_of(run_id),
                         **_page_fields(page, "timeline rows", clipper,
                                        f"read {resource_of(run_id)} for the whole run"))

    def get_step(
        self,
        run_id: RunId,
        step: Annotated[int, Field(description="step number (LLM and tool calls, from 0)")],
        whole_request: Annotated[bool, Field(description="include the whole request as the provider received "
                                                         "it (false: only the messages new at this step)")] = True,
        max_chars: MaxChars = DEFAULT_MAX_CHARS,
    ) -> m.StepView:
        """One step whole (replaykit inspect RUN --step N): an LLM call's exact request and whole response,
        usage and cost; a tool call's name, arguments, result, status and error."""
        from replaykit.core.analysis.step_detail import step_detail

        detail = step_detail(self.runs.load(run_id), step, whole_request=whole_request)
        clipper = Clipper(max_chars=max_chars)
        shown = clipper.clip(detail, "detail")
        return m.StepView(run_id=run_id, step=step, kind=detail["kind"], failing=detail["failing"], detail=shown,
                          resource=resource_of(run_id, step), truncated=_cuts(clipper),
                          notes=clipper.notes(f"read {resource_of(run_id, step)} or pass max_chars=0"))

    def failing_step(self, run_id: RunId, max_chars: MaxChars = DEFAULT_MAX_CHARS) -> m.FailingStep:
        """The run's failing step (the first tool error or LLM error finish) and why it failed: the error,
        the LLM step that asked for the call, the run's error events and health reasons, the step whole."""
        from replaykit.core.analysis.health import run_health
        from replaykit.core.analysis.step_detail import step_detail
        from replaykit.core.trace.ir import ToolCallEvent

        run = self.runs.load(run_id)
        health = run_health(run, with_cost=False)
        errors = [jsonsafe.model_data(e, exclude_none=True, exclude={"request": True}) for e in run.errors]
        clipper = Clipper(max_chars=max_chars)
        index = run.failing_step
        base: dict[str, Any] = {"run_id": run_id, "status": run.status, "health": health.to_json(),
                                "errors": clipper.clip(errors, "errors")}
        if index is None:
            why = (f"no step failed; the run ended {run.status}. Health {health.summary()}" if run.status != "completed"
                   else f"no step failed and the run completed. Health {health.summary()}")
            return m.FailingStep(**base, failing_step=None, kind=None, why=why, tool=None, error=None,
                                 finish_reason=None, requested_by_step=None, detail=None, branch_hint=None,
                                 truncated=_cuts(clipper), notes=clipper.notes(""))
        event = run.step(index).event
        detail = step_detail(run, index)
        if isinstance(event, ToolCallEvent):
            asked = next((s.index for s in run.steps if s.event.id == event.llm_call_id), None)
            if asked is None:
                asked = max((s.index for s in run.steps[:index] if s.kind == "llm"), default=None)
            why = (f"step {index}: tool {event.name} returned status error: {event.error or event.result or '(no text)'}"
                   + (f" (the call was asked for by LLM step {asked})" if asked is not None else ""))
            hint = (f"branch_run(run_id={run_id!r}, at={index}, result=...) to give the tool a working result, or "
                    f"args=... to call it differently; then play_run on the branch and diff_runs")
            tool, error, finish = event.name, event.error or event.result, None
        else:
            asked, tool, error = None, None, None
            finish = event.response.finish_reason
            why = f"step {index}: the model's answer finished with {finish!r}"
            hint = (f"branch_run(run_id={run_id!r}, at={index}, response=...) to give another answer; "
                    f"then play_run on the branch and diff_runs")
        if health.reasons:
            why += ". Health " + health.summary()
        shown = clipper.clip(detail, "detail")
        return m.FailingStep(**base, failing_step=index, kind=detail["kind"], why=clipper.clip(why, "why"),
                             tool=tool, error=clipper.clip(error, "error") if error else None, finish_reason=finish,
                             requested_by_step=asked, detail=shown, branch_hint=hint, truncated=_cuts(clipper),
                             notes=clipper.notes(f"read {resource_of(run_id, index)} for the step whole"))

    def run_health(self, run_id: RunId) -> m.HealthView:
        """The run's health score (0-100) and the reasons: failures, errors, retries, loops, desyncs,
        truncations, budget exhaustion, size."""
        from replaykit.core.analysis.health import run_health

        health = run_health(self.runs.load(run_id))
        doc = health.to_json()
        return m.HealthView(run_id=run_id, score=doc["score"], summary=health.summary(), reasons=doc["reasons"],
                            tokens=doc["tokens"], cost_usd=doc["cost_usd"])

    def run_cost(self, run_id: RunId, max_chars: MaxChars = DEFAULT_MAX_CHARS) -> m.CostView:
        """The cost ledger (replaykit cost): per LLM step and totals; for a branch or play, the original's
        cost beside it. An unknown price is null, never 0."""
        from replaykit.core.analysis.cost import run_cost, to_json

        run = self.runs.load(run_id)
        parent, note = self._parent(run)
        ledger = to_json(run_cost(run, parent=parent, parent_note=note))
        clipper = Clipper(max_chars=max_chars)
        return m.CostView(run_id=run_id, ledger=clipper.clip(ledger, "ledger"), truncated=_cuts(clipper),
                          notes=clipper.notes("pass max_chars=0 for the whole ledger"))

    def _parent(self, run: Any) -> tuple[Any, str | None]:
        lineage = run.header.lineage
        if lineage is None or lineage.relation not in ("branch", "replay", "play"):
            return None, None
        try:
            return self.runs.load(lineage.parent_run_id), None
        except ReplaykitError as exc:
            return None, f"original run {lineage.parent_run_id} could not be read ({exc})"

    # ---------------------------------------------------------------- two runs
    def diff_runs(
        self,
        run_a: RunId,
        run_b: RunId,
        cursor: Cursor = None,
        limit: Limit = 100,
        max_chars: MaxChars = DEFAULT_MAX_CHARS,
    ) -> m.DiffView:
        """Compare two runs step by step (replaykit diff): equal or not, the first divergence and its
        cause, every difference, and the aligned steps (paged)."""
        from replaykit.core.analysis.diff import diff_runs, lineage_edits

        a, b = self.runs.load(run_a), self.runs.load(run_b)
        doc = diff_runs(a, b, edits=lineage_edits(self.store, [a, b])).to_json()
        page = paginate("diff_runs", {"a": run_a, "b": run_b}, doc["steps"], cursor, limit)
        clipper = Clipper(max_chars=max_chars)
        return m.DiffView(
            run_a=run_a, run_b=run_b, equal=doc["equal"],
            first_divergence=clipper.clip(doc["first_divergence"], "first_divergence"),
            alignment=doc["alignment"], differences=clipper.clip(doc["differences"], "differences"),
            steps=clipper.clip(page.items, "steps"), diff_notes=clipper.clip(doc["notes"], "diff_notes"),
            **_page_fields(page, "aligned steps", clipper, "pass max_chars=0 to see the values whole"),
        )

    # ---------------------------------------------------------------- new runs
    def branch_run(
        self,
        run_id: RunId,
        at: Annotated[int, Field(description="the step to edit")],
        args: Annotated[dict[str, Any] | str | None, Field(description="tool step: new arguments (object or "
                                                                         "JSON text)")] = None,
        result: Annotated[str | None, Field(description="tool step: new result text")] = None,
        response: Annotated[str | None, Field(description="LLM step: new answer, text or tool calls as JSON "
                                                          '([{"name": ..., "arguments": {...}}])')] = None,
    ) -> m.BranchMade:
        """A new run with one edit (replaykit branch): steps before `at` served from the record, step `at`
        edited. Give exactly one of args, result, response. play_run the branch to see what follows."""
        from replaykit.core.replay.branch import branch

        given = [name for name, value in (("args", args), ("result", result), ("response", response))
                 if value is not None]
        if len(given) != 1:
            raise BadInput("give exactly one edit: args (tool step), result (tool step) or response (LLM step)")
        args_text = json.dumps(args) if isinstance(args, dict) else args
        child = branch(self.store, self.runs.load(run_id), at, args=args_text, result=result, response=response)
        lineage = child.header.lineage
        assert lineage is not None and lineage.edit is not None
        return m.BranchMade(run_id=child.run_id, parent_run_id=run_id, at=at,
                            edit=jsonsafe.model_data(lineage.edit, exclude_none=True),
                            live_from=(lineage.details or {}).get("live_from"), steps=len(child.steps),
                            resource=resource_of(child.run_id))

    def replay_run(
        self,
        run_id: RunId,
        from_step: Annotated[int | None, Field(description="first step to replay")] = None,
        to_step: Annotated[int | None, Field(description="last step to replay (inclusive)")] = None,
        cursor: Cursor = None,
        limit: Limit = 100,
        max_chars: MaxChars = DEFAULT_MAX_CHARS,
    ) -> m.ReplayView:
        """Deterministic replay from the record (replaykit replay): 0 provider calls, 0 tool executions,
        0 bytes of the trace changed (the counters prove it); the replayed steps are paged."""
        from replaykit.core.replay.replay import replay_path

        doc = replay_path(self.runs.path(run_id), start=from_step, stop=to_step)
        page = paginate("replay_run", {"run_id": run_id, "from": from_step, "to": to_step}, doc["steps"],
                        cursor, limit)
        clipper = Clipper(max_chars=max_chars)
        return m.ReplayView(
            run_id=run_id, step_count=doc["step_count"], range=doc["range"], counters=doc["counters"],
            steps=clipper.clip(page.items, "steps"), replay_notes=clipper.clip(doc["notes"], "replay_notes"),
            final_answer=clipper.clip(doc["final_answer"], "final_answer"),
            **_page_fields(page, "replayed steps", clipper, "pass max_chars=0 to see the values whole"),
        )

    def play_run(
        self,
        run_id: RunId,
        engine: Annotated[str, Field(description="openai, hermes, pydantic-ai or langgraph")] = "openai",
        live: Annotated[bool, Field(description="go live at the cut against the endpoint the server was started "
                                                "with (needs replaykit mcp --allow-live); false: offline, every "
                                                "step served, 0 calls")] = False,
        at: Annotated[int | None, Field(description="live only: go live from this step (default: after a "
                                                    "branch's edit, else step 0)")] = None,
    ) -> m.Played:
        """Play a run in an engine's real loop, recording a new run (replaykit play). Offline by default:
        every step is served from the record. The destructive-tool guard is always on (destructive calls
        are dry-run). Live play only when the server was started with --allow-live."""
        from replaykit.core.replay.play import PlayOptions
        from replaykit.engines import engine_info, play

        engine_info(engine)
        run = self.runs.load(run_id)
        if not live:
            if at is not None:
                raise BadInput("an offline play serves every step: 'at' applies to live plays only")
            options = PlayOptions(store=self.store, serve_only=True)
        elif self.live is None:
            raise BadInput("live play is off: this server was started without --allow-live (restart it with "
                           "replaykit mcp --allow-live --base-url URL --model NAME [--api-key-env VAR]); "
                           "play offline with live=false")
        else:
            options = PlayOptions(base_url=self.live.base_url, model=self.live.model, api=self.live.api,
                                  api_key_env=self.live.api_key_env, store=self.store, cut=at)
            options.api_key()  # a variable unset since the server started is a one-line error
        result = play(run, engine, options).to_json()
        lineage = run.header.lineage
        original = lineage.parent_run_id if lineage is not None and lineage.relation == "branch" else run_id
        return m.Played(**{k: result[k] for k in ("run_id", "parent_run_id", "engine", "status", "cut", "model",
                                                  "steps", "final_answer", "error", "counters")},
                        live=live, compare=f"diff_runs(run_a={original!r}, run_b={result['run_id']!r})")

    def export_run(
        self,
        run_id: RunId,
        format: Annotated[str, Field(description="python, langgraph, pydantic-ai, html, atif or otel")],
        filename: Annotated[str | None, Field(description="file name inside the store's exports folder "
                                                          "(default: <run id>.<ext>)")] = None,
        overwrite: Annotated[bool, Field(description="replace a file of that name")] = False,
        include_content: Annotated[bool, Field(description="otel only: write message content, arguments "
                                                           "and results")] = False,
    ) -> m.Exported:
        """Export a run (replaykit export) into the store's exports folder: a standalone Python script, a
        LangGraph or PydanticAI module, an HTML report, an ATIF trajectory or OTel GenAI spans."""
        from replaykit.exporters import FORMATS, export

        if format not in FORMATS:
            raise BadInput(f"unknown export format {format!r}; choose one of {', '.join(sorted(FORMATS))}")
        if include_content and format != "otel":
            raise BadInput("include_content applies to format otel")
        run = self.runs.load(run_id)
        out = self._export_path(filename or f"{run_id}{EXPORT_SUFFIX.get(format, '.txt')}")
        options: dict[str, Any] = {}
        if format in ("atif", "otel"):
            options["children"] = self.runs.load_child
        if format == "otel":
            options["include_content"] = include_content
        summary = export(run, format, out, force=overwrite, **options)
        return m.Exported(run_id=run_id, format=format, path=str(out), summary=summary)

    def _export_path(self, filename: str) -> Path:
        """``<store>/exports/<filename>``: a plain file name, resolving inside the store (never outside)."""
        from replaykit.core.trace.store_index import RUN_ID_RE

        if not RUN_ID_RE.fullmatch(filename):
            raise BadInput(f"filename {filename[:80]!r}: use a plain file name (A-Z a-z 0-9 . _ -, no folders)")
        root = self.store.ensure().resolve()
        folder = root / EXPORTS_DIR
        folder.mkdir(mode=0o700, exist_ok=True)
        out = folder / filename
        if folder.resolve().parent != root or out.resolve().parent != folder.resolve():
            raise BadInput(f"{EXPORTS_DIR}/{filename} resolves outside the store; nothing written")
        return out

    # ---------------------------------------------------------------- the corpus
    def corpus_stats(
        self,
        run_ids: Annotated[list[str] | None, Field(description="these runs only (default: the whole store)")] = None,
        max_chars: MaxChars = DEFAULT_MAX_CHARS,
    ) -> m.CorpusStats:
        """Corpus report over the store (replaykit stats): runs, steps, tokens, cost, durations, health
        histogram, per model and per tool failure rates, the worst runs and why."""
        from replaykit.core.corpus import (
            corpus_report,
            corpus_sources,
            make_partitions,
            run_partition,
            stats_task,
        )

        paths = [self.runs.path(r) for r in run_ids] if run_ids else (
            corpus_sources(self.store, [], all_runs=True) if any(self.store.iter_summaries()) else [])
        infos: list[dict[str, Any]] = []
        damaged: list[dict[str, str]] = []
        for part in make_partitions(paths):
            result = run_partition(stats_task, {"cost": True}, part)  # in this process: a store is local
            if result.fatal:
                raise BadInput(result.fatal)
            for one in result.runs:
                if one.damaged is not None:
                    damaged.append({"source": Path(one.source).name, "error": one.damaged})
                elif one.info:
                    infos.append(one.info)
        clipper = Clipper(max_chars=max_chars)
        report = clipper.clip(corpus_report(infos, damaged), "report")
        return m.CorpusStats(report=report, truncated=_cuts(clipper), notes=clipper.notes("pass max_chars=0"))

    # ---------------------------------------------------------------- resources
    def run_document(self, run_id: str) -> dict[str, Any]:
        """``replaykit://run/ID``: the whole inspect view (replaykit inspect RUN --json)."""
        from replaykit.core.analysis.inspect_view import inspect_run

        return inspect_run(self.runs.load(run_id)).to_json()

    def step_document(self, run_id: str, step: int) -> dict[str, Any]:
        """``replaykit://run/ID/step/N``: the step whole (replaykit inspect RUN --step N --json)."""
        from replaykit.core.analysis.step_detail import step_detail

        return step_detail(self.runs.load(run_id), step)


#: The tools, in the order clients list them.
TOOL_NAMES = ("list_runs", "inspect_run", "get_step", "failing_step", "diff_runs", "branch_run", "replay_run",
              "play_run", "export_run", "run_cost", "run_health", "corpus_stats")
