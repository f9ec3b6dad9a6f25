"""The schema 2 ``same`` marks: what a trace line marked ``"same": true`` leaves out, and the one rule by
which every reader fills it in (``SameFiller``). Standard library only, and small: the standalone script
embeds ``SameFiller`` and what it uses verbatim (``replaykit.exporters._embed.definitions``), so this
module must not grow what generated code would not need. ``core/trace/store_index.py`` re-exports it.
"""

from __future__ import annotations

from typing import Any

#: Schema 2 ``same`` marks (``Correlation.same``, ``LLMRequest.same``): with one, each of these keys whose
#: value is empty (absent, null, ``{}``) is the previous correlation's / request's in file order.
SAME_CORR_KEYS = ("session_id", "task_id", "turn_id", "api_request_id")
SAME_REQUEST_KEYS = ("model", "tools_ref", "params", "provider_details")


class SameFiller:
    """Fills in what the ``same``-marked correlations and requests of a run leave out, event by event in
    file order: the one rule, for typed events (``core/trace/reader.iter_trace``, ``raw=False``) and for the JSON
    dicts of raw lines (``core/inspect_view``, ``raw=True``). The mark is cleared once filled in.

    A filled-in dict value (``params``, ``provider_details``) is the event's own copy, as every other
    loaded event has; ``share=True`` (readers that never change an event: the standalone script) gives it
    the previous event's dict itself."""

    __slots__ = ("_copy", "_corr", "_get", "_put", "_raw", "_request")

    def __init__(self, *, raw: bool, share: bool = False) -> None:
        self._raw = raw
        self._get: Any = dict.get if raw else getattr
        self._put: Any = dict.__setitem__ if raw else setattr
        self._copy: Any = _same_value if share else json_copy
        self._corr: Any = None
        self._request: Any = None

    def __call__(self, event: Any) -> None:
        get = self._get
        corr = get(event, "corr", None)
        if corr is not None:
            self._fill(corr, self._corr, SAME_CORR_KEYS)
            self._corr = corr
        if get(event, "kind", None) in ("llm_call", "error"):
            request = get(event, "request", None)
            if request is not None:
                self._fill(request, self._request, SAME_REQUEST_KEYS)
                self._request = request

    def state(self) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """What the next event would be filled in from, small (the ``same`` keys of the previous correlation
        and request, not the request's messages): a raw reader that starts in the middle of the file
        (``core/analysis/run_index.py``) restores it with ``restore`` and fills in exactly as a reader from
        the start would."""
        assert self._raw, "raw readers only"
        return (_subset(self._corr, SAME_CORR_KEYS), _subset(self._request, SAME_REQUEST_KEYS))

    def restore(self, state: tuple[dict[str, Any] | None, dict[str, Any] | None]) -> None:
        assert self._raw, "raw readers only"
        self._corr, self._request = state

    def _fill(self, item: Any, previous: Any, keys: tuple[str, ...]) -> None:
        get, put = self._get, self._put
        if not get(item, "same", None):
            return
        if previous is not None:
            for key in keys:
                if not get(item, key, None):
                    value = get(previous, key, None)
                    if value:  # its own copy (see the class), as every other loaded event has
                        put(item, key, self._copy(value) if isinstance(value, dict) else value)
        if self._raw:
            del item["same"]
        else:
            put(item, "same", None)


def _same_value(value: Any) -> Any:
    return value


def _subset(item: dict[str, Any] | None, keys: tuple[str, ...]) -> dict[str, Any] | None:
    return None if item is None else {key: item[key] for key in keys if item.get(key)}


def json_copy(value: Any) -> Any:
    """A deep copy of JSON-shaped data (dicts, lists, str, numbers, None), several times faster than
    ``copy.deepcopy`` (no memo: JSON data has no shared or cyclic parts); anything else is deep-copied."""
    kind = type(value)
    if kind is dict:
        return {key: json_copy(item) for key, item in value.items()}
    if kind is list:
        return [json_copy(item) for item in value]
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    import copy  # here: JSON data (all a trace holds) never gets this far

    return copy.deepcopy(value)
