"""Listing a run store without loading pydantic: what ``replaykit runs`` needs, stdlib only.

The store's naming rules (run ids, the file suffix, the default root) live here so the listing and the
full store (``core/trace/store.py``, which re-exports them) share one definition. A summary reads only each
file's first line, so listing a store costs the same whatever the runs' lengths.
"""

from __future__ import annotations

import json
import os
import re
import stat
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from replaykit.core.errors import InvalidRunId, RunNotFound, TraceError, UnknownSchemaVersion

# The ``same`` marks' rule lives in its own small module (generated code embeds it); re-exported here.
from replaykit.core.trace.same_marks import SAME_CORR_KEYS as SAME_CORR_KEYS
from replaykit.core.trace.same_marks import SAME_REQUEST_KEYS as SAME_REQUEST_KEYS
from replaykit.core.trace.same_marks import SameFiller as SameFiller
from replaykit.core.trace.same_marks import json_copy as json_copy

SCHEMA_NAME = "replaykit.trace"
SCHEMA_VERSION = 2
#: Every schema version this build can read (older ones are migrated on load).
READABLE_SCHEMA_VERSIONS = frozenset({1, 2})

RUN_ID_RE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")
TRACE_SUFFIX = ".jsonl"
# A single trace line above this size is refused: a hostile file cannot make the reader allocate
# unbounded memory for one line.
MAX_LINE_BYTES = 256 * 1024 * 1024


def default_store_root(env: dict[str, str] | None = None) -> Path:
    env = dict(os.environ) if env is None else env
    if env.get("REPLAYKIT_HOME"):
        return Path(env["REPLAYKIT_HOME"]).expanduser()
    if env.get("HERMES_HOME"):
        return Path(env["HERMES_HOME"]).expanduser() / "replaykit"
    return Path("~/.replaykit").expanduser()


def validate_run_id(run_id: str) -> str:
    if not isinstance(run_id, str) or not RUN_ID_RE.fullmatch(run_id):
        shown = repr(run_id)[:80]
        raise InvalidRunId(
            f"invalid run id {shown}: use 1-128 characters from A-Z a-z 0-9 . _ - , not starting with '.'"
        )
    return run_id


def store_path(root: Path, run_id: str) -> Path:
    """The file of ``run_id`` in the store ``root``, checked to resolve inside it."""
    validate_run_id(run_id)
    path = root / f"{run_id}{TRACE_SUFFIX}"
    if path.resolve().parent != root.resolve():
        raise InvalidRunId(f"run id {run_id!r} resolves outside the store")
    return path


def resolve_ref(root: Path, ref: str) -> Path:
    """A RUN argument: a run id in the store ``root``, or a path to a trace file."""
    if not isinstance(ref, str) or not ref or "\x00" in ref:
        raise InvalidRunId(f"invalid run reference {ref!r}")
    looks_like_path = os.sep in ref or ref.endswith(TRACE_SUFFIX) or ref.startswith(".")
    if looks_like_path:
        candidate = Path(ref).expanduser()
        if candidate.is_file():
            return candidate
        if candidate.is_dir():
            raise TraceError(f"{ref} is a directory, not a trace file")
        if ref.endswith(TRACE_SUFFIX) and RUN_ID_RE.fullmatch(ref[: -len(TRACE_SUFFIX)] or "."):
            stored = store_path(root, ref[: -len(TRACE_SUFFIX)])
            if stored.is_file():
                return stored
        raise RunNotFound(f"no trace file at {ref}")
    path = store_path(root, ref)
    if not path.is_file():
        raise RunNotFound(f"no run {ref!r} in store {root}")
    return path


#: Lineage relations of runs *derived* from another run of the store (a branch: one edit, then live; a
#: play or replay: an engine's run of a recording), by the name ``--include`` selects them with.
#: Everything else is an original: a recording, an import, a redacted copy, a subagent's run.
DERIVED_RELATIONS: dict[str, str] = {"branch": "branches", "play": "plays", "replay": "plays"}


class _Record:
    """What the two records below need of a dataclass: equality and repr by field (``_FIELDS``). Plain
    classes: ``dataclasses`` imports ``inspect``, and the two cost ``replaykit export`` (which reads a
    trace through this module) more than the rest of its imports together."""

    _FIELDS: tuple[str, ...] = ()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self._FIELDS)

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._FIELDS)
        return f"{self.__class__.__qualname__}({shown})"


class RunSummary(_Record):
    """One run of a store, from its file's first line (immutable, hashable: as a frozen dataclass)."""

    _FIELDS = ("run_id", "path", "created_at", "framework", "model", "title", "parent_run_id", "relation",
               "size_bytes", "tags")
    run_id: str
    path: Path
    created_at: str
    framework: str
    model: str | None
    title: str | None
    parent_run_id: str | None
    relation: str | None
    size_bytes: int
    tags: tuple[str, ...]  # (not in ``to_json``: the ``runs --json`` rows keep their shape)

    def __init__(self, run_id: str, path: Path, created_at: str, framework: str, model: str | None,
                 title: str | None, parent_run_id: str | None, relation: str | None, size_bytes: int,
                 tags: tuple[str, ...] = ()) -> None:
        self.__dict__.update(run_id=run_id, path=path, created_at=created_at, framework=framework, model=model,
                             title=title, parent_run_id=parent_run_id, relation=relation, size_bytes=size_bytes,
                             tags=tags)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, name) for name in self._FIELDS))

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "path": str(self.path),
            "created_at": self.created_at,
            "framework": self.framework,
            "model": self.model,
            "title": self.title,
            "parent_run_id": self.parent_run_id,
            "relation": self.relation,
            "size_bytes": self.size_bytes,
        }


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def first_line(path: Path) -> bytes:
    """The first line of a run file, plain or compacted (raises OSError, or ValueError when damaged)."""
    handle = open_trace_file(path)
    try:
        return handle.readline(MAX_LINE_BYTES)
    finally:
        handle.close()


def summary_of(path: Path, size: int | None = None) -> RunSummary | None:
    """The summary of one run file from its header line; None when it is not a readable run. ``size``:
    the file's size when the caller has just ``stat``-ed it."""
    try:
        raw = json.loads(first_line(path))
        size = path.stat().st_size if size is None else size
    except (OSError, ValueError, EOFError, zlib.error):
        return None
    if not isinstance(raw, dict) or raw.get("kind") != "run" or raw.get("schema_name", SCHEMA_NAME) != SCHEMA_NAME:
        return None
    source, lineage = raw.get("source"), raw.get("lineage")
    run_id, created_at = raw.get("run_id"), raw.get("created_at")
    if raw.get("schema_version") not in READABLE_SCHEMA_VERSIONS or not isinstance(source, dict) \
            or not isinstance(run_id, str) or not RUN_ID_RE.fullmatch(run_id) or not isinstance(created_at, str) \
            or not isinstance(source.get("framework"), str) or not isinstance(lineage, dict | None):
        return None
    lineage = lineage or {}
    return RunSummary(run_id=run_id, path=path, created_at=created_at, framework=source["framework"],
                      model=_text(raw.get("model")), title=_text(raw.get("title")),
                      parent_run_id=_text(lineage.get("parent_run_id")), relation=_text(lineage.get("relation")),
                      size_bytes=size, tags=tuple(t for t in raw.get("tags") or () if isinstance(t, str))
                      if isinstance(raw.get("tags"), list) else ())


def iter_run_files(root: Path) -> Iterator[tuple[str, str, os.stat_result]]:
    """``(run id, path, stat)`` of every file of the store directory ``root`` named like a run, by file
    name (the naming rule of the store; whether it is a readable run is ``summary_of``'s to say). The path
    is a string: a listing of thousands of runs should not build thousands of ``Path`` objects."""
    if not root.is_dir():
        return
    with os.scandir(root) as entries:
        found = sorted((e.name, e) for e in entries if e.name.endswith(TRACE_SUFFIX))
    for name, entry in found:
        run_id = name[: -len(TRACE_SUFFIX)]
        if not RUN_ID_RE.fullmatch(run_id):
            continue
        try:
            info = entry.stat()
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            yield run_id, entry.path, info


def iter_summaries(root: Path) -> Iterator[RunSummary]:
    """Every readable run in the store directory ``root``, by file name."""
    for _run_id, path, _info in iter_run_files(root):
        summary = summary_of(Path(path))
        if summary is not None:
            yield summary


# ------------------------------------------------------------------------------------ raw lines
# The line discipline of a trace file, shared by the validating reader (``core/trace/store.py``
# ``iter_trace``) and the streaming ``inspect`` (``core/analysis/inspect_view.py``): one place decides what a
# torn last line is and words every error about the file itself.


class ReadReport(_Record):
    """What the tolerant reader had to skip."""

    _FIELDS = ("path", "torn_tail", "torn_tail_bytes", "warnings")
    __hash__ = None  # type: ignore[assignment]  # mutable, as a dataclass with eq

    def __init__(self, path: Path, torn_tail: bool = False, torn_tail_bytes: int = 0,
                 warnings: list[str] | None = None) -> None:
        self.path = path
        self.torn_tail = torn_tail
        self.torn_tail_bytes = torn_tail_bytes
        self.warnings: list[str] = [] if warnings is None else warnings

    def torn(self, lineno: int, line: bytes) -> None:
        self.torn_tail = True
        self.torn_tail_bytes = len(line)
        self.warnings.append(
            f"line {lineno}: torn last line ({len(line)} bytes) skipped; every complete event before it was kept"
        )


#: A compacted run (``replaykit compact``) is the same file, same name, gzip-compressed: readers tell the
#: two forms apart by these first bytes (a plain trace starts with ``{``).
COMPACT_MAGIC = b"\x1f\x8b"


class CompactedTrace:
    """The decompressed lines of a compacted run file, read as a stream (``readline`` like a binary file);
    a damaged stream is a ``ValueError`` here, worded as a ``TraceError`` by ``open_trace``'s callers."""

    def __init__(self, raw: IO[bytes]) -> None:
        import gzip  # here: only a compacted run needs it

        self._raw = raw
        self._gz = gzip.GzipFile(fileobj=raw, mode="rb")

    def readline(self, limit: int = -1) -> bytes:
        try:
            return self._gz.readline(limit)
        except (OSError, EOFError, zlib.error) as exc:  # BadGzipFile is an OSError
            raise ValueError(f"compacted trace is damaged ({exc})") from exc

    def tell(self) -> int:
        """The offset in the decompressed lines (what ``seek`` takes)."""
        return self._gz.tell()

    def seek(self, offset: int) -> int:
        """To an offset of the decompressed lines: decompresses up to it (from the start when going back)."""
        try:
            return self._gz.seek(offset)
        except (OSError, EOFError, zlib.error) as exc:
            raise ValueError(f"compacted trace is damaged ({exc})") from exc

    def close(self) -> None:
        try:
            self._gz.close()
        finally:
            self._raw.close()


def open_trace_file(path: Path) -> IO[bytes]:
    """A run file opened for reading lines, plain or compacted alike: the one reading path of the store
    (``open_trace`` for readers that word errors as ``TraceError``)."""
    raw = open(path, "rb")
    try:
        compacted = raw.read(2) == COMPACT_MAGIC
        raw.seek(0)
    except BaseException:
        raw.close()
        raise
    return CompactedTrace(raw) if compacted else raw  # type: ignore[return-value]


def is_compacted(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(2) == COMPACT_MAGIC


def open_trace(path: Path) -> IO[bytes]:
    try:
        handle = open_trace_file(path)
    except FileNotFoundError as exc:
        raise RunNotFound(f"no such trace file: {path}") from exc
    except IsADirectoryError as exc:
        raise TraceError(f"{path} is a directory, not a trace file") from exc
    except OSError as exc:
        raise TraceError(f"cannot read {path}: {exc.strerror}") from exc
    return _Worded(handle, path) if isinstance(handle, CompactedTrace) else handle  # type: ignore[return-value]


class _Worded:
    """A trace handle whose damaged compressed stream is a one-line ``TraceError`` naming the file."""

    __slots__ = ("_handle", "_path")

    def __init__(self, handle: IO[bytes], path: Path) -> None:
        self._handle, self._path = handle, path

    def readline(self, limit: int = -1) -> bytes:
        try:
            return self._handle.readline(limit)
        except ValueError as exc:
            raise TraceError(f"{self._path}: {exc}") from exc

    def tell(self) -> int:
        return self._handle.tell()

    def seek(self, offset: int) -> int:
        try:
            return self._handle.seek(offset)
        except ValueError as exc:
            raise TraceError(f"{self._path}: {exc}") from exc

    def close(self) -> None:
        self._handle.close()


def read_raw_header(handle: IO[bytes], path: Path) -> dict[str, Any]:
    """The first line as a dict, checked to be a run header of a schema version this build reads
    (its fields are not validated here)."""
    first = handle.readline(MAX_LINE_BYTES)
    if not first:
        raise TraceError(f"{path}: empty file; not a replaykit trace")
    if not first.endswith(b"\n") and len(first) >= MAX_LINE_BYTES:
        raise TraceError(f"{path}: header line longer than {MAX_LINE_BYTES} bytes")
    try:
        raw = json.loads(first)
    except ValueError as exc:
        raise TraceError(f"{path}: line 1 is not JSON ({exc}); not a replaykit trace") from exc
    if not isinstance(raw, dict) or raw.get("kind") != "run":
        raise TraceError(f"{path}: line 1 is not a run header; not a replaykit trace")
    if raw.get("schema_name", SCHEMA_NAME) != SCHEMA_NAME:
        raise TraceError(f"{path}: unknown trace schema {str(raw.get('schema_name'))[:60]!r}")
    version = raw.get("schema_version")
    if version not in READABLE_SCHEMA_VERSIONS:
        raise UnknownSchemaVersion(
            f"{path}: trace schema version {str(version)[:20]} is not supported by this replaykit "
            f"(reads {sorted(READABLE_SCHEMA_VERSIONS)}); upgrade replaykit"
        )
    return raw


def event_lines(handle: IO[bytes], path: Path) -> Iterator[tuple[int, bytes, bool, bool]]:
    """The event lines after the header: ``(line number, line, is_last, complete)``. Blank lines are
    skipped; ``complete`` is False only for a last line without its newline (the writer died in the
    middle of it: the caller keeps it only if it parses, else reports it torn). Memory is bounded by the
    longest line."""
    for lineno, _offset, line, is_last, complete in event_lines_at(handle, path, offset=0):
        yield lineno, line, is_last, complete


def event_lines_at(handle: IO[bytes], path: Path, lineno: int = 1,
                   offset: int | None = None) -> Iterator[tuple[int, int, bytes, bool, bool]]:
    """``event_lines`` with each line's offset in the (decompressed) file: ``(line number, offset, line,
    is_last, complete)``, from wherever ``handle`` stands (``lineno``: the number of the line before it;
    ``offset``: its position, ``handle.tell()`` when not given). A reader that keeps offsets can later
    ``seek`` straight to one line (``core/analysis/run_index.py``)."""
    offset = handle.tell() if offset is None else offset
    pending: tuple[int, bytes] | None = None
    while True:
        line = handle.readline(MAX_LINE_BYTES)
        if pending is not None:
            # ``pending`` was a complete line; decide now whether it was the last one.
            yield lineno, pending[0], pending[1], not line, True
            pending = None
        if not line:
            return
        lineno += 1
        if not line.endswith(b"\n"):
            if len(line) >= MAX_LINE_BYTES:
                raise TraceError(f"{path}: line {lineno} is longer than {MAX_LINE_BYTES} bytes")
            yield lineno, offset, line, True, False
            return
        if line.strip():
            pending = (offset, line)
        offset += len(line)
