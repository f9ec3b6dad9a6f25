"""What each MCP tool returns: one pydantic model per tool, published as the tool's ``outputSchema``.

The SDK validates every result against its model before it leaves the server, and MCP clients check
``structuredContent`` against the schema. The top-level fields an agent acts on are typed (ids, step
numbers, counters, whether two runs are equal); the documents the core builds (a step whole, a diff
row, a cost ledger) are carried as JSON objects, exactly as ``replaykit ... --json`` prints them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Cut(_Out):
    """One value the server shortened: where, how long it was, how much is shown."""

    path: str
    length: int
    shown: int
    unit: str = Field(description="chars or items")


class Clipped(_Out):
    notes: list[str] = Field(default_factory=list, description="what was left out or shortened, and how to get it")
    truncated: list[Cut] = Field(default_factory=list)


class Paged(Clipped):
    total: int = Field(description="items in the whole list")
    offset: int = Field(description="index of the first item of this page")
    next_cursor: str | None = Field(description="pass as cursor to get the next page; null on the last page")


class RunRow(_Out):
    run_id: str
    created_at: str
    title: str | None
    framework: str
    model: str | None
    status: str = Field(description="completed, failed, interrupted, incomplete, or unreadable")
    steps: int
    duration: float
    health: int | None = Field(description="0-100 (replaykit.core.analysis.health)")
    failing_step: int | None
    tags: list[str]
    tools: list[str] = Field(description="tools the run called")
    parent_run_id: str | None
    relation: str | None = Field(description="branch, play, replay, redacted, subagent... of parent_run_id")
    health_reasons: list[str]
    error: str | None = Field(description="why an unreadable run could not be read")
    matched_in: str | None = Field(default=None, description="list (id, title, tags, model, tools) or record "
                                                             "(messages, arguments, results) for a text search")


class RunList(Paged):
    store: str
    query: dict[str, Any]
    runs: list[RunRow]


class RunView(Paged):
    run: dict[str, Any] = Field(description="summary: id, source, model, status, steps, lineage, failing step, "
                                            "final answer")
    health: dict[str, Any]
    timeline: list[dict[str, Any]] = Field(description="timeline rows of this page (replaykit inspect --json)")
    resource: str


class StepView(Clipped):
    run_id: str
    step: int
    kind: str = Field(description="llm or tool")
    failing: bool
    detail: dict[str, Any] = Field(description="the step whole (replaykit inspect RUN --step N --json)")
    resource: str


class FailingStep(Clipped):
    run_id: str
    status: str
    failing_step: int | None = Field(description="the first failed step (tool error, LLM error finish); null if none")
    kind: str | None
    why: str = Field(description="one paragraph: what failed and what the run says about it")
    tool: str | None
    error: str | None
    finish_reason: str | None
    requested_by_step: int | None = Field(description="the LLM step whose answer asked for the failing tool call")
    health: dict[str, Any]
    errors: list[dict[str, Any]] = Field(description="error events of the run (failed attempts, crashes)")
    detail: dict[str, Any] | None = Field(description="the failing step whole (get_step)")
    branch_hint: str | None = Field(description="how to try a fix with branch_run")


class DiffView(Paged):
    run_a: str
    run_b: str
    equal: bool
    first_divergence: dict[str, Any] | None = Field(description="step, field, cause (edit, desync, "
                                                                "synthetic_end, unavailable_tool, tool_result, "
                                                                "model_drift, input) and both values")
    alignment: dict[str, int]
    differences: list[dict[str, Any]]
    steps: list[dict[str, Any]] = Field(description="aligned rows of this page (op: equal, changed, removed, "
                                                    "inserted)")
    diff_notes: list[dict[str, Any]]


class BranchMade(_Out):
    run_id: str
    parent_run_id: str
    at: int
    edit: dict[str, Any]
    live_from: int | None
    steps: int
    resource: str


class ReplayView(Paged):
    run_id: str
    step_count: int
    range: dict[str, Any]
    counters: dict[str, int] = Field(description="provider_calls and tool_executions are 0, "
                                                 "trace_bytes_changed is 0")
    steps: list[dict[str, Any]]
    replay_notes: list[dict[str, Any]]
    final_answer: str | None


class Played(_Out):
    run_id: str = Field(description="the new run (lineage play)")
    parent_run_id: str
    engine: str
    live: bool
    status: str
    cut: int
    model: str | None
    steps: int
    final_answer: str | None
    error: str | None
    counters: dict[str, Any]
    compare: str = Field(description="what to diff to see what changed")


class Exported(_Out):
    run_id: str
    format: str
    path: str = Field(description="the written file, inside the store's exports folder")
    summary: dict[str, Any]


class CostView(Clipped):
    run_id: str
    ledger: dict[str, Any] = Field(description="replaykit cost --json: per step, totals; null cost means unknown")


class HealthView(_Out):
    run_id: str
    score: int
    summary: str
    reasons: list[dict[str, Any]]
    tokens: int | None
    cost_usd: float | None


class CorpusStats(Clipped):
    report: dict[str, Any] = Field(description="replaykit stats --json: counts, tokens, cost, durations, health, "
                                               "per model and per tool failure rates, worst runs")
