"""Exporters: writers only. Each format is a pure ``render(run, **options) -> str`` in its own module;
``export(run, fmt, path, force=...)`` here is the one place that checks the destination, compile-checks
generated code and writes the file (private, atomic: ``replaykit.core.files.write_private``).

A format that can also render straight from a trace file, read as a stream without loading the run
(``streams``: ``render_trace(path, filename=...)``, standard library only), is exported from a file by
``export_trace`` / ``render_trace_export``, through the same checks and the same write; such a renderer
raises ``replaykit.core.trace.raw_check.NeedsFullReader`` when the run must be loaded after all.

Training-data formats take many runs and stream them (``replaykit.exporters.training``); they are listed
in ``TRAINING_FORMATS`` and exported through ``export_training``.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from replaykit.core.trace.run import Run


class ExportFormat(NamedTuple):
    """One single-run format: the module holding its ``render`` and whether its output is Python code.
    (A NamedTuple, not a dataclass: ``replaykit export`` imports this table, and ``dataclasses`` costs
    the command more than the rest of its imports.)"""

    name: str
    module: str
    extra: str | None = None  # the extra a reader of the output needs (None: stdlib only)
    python: bool = False  # compile-checked before it is written
    suffix: str = ".txt"  # the default file name is the run id plus this (``default_path``)
    streams: bool = False  # also renders from a trace file as a stream (``render_trace``), no run loaded


#: single-run formats (``--format`` value -> registration)
FORMATS: dict[str, ExportFormat] = {
    f.name: f
    for f in (
        ExportFormat("python", "replaykit.exporters.python_script", python=True, suffix=".py", streams=True),
        ExportFormat("langgraph", "replaykit.exporters.langgraph_source", "langgraph", python=True,
                     suffix="_langgraph.py"),
        ExportFormat("pydantic-ai", "replaykit.exporters.pydantic_ai_source", "pydantic-ai", python=True,
                     suffix="_pydantic_ai.py"),
        ExportFormat("html", "replaykit.exporters.html_report", suffix=".html"),
        ExportFormat("atif", "replaykit.exporters.atif", "atif", suffix=".atif.json"),
        ExportFormat("otel", "replaykit.exporters.otel", suffix=".otel.json"),
    )
}
#: multi-run training formats (``replaykit.exporters.training``)
TRAINING_FORMATS = ("openai-jsonl", "sharegpt", "trl")


def _spec(fmt: str) -> ExportFormat:
    from replaykit.core.errors import BadInput

    if fmt in TRAINING_FORMATS:
        raise BadInput(f"--format {fmt} is a training format: use replaykit.exporters.training.export_training")
    spec = FORMATS.get(fmt)
    if spec is None:
        raise BadInput(f"unknown export format {fmt!r}; choose one of {', '.join(sorted(FORMATS))}")
    return spec


def default_path(run_id: str, fmt: str) -> str:
    """The file an export writes when no path is given: the run id and the format's suffix, in the
    current directory (``run-1.py``, ``run-1_langgraph.py``, ``run-1.html``)."""
    if fmt in TRAINING_FORMATS:
        return f"{run_id}.{fmt}.jsonl"
    return f"{run_id}{_spec(fmt).suffix}"


def render_export(run: Run, fmt: str, filename: str, **options: Any) -> tuple[str, dict[str, Any]]:
    """The text of ``run`` as ``fmt`` (generated Python compile-checked, I/O besides the file such as an
    OTLP collector done) and a summary of it; nothing is written."""
    spec = _spec(fmt)
    module = importlib.import_module(spec.module)
    # ``render`` returns the text, or an object with ``.text`` and ``.report`` (what it wrote, what it lost).
    rendered = module.render(run, filename=filename, **options)
    text: str = rendered if isinstance(rendered, str) else rendered.text
    report: dict[str, Any] = {} if isinstance(rendered, str) else dict(rendered.report)
    _check_compiles(spec, module, text, filename)
    deliver = getattr(module, "deliver", None)  # I/O besides the file (an OTLP collector): first, so that
    if deliver is not None:  # a refusal leaves no file behind
        report.update(deliver(run, rendered, **options) or {})
    summary = getattr(module, "summarize", None)
    info: dict[str, Any] = summary(run, text) if summary is not None else report
    return text, {"run_id": run.run_id, "format": fmt, "bytes": len(text.encode("utf-8")), "steps": len(run.steps),
                  **info}


def _check_compiles(spec: ExportFormat, module: Any, text: str, filename: str) -> None:
    """Generated Python must compile; a format may check only what depends on the run
    (``compile_check(text, filename)``: the standalone script, whose code is fixed and tested)."""
    from replaykit.core.errors import BadInput

    if spec.python:
        check = getattr(module, "compile_check", None)
        try:
            if check is not None:
                check(text, filename)
            else:
                compile(text, filename, "exec", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            # a replaykit bug, never trace content (data lives in one literal): refuse before writing
            raise BadInput(f"generated {spec.name} code does not compile ({type(exc).__name__}); "
                           "nothing written") from exc


def _destination(path: str | Path, force: bool) -> Path:
    from replaykit.core.errors import BadInput

    out = Path(path).expanduser()
    if out.is_dir():
        raise BadInput(f"{out} is a directory")
    if out.exists() and not force:
        raise BadInput(f"{out} exists; pass --force to overwrite")
    return out


def streams(fmt: str) -> bool:
    """Whether ``fmt`` renders straight from a trace file (``export_trace``)."""
    return fmt in FORMATS and FORMATS[fmt].streams


def render_trace_export(trace: Path, fmt: str, filename: str | None = None) -> tuple[str, dict[str, Any], list[str]]:
    """The text of the trace file ``trace`` as ``fmt`` (a ``streams`` format), rendered from the file as a
    stream and compile-checked; a summary as ``render_export`` gives it; the reader's warnings (a torn
    last line skipped). ``filename`` None: the format's default name for the run. Raises
    ``NeedsFullReader`` when the run must be loaded (then use ``render_export``)."""
    from replaykit.core.errors import BadInput

    spec = _spec(fmt)
    if not spec.streams:
        raise BadInput(f"--format {fmt} needs the run loaded: use render_export")
    module = importlib.import_module(spec.module)
    rendered = module.render_trace(trace, filename=filename or f"run{spec.suffix}")
    info: dict[str, Any] = dict(rendered.report)
    warnings: list[str] = info.pop("warnings", [])
    text: str = rendered.text
    _check_compiles(spec, module, text, filename or default_path(info["run_id"], fmt))
    return text, {"run_id": info.pop("run_id"), "format": fmt, "bytes": len(text.encode("utf-8")),
                  "steps": info.pop("steps"), **info}, warnings


def export_trace(trace: Path, fmt: str, path: str | Path | None, *, force: bool = False) -> tuple[dict[str, Any], list[str]]:
    """``export`` of a trace file without loading the run (a ``streams`` format): the summary of what was
    written and the reader's warnings. ``path`` None: the format's default file for the run, in the
    current directory."""
    from replaykit.core.files import write_private

    out = _destination(path, force) if path is not None else None
    text, info, warnings = render_trace_export(trace, fmt, out.name if out is not None else None)
    if out is None:
        out = _destination(default_path(info["run_id"], fmt), force)
    write_private(out, text)
    return {**info, "path": str(out)}, warnings


def export(run: Run, fmt: str, path: str | Path, *, force: bool = False, **options: Any) -> dict[str, Any]:
    """Render ``run`` as ``fmt`` and write it to ``path`` (0600, atomic); a summary of what was written.

    Refuses an existing ``path`` unless ``force``; generated Python is compiled before anything is written,
    so a failure leaves nothing behind.
    """
    from replaykit.core.files import write_private

    _spec(fmt)
    out = _destination(path, force)
    text, info = render_export(run, fmt, out.name, **options)
    write_private(out, text)
    return {**info, "path": str(out)}


__all__ = ["FORMATS", "TRAINING_FORMATS", "ExportFormat", "default_path", "export", "export_trace", "render_export",
           "render_trace_export", "streams"]
