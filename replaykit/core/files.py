"""Writing a whole file safely: atomically (temp file in the same directory, fsync, rename) and
private (0600 unless the caller keeps an existing file's mode). Every export and report uses it."""

from __future__ import annotations

import os
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
    fd, tmp = _temp_file(directory, f".{path.name}.", ".tmp")
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


def _temp_file(directory: Path, prefix: str, suffix: str) -> tuple[int, str]:
    """``tempfile.mkstemp(prefix=, suffix=, dir=)``: a new file only this user can read and write, with a
    random name, opened without following a symlink. Not ``tempfile`` itself: it imports ``random`` and
    ``shutil`` (and with them bz2, lzma, hashlib), a tenth of a ``replaykit export``."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    for _ in range(1000):
        name = os.path.join(directory, f"{prefix}{os.urandom(6).hex()}{suffix}")
        try:
            return os.open(name, flags, 0o600), os.path.abspath(name)
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary file name in {directory}")

