"""Compacting closed runs: the same file, same name, gzip-compressed (``replaykit compact``).

Every reader goes through ``store_index.open_trace_file``, which tells the two forms apart by their
first bytes and streams either, so a compacted run is read wherever a plain one is (runs, inspect,
replay, export, corpus, viewer, cassettes).

When a run is closed: its last line is a complete ``run_end`` event **and** no writer holds it. Every
``RunWriter`` keeps a shared ``flock`` on its file for as long as it is open; compaction takes the
exclusive lock without waiting, so a run being recorded (even one resumed after its ``run_end``) is never
compacted. The compressed copy is written beside the file (0600), fsynced, read back and checked against
the original's SHA-256 before it replaces the file (``os.replace``: a reader sees one form or the
other, never a mix). A writer that opens a compacted run to append (a Hermes session resumed later)
expands it back to plain lines first (``expand_run``), under the same lock.

gzip (stdlib, level 9): on the 1000-step long session the compressed run is about a fifth of the
plain file and reads back at a few hundred MB/s (docs/performance.md); lzma is smaller still but
several times slower to read.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import secrets
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from replaykit.core.errors import ReplaykitError, TraceError
from replaykit.core.trace.store_index import COMPACT_MAGIC, CompactedTrace, is_compacted, open_trace_file

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no advisory locks, the run_end rule alone decides
    fcntl = None  # type: ignore[assignment]

LEVEL = 9
_BLOCK = 1 << 20
_TAIL = 64 * 1024


class RunNotClosed(ReplaykitError):
    """The run is live (a writer holds it) or has no ``run_end``: it is never compacted."""

    exit_code = 1


@dataclass(frozen=True)
class Compacted:
    path: Path
    before: int  # bytes of the plain file
    after: int  # bytes of the compacted file (equal to ``before`` when it already was compacted)
    already: bool = False


def lock_shared(fd: int) -> None:
    """A writer's lock: held while the file is open for appending (released when the fd is closed)."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_SH)


@contextlib.contextmanager
def _exclusive(path: Path) -> Iterator[int]:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise RunNotClosed(f"{path.name}: being recorded (a writer holds it); not compacted") from None
        yield fd
    finally:
        os.close(fd)  # releases the lock


def _ends_with_run_end(fd: int) -> bool:
    """Whether the file's last line is a complete ``run_end`` event (read from the end, bounded)."""
    size = os.fstat(fd).st_size
    window = _TAIL
    while True:
        start = max(0, size - window)
        tail = os.pread(fd, size - start, start)
        if not tail.endswith(b"\n"):
            return False  # a torn last line: the writer died mid-write, not a closed run
        cut = tail.rfind(b"\n", 0, len(tail) - 1)
        if cut >= 0 or start == 0:
            line = tail[cut + 1:]
            break
        window *= 4
    try:
        event = json.loads(line)
    except ValueError:
        return False
    return isinstance(event, dict) and event.get("kind") == "run_end"


def _digest(handle: IO[bytes] | gzip.GzipFile) -> str:
    digest = hashlib.sha256()
    for block in iter(lambda: handle.read(_BLOCK), b""):
        digest.update(block)
    return digest.hexdigest()


def _private_temp(path: Path) -> tuple[Path, int]:
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
    return tmp, fd


def _replace(tmp: Path, path: Path) -> None:
    os.replace(tmp, path)
    with contextlib.suppress(OSError):  # make the rename durable where the platform allows it
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def compact_run(path: Path, *, level: int = LEVEL) -> Compacted:
    """Compress a closed run in place (same path). Raises ``RunNotClosed`` for a live or unfinished run."""
    with _exclusive(path) as fd:
        size = os.fstat(fd).st_size
        if os.pread(fd, 2, 0) == COMPACT_MAGIC:
            return Compacted(path, size, size, already=True)
        if not _ends_with_run_end(fd):
            raise RunNotClosed(f"{path.name}: no run_end as its last event (live, or interrupted); not compacted")
        tmp, out = _private_temp(path)
        try:
            source = os.fdopen(os.dup(fd), "rb")
            with source, os.fdopen(out, "wb") as sink:
                original = hashlib.sha256()
                # mtime=0 and no file name: the same run always compacts to the same bytes.
                with gzip.GzipFile(filename="", mode="wb", fileobj=sink, compresslevel=level, mtime=0) as gz:
                    for block in iter(lambda: source.read(_BLOCK), b""):
                        original.update(block)
                        gz.write(block)
                sink.flush()
                os.fsync(sink.fileno())
            with open(tmp, "rb") as back, gzip.GzipFile(fileobj=back, mode="rb") as check:
                if _digest(check) != original.hexdigest():  # pragma: no cover - a disk or codec fault
                    raise TraceError(f"{path.name}: the compacted copy does not read back equal; not compacted")
            after = tmp.stat().st_size
            _replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    return Compacted(path, size, after)


def expand_run(path: Path) -> bool:
    """Turn a compacted run back into plain lines (same path) before appending to it; False when it was
    plain already. Waits for no writer: a compacted run has none."""
    if not is_compacted(path):
        return False
    with _exclusive(path):
        handle = open_trace_file(path)
        try:
            if not isinstance(handle, CompactedTrace):
                return False
            tmp, out = _private_temp(path)
            try:
                with os.fdopen(out, "wb") as sink:
                    while True:
                        line = handle.readline(_BLOCK)
                        if not line:
                            break
                        sink.write(line)
                    sink.flush()
                    os.fsync(sink.fileno())
                _replace(tmp, path)
            except (ValueError, EOFError, zlib.error) as exc:
                tmp.unlink(missing_ok=True)
                raise TraceError(f"{path}: {exc}") from exc
            except BaseException:
                tmp.unlink(missing_ok=True)
                raise
        finally:
            handle.close()
    return True
