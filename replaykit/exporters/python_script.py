"""Export a run as one standalone, stdlib-only Python script (``replaykit export --format python``).

Safety by construction: trace content never becomes Python syntax. The run is embedded as ONE JSON
document (``{"header": ..., "events": [...]}``, exactly the trace's lines as JSON) inside the string
literal ``TRACE_JSON``, one event per source line so two exported runs diff readably. Each source line
is ``repr()`` of a piece of JSON made of printable ASCII only (0x20-0x7E; every other character is a
``\\uXXXX`` escape, see ``model_json``): no newline, NUL, surrogate, U+2028/2029 or non-ASCII byte can
reach the source, and ``repr`` escapes every backslash and the enclosing quote. The script decodes it
with ``json.loads``.
Metadata constants use ``ascii()`` (an ASCII-only literal that evaluates back to the value); the header
docstring and comments only show a whitelisted character set.

The replay engine inside the script is the source of ``replaykit.core.replay.replay_doc`` (a pure, stdlib-only
function also behind ``replaykit replay --json``), with ``replaykit.core.replay.serve`` (the serve decision and
delta resolver) and ``replaykit.core.trace.canonical`` (the request fingerprint) it builds on, so both compute
the same document and match requests by the same rule.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from importlib import resources
from typing import Any, cast

from pydantic import BaseModel

from replaykit.core.errors import BadInput
from replaykit.core.trace import jsonsafe
from replaykit.core.trace.ir import ErrorEvent, LLMCallEvent, Message, ToolCallEvent
from replaykit.core.trace.recorder import ToolRefs
from replaykit.core.trace.run import Run
from replaykit.exporters._embed import embedded_modules, top_level_names

_BODY_MARKER = "# --- script body ---\n"
_SAFE_TEXT = re.compile(r"[^A-Za-z0-9 ._:/@+=,()\-]")


# --------------------------------------------------------------------------------------- encoding


def trace_data(run: Run) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The run as plain JSON: header and events exactly as a trace file line holds them (what the
    script's ``TRACE_JSON`` decodes to)."""
    header = jsonsafe.model_data(run.header, exclude_none=True)
    events = [jsonsafe.model_data(event, exclude_none=True) for event in run.events]
    return header, events


@contextmanager
def _unbounded_ints() -> Iterator[None]:
    """Let json encode integers of any size (CPython limits int->str to 4300 digits by default)."""
    get = getattr(sys, "get_int_max_str_digits", None)
    if get is None:
        yield
        return
    previous = get()
    sys.set_int_max_str_digits(0)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(previous)


def _ascii_json(value: Any) -> str:
    # allow_nan=False: the IR's JSON form has no NaN/Infinity (pydantic maps them to null); if one slips
    # through, fail loudly rather than write a token json.loads accepts but other readers do not.
    return json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":"))


_NOT_PRINTABLE_ASCII = re.compile(r"[^\x20-\x7e]")


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code > 0xFFFF:  # astral: a UTF-16 surrogate pair, as JSON spells it
        code -= 0x10000
        return f"\\u{0xD800 | (code >> 10):04x}\\u{0xDC00 | (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def model_json(model: BaseModel) -> str:
    """An IR model as compact JSON of printable ASCII only (0x20-0x7E), exactly the data of its trace line.

    Fast path: pydantic's serializer (what the store writes), then every other character becomes a
    ``\\uXXXX`` escape (raw characters can only occur inside JSON strings, where the escape means the
    same). Slow path, for what pydantic's JSON serializer refuses (lone surrogates): the same data via
    ``model_dump(mode="json")`` and ``json.dumps(ensure_ascii=True)``."""
    try:
        text = model.model_dump_json(exclude_none=True)
    except (ValueError, TypeError):
        with _unbounded_ints():
            text = _ascii_json(jsonsafe.model_data(model, exclude_none=True))
    if not text.isascii() or "\x7f" in text:  # pydantic escapes the rest (< 0x20) already
        text = _NOT_PRINTABLE_ASCII.sub(_escape_char, text)
    if not (text.isascii() and text.isprintable()):  # belt and braces: guaranteed by the line above
        raise BadInput("internal: JSON text is not printable ASCII")
    return text


def event_texts(run: Run) -> list[str]:
    """Each event as printable-ASCII JSON, as the trace holds it, except that a request message still
    written in full where it is exactly the tool message of an earlier tool call (a schema-1 trace, an
    import) becomes the trace's own reference to that event (``MessageRef``, found by the recorders'
    ``ToolRefs``): each tool result is embedded once."""
    texts: list[str] = []
    refs = ToolRefs()
    recent: list[ToolCallEvent] = []  # tool calls since the last request (noted only when one needs them)
    for event in run.events:
        kind = event.kind  # not isinstance: pydantic models go through ABCMeta (see Run.steps)
        if kind == "tool_call":
            recent.append(cast(ToolCallEvent, event))
        elif kind in ("llm_call", "error") and cast(LLMCallEvent | ErrorEvent, event).request is not None:
            request = cast(LLMCallEvent, event).request
            append = request.context.append
            swapped = append
            if recent and any(type(m) is Message and m.role == "tool" for m in append):
                for tool in recent:
                    refs.note(tool)
                swapped = refs.swap(list(append))
            recent.clear()
            if swapped != append:
                context = request.context.model_copy(update={"append": swapped})
                event = event.model_copy(update={"request": request.model_copy(update={"context": context})})
        texts.append(model_json(event))
    return texts


def trace_literal_lines(run: Run) -> list[str]:
    """The pieces of the one JSON document, one per source line (their concatenation is the JSON)."""
    pieces = ['{"header": ' + model_json(run.header) + ",\n", '"events": [\n']
    texts = event_texts(run)
    last = len(texts) - 1
    pieces.extend(text + (",\n" if i < last else "\n") for i, text in enumerate(texts))
    pieces.append("]}\n")
    return pieces


def trace_literal(run: Run) -> str:
    """``TRACE_JSON = (...)``: adjacent string literals, each ``repr`` of printable ASCII."""
    lines = ["TRACE_JSON = ("]
    lines.extend("    " + repr(piece) for piece in trace_literal_lines(run))
    lines.append(")")
    return "\n".join(lines) + "\n"


def safe_text(value: Any, limit: int = 100) -> str:
    """Text for the docstring and comments: a whitelist (no quote, backslash, '#' or line break)."""
    text = _SAFE_TEXT.sub("?", "" if value is None else str(value))
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --------------------------------------------------------------------------------------- template


@lru_cache(maxsize=1)
def _template_body() -> str:
    source = resources.files("replaykit.exporters.python_template").joinpath("script.py").read_text("utf-8")
    body = source.split(_BODY_MARKER, 1)[1]
    return re.sub(r"# <template-only>\n.*?# </template-only>\n", "", body, flags=re.S)


@lru_cache(maxsize=1)
def _engine_source() -> str:
    """``replaykit.core.trace.canonical`` and ``deltas``, ``replaykit.core.replay.serve``, ``tool_ladder`` and
    ``replay_doc`` without docstrings and ``__future__`` imports (and without their imports of each other)."""
    from replaykit.core.replay import replay_doc, serve, tool_ladder
    from replaykit.core.trace import canonical, deltas

    return "\n\n".join(embedded_modules([canonical, deltas, serve, tool_ladder, replay_doc]))


@lru_cache(maxsize=1)
def _check_no_name_clash() -> None:
    """The engine and the script body share one module namespace: a name defined in both would
    silently replace the engine's (and change the document). Refuse to generate such a script."""
    clash = top_level_names(_engine_source()) & top_level_names(_template_body())
    if clash:
        raise AssertionError(f"script template redefines engine names: {', '.join(sorted(clash))}")


def _docstring(run: Run, header: dict[str, Any]) -> str:
    source = header.get("source") or {}
    framework = " ".join(str(x) for x in (source.get("framework"), source.get("framework_version")) if x)
    steps = run.steps
    llm = sum(1 for s in steps if s.kind == "llm")
    rows = [
        ("Run", header.get("run_id")),
        ("Title", header.get("title")),
        ("Source", framework or "unknown"),
        ("Model", run.model),
        ("Provider", header.get("provider")),
        ("Recorded", header.get("created_at")),
        ("Steps", f"{len(steps)} ({llm} LLM calls, {len(steps) - llm} tool calls)"),
        ("Duration", f"{run.duration:.3f} s"),
    ]
    # Always every row ("-" when unknown): the docstring has a fixed line count, so the code below it sits
    # on the same lines in every export (and two exports diff cleanly).
    table = "\n".join(f"{name + ':':<10}{'-' if value is None else safe_text(value)}" for name, value in rows)
    return f'''"""Standalone replay of a recorded agent run (generated by replaykit; Python 3.11+, stdlib only).

{table}

How to run it:
    python run.py                         replay from the record: 0 network, 0 tools; one JSON document
                                          on stdout (schema: replaykit docs/python-export.md), progress on stderr
    python run.py --from 2 --to 5         replay steps 2..5 (the conversation before step 2 is kept)
    python run.py --stop-at 3             stop before step 3 and show what it would do
    python run.py --timed                 wait to the original timeline and report the deltas
    python run.py --edit 3 '{{"result": "..."}}'   change step 3 (args / result / response) and continue
    python run.py --live --base-url http://127.0.0.1:8000/v1 --model NAME --api-key-env MY_KEY
    python run.py --diff other_run.py     compare with another exported run (exit 1 if they differ)
    python run.py --html report.html      also write a self-contained HTML report
    python run.py --dump-trace            print the embedded trace (header and events)

The recorded run is the JSON document in TRACE_JSON at the end of this file. It is data: it is read
with json.loads and never executed. Values shown above are sanitized for display.
"""
'''


def _metadata(run: Run, header: dict[str, Any]) -> str:
    source = header.get("source") or {}
    values = [
        ("RUN_ID", header.get("run_id")),
        ("SOURCE_FRAMEWORK", source.get("framework")),
        ("MODEL", run.model),
        ("PROVIDER", header.get("provider")),
        ("CREATED_AT", header.get("created_at")),
        ("STEP_COUNT", len(run.steps)),
        ("EVENT_COUNT", len(run.events)),
    ]
    # One tuple of constants (the compiler folds it into ONE constant): however many of these values are
    # equal to each other or to a constant of the code, the program's other constants keep their indices.
    lines = ["# Metadata of the recorded run (the same values are in TRACE_JSON; these are for reading).",
             ", ".join(name for name, _ in values) + " = ("]
    lines.extend(f"    {value!a},  # {name}" for name, value in values)
    lines.append(")")
    return "\n".join(lines) + "\n"


def render(run: Run, **_options: Any) -> str:
    """The script's source text. Raises ``BadInput`` if the run cannot be embedded."""
    try:
        header = jsonsafe.model_data(run.header, exclude_none=True)
        literal = trace_literal(run)
        metadata = _metadata(run, header)
    except (ValueError, RecursionError) as exc:  # incl. UnicodeError (pydantic on surrogate keys)
        raise BadInput(f"run {run.run_id!r} cannot be exported as a script: {' '.join(str(exc).split())}") from exc
    _check_no_name_clash()
    body = _template_body()
    for marker, text in (("# @@METADATA@@\n", metadata), ("# @@ENGINE@@\n", _engine_source()),
                         ("# @@TRACE@@\n", literal)):
        if body.count(marker) != 1:
            raise AssertionError(f"template marker {marker.strip()} must appear exactly once")
        body = body.replace(marker, text)
    return (
        "#!/usr/bin/env python3\n"
        + _docstring(run, header)
        + "\nfrom __future__ import annotations\n\n"
        + body
        + '\n\nif __name__ == "__main__":\n    sys.exit(main())\n'
    )


def summarize(run: Run, source: str) -> dict[str, Any]:
    """What ``replaykit export --json`` reports besides path and bytes."""
    return {"events": len(run.events), "lines": source.count("\n")}
