"""Writing a whole file safely: atomically (temp file in the same directory, fsync, rename) and
private (0600 unless the caller keeps an existing file's mode). Every export and report uses it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from replaykit.core.errors import BadInput


def write_private(path: str | os.PathLike[str], text: str | bytes, *, mode: int = 0o600) -> None:
    """Write ``text`` (or bytes) to ``path`` atomically with ``mode``; a reader never sees a half-written file."""
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise BadInput(f"directory {directory} does not exist")
    if path.is_dir():
        raise BadInput(f"{path} is a directory")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        data = text.encode("utf-8") if isinstance(text, str) else text
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
