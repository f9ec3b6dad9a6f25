"""Exporters: writers only. Each format is a pure ``render(run, **options) -> str`` in its own module;
``export(run, fmt, path, force=...)`` here is the one place that checks the destination, compile-checks
generated code and writes the file (private, atomic: ``replaykit.core.files.write_private``).

Training-data formats take many runs and stream them (``replaykit.exporters.training``); they are listed
in ``TRAINING_FORMATS`` and exported through ``export_training``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from replaykit.core.trace.run import Run


@dataclass(frozen=True)
class ExportFormat:
    """One single-run format: the module holding its ``render`` and whether its output is Python code."""

    name: str
    module: str
    extra: str | None = None  # the extra a reader of the output needs (None: stdlib only)
    python: bool = False  # compile-checked before it is written


#: single-run formats (``--format`` value -> registration)
FORMATS: dict[str, ExportFormat] = {
    f.name: f
    for f in (
        ExportFormat("python", "replaykit.exporters.python_script", python=True),
        ExportFormat("langgraph", "replaykit.exporters.langgraph_source", "langgraph", python=True),
        ExportFormat("pydantic-ai", "replaykit.exporters.pydantic_ai_source", "pydantic-ai", python=True),
        ExportFormat("html", "replaykit.exporters.html_report"),
        ExportFormat("atif", "replaykit.exporters.atif", "atif"),
        ExportFormat("otel", "replaykit.exporters.otel"),
    )
}
#: multi-run training formats (``replaykit.exporters.training``)
TRAINING_FORMATS = ("openai-jsonl", "sharegpt", "trl")


def export(run: Run, fmt: str, path: str | Path, *, force: bool = False, **options: Any) -> dict[str, Any]:
    """Render ``run`` as ``fmt`` and write it to ``path`` (0600, atomic); a summary of what was written.

    Refuses an existing ``path`` unless ``force``; generated Python is compiled before anything is written,
    so a failure leaves nothing behind.
    """
    from replaykit.core.errors import BadInput
    from replaykit.core.files import write_private

    if fmt in TRAINING_FORMATS:
        raise BadInput(f"--format {fmt} is a training format: use replaykit.exporters.training.export_training")
    spec = FORMATS.get(fmt)
    if spec is None:
        raise BadInput(f"unknown export format {fmt!r}; choose one of {', '.join(sorted(FORMATS))}")
    out = Path(path).expanduser()
    if out.is_dir():
        raise BadInput(f"{out} is a directory")
    if out.exists() and not force:
        raise BadInput(f"{out} exists; pass --force to overwrite")
    module = importlib.import_module(spec.module)
    # ``render`` returns the text, or an object with ``.text`` and ``.report`` (what it wrote, what it lost).
    rendered = module.render(run, filename=out.name, **options)
    text: str = rendered if isinstance(rendered, str) else rendered.text
    report: dict[str, Any] = {} if isinstance(rendered, str) else dict(rendered.report)
    if spec.python:
        try:
            compile(text, str(out), "exec", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            # a replaykit bug, never trace content (data lives in one literal): refuse before writing
            raise BadInput(f"generated {fmt} code does not compile ({type(exc).__name__}); nothing written") from exc
    deliver = getattr(module, "deliver", None)  # I/O besides the file (an OTLP collector): first, so that
    if deliver is not None:  # a refusal leaves no file behind
        report.update(deliver(run, rendered, **options) or {})
    write_private(out, text)
    summary = getattr(module, "summarize", None)
    info: dict[str, Any] = summary(run, text) if summary is not None else report
    return {"run_id": run.run_id, "format": fmt, "path": str(out), "bytes": len(text.encode("utf-8")),
            "steps": len(run.steps), **info}


__all__ = ["FORMATS", "TRAINING_FORMATS", "ExportFormat", "export"]
