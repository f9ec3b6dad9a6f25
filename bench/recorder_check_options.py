"""Diagnostic (not a benchmark row): what checking the earlier messages of each request costs, per option.

The Hermes recorder proves, on every LLM call, that the request's earlier messages are the ones it
already wrote (``wire_deltas.same_prefix``: one C-level list comparison against its own copy). Hermes
sends every call fresh shallow copies of every message, so any exact check reads every earlier message
of every request. This prices the ways of doing that, in situ: the real plugin on the long session
(``bench/long_session.py``, Hermes's real allocation pattern and cache state), one child process per
option so the heaps do not interfere, CPU time of Hermes's thread inside the check only:

- ``shipped``: ``raw[:n] == seen`` against the capture's own copy (containers ours, leaves shared);
- ``repacked``: the same, the own copy re-copied whenever it has grown by a quarter (contiguous memory:
  does the copy's locality matter?);
- ``flat``: exact, by C-level passes only (``map``, ``chain``, ``itemgetter``, ``list.__eq__``): each level
  of the messages flattened into arrays of leaves (lengths, keys, values, types; containers replaced by a
  marker and flattened one level down), compared with the previous request's arrays, which hold only
  immutable leaves;
- ``len_floor`` (NOT a check): one C-level pass over the request's messages (``list(map(len, ...))``), the
  least any scheme that reads every message once can cost;
- ``content_identity`` (NOT exact): only the ``content`` strings, compared by identity;
- ``unverified`` (NOT exact): no check at all.

    PYTHONPATH=$PWD python bench/recorder_check_options.py [N] [--options shipped flat ...]

Prints one JSON line per option and the reference loop (``sum(range(1000))``, µs: wall clock as the
benches print it, and thread CPU) measured in the same child, to convert to an idle machine.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import timeit
from collections import deque
from collections.abc import Callable
from itertools import chain, compress, count, repeat
from operator import is_, itemgetter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

OPTIONS = ("shipped", "repacked", "flat", "len_floor", "content_identity", "unverified")

_MARK = object()  # a container in a level's values: compared one level down
_values = dict.values


def _pick(values: list[Any], positions: list[int]) -> tuple[Any, ...]:
    if not positions:
        return ()
    if len(positions) == 1:
        return (values[positions[0]],)
    return itemgetter(*positions)(values)


def flat_arrays(items: list[Any]) -> list[list[Any]] | None:
    """Every level of ``items`` (JSON-like: dicts, lists, leaves) as arrays of leaves, by C-level passes
    only. Per level: the containers' lengths, the dicts' keys, the values with every container replaced by
    ``_MARK``, and the values' types; the next level is the containers found. Equal arrays <=> equal
    values, types included (so ``1`` and ``True`` differ, unlike ``==``). None if a level holds a
    container other than a dict or a list (not JSON: the caller falls back)."""
    arrays: list[list[Any]] = []
    dicts: list[Any] = [x for x in items if type(x) is dict]  # level 0: the messages (all dicts in Chat)
    if len(dicts) != len(items):
        return None
    lists: list[Any] = []
    while dicts or lists:
        arrays.append(list(map(len, dicts)))
        arrays.append(list(map(len, lists)))
        arrays.append(list(chain.from_iterable(dicts)))
        values = list(chain.from_iterable(map(_values, dicts)))
        values.extend(chain.from_iterable(lists))
        types = list(map(type, values))
        dict_at = list(compress(count(), map(is_, types, repeat(dict))))
        list_at = list(compress(count(), map(is_, types, repeat(list))))
        dicts, lists = list(_pick(values, dict_at)), list(_pick(values, list_at))
        deque(map(values.__setitem__, chain(dict_at, list_at), repeat(_MARK)), 0)
        arrays.append(values)
        arrays.append(types)
    return arrays


def _flat_check() -> tuple[Callable[[list[Any], list[Any], int], bool], Callable[[list[Any]], None]]:
    """The flat check, and what it keeps for the next call (not timed: a real implementation would
    flatten each request once and compare prefixes stream by stream, so this prices flat in its favour)."""
    last: dict[str, Any] = {}

    def check(raw: list[Any], seen: list[Any], n: int) -> bool:
        arrays = flat_arrays(raw[:n])
        if arrays is None or last.get("arrays") is None:
            return bool(raw[:n] == seen)
        return arrays == last["arrays"]

    def keep(raw: list[Any]) -> None:
        last["arrays"] = flat_arrays(raw)

    return check, keep


def _patch(option: str, spent: list[Any]) -> None:
    from replaykit.adapters.hermes.capture import wire_deltas

    shipped = wire_deltas.same_prefix
    check: Callable[[list[Any], list[Any], int], bool]
    after: Callable[[list[Any]], None] | None = None
    if option in ("shipped", "repacked"):
        check = shipped
    elif option == "flat":
        check, after = _flat_check()
    elif option == "len_floor":
        def check(raw: list[Any], seen: list[Any], n: int) -> bool:
            list(map(len, raw[:n]))
            return True
    elif option == "content_identity":
        contents: list[Any] = []

        def check(raw: list[Any], seen: list[Any], n: int) -> bool:
            now = list(map(dict.get, raw, repeat("content")))
            same = now[:n] == contents[:n]
            contents[:] = now
            return same or bool(raw[:n] == seen)
    elif option == "unverified":
        def check(raw: list[Any], seen: list[Any], n: int) -> bool:
            return True
    else:
        raise SystemExit(f"unknown option {option!r}: {', '.join(OPTIONS)}")
    clock = time.thread_time

    def timed(raw: list[Any], seen: list[Any], n: int) -> bool:
        started = clock()
        verdict = False
        try:
            verdict = check(raw, seen, n)
            return verdict
        finally:
            spent[1] += not verdict
            spent[0] += clock() - started
            if after is not None:
                after(raw)

    wire_deltas.same_prefix = timed  # type: ignore[assignment]
    if option == "repacked":
        commit = wire_deltas.RequestChain.commit
        packed: dict[int, int] = {}

        def repacking_commit(self: Any, pre: Any, event_id: str) -> None:
            commit(self, pre, event_id)
            started = clock()
            if len(self.seen) >= packed.get(id(self), 0) * 1.25 + 16:
                self.seen[:] = [wire_deltas.own_copy(m) for m in self.seen]
                packed[id(self)] = len(self.seen)
            spent[0] += clock() - started

        wire_deltas.RequestChain.commit = repacking_commit  # type: ignore[method-assign]


def run_one(option: str, steps: int) -> dict[str, Any]:
    import long_session as ls

    from replaykit.adapters.hermes import plugin

    spent = [0.0, 0]
    _patch(option, spent)
    with tempfile.TemporaryDirectory() as tmp:
        plugin._capture = capture = plugin.build_capture(Path(tmp))
        bus = ls.HermesBus()
        plugin.register(bus)
        stats = ls.drive(steps, bus, clock=time.thread_time)
        capture.close_all()
        plugin._capture = None
    ref_wall = min(timeit.repeat("sum(range(1000))", number=2000, repeat=5)) / 2000 * 1e6
    ref_cpu = min(timeit.Timer("sum(range(1000))", timer=time.thread_time).repeat(number=2000, repeat=5)) / 2000 * 1e6
    return {"option": option, "steps": steps, "hermes_events": stats.events,
            "check_s": round(spent[0], 4), "check_us_per_event": round(spent[0] / stats.events * 1e6, 2),
            "checks_failed": spent[1],  # requests whose earlier messages were found changed (0 here)
            "hermes_thread_s": round(stats.seconds, 3),
            "ref_loop_us_wall": round(ref_wall, 2), "ref_loop_us_cpu": round(ref_cpu, 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("steps", type=int, nargs="?", default=1000)
    parser.add_argument("--options", nargs="+", default=list(OPTIONS), choices=OPTIONS)
    parser.add_argument("--child", choices=OPTIONS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_one(args.child, args.steps)))
        return 0
    for option in args.options:
        out = subprocess.run([sys.executable, __file__, str(args.steps), "--child", option],
                             capture_output=True, text=True, check=False)
        print(out.stdout.strip() or f'{{"option": "{option}", "error": {json.dumps(out.stderr[-500:])}}}', flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
