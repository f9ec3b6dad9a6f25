"""Cassettes: a run file that records a block's model calls, or answers them, by record mode.

``Cassette(path, mode)`` is what the pytest plugin and ``replaykit.record`` / ``replaykit.serve`` use.
While it is active every httpx / httpx2 client in the process sends its model calls through it (OpenAI
Chat Completions and Responses, Anthropic Messages: ``replaykit.adapters.openai``); streams are recorded
and served chunk for chunk, paced by ``stream_timing`` (``fast`` or ``recorded``). Record modes, as in pytest-recording, plus ``hybrid``:

===============  =============================================================================
``none``         serve from the cassette only; a request it does not hold is refused (an error
                 that names the nearest recorded step and the first differing field); no
                 request leaves the process. A missing cassette is an error.
``once``         no cassette yet: record one. Cassette present: as ``none``.
``new_episodes`` serve what the cassette holds (each recorded call once); a request it does not
                 hold goes live and is appended to the cassette.
``all``          record everything live; the new cassette replaces the old one when the block
                 succeeds.
``hybrid``       serve every request that matches (a recorded call may answer again), record
                 the ones that do not (appended).
===============  =============================================================================

File safety: a cassette is never truncated. A new recording is written to a temporary file beside it and
moved over it atomically only when the block succeeds (``commit``); appends only add whole lines.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

from replaykit import __version__
from replaykit.adapters.openai import _transport
from replaykit.adapters.openai._session import CassetteMiss, Session
from replaykit.adapters.redacted_cassette import redaction_mode, request_index
from replaykit.core.errors import BadInput, ReplaykitError, RunExists, TraceError, UnknownSchemaVersion
from replaykit.core.trace.codecs.frames import check_timing
from replaykit.core.trace.ir import Lineage, LLMCallEvent, RunHeader, Source, SubagentEvent
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore, RunWriter, new_run_id, utc_now_iso, validate_run_id

RECORD_MODES = ("none", "once", "new_episodes", "all", "hybrid")
ADAPTER = "replaykit.adapters.openai"


def check_mode(mode: str, where: str = "") -> str:
    if mode not in RECORD_MODES:
        at = f" ({where})" if where else ""
        raise BadInput(f"unknown replaykit record mode {str(mode)[:40]!r}{at}: use one of {', '.join(RECORD_MODES)}")
    return mode


def run_id_for(name: str) -> str:
    """A run id (``[A-Za-z0-9._-]``, bounded) made from a test name."""
    safe = "".join(c if c.isalnum() or c in "._-" else "-" for c in name).strip("-.") or "cassette"
    return validate_run_id(safe[:120])


def load_cassette(path: Path) -> Run:
    """Load a cassette, turning every way it can be unreadable into one line naming the file and fix."""
    try:
        return Run.load(path)
    except UnknownSchemaVersion as exc:
        raise BadInput(f"{exc}; or re-record the cassette with --replaykit-record-mode=all") from exc
    except TraceError as exc:
        raise BadInput(f"damaged cassette {path}: {exc}; delete it and re-record with "
                       "--replaykit-record-mode=once") from exc
    except OSError as exc:
        raise BadInput(f"cannot read cassette {path}: {exc.strerror or exc}") from exc


class _LinkedRuns:
    """Calls made inside a LangGraph subgraph go to a linked child run (lineage ``subagent``), one file per
    subgraph invocation beside the cassette, announced in the parent by ``subagent`` start/stop events.
    A new recording's child files are committed with it (temporary files, moved on success)."""

    def __init__(self, parent: Recorder, folder: Path, *, atomic: bool) -> None:
        self.parent = parent
        self.folder = folder
        self.atomic = atomic
        self._lock = threading.Lock()
        self._children: dict[str, tuple[Recorder, RunWriter, Path, Path | None]] = {}

    def recorder_for(self, key: str, name: str, extra: dict[str, Any]) -> Recorder:
        with self._lock:
            child = self._children.get(key)
            if child is not None:
                return child[0]
            n = len(self._children)
            run_id = run_id_for(f"{self.parent.run_id}.{name}-{n}")
            while not self.atomic and (self.folder / f"{run_id}.jsonl").exists():  # appending: never clobber
                n += 1
                run_id = run_id_for(f"{self.parent.run_id}.{name}-{n}")
            final = self.folder / f"{run_id}.jsonl"
            start = self.parent.subagent("start", child_run_id=run_id, child_session_id=extra.get("checkpoint_ns"),
                                         role="subgraph", goal=name)
            header = RunHeader(
                run_id=run_id, created_at=utc_now_iso(), source=self.parent.header.source,
                title=f"subgraph {name}", tags=["cassette", "subgraph"],
                lineage=Lineage(relation="subagent", parent_run_id=self.parent.run_id, parent_event_id=start.id,
                                details={"subgraph": name, "checkpoint_ns": extra.get("checkpoint_ns")}),
            )
            tmp = final.with_name(f".{final.name}.{os.getpid()}.tmp") if self.atomic else None
            if tmp is not None:
                tmp.unlink(missing_ok=True)
            writer = RunWriter(tmp or final, header)
            recorder = Recorder(header, writer, keep_events=False)
            self._children[key] = (recorder, writer, final, tmp)
            return recorder

    def close(self, ok: bool) -> None:
        with self._lock:
            for recorder, writer, final, tmp in self._children.values():
                recorder.run_end(None, status="completed" if ok else "failed")
                writer.close()
                self.parent.subagent("stop", child_run_id=recorder.run_id, status="completed" if ok else "failed")
                if tmp is not None:
                    if ok:
                        os.replace(tmp, final)
                    else:
                        tmp.unlink(missing_ok=True)
            self._children.clear()


def linked_runs(run: Run, folder: Path) -> list[Run]:
    """The child runs a cassette's ``subagent`` events name that exist beside it."""
    out = []
    for event in run.events:
        if isinstance(event, SubagentEvent) and event.phase == "start" and event.child_run_id:
            path = folder / f"{event.child_run_id}.jsonl"
            if path.exists():
                out.append(load_cassette(path))
    return out


class Cassette:
    """One cassette file under one record mode (a context manager; ``session`` while active)."""

    def __init__(self, path: str | os.PathLike[str], mode: str = "once", *, label: str = "",
                 framework: str = "openai", title: str | None = None,
                 metadata: dict[str, Any] | None = None, atomic: bool = True, http: bool = True,
                 stream_timing: str = "fast") -> None:
        self.path = Path(path)
        self.mode = check_mode(mode, label)
        self.stream_timing = check_timing(stream_timing)
        self.label = label
        self.framework = framework
        self.title = title
        self.metadata = dict(metadata or {})
        self.atomic = atomic
        self.http = http  # False: no httpx patching (a framework-level recorder feeds the session)
        self.session: Session | None = None
        self.recorded_run: Run | None = None
        self._writer: RunWriter | None = None
        self._tmp: Path | None = None
        self._fresh = False
        self._detach: Callable[[], None] | None = None
        self._linked: _LinkedRuns | None = None

    # ---------------------------------------------------------------------------------- lifecycle

    def start(self) -> Session:
        exists = self.path.exists()
        if self.mode == "none" and not exists:
            near = _near_match(self.path)
            hint = f"did you mean {near}? (" if near else ""
            raise BadInput(f"no cassette {self.path}{self._for()}: {hint}record it with "
                           f"--replaykit-record-mode=once{')' if near else ''}")
        serve = exists and self.mode != "all"
        record = self.mode in ("new_episodes", "all", "hybrid") or (self.mode == "once" and not exists)
        run = load_cassette(self.path) if serve else None
        if record and run is not None and redaction_mode(run) is not None:
            # live calls would be appended in the clear to a file that was redacted
            raise BadInput(f"cassette {self.path} is redacted: it is only served (record mode none or once); "
                           "re-record it with --replaykit-record-mode=all and redact it again")
        self.recorded_run = run
        recorder = None
        if record and run is not None:
            recorder = self._append_to(run)
        elif record:
            recorder = self._fresh_recording()
        hint = ("re-record with --replaykit-record-mode=all, or use new_episodes / hybrid to add it"
                if recorder is None else "")
        index = request_index(run, linked_runs(run, self.path.parent)) if run is not None else None
        self.session = Session(recorder=recorder, index=index, repeat=self.mode == "hybrid", label=self.label,
                               where=str(self.path), hint=hint, stream_timing=self.stream_timing)
        if recorder is not None:
            self._linked = _LinkedRuns(recorder, self.path.parent, atomic=self._tmp is not None)
            self.session.linked = self._linked
        if recorder is not None and "langgraph" in sys.modules:
            from replaykit.adapters.langgraph_callbacks import attach

            try:
                self._detach = attach(self.session)  # graph positions, checkpoint ids, tool node calls
            except BaseException:
                self.stop(ok=False)  # nothing half-written is left behind
                raise
        if self.http:
            _transport.install()
            _transport.activate(self.session)
        return self.session

    def stop(self, ok: bool = True) -> None:
        """Deactivate; commit a new recording when ``ok`` (else leave the old cassette untouched)."""
        session = self.session
        if session is None:
            return
        if self.http and session in _transport.active_sessions():
            _transport.deactivate(session)
            _transport.uninstall()
        if self._detach is not None:
            self._detach()
            self._detach = None
        recorder = session.recorder
        if self._linked is not None:
            self._linked.close(ok)
            self._linked = None
        if recorder is not None and self._writer is not None:
            if self._fresh:
                recorder.run_end(session.final_answer, status="completed" if ok else "failed")
            self._writer.close()
            if self._tmp is not None:
                if ok:
                    os.replace(self._tmp, self.path)
                else:
                    self._tmp.unlink(missing_ok=True)
        self.session = None

    def __enter__(self) -> Session:
        return self.start()

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        session = self.session
        self.stop(ok=et is None)
        if et is None and session is not None and session.misses:
            raise CassetteMiss(session.misses[0])

    # ------------------------------------------------------------------------------------ helpers

    def _for(self) -> str:
        return f" for {self.label}" if self.label else ""

    def _header(self) -> RunHeader:
        return RunHeader(
            run_id=run_id_for(self.path.stem), created_at=utc_now_iso(),
            source=Source(framework=self.framework, adapter=ADAPTER, replaykit_version=__version__),
            title=self.title or self.label or None, tags=["cassette"], metadata=self.metadata,
        )

    def _fresh_recording(self) -> Recorder:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        header = self._header()
        target = self.path
        if self.atomic:
            self._tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            self._tmp.unlink(missing_ok=True)
            target = self._tmp
        self._writer = RunWriter(target, header)
        self._fresh = True
        return Recorder(header, self._writer, keep_events=False)

    def _append_to(self, run: Run) -> Recorder:
        if run.report is not None and run.report.torn_tail:
            # Appending after a partial line would glue the next event to it: refuse, change nothing.
            raise BadInput(f"cassette {self.path} ends with a torn line (an interrupted write): delete its last "
                           "line, or re-record with --replaykit-record-mode=all")
        self._writer = RunWriter(self.path, run.header, exist_ok=True)
        recorder = Recorder(run.header, self._writer, keep_events=False)
        last = next((e for e in reversed(run.events) if isinstance(e, LLMCallEvent)), None)
        recorder.resume(run.events, (last.id, run.request_messages(last)) if last is not None else None)
        return recorder


def _near_match(path: Path) -> str | None:
    """The name of an existing cassette beside ``path`` that was probably meant (a missing or extra
    suffix, a small typo), else None."""
    import difflib

    try:
        names = sorted(p.name for p in path.parent.iterdir() if p.is_file() and p.suffix == ".jsonl")
    except OSError:
        return None
    for name in names:  # the same name give or take the suffix
        if name in (f"{path.name}.jsonl", path.name.removesuffix(".jsonl"), f"{path.stem}.jsonl"):
            return name
    close = difflib.get_close_matches(path.name, names, n=1, cutoff=0.8)
    return close[0] if close else None


# ------------------------------------------------------------------------------------ Python API

@contextlib.contextmanager
def record(run_id: str | None = None, *, store: str | os.PathLike[str] | None = None,
           path: str | os.PathLike[str] | None = None, framework: str | None = None,
           title: str | None = None, metadata: dict[str, Any] | None = None, http: bool = True,
           if_exists: str = "error") -> Iterator[Session]:
    """Record every model call made in the block (any httpx / httpx2 client: openai, anthropic and what
    is built on them; OpenAI Chat, Responses and Anthropic Messages, JSON and streams) as a new run.

    The run goes to ``path``, else to the store (``store`` or the default) as ``run_id`` (new id when
    omitted); events are on disk as they happen. If the block raises, the run is kept, marked failed.
    ``session.recorder.run_id`` is the run's id. ``http=False``: nothing is patched; a framework-level
    recorder (``replaykit.adapters.pydantic_ai.recording_model``) feeds ``session`` instead.

    The run header's model, endpoint (``base_url``, ``provider``) and, unless ``framework`` is given,
    framework (PydanticAI, LangGraph, the openai SDK) are read from the first request.

    ``if_exists`` decides what a ``run_id`` already in the store means: ``"error"`` (``RunExists``,
    naming the choices), ``"replace"`` (record again; the old run is replaced when the block ends
    without an error, and kept if it raises) or ``"new"`` (record under a fresh id ``<run_id>-2``...).
    """
    if if_exists not in ("error", "replace", "new"):
        raise BadInput(f"if_exists must be 'error', 'replace' or 'new', not {if_exists!r}")
    if path is None:
        rid = validate_run_id(run_id) if run_id else new_run_id((framework or "run").replace("_", "-"))
        runs = RunStore(store)
        runs.ensure()
        target = runs.path_for(rid)
        if target.exists() and if_exists == "new":
            n = 2
            while runs.path_for(f"{rid}-{n}").exists():
                n += 1
            target = runs.path_for(f"{rid}-{n}")
    else:
        target = Path(path)
    replace = target.exists() and if_exists == "replace"
    if target.exists() and not replace:
        raise RunExists(f"run {target.stem!r} already exists ({target}): pass if_exists='replace' to record it "
                        "again, if_exists='new' for a fresh id, or record() without an id")
    cassette = Cassette(target, "all", framework=framework or "openai", title=title, metadata=metadata,
                        atomic=replace, http=http)
    session = cassette.start()
    session.detect_framework = framework is None
    ok = False
    try:
        yield session
        ok = True
    finally:
        cassette.stop(ok=ok)  # written in place (atomic=False): a failed block keeps its run, marked failed


@contextlib.contextmanager
def serve(run: Run | str | os.PathLike[str], *, store: str | os.PathLike[str] | None = None,
          strict: bool = True, stream_timing: str = "fast") -> Iterator[Session]:
    """Answer every model call in the block (OpenAI or Anthropic) from ``run`` (a Run, a trace path or a
    run id).

    No request leaves the process. A request the run does not hold gets an HTTP 400 whose message
    explains the miss; with ``strict`` the block then raises ``CassetteMiss`` when it ends. A streamed
    request gets the recorded frames in their order: at once (``stream_timing="fast"``) or with the
    recorded gaps between them (``"recorded"``).
    """
    check_timing(stream_timing)
    if not isinstance(run, Run):
        ref = Path(run)
        run = load_cassette(ref) if ref.exists() else RunStore(store).load(str(run))
    assert isinstance(run, Run)
    session = Session(recorder=None, index=request_index(run), label=f"run {run.run_id}",
                      hint="record it again with replaykit.record(...)", stream_timing=stream_timing)
    _transport.install()
    _transport.activate(session)
    failed = False
    try:
        yield session
    except BaseException:
        failed = True
        raise
    finally:
        _transport.deactivate(session)
        _transport.uninstall()
        if strict and not failed and session.misses:
            raise CassetteMiss(session.misses[0])


__all__ = ["RECORD_MODES", "Cassette", "CassetteMiss", "ReplaykitError", "check_mode", "load_cassette",
           "record", "run_id_for", "serve"]
