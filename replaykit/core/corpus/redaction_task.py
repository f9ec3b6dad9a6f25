"""The corpus pipeline's redaction task (``replaykit redact --all``): one trace file in, the lines of its
redacted copy out, under an id derived from the source so reruns and every executor give the same file.
It lives with the corpus, not with redaction: redaction knows runs, the corpus knows redaction."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from replaykit.core.corpus._task import RunResult
from replaykit.core.redaction import iter_redacted
from replaykit.core.trace import jsonsafe
from replaykit.core.trace.ir import RunHeader


def corpus_run_id(source_run_id: str) -> str:
    """The redacted copy's id in a corpus redaction: derived from the source, so reruns and every
    engine give the same file (``redacted-<source>``, or a digest when that would be too long)."""
    import hashlib

    candidate = f"redacted-{source_run_id}"
    if len(candidate) <= 128:
        return candidate
    return f"redacted-{hashlib.sha256(source_run_id.encode('utf-8')).hexdigest()[:32]}"


def redaction_task(path: str, options: Mapping[str, Any]) -> RunResult:
    """The corpus pipeline's redaction task: one trace file -> the lines of its redacted copy.

    ``options``: mode, allow (terms never redacted). Reads the run as a stream; the copy's lines are
    the bytes ``RunWriter`` would write.
    """
    from replaykit.core.trace.reader import iter_trace

    first = next(iter_trace(Path(path)))
    assert isinstance(first, RunHeader)
    rid = corpus_run_id(first.run_id)
    header, events, redactor = iter_redacted(Path(path), options.get("mode") or "patterns",
                                             allow_list=tuple(options.get("allow") or ()), run_id=rid,
                                             fail_closed=bool(options.get("fail_closed")))
    lines = [jsonsafe.model_json(header)]  # the bytes RunWriter writes, lone surrogates escaped
    lines.extend(jsonsafe.model_json(event) for event in events)
    return RunResult(source=path, run_id=rid, lines=lines,
                     info={"source_run_id": first.run_id, "redactions": redactor.redactions})
