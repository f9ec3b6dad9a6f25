"""Export a run as one standalone, stdlib-only Python script (``replaykit export --format python``).

One writer, two sources of trace lines: a trace file read as a stream (``render_trace``: what the CLI
uses; standard library only, no pydantic, memory bounded by the compressed output) and a loaded ``Run``
(``render``: the Python API, each event as the store would write its line). The script embeds the
trace's own lines (deltas stay deltas, ``same`` marks stay marks: the script fills them in with the
readers' own ``SameFiller``) as ONE JSON document, ``{"header": ..., "events": [...]}``, compressed with
zlib as it is read and written as a base64 string literal ``TRACE_ZLIB_BASE64``.

Safety by construction: trace content never becomes Python syntax. The literal holds only the 65
characters of the base64 alphabet (checked), split over lines of fixed width inside ``"..."``: no quote,
backslash, line break or non-ASCII character from the trace can reach the source. The script decodes it
with ``binascii``, ``zlib`` and ``json.loads``. Metadata constants use ``ascii()`` (an ASCII-only
literal that evaluates back to the value); the header docstring and comments only show a whitelisted
character set.

The replay engine inside the script is the source of ``replaykit.core.replay.replay_doc`` (a pure,
stdlib-only function also behind ``replaykit replay --json``), with ``replaykit.core.replay.serve`` (the
serve decision), ``replaykit.core.trace.deltas`` (the delta resolver) and ``replaykit.core.trace.canonical``
(the request fingerprint) it builds on, so both compute the same document and match requests by the
same rule. They are read from their files, not imported: an export process loads none of them.
"""

from __future__ import annotations

import binascii
import json
import re
import sys
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replaykit.core.errors import BadInput
from replaykit.core.trace.raw_check import EventCheck, NeedsFullReader, check_header
from replaykit.exporters._embed import definitions, embedded_modules

if TYPE_CHECKING:
    from replaykit.core.trace.run import Run

_BODY_MARKER = "# --- script body ---\n"
_SAFE_TEXT = re.compile(r"[^A-Za-z0-9 ._:/@+=,()\-]")
_BASE64_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="
ENGINE_MODULES = ("replaykit.core.trace.canonical", "replaykit.core.trace.deltas", "replaykit.core.replay.serve",
                   "replaykit.core.trace.bridge", "replaykit.core.replay.tool_ladder", "replaykit.core.replay.replay_doc")
#: zlib level 1: 3x faster than the default 6 on a trace and 1.3x larger (0.57 vs 0.44 MB at N = 1000);
#: the export has 0.15 s as a whole process, and decompression costs the script the same either way.
ZLIB_LEVEL = 1
LITERAL_WIDTH = 1000  # base64 characters per source line (narrow lines cost the compiler more tokens)


# ------------------------------------------------------------------------------------------ facts


class RunFacts:
    """What the docstring and the metadata constants show, counted one raw event at a time by the rules
    of ``Run.steps``, ``Run.model`` and ``Run.duration`` (``inspect``'s streaming pass counts the same)."""

    __slots__ = ("end", "events", "first_llm_model", "header", "known_model", "llm_steps", "meta_model", "tool_steps")

    def __init__(self, header: dict[str, Any]) -> None:
        self.header = header
        self.events = self.llm_steps = self.tool_steps = 0
        self.end = 0.0
        self.first_llm_model: tuple[Any] | None = None
        self.known_model: tuple[str | None] | None = None  # a loaded run's own ``Run.model``
        self.meta_model = (header.get("metadata") or {}).get("model")  # Run.meta: later meta events win

    def add(self, event: dict[str, Any]) -> None:
        kind = event["kind"]
        self.events += 1
        self.end = max(self.end, float(event.get("t", 0.0)) + float(event.get("duration") or 0.0))
        if kind == "llm_call":
            self.llm_steps += 1
            request, response = event["request"], event["response"]
            if not isinstance(response.get("message"), dict):
                raise NeedsFullReader("an LLM call without a response message")
            if self.first_llm_model is None:
                self.first_llm_model = (request.get("model") or response.get("model"),)
        elif kind == "tool_call":
            self.tool_steps += 1
        elif kind == "meta" and "model" in event["data"]:
            self.meta_model = event["data"]["model"]

    @property
    def steps(self) -> int:
        return self.llm_steps + self.tool_steps

    @property
    def model(self) -> str | None:
        if self.known_model is not None:
            return self.known_model[0]
        if self.header.get("model"):
            return str(self.header["model"])
        if self.first_llm_model is not None:
            return self.first_llm_model[0]
        return self.meta_model if isinstance(self.meta_model, str) else None

    @classmethod
    def of_run(cls, run: Run, header: dict[str, Any]) -> RunFacts:
        """The same facts of a loaded run, from the run's own properties."""
        facts = cls(header)
        steps = run.steps
        facts.events, facts.end = len(run.events), run.duration
        facts.llm_steps = sum(1 for s in steps if s.kind == "llm")
        facts.tool_steps = len(steps) - facts.llm_steps
        facts.known_model = (run.model,)
        return facts


# ------------------------------------------------------------------------------------------ packing


class TracePacker:
    """The trace as one JSON document, ``{"header":<line>,"events":[<line>,...]}``, zlib-compressed as the
    lines come (memory: the compressed bytes and at most ``_CHUNK`` of pending lines)."""

    _CHUNK = 1 << 20

    def __init__(self, header_json: bytes) -> None:
        self._zlib = zlib.compressobj(ZLIB_LEVEL)
        self._out: list[bytes] = []
        self._pending: list[bytes] = [b'{"header":', header_json, b',"events":[']
        self._pending_bytes = 0
        self._separator = b""

    def add(self, line: bytes) -> None:
        """One event line: compact JSON of one object, UTF-8, without its newline."""
        self._pending.append(self._separator)
        self._pending.append(line)
        self._separator = b","
        self._pending_bytes += len(line)
        if self._pending_bytes >= self._CHUNK:
            self._flush()

    def _flush(self) -> None:
        self._out.append(self._zlib.compress(b"".join(self._pending)))
        self._pending.clear()
        self._pending_bytes = 0

    def finish(self) -> str:
        """The base64 text of the whole compressed document."""
        self._pending.append(b"]}")
        self._flush()
        self._out.append(self._zlib.flush())
        return binascii.b2a_base64(b"".join(self._out), newline=False).decode("ascii")


def is_base64(text: str, extra: bytes = b"") -> bool:
    """Whether ``text`` holds only base64 characters (and those of ``extra``): one C pass (``translate``)."""
    return text.isascii() and not text.encode("ascii").translate(None, _BASE64_ALPHABET + extra)


_LITERAL_HEAD = "TRACE_ZLIB_BASE64 = (\n"
_LITERAL_TAIL = "\n)\n"


def trace_literal(packed: str) -> str:
    """``TRACE_ZLIB_BASE64 = (...)``: adjacent string literals of base64 characters only."""
    # belt and braces: b2a_base64 writes nothing else ('=' only as the last one or two characters)
    if not is_base64(packed) or "=" in packed.rstrip("=") or len(packed) - len(packed.rstrip("=")) > 2:
        raise BadInput("internal: the packed trace is not base64")
    lines = ["TRACE_ZLIB_BASE64 = ("]
    lines.extend(f'    "{packed[i:i + LITERAL_WIDTH]}"' for i in range(0, len(packed), LITERAL_WIDTH))
    lines.append(")")
    return "\n".join(lines) + "\n"


def _without_literal(text: str) -> str:
    """``text`` with the lines of its ``TRACE_ZLIB_BASE64`` literal left out, when they are what
    ``trace_literal`` writes (each ``    "<base64>"``): such lines always compile (string literals of
    characters that need no escape), and compiling 0.9 MB of them would cost the export more than the
    rest of its compile check. Anything else: ``text`` as it is (then compiled whole)."""
    start = text.rfind(_LITERAL_HEAD)
    end = text.find(_LITERAL_TAIL, start)
    if start < 0 or end < 0:
        return text
    body = text[start + len(_LITERAL_HEAD):end]
    # Only base64 characters, spaces, quotes and line breaks; then each line must be exactly 4 spaces,
    # a quote, base64 characters, a quote.
    if not is_base64(body, b' "\n'):
        return text
    for line in body.split("\n"):
        if not (line.startswith('    "') and line.endswith('"') and line.count('"') == 2 and line.count(" ") == 4):
            return text
    return text[:start + len(_LITERAL_HEAD)] + '    ""' + text[end:]


def _ascii_json(value: Any) -> bytes:
    # allow_nan=False: the IR's JSON form has no NaN/Infinity; if one slips through, fail loudly rather
    # than write a token json.loads accepts but other readers do not.
    return json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")


def _refuse_constant(name: str) -> Any:
    raise NeedsFullReader(f"a {name} in the trace (the IR's JSON form has null)")


# NaN and the infinities are JSON to ``json.loads``, not to the IR: such a line goes to the full reader.
_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


@contextmanager
def _unbounded_ints() -> Iterator[None]:
    """Let json read and write integers of any size (CPython limits int<->str to 4300 digits)."""
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


# ------------------------------------------------------------------------------------------ sources


class Rendered:
    """``render_trace``'s answer: the source text and what ``replaykit export --json`` reports."""

    __slots__ = ("report", "text")

    def __init__(self, text: str, report: dict[str, Any]) -> None:
        self.text, self.report = text, report


def render_trace(path: Path, filename: str = "run.py", **_options: Any) -> Rendered:
    """The script of the trace file at ``path`` (plain or compacted), read as a stream of plain dicts.

    Raises ``NeedsFullReader`` for anything the streaming pass cannot vouch for (the caller then loads
    the run and uses ``render``, whose reader words the error); a torn last line is skipped and reported
    in ``report["warnings"]``."""
    from replaykit.core.gcpause import cyclic_gc_paused
    from replaykit.core.trace.migrate import VERBATIM_VERSIONS, migrate_event
    from replaykit.core.trace.store_index import (
        ReadReport,
        SameFiller,
        event_lines,
        open_trace,
        read_raw_header,
    )

    report = ReadReport(path)
    handle = open_trace(path)
    # Each parsed line is dropped at once; the collector would only rescan the ones still alive.
    with cyclic_gc_paused(), _unbounded_ints():
        try:
            header = read_raw_header(handle, path)
            check_header(header)
            version = int(header["schema_version"])
            packer = TracePacker(_ascii_json(header))
            facts, check = RunFacts(header), EventCheck()
            fill: SameFiller | None = SameFiller(raw=True)
            for lineno, line, _is_last, complete in event_lines(handle, path):
                try:
                    event = _DECODER.decode(line.decode("utf-8"))
                except ValueError:  # not JSON, or not UTF-8
                    if complete:  # a complete line that is not JSON: corruption, worded by the full reader
                        raise NeedsFullReader("a line is not JSON") from None
                    report.torn(lineno, line)
                    break
                if not line.startswith(b"{"):
                    raise NeedsFullReader("a line that is not a bare JSON object")
                if version not in VERBATIM_VERSIONS and isinstance(event, dict):
                    event = migrate_event(event, version)
                    line = _ascii_json(event)
                packer.add(line.rstrip(b"\r\n"))  # the line as the trace holds it: ``same`` marks and all
                try:
                    if fill is not None:  # the facts need the first LLM call's model filled in, nothing more
                        fill(event)
                        if facts.first_llm_model is not None:
                            fill = None
                    check(event)
                    facts.add(event)
                except (KeyError, TypeError, AttributeError, ValueError) as exc:
                    raise NeedsFullReader(f"line {lineno}: {exc}") from exc
        finally:
            handle.close()
        text = render_source(header, facts, packer.finish())
    return Rendered(text, {"run_id": header["run_id"], "steps": facts.steps, "events": facts.events,
                           "lines": text.count("\n"), "warnings": list(report.warnings)})


def render(run: Run, **_options: Any) -> str:
    """The script of a loaded run (each event as the store writes its line). Raises ``BadInput`` if
    the run cannot be embedded."""
    from replaykit.core.trace import jsonsafe

    try:
        with _unbounded_ints():
            header = jsonsafe.model_data(run.header, exclude_none=True)
            packer = TracePacker(_ascii_json(header))
            for event in run.events:
                packer.add(jsonsafe.model_json(event).encode("utf-8"))
            facts = RunFacts.of_run(run, header)
            return render_source(header, facts, packer.finish())
    except (ValueError, RecursionError) as exc:  # incl. UnicodeError (pydantic on surrogate keys)
        raise BadInput(f"run {run.run_id!r} cannot be exported as a script: {' '.join(str(exc).split())}") from exc


def summarize(run: Run, source: str) -> dict[str, Any]:
    """What ``replaykit export --json`` reports besides path and bytes."""
    return {"events": len(run.events), "lines": source.count("\n")}


def trace_data(run: Run) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The run as plain JSON: header and events exactly as a trace file line holds them (what the
    script's ``--dump-trace`` prints)."""
    from replaykit.core.trace import jsonsafe

    header = jsonsafe.model_data(run.header, exclude_none=True)
    events = [jsonsafe.model_data(event, exclude_none=True) for event in run.events]
    return header, events


# --------------------------------------------------------------------------------------- template


def safe_text(value: Any, limit: int = 100) -> str:
    """Text for the docstring and comments: a whitelist (no quote, backslash, '#' or line break)."""
    text = _SAFE_TEXT.sub("?", "" if value is None else str(value))
    return text if len(text) <= limit else text[: limit - 3] + "..."


@lru_cache(maxsize=1)
def template_body() -> str:
    """The script's code below its docstring, with the template-only blocks removed."""
    source = (Path(__file__).parent / "python_template" / "script.py").read_text("utf-8")
    body = source.split(_BODY_MARKER, 1)[1]
    return re.sub(r"# <template-only>\n.*?# </template-only>\n", "", body, flags=re.S)


@lru_cache(maxsize=1)
def engine_source() -> str:
    """``replaykit.core.trace.canonical`` and ``deltas``, ``replaykit.core.replay.serve``, ``tool_ladder`` and
    ``replay_doc`` without docstrings and ``__future__`` imports (and without their imports of each other),
    then ``same_marks``' ``SameFiller``. That they define no name twice, and the script body none of
    theirs, is a test (tests/exporters/test_python_script.py): all are fixed for a replaykit version."""
    return "\n\n".join([*embedded_modules(ENGINE_MODULES, check_names=False),
                        definitions("replaykit.core.trace.same_marks", ["SameFiller"])])


def _docstring(header: dict[str, Any], facts: RunFacts) -> str:
    source = header.get("source") or {}
    framework = " ".join(str(x) for x in (source.get("framework"), source.get("framework_version")) if x)
    rows = [
        ("Run", header.get("run_id")),
        ("Title", header.get("title")),
        ("Source", framework or "unknown"),
        ("Model", facts.model),
        ("Provider", header.get("provider")),
        ("Recorded", header.get("created_at")),
        ("Steps", f"{facts.steps} ({facts.llm_steps} LLM calls, {facts.tool_steps} tool calls)"),
        ("Duration", f"{facts.end:.3f} s"),
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

The recorded run is its trace at the end of this file, in TRACE_ZLIB_BASE64: one JSON document,
zlib-compressed, base64-encoded. It is data: it is decoded and read with json.loads, never executed.
Values shown above are sanitized for display.
"""
'''


def _metadata(header: dict[str, Any], facts: RunFacts) -> str:
    source = header.get("source") or {}
    values = [
        ("RUN_ID", header.get("run_id")),
        ("SOURCE_FRAMEWORK", source.get("framework")),
        ("MODEL", facts.model),
        ("PROVIDER", header.get("provider")),
        ("CREATED_AT", header.get("created_at")),
        ("STEP_COUNT", facts.steps),
        ("EVENT_COUNT", facts.events),
    ]
    # One tuple of constants (the compiler folds it into ONE constant): however many of these values are
    # equal to each other or to a constant of the code, the program's other constants keep their indices.
    lines = ["# Metadata of the recorded run (the same values are in the embedded trace; these are for reading).",
             ", ".join(name for name, _ in values) + " = ("]
    lines.extend(f"    {value!a},  # {name}" for name, value in values)
    lines.append(")")
    return "\n".join(lines) + "\n"


_METADATA_HEAD = "# Metadata of the recorded run"
_FUTURE = "\nfrom __future__ import annotations\n"


def compile_check(text: str, filename: str) -> None:
    """``compile`` of what in ``text`` depends on the run: the docstring above the code, and the metadata
    constants, packed trace and entry point below it (raises ``SyntaxError`` & co. like ``compile``).

    The code between them is the same in every export of a replaykit version (the template and the
    embedded engine, nothing from the run) and is compiled by the tests, whole scripts of any content
    included (tests/exporters/test_python_script_properties.py); each part starts and ends with a
    complete top-level statement, so the whole compiles exactly when these parts and that code do.
    Compiling the code again on every export would cost the command more than reading the trace."""
    head, code = text.find(_FUTURE), text.find("\n" + _METADATA_HEAD)
    if head < 0 or code < 0 or code < head or text[code + 1:].count(_METADATA_HEAD) != 1 \
            or text[head:code] != _fixed_code():
        compile(text, filename, "exec", dont_inherit=True)  # not the shape render_source writes: all of it
        return
    compile(_without_literal(text[:head] + text[code:]), filename, "exec", dont_inherit=True)


@lru_cache(maxsize=1)
def _fixed_code() -> str:
    """The code of every export between its docstring and its metadata (what ``compile_check`` leaves out)."""
    body = template_body().replace("# @@ENGINE@@\n", engine_source())
    return _FUTURE + "\n" + body[: body.index("# @@METADATA@@\n")].rstrip("\n")


def render_source(header: dict[str, Any], facts: RunFacts, packed: str) -> str:
    """The script's source text: docstring, code, metadata, then the packed trace."""
    body = template_body()
    for marker, text in (("# @@METADATA@@\n", _metadata(header, facts)), ("# @@ENGINE@@\n", engine_source()),
                         ("# @@TRACE@@\n", trace_literal(packed))):
        if body.count(marker) != 1:
            raise AssertionError(f"template marker {marker.strip()} must appear exactly once")
        body = body.replace(marker, text)
    return (
        "#!/usr/bin/env python3\n"
        + _docstring(header, facts)
        + "\nfrom __future__ import annotations\n\n"
        + body
        + '\n\nif __name__ == "__main__":\n    sys.exit(main())\n'
    )
