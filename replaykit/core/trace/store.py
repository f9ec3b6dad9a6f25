"""The run store: one append-only JSONL file per run in a local directory.

Layout: ``<root>/<run_id>.jsonl``; the first line is the ``RunHeader``, then one event per line.

Durability: each event is written with a single ``os.write`` of one whole line to a file opened with
``O_APPEND`` (no user-space buffer, so every event is in the kernel as soon as ``append`` returns and
survives the death of the writing process); ``sync()`` fsyncs, and recorders call it at turn end.
A crash can therefore only tear the *last* line, which the reader reports and skips.

Safety: run ids are validated (``[A-Za-z0-9._-]``, at most 128 characters, not starting with ``.``);
every path is checked to resolve inside the store root; directories are created 0700, files 0600;
runs are created with ``O_EXCL`` so recording never overwrites another run's file.

Location: ``--store DIR``, else ``$REPLAYKIT_HOME``, else ``$HERMES_HOME/replaykit`` when running inside
Hermes, else ``~/.replaykit``.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import secrets
import threading
from collections.abc import Iterator
from pathlib import Path

from replaykit.core.errors import RunExists, TraceError
from replaykit.core.trace.ir import Event, RunHeader
from replaykit.core.trace.jsonsafe import model_json, utf8
from replaykit.core.trace.run import Run
from replaykit.core.trace.store_index import (
    MAX_LINE_BYTES,  # noqa: F401  (re-exported: the store's one line limit)
    RUN_ID_RE,  # noqa: F401  (re-exported)
    TRACE_SUFFIX,  # noqa: F401  (re-exported)
    RunSummary,
    default_store_root,
    is_compacted,
    resolve_ref,
    store_path,
    validate_run_id,  # noqa: F401  (re-exported)
)


def new_run_id(prefix: str = "run") -> str:
    """A fresh, sortable, collision-resistant run id: ``<prefix>-YYYYmmdd-HHMMSS-<8 hex>``."""
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%d-%H%M%S")
    safe_prefix = re.sub(r"[^A-Za-z0-9_-]", "-", prefix)[:40] or "run"
    return f"{safe_prefix}-{stamp}-{secrets.token_hex(4)}"


def utc_now_iso() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _ensure_private_dir(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        if path.stat().st_mode & 0o077:
            path.chmod(0o700)
    except OSError:  # not ours to chmod (e.g. a shared parent): the files are still 0600
        pass


# -------------------------------------------------------------------------------------------- writer


class RunWriter:
    """Appends events to one run file. Thread-safe; one ``os.write`` per event."""

    def __init__(self, path: Path, header: RunHeader, *, exist_ok: bool = False, durable: bool = True) -> None:
        self.path = path
        self.header = header
        self.durable = durable  # False: no fsync (a scratch run thrown away after reading it)
        self._lock = threading.Lock()
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
        if not exist_ok:
            flags |= os.O_EXCL
        try:
            self._fd: int | None = _open_for_append(path, flags)
        except FileExistsError as exc:
            raise RunExists(f"run file already exists: {path}") from exc
        self._header_only = False
        if os.fstat(self._fd).st_size == 0:
            self._write_line(model_json(header))
            self._header_only = True

    def update_header(self, header: RunHeader) -> bool:
        """Replace the header line while the file holds nothing else (a recording made through an HTTP
        client learns its model, endpoint and framework only at its first request); False, and nothing
        changed, once an event is written. Atomic: a new file with the new header replaces the old."""
        with self._lock:
            if self._fd is None or not self._header_only or header.run_id != self.header.run_id:
                return False
            tmp = self.path.with_name(f".{self.path.name}.header.tmp")
            tmp.unlink(missing_ok=True)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | getattr(os, "O_CLOEXEC", 0), 0o600)
            try:
                os.write(fd, utf8(model_json(header) + "\n"))
                os.fsync(fd)
            except BaseException:
                os.close(fd)
                tmp.unlink(missing_ok=True)
                raise
            os.replace(tmp, self.path)
            os.close(self._fd)
            self._fd = fd
            self.header = header
            return True

    def _write_line(self, text: str) -> None:
        self._write_bytes(utf8(text + "\n"))

    def _write_bytes(self, data: bytes) -> None:
        """One ``os.write`` of one whole line (the event is on disk as it happens)."""
        with self._lock:
            if self._fd is None:
                raise TraceError(f"run {self.header.run_id} is closed")
            self._header_only = False
            view = memoryview(data)
            while view:  # os.write may write less than asked on signals / full pipes
                written = os.write(self._fd, view)
                view = view[written:]

    def append(self, event: Event) -> None:
        self._write_line(model_json(event))

    def append_raw(self, line: str | bytes) -> None:
        """Append an already-serialized event line, without its newline (used by hot-path recorders;
        bytes must be UTF-8, as pydantic-core's serializer writes them)."""
        if isinstance(line, bytes):
            self._write_bytes(line + b"\n")
        else:
            self._write_line(line)

    def sync(self) -> None:
        with self._lock:
            if self._fd is not None and self.durable:
                os.fsync(self._fd)

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                try:
                    if self.durable:
                        os.fsync(self._fd)
                finally:
                    os.close(self._fd)
                    self._fd = None

    @property
    def closed(self) -> bool:
        return self._fd is None

    def __enter__(self) -> RunWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --------------------------------------------------------------------------------------------- store


def _open_for_append(path: Path, flags: int) -> int:
    """The run file opened for appending, with the writer's shared lock held (``trace/compact.py``: a
    run someone writes is never compacted). Appending to an existing run that was compacted expands it
    back to plain lines first; a file replaced between open and lock (compaction) is opened again."""
    from replaykit.core.trace.compact import expand_run, lock_shared

    while True:
        fd = os.open(path, flags, 0o600)
        try:
            lock_shared(fd)
            if flags & os.O_EXCL:
                return fd  # just created: nobody else has it
            try:
                current = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                current = False
            compacted = current and os.fstat(fd).st_size > 0 and is_compacted(path)  # (fd is write-only)
        except BaseException:
            os.close(fd)
            raise
        if current and not compacted:
            return fd
        os.close(fd)
        if compacted:
            expand_run(path)


class RunStore:
    """A directory of run files. ``durable=False``: a scratch store whose writers never fsync (runs made
    only to be read back and thrown away, such as ``eval``'s offline controls)."""

    def __init__(self, root: str | os.PathLike[str] | None = None, *, durable: bool = True) -> None:
        self.root = Path(root).expanduser() if root is not None else default_store_root()
        self.durable = durable

    def ensure(self) -> Path:
        _ensure_private_dir(self.root)
        return self.root

    def path_for(self, run_id: str) -> Path:
        return store_path(self.root, run_id)

    def exists(self, run_id: str) -> bool:
        return self.path_for(run_id).is_file()

    def create(self, header: RunHeader) -> RunWriter:
        self.ensure()
        return RunWriter(self.path_for(header.run_id), header, durable=self.durable)

    def resolve(self, ref: str) -> Path:
        """A RUN argument: a run id in this store, or a path to a trace file."""
        return resolve_ref(self.root, ref)

    def load(self, ref: str) -> Run:
        return Run.load(self.resolve(ref))

    def iter_summaries(self) -> Iterator[RunSummary]:
        from replaykit.core.trace.store_index import iter_summaries

        return iter_summaries(self.root)

    def write_run(self, header: RunHeader, events: list[Event]) -> Path:
        """Write a whole run at once (branches, imports, redacted copies)."""
        with self.create(header) as writer:
            for event in events:
                writer.append(event)
        return self.path_for(header.run_id)


def write_run_file(path: Path, header: RunHeader, events: list[Event], *, overwrite: bool = False) -> Path:
    """Write a whole run to an explicit path (``-o PATH``), 0600."""
    if path.exists() and not overwrite:
        raise RunExists(f"refusing to overwrite {path}")
    if overwrite and path.exists():
        path.unlink()
    if path.parent and not path.parent.exists():
        _ensure_private_dir(path.parent)
    with RunWriter(path, header) as writer:
        for event in events:
            writer.append(event)
    return path
