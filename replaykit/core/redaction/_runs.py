"""Whole-run and corpus redaction: in memory (``redact_run``), streamed file to file
(``redact_trace_file``, bounded memory), and over many runs with every core (``redact_corpus``). The
corpus pipeline's redaction task (``redact --all``) is ``replaykit.core.corpus.redaction_task``."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replaykit.core.progress import ProgressBar
from replaykit.core.trace.ir import Event, RunHeader
from replaykit.core.trace.reader import iter_trace
from replaykit.core.trace.store import RunWriter, new_run_id

from ._engine import Mode
from ._errors import RedactionError
from ._ir import FingerprintFixer, redact_events, redact_header
from ._redactor import Redactor

if TYPE_CHECKING:
    from replaykit.core.trace.run import Run


def _check_mode(mode: str) -> Mode:
    if mode not in ("ner", "patterns"):
        raise RedactionError(f"unknown redaction mode {mode!r} (expected ner or patterns)")
    return mode  # type: ignore[return-value]


def redact_run(
    run: Run,
    mode: str = "patterns",
    *,
    allow_list: Sequence[str] = (),
    run_id: str | None = None,
    redactor: Redactor | None = None,
    fail_closed: bool = False,
) -> Run:
    """A redacted copy of ``run`` as a new Run (new id, lineage ``redaction``); ``run`` is untouched.

    Pass one ``redactor`` for several runs that must share placeholders (a branch and its original).
    """
    from replaykit.core.trace.run import Run

    if redactor is None:
        redactor = Redactor(mode=_check_mode(mode), allow_list=allow_list, fail_closed=fail_closed)
    fixer = FingerprintFixer()
    events = [fixer(o, n) for o, n in zip(run.events, redact_events(run.events, redactor), strict=True)]
    header = redact_header(run.header, redactor, new_run_id=run_id or new_run_id("redacted"), mode=mode)
    return Run(header, events)


@dataclass(frozen=True)
class RedactionResult:
    source_run_id: str
    run_id: str
    path: str
    events: int
    redactions: int
    placeholders: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        return {
            "source_run_id": self.source_run_id,
            "run_id": self.run_id,
            "path": self.path,
            "events": self.events,
            "redactions": self.redactions,
            "placeholders": self.placeholders,
        }


def iter_redacted(
    src: Path, mode: str = "patterns", *, allow_list: Sequence[str] = (), run_id: str | None = None,
    fail_closed: bool = False,
) -> tuple[RunHeader, Iterator[Event], Redactor]:
    """Stream a trace file's redacted header and events (events are read lazily, window by window)."""
    redactor = Redactor(mode=_check_mode(mode), allow_list=allow_list, fail_closed=fail_closed)
    lines = iter_trace(src)
    header = next(lines)
    assert isinstance(header, RunHeader)
    new_header = redact_header(header, redactor, new_run_id=run_id or new_run_id("redacted"), mode=mode)

    def events() -> Iterator[Event]:
        fixer = FingerprintFixer()
        originals: list[Event] = []

        def source() -> Iterator[Event]:
            for item in lines:
                assert not isinstance(item, RunHeader)
                originals.append(item)
                yield item

        for new in redact_events(source(), redactor):
            yield fixer(originals.pop(0), new)

    return new_header, events(), redactor


def redact_trace_file(
    src: Path,
    dst: Path,
    mode: str = "patterns",
    *,
    allow_list: Sequence[str] = (),
    run_id: str | None = None,
    fail_closed: bool = False,
) -> RedactionResult:
    """Redact the trace at ``src`` into a new trace file ``dst`` (must not exist), streaming."""
    header, events, redactor = iter_redacted(src, mode, allow_list=allow_list, run_id=run_id,
                                             fail_closed=fail_closed)
    if dst.exists():
        raise RedactionError(f"refusing to overwrite {dst}")
    if not dst.parent.exists():
        dst.parent.mkdir(mode=0o700, parents=True)
    count = 0
    with RunWriter(dst, header) as writer:
        for event in events:
            writer.append(event)
            count += 1
    return RedactionResult(
        source_run_id=header.lineage.parent_run_id if header.lineage else "",
        run_id=header.run_id,
        path=str(dst),
        events=count,
        redactions=redactor.redactions,
        placeholders=redactor.mapping.counts(),
    )


def _redact_into_store(job: tuple[str, str, str, tuple[str, ...], bool]) -> RedactionResult:
    src, store_root, mode, allow, fail_closed = job
    from replaykit.core.trace.store import RunStore

    store = RunStore(store_root)
    store.ensure()
    rid = new_run_id("redacted")
    return redact_trace_file(Path(src), store.path_for(rid), mode, allow_list=allow, run_id=rid,
                             fail_closed=fail_closed)


def redact_corpus(
    sources: Sequence[Path],
    store_root: str | os.PathLike[str],
    mode: str = "patterns",
    *,
    allow_list: Sequence[str] = (),
    workers: int | None = None,
    progress: bool | None = None,
    fail_closed: bool = False,
) -> list[RedactionResult]:
    """Redact many trace files into the store, one process per core (each loads its own engine)."""
    _check_mode(mode)
    jobs = [(str(p), str(store_root), mode, tuple(allow_list), fail_closed) for p in sources]
    workers = max(1, min(workers or os.cpu_count() or 1, len(jobs) or 1))
    results: list[RedactionResult | None] = [None] * len(jobs)
    with ProgressBar(len(jobs), "redacting", show=progress) as advance:
        if workers == 1:
            for i, job in enumerate(jobs):
                results[i] = _redact_into_store(job)
                advance()
        else:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                futures = {pool.submit(_redact_into_store, job): i for i, job in enumerate(jobs)}
                for fut in as_completed(futures):
                    results[futures[fut]] = fut.result()
                    advance()
    return [r for r in results if r is not None]
