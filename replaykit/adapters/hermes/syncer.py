"""Turn-end fsync off Hermes's thread.

Every event reaches the OS with its own ``os.write`` as it happens (a crash of Hermes loses nothing).
The fsync that makes a finished turn survive a crash of the machine takes milliseconds on real disks
(~8 ms here, more than everything else the recorder does in a turn), so at turn end the capture asks
this syncer to fsync the run file and returns at once; a daemon thread does it a moment later (through
its own descriptor, so the writer is never blocked). Closing a run still fsyncs synchronously
(``RunWriter.close``), at session end and at exit.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path


class BackgroundSyncer:
    def __init__(self) -> None:
        self._pending: list[Path] = []
        self._cond = threading.Condition()
        self._busy = False
        self._thread: threading.Thread | None = None

    def request(self, path: Path) -> None:
        """fsync ``path`` soon (requests for a file already waiting are merged)."""
        with self._cond:
            if path not in self._pending:
                self._pending.append(path)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="replaykit-fsync", daemon=True)
                self._thread.start()
            self._cond.notify()

    def wait(self, timeout: float = 10.0) -> bool:
        """Block until every requested fsync is done (tests, orderly shutdown)."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._pending and not self._busy, timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: bool(self._pending))
                path = self._pending.pop(0)
                self._busy = True
            try:
                fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
            except OSError:
                pass  # the run was removed or closed meanwhile: its close already fsynced it
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()
