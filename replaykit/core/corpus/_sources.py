"""Which runs a corpus job reads, and how they are cut into partitions.

Input: the store (``--all``), or RUN arguments, each a run id, a trace file, a directory of trace files
or a glob. The list is put in one fixed order (store: by file name; arguments: as given, each directory
or glob sorted), duplicates dropped. Partitions are consecutive slices of that list, closed at a number
of runs or of bytes, whichever comes first: they depend on the input only, never on the number of
workers or the engine, which is what makes the output the same bytes everywhere and lets a manifest
name a partition by its index.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from replaykit.core.errors import BadInput
from replaykit.core.trace.store import MAX_LINE_BYTES, TRACE_SUFFIX, RunStore

#: The manifest of a corpus job (``_manifest.MANIFEST``); never read as a run.
MANIFEST = "manifest.jsonl"
DEFAULT_PARTITION_RUNS = 64
DEFAULT_PARTITION_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Partition:
    index: int
    paths: tuple[str, ...]
    size_bytes: int


def _redacted_from(path: Path) -> str | None:
    """The source run id when ``path`` is a redacted copy, else None. A header that cannot be read is
    not a copy: the worker will report the run as damaged instead of it vanishing silently here."""
    try:
        with open(path, "rb") as handle:
            header = json.loads(handle.readline(MAX_LINE_BYTES))
        lineage = header.get("lineage") if isinstance(header, dict) else None
        if isinstance(lineage, dict) and lineage.get("relation") == "redaction":
            return str(lineage.get("parent_run_id"))
    except (OSError, ValueError):
        pass
    return None


def store_sources(store: RunStore) -> list[Path]:
    """Every run file of the store, sorted by file name, except redacted copies whose original is in the
    same store (the same run twice); a store of redacted copies only (``redact -o DIR``) is read whole."""
    if not store.root.is_dir():
        return []
    files = sorted(p for p in store.root.glob(f"*{TRACE_SUFFIX}") if p.is_file() and p.name != MANIFEST)
    ids = {p.name[: -len(TRACE_SUFFIX)] for p in files}
    return [p for p in files if _redacted_from(p) not in ids]


def _expand(ref: str, store: RunStore) -> list[Path]:
    if any(ch in ref for ch in "*?["):
        matches = sorted(Path(p) for p in glob.glob(os.path.expanduser(ref), recursive=True))
        files = [p for p in matches if p.is_file()]
        if not files:
            raise BadInput(f"no trace files match {ref}")
        return files
    candidate = Path(ref).expanduser()
    if candidate.is_dir():
        # A corpus output directory (redact -o DIR) is a store too: its manifest is not a run.
        files = sorted(p for p in candidate.glob(f"*{TRACE_SUFFIX}") if p.is_file() and p.name != MANIFEST)
        if not files:
            raise BadInput(f"no {TRACE_SUFFIX} trace files in directory {ref}")
        return files
    return [store.resolve(ref)]


def corpus_sources(store: RunStore, refs: list[str], *, all_runs: bool) -> list[Path]:
    """The ordered, de-duplicated list of trace files a corpus job reads."""
    if all_runs and refs:
        raise BadInput("give RUNs or --all, not both")
    paths = store_sources(store) if all_runs else [p for ref in refs for p in _expand(ref, store)]
    seen: set[str] = set()
    out: list[Path] = []
    for path in paths:
        key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            out.append(path)
    if not out:
        raise BadInput("no runs to read: give RUNs (ids, files, directories, globs) or --all with a non-empty store")
    return out


def make_partitions(
    paths: list[Path],
    *,
    max_runs: int = DEFAULT_PARTITION_RUNS,
    max_bytes: int = DEFAULT_PARTITION_BYTES,
) -> list[Partition]:
    """Consecutive slices of ``paths``: at most ``max_runs`` runs and (but for one huge run) ``max_bytes``."""
    if max_runs < 1:
        raise BadInput("--partition-size must be at least 1")
    parts: list[Partition] = []
    current: list[str] = []
    size = 0
    for path in paths:
        try:
            n = path.stat().st_size
        except OSError:
            n = 0  # unreadable: the worker reports it as damaged
        if current and (len(current) >= max_runs or size + n > max_bytes):
            parts.append(Partition(len(parts), tuple(current), size))
            current, size = [], 0
        current.append(str(path))
        size += n
    if current:
        parts.append(Partition(len(parts), tuple(current), size))
    return parts


def partitions_digest(parts: list[Partition]) -> str:
    """Identifies the exact cut of the input (names and order), for the manifest."""
    h = hashlib.sha256()
    for part in parts:
        h.update(f"{part.index}\0".encode())
        for p in part.paths:
            h.update(os.path.basename(p).encode("utf-8", "surrogateescape") + b"\0")
    return h.hexdigest()
