"""The manifest of finished partitions: what makes a corpus job resumable.

``DIR/manifest.jsonl``: a first line naming the job (command, options, the exact cut of the input),
then one line per finished partition, appended and fsynced only after that partition's files are
complete on disk (each written atomically). A rerun of the same job skips every partition listed
whose files are still there with the recorded sizes, and redoes the others, overwriting any file a
killed run left behind with the same bytes: a record is never written twice, never lost. A torn last
line (the job was killed while appending) is ignored, so that partition is simply redone.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from replaykit.core.errors import BadInput

from ._sources import MANIFEST

KIND = "replaykit.corpus-manifest"


class Manifest:
    def __init__(self, out: Path, job: dict[str, Any]) -> None:
        self.out = out
        self.path = out / MANIFEST
        self.job = job
        self.done: dict[int, dict[str, Any]] = {}

    @classmethod
    def open(cls, out: Path, job: dict[str, Any], *, force: bool = False) -> Manifest:
        """Open (or start) the manifest of ``job`` in ``out``; refuses a directory holding other work."""
        manifest = cls(out, job)
        if out.exists() and not out.is_dir():
            raise BadInput(f"{out} exists and is not a directory")
        if manifest.path.is_file():
            header, entries = _read(manifest.path)
            if header.get("job") != job:
                if not force:
                    raise BadInput(
                        f"{out} holds a corpus job with other inputs or options; use another -o DIR "
                        "or --force to start over"
                    )
                manifest._clear(entries)
            else:
                if force:
                    manifest._clear(entries)
                else:
                    # Entries whose files are gone are dropped (redone); rewriting also drops a torn tail.
                    manifest.done = {e["partition"]: e for e in entries if manifest._intact(e)}
                    manifest._rewrite()
                    return manifest
        elif out.is_dir() and any(not p.name.startswith(".") for p in out.iterdir()):
            raise BadInput(f"{out} is not empty and holds no corpus manifest; give a new or empty -o DIR")
        out.mkdir(parents=True, exist_ok=True, mode=0o700)
        manifest._rewrite()
        return manifest

    def _intact(self, entry: dict[str, Any]) -> bool:
        for name, size in entry.get("files", {}).items():
            path = self.out / name
            if not path.is_file() or path.stat().st_size != size:
                return False
        return True

    def _clear(self, entries: list[dict[str, Any]]) -> None:
        """--force: remove only files this job wrote (never anything else in the directory)."""
        for entry in entries:
            for name in entry.get("files", {}):
                (self.out / name).unlink(missing_ok=True)
        self.path.unlink(missing_ok=True)
        self.done = {}

    def _rewrite(self) -> None:
        lines = [json.dumps({"kind": KIND, "job": self.job}, sort_keys=True)]
        lines += [json.dumps(self.done[i], sort_keys=True) for i in sorted(self.done)]
        tmp = self.path.with_name(f".{MANIFEST}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self.path)

    def record(self, entry: dict[str, Any]) -> None:
        """Mark a partition finished (its files are already complete on disk)."""
        data = (json.dumps(entry, sort_keys=True) + "\n").encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        self.done[int(entry["partition"])] = entry


def _read(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    lines = path.read_bytes().split(b"\n")
    try:
        header = json.loads(lines[0])
    except ValueError as exc:
        raise BadInput(f"{path}: not a corpus manifest (first line is not JSON)") from exc
    if not isinstance(header, dict) or header.get("kind") != KIND:
        raise BadInput(f"{path}: not a corpus manifest")
    entries: list[dict[str, Any]] = []
    for raw in lines[1:]:
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw)
        except ValueError:
            break  # torn last append: that partition is redone
        if isinstance(entry, dict) and isinstance(entry.get("partition"), int):
            entries.append(entry)
    return header, entries
