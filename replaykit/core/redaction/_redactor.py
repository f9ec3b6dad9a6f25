"""Redactor: text and JSON-value redaction with one placeholder map per run.

Detection is Presidio's AnalyzerEngine (see ``_engine``); substitution is Presidio's AnonymizerEngine
with a custom operator that asks the run's ``PlaceholderMap`` for ``<TYPE_n>``. A redacted chunk is
cached per run under its content hash: once a value has a placeholder it keeps it, so the same chunk
always redacts to the same text within a run.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from replaykit.core.trace.jsonsafe import has_surrogate

from ._engine import AnalysisEngine, EngineConfig, Mode, get_engine
from ._filters import Span
from ._jsonstyle import dumps_like, try_parse_json
from ._keys import key_entity
from ._placeholders import PlaceholderMap

_OPERATOR_NAME = "replaykit_placeholder"
#: ``--fail-closed``: longer strings are replaced whole (analysis is chunked, but a megabyte string in
#: a trace is a blob: base64, a dump, a binary read as text, not prose a detector was built for)
MAX_ANALYSED_CHARS = 1_000_000


def unanalysable(text: str, max_chars: int = MAX_ANALYSED_CHARS) -> bool:
    """Too long, or not decodable text: a lone surrogate (bytes that were never valid UTF-16/UTF-8
    text) or U+FFFD (bytes a decoder had to replace)."""
    return len(text) > max_chars or has_surrogate(text) or "\ufffd" in text
_anonymizer: Any = None


def _get_anonymizer() -> Any:
    global _anonymizer
    if _anonymizer is None:
        from presidio_anonymizer import AnonymizerEngine
        from presidio_anonymizer.operators import Operator, OperatorType

        class RunPlaceholder(Operator):  # type: ignore[misc]
            """Replace a value by its run-wide placeholder (the map is passed in ``params``)."""

            def operate(self, text: str, params: dict[str, Any] | None = None) -> str:
                assert params is not None
                mapping: PlaceholderMap = params["mapping"]
                return mapping.placeholder(params["entity_type"], text)

            def validate(self, params: dict[str, Any] | None = None) -> None:
                if not params or not isinstance(params.get("mapping"), PlaceholderMap):
                    raise ValueError("RunPlaceholder needs a PlaceholderMap under 'mapping'")

            def operator_name(self) -> str:
                return _OPERATOR_NAME

            def operator_type(self) -> Any:
                return OperatorType.Anonymize

        engine = AnonymizerEngine()
        engine.add_anonymizer(RunPlaceholder)
        _anonymizer = engine
    return _anonymizer


@dataclass
class Redactor:
    """Redacts strings and JSON values for one run (one placeholder numbering).

    ``allow_list`` terms are never redacted (compared case-insensitively, whole value).
    """

    mode: Mode = "patterns"
    allow_list: Sequence[str] = ()
    mapping: PlaceholderMap = field(default_factory=PlaceholderMap)
    engine: AnalysisEngine | None = None
    parse_json_strings: bool = True
    #: replace a string that cannot be analysed (see ``unanalysable``) whole instead of passing it through
    fail_closed: bool = False
    max_chars: int = MAX_ANALYSED_CHARS

    def __post_init__(self) -> None:
        if self.engine is None:
            self.engine = get_engine(EngineConfig(mode=self.mode))
        self._allow = frozenset(a.strip().casefold() for a in self.allow_list if a.strip())
        self._done: dict[bytes, str] = {}
        self.redactions = 0

    # ---- text ---------------------------------------------------------------------------------------
    def redact_text(self, text: str) -> str:
        return self.redact_texts([text])[0]

    def redact_texts(self, texts: Sequence[str]) -> list[str]:
        """Redact many strings, analysing all uncached content in one batch."""
        out: list[str | None] = [None] * len(texts)
        pending: list[int] = []
        keys: list[bytes] = []
        for i, t in enumerate(texts):
            if not t:
                out[i] = t
                continue
            if self.fail_closed and unanalysable(t, self.max_chars):
                self.redactions += 1
                out[i] = self.mapping.placeholder("UNANALYSED", t)
                continue
            k = hashlib.blake2b(t.encode("utf-8", "surrogatepass"), digest_size=16).digest()
            keys.append(k)
            done = self._done.get(k)
            if done is not None:
                out[i] = done
            else:
                pending.append(i)
        if pending:
            assert self.engine is not None
            spans_list = self.engine.analyze_many([texts[i] for i in pending])
            for i, spans in zip(pending, spans_list, strict=True):
                text = texts[i]
                k = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
                done = self._done.get(k)  # a duplicate within this batch
                if done is None:
                    done = self._substitute(text, spans)
                    self._done[k] = done
                out[i] = done
        return [o if o is not None else "" for o in out]

    def _substitute(self, text: str, spans: Iterable[Span]) -> str:
        kept = [s for s in spans if text[s.start : s.end].strip().casefold() not in self._allow]
        if not kept:
            return text
        from presidio_anonymizer.entities import OperatorConfig, RecognizerResult

        # Number placeholders in reading order (the anonymizer works right to left).
        for s in kept:
            self.mapping.placeholder(s.entity, text[s.start : s.end])
        self.redactions += len(kept)
        result = _get_anonymizer().anonymize(
            text=text,
            analyzer_results=[RecognizerResult(s.entity, s.start, s.end, s.score) for s in kept],
            operators={"DEFAULT": OperatorConfig(_OPERATOR_NAME, {"mapping": self.mapping})},
            merge_entities_with_spaces=False,
        )
        return str(result.text)

    # ---- JSON values --------------------------------------------------------------------------------
    def redact_value(self, value: Any, key: str | None = None) -> Any:
        """Redact a JSON-like value: keys and structure are kept, string leaves are redacted.

        A string that holds JSON is parsed, redacted and re-serialised in its original style; if
        nothing in it changed, the original string is returned byte for byte.
        """
        self.prefetch(value, key)
        return self._walk(value, key)

    def redact_values(self, values: Sequence[Any]) -> list[Any]:
        for v in values:
            self.prefetch(v)
        return [self._walk(v, None) for v in values]

    def prefetch(self, value: Any, key: str | None = None) -> None:
        """Analyse every string leaf of ``value`` in one batch so the walk only hits the cache."""
        leaves: list[str] = []
        self._collect(value, key, leaves)
        if leaves:
            self.redact_texts(leaves)

    def _collect(self, value: Any, key: str | None, leaves: list[str], hints: bool = True) -> None:
        if isinstance(value, str):
            if hints and key_entity(key) is not None:
                return
            parsed = try_parse_json(value) if self.parse_json_strings else None
            if parsed is not None:
                self._collect(parsed[0], key, leaves, hints)
            else:
                leaves.append(value)
        elif isinstance(value, dict):
            for k, v in value.items():
                self._collect(v, k if isinstance(k, str) else None, leaves, hints)
        elif isinstance(value, list | tuple):
            for v in value:
                self._collect(v, key, leaves, hints)

    def _walk(self, value: Any, key: str | None, hints: bool = True) -> Any:
        """``hints=False`` ignores what keys say (provider_details: logprob "token"s are not secrets)."""
        if isinstance(value, str):
            return self._walk_str(value, key, hints)
        if isinstance(value, dict):
            changed = False
            new: dict[Any, Any] = {}
            for k, v in value.items():
                nv = self._walk(v, k if isinstance(k, str) else None, hints)
                changed = changed or nv is not v
                new[k] = nv
            return new if changed else value
        if isinstance(value, list):
            items = [self._walk(v, key, hints) for v in value]
            return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
        if isinstance(value, tuple):
            titems = tuple(self._walk(v, key, hints) for v in value)
            return titems if any(a is not b for a, b in zip(titems, value, strict=True)) else value
        return value

    def _walk_str(self, value: str, key: str | None, hints: bool = True) -> str:
        if not value:
            return value
        hinted = key_entity(key) if hints else None
        if hinted is not None:
            # The key says what this is (password, email, first_name ...): the whole value goes.
            if value.strip().casefold() in self._allow or (value.startswith("<") and value.endswith(">")):
                return value
            self.redactions += 1
            return self.mapping.placeholder(hinted, value)
        parsed = try_parse_json(value) if self.parse_json_strings else None
        if parsed is not None:
            obj, style = parsed
            new = self._walk(obj, key, hints)
            return value if new is obj else dumps_like(new, style)
        red = self.redact_text(value)
        return value if red == value else red
