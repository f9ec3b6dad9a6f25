"""The one progress bar for long work (a corpus export, a batch redaction): a rich bar on a terminal,
nothing otherwise (the product rule: quiet when stderr is not a terminal)."""

from __future__ import annotations

import sys
from typing import Any


class ProgressBar:
    """``with ProgressBar(total, "label") as advance: advance()``; ``show=None`` means "stderr is a tty"."""

    def __init__(self, total: int | None, label: str, *, show: bool | None = None) -> None:
        self.show = sys.stderr.isatty() if show is None else show
        self.total, self.label = total, label
        self._bar: Any = None

    def __enter__(self) -> Any:
        if not self.show:
            return lambda: None
        from rich.progress import Progress

        self._bar = Progress(transient=True)
        self._bar.start()
        task = self._bar.add_task(self.label, total=self.total)
        return lambda: self._bar.advance(task)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
