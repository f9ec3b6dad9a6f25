"""Training-data export: OpenAI fine-tuning JSONL, ShareGPT (Hermes function calling), TRL messages,
and preference pairs from a branch and its original.

Redacted by default: every run goes through ``replaykit.core.redaction.redact_run`` first (a branch
and its original share one placeholder map, so the common prompt stays identical on both sides).
Runs are read and written one at a time, so a corpus export holds one run in memory, never the store.
Every record is validated for its format before it is written; an invalid one is skipped and counted.

    from replaykit.exporters.training import export_training
    summary = export_training(paths, Path("train.jsonl"), "openai-jsonl", store=store)
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from replaykit.core.corpus import RunResult
from replaykit.core.errors import BadInput
from replaykit.core.progress import ProgressBar
from replaykit.core.trace import jsonsafe
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore

from ._training_convert import (
    openai_tools,
    run_conversation,
    to_openai_messages,
    to_sharegpt_turns,
    to_trl_messages,
)
from ._training_validate import validate_record

Format = Literal["openai-jsonl", "sharegpt", "trl"]
FORMATS: tuple[str, ...] = ("openai-jsonl", "sharegpt", "trl")


def _check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise BadInput(f"unknown training format {fmt!r} (expected one of: {', '.join(FORMATS)})")


# ----------------------------------------------------------------------------------- one run -> record


def sft_record(run: Run, fmt: str) -> dict[str, Any] | None:
    """One supervised fine-tuning record for ``run`` (None when it has no assistant answer)."""
    _check_format(fmt)
    messages, tools = run_conversation(run)
    oa = to_openai_messages(messages)
    if not oa:
        return None
    decls = openai_tools(tools)
    if fmt == "openai-jsonl":
        rec: dict[str, Any] = {"messages": oa}
        if decls:
            rec["tools"] = decls
        return rec
    if fmt == "trl":
        rec = {"messages": to_trl_messages(oa)}
        if decls:
            rec["tools"] = decls
        return rec
    return {"conversations": to_sharegpt_turns(oa, decls)}


def _common_prefix(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> int:
    k = 0
    while k < min(len(a), len(b)) and a[k] == b[k]:
        k += 1
    # A preference is about the model's turn: cut right before an assistant message on both sides.
    while k > 0 and not (k < len(a) and k < len(b) and a[k]["role"] == "assistant" and b[k]["role"] == "assistant"):
        k -= 1
    return k


def preference_record(chosen_run: Run, rejected_run: Run, fmt: str) -> dict[str, Any] | None:
    """prompt/chosen/rejected from two runs that share a prefix (a branch and its original).

    None when the two sides make the same first decision after the shared prompt (nothing to prefer).
    """
    _check_format(fmt)
    c_msgs, tools = run_conversation(chosen_run)
    r_msgs, _ = run_conversation(rejected_run)
    c, r = to_openai_messages(c_msgs), to_openai_messages(r_msgs)
    if not c or not r:
        return None
    k = _common_prefix(c, r)
    if k == 0:
        return None
    prompt, chosen, rejected = c[:k], c[k:], r[k:]
    decls = openai_tools(tools)
    if fmt == "trl":
        if chosen == rejected:
            return None
        rec: dict[str, Any] = {
            "prompt": to_trl_messages(prompt),
            "chosen": to_trl_messages(chosen),
            "rejected": to_trl_messages(rejected),
        }
        if decls:
            rec["tools"] = decls
        return rec
    if chosen[0] == rejected[0]:
        return None
    if fmt == "openai-jsonl":
        inp: dict[str, Any] = {"messages": prompt}
        if decls:
            inp["tools"] = decls
        return {"input": inp, "preferred_output": [chosen[0]], "non_preferred_output": [rejected[0]]}
    # ShareGPT preference (LLaMA-Factory style): conversations + one chosen and one rejected gpt turn.
    return {
        "conversations": to_sharegpt_turns(prompt, decls),
        "chosen": _sharegpt_turn(chosen[0]),
        "rejected": _sharegpt_turn(rejected[0]),
    }


def _sharegpt_turn(assistant: dict[str, Any]) -> dict[str, str]:
    return to_sharegpt_turns([assistant], [])[-1]


# ------------------------------------------------------------------------------------------- corpus


@dataclass
class TrainingExportSummary:
    path: str
    format: str
    redacted: bool
    mode: str | None
    records: int = 0
    runs: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    run_ids: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "format": self.format,
            "redacted": self.redacted,
            "mode": self.mode,
            "records": self.records,
            "runs": self.runs,
            "skipped": dict(self.skipped),
            "run_id": self.run_ids,
        }


def _redacted(runs: list[Run], mode: str) -> list[Run]:
    from replaykit.core.redaction import Redactor, redact_run

    # "ner+fail-closed": the mode travels to worker processes as one string (see export_training)
    mode, _, policy = mode.partition("+")
    redactor = Redactor(mode=mode, fail_closed=policy == "fail-closed")  # type: ignore[arg-type]
    return [redact_run(r, mode, redactor=redactor) for r in runs]


def export_training(
    sources: Iterable[Path],
    out: Path,
    fmt: str,
    *,
    redact: bool = True,
    mode: str = "ner",
    fail_closed: bool = False,
    preference_chosen: str | None = None,
    store: RunStore | None = None,
    overwrite: bool = False,
    progress: bool | None = None,
    total: int | None = None,
    workers: int | None = None,
    min_health: int | None = None,
) -> TrainingExportSummary:
    """Stream ``sources`` (trace files) into one JSONL file at ``out``.

    ``preference_chosen`` (``original`` or ``branch``) switches to preference pairs: every source that
    is a branch is paired with its parent run (looked up in ``store``); other sources are skipped.
    ``workers``: processes that load and redact runs in parallel (default: every core when there are
    at least 8 sources); records are still written in source order, with a bounded number in flight.
    ``min_health``: leave out runs whose health score (``core.health``) is below it.
    """
    _check_format(fmt)
    if preference_chosen not in (None, "original", "branch"):
        raise BadInput(f"--preference-chosen must be original or branch, not {preference_chosen!r}")
    if mode not in ("ner", "patterns"):
        raise BadInput(f"unknown redaction mode {mode!r} (expected ner or patterns)")
    if out.exists() and not overwrite:
        raise BadInput(f"{out} exists; pass --force to overwrite")
    if out.is_dir():
        raise BadInput(f"{out} is a directory")
    summary = TrainingExportSummary(str(out), fmt, redact, mode if redact else None)
    tmp = out.with_name(out.name + ".partial")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle, ProgressBar(total, "exporting", show=progress) as advance:
            for record, run_id in _records(sources, fmt, redact, mode, preference_chosen, store, summary, fail_closed,
                                           workers=workers, total=total, min_health=min_health):
                problems = validate_record(record, fmt)
                if problems:
                    summary.skipped[f"invalid: {problems[0]}"] += 1
                else:
                    handle.write(jsonsafe.dumps(record) + "\n")
                    summary.records += 1
                    summary.run_ids.append(run_id)
                advance()
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            tmp.unlink()
    return summary


_Job = tuple[str, str, bool, str, str | None, str | None, int | None]
_Outcome = tuple[dict[str, Any] | None, str, str | None]  # record, run id, reason it was skipped


def _one(job: _Job) -> _Outcome:
    """Load, redact and convert one source (runs in a worker process when parallel)."""
    src, fmt, redact, mode, preference_chosen, store_root, min_health = job
    return _convert(Run.load(src), fmt, redact, mode, preference_chosen, store_root, min_health)


def _convert(run: Run, fmt: str, redact: bool, mode: str, preference_chosen: str | None,
             store_root: str | None, min_health: int | None) -> _Outcome:
    if min_health is not None:
        from replaykit.core.analysis.health import run_health

        if run_health(run).score < min_health:
            return None, run.run_id, f"health below {min_health}"
    if preference_chosen is None:
        runs = _redacted([run], mode) if redact else [run]
        rec = sft_record(runs[0], fmt)
        return rec, run.run_id, None if rec is not None else "no assistant answer"
    lineage = run.header.lineage
    if lineage is None or lineage.relation != "branch":
        return None, run.run_id, "not a branch"
    if store_root is None:
        raise BadInput("preference pairs need the run store to find each branch's original")
    parent = RunStore(store_root).load(lineage.parent_run_id)
    pair = [parent, run] if preference_chosen == "original" else [run, parent]
    if redact:
        pair = _redacted(pair, mode)
    rec = preference_record(pair[0], pair[1], fmt)
    return rec, run.run_id, None if rec is not None else "no differing assistant turn"


def corpus_task(path: str, options: Mapping[str, Any]) -> RunResult:
    """The corpus pipeline's export task: one run -> at most one validated JSONL record line.

    ``options``: format, redact, mode, preference_chosen, store (root, for preference pairs), min_health.
    """
    run = Run.load(path)
    rec, run_id, skipped = _convert(run, options["format"], bool(options.get("redact", True)),
                                    (options.get("mode") or "ner") + ("+fail-closed" if options.get("fail_closed") else ""),
                                    options.get("preference_chosen"),
                                    options.get("store"), options.get("min_health"))
    if rec is None:
        return RunResult(source=path, run_id=run_id, skipped=skipped or "skipped")
    problems = validate_record(rec, options["format"])
    if problems:
        return RunResult(source=path, run_id=run_id, skipped=f"invalid: {problems[0]}")
    return RunResult(source=path, run_id=run_id, lines=[jsonsafe.dumps(rec)])


def _records(
    sources: Iterable[Path],
    fmt: str,
    redact: bool,
    mode: str,
    preference_chosen: str | None,
    store: RunStore | None,
    summary: TrainingExportSummary,
    fail_closed: bool = False,
    *,
    workers: int | None = None,
    total: int | None = None,
    min_health: int | None = None,
) -> Iterator[tuple[dict[str, Any], str]]:
    store_root = str(store.root) if store is not None else None
    jobs = ((str(src), fmt, redact, mode + ("+fail-closed" if fail_closed else ""), preference_chosen, store_root,
             min_health) for src in sources)
    if workers is None:
        workers = (os.cpu_count() or 1) if (total or 0) >= 8 else 1
    outcomes = map(_one, jobs) if workers <= 1 else _parallel(jobs, workers)
    for rec, run_id, skipped in outcomes:
        summary.runs += 1
        if rec is None:
            summary.skipped[skipped or "skipped"] += 1
        else:
            yield rec, run_id


def _parallel(jobs: Iterator[_Job], workers: int) -> Iterator[_Outcome]:
    """Results in job order with at most ``2 * workers`` jobs in flight (bounded memory)."""
    from collections import deque
    from concurrent.futures import Future, ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=workers) as pool:
        window: deque[Future[_Outcome]] = deque()
        for job in jobs:
            window.append(pool.submit(_one, job))
            if len(window) >= 2 * workers:
                yield window.popleft().result()
        while window:
            yield window.popleft().result()
