"""The checkpoint serializer of the replay graph's SqliteSaver: it remembers what it wrote.

With a checkpointer, every ``invoke`` (one per user turn) rebuilds the state from the database: the
last snapshot of the messages channel plus every write since, and the checkpoints between them. Each
of those blobs was written by this very saver a moment before; decoding them again re-created every
LangChain message of the conversation at every turn (about half of a checkpointed replay's time at
1000 steps, and growing with the conversation), and the new objects then had to be verified again.

``RememberingSerializer`` is LangGraph's own ``JsonPlusSerializer`` (every blob is written exactly as
it would be) that keeps, for the last blobs it wrote, the object it encoded: reading back the very same
bytes gives that object again instead of decoding it. Everything is still written to SQLite at every
node; a saver in another process (or after a reopen) decodes from disk as usual. The objects kept are
the ones LangGraph handed to ``put``/``put_writes``: containers (dicts, lists) are copied when kept and
again when given back, so a caller changing what it got cannot change what the next caller gets; the
leaves (LangChain messages, strings) are shared, as LangGraph shares them between supersteps anyway.

This module imports langgraph: import it only where the extra is installed.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

#: Blobs remembered (FIFO). A rebuild reads the blobs since the last snapshot: at most about two per
#: superstep (the checkpoint and its writes) for the snapshot cadence, plus the snapshot itself.
MAX_BLOBS = 4096
#: Bytes of remembered blobs (the keys are kept alive with the objects).
MAX_BYTES = 64 * 1024 * 1024


_MISSING = object()


def _fresh(value: Any) -> Any:
    """``value`` with new dicts and lists around the same leaves."""
    if type(value) is dict:
        return {k: _fresh(v) for k, v in value.items()}
    if type(value) is list:
        return [_fresh(v) for v in value]
    return value


class RememberingSerializer(JsonPlusSerializer):
    """``JsonPlusSerializer`` that gives back the object it encoded for bytes it wrote lately."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # Shared with the clones LangGraph makes (``with_msgpack_allowlist`` copies the serializer). The
        # saver writes from its background thread while the graph's thread reads: one lock for changes.
        self._memory: OrderedDict[tuple[str, bytes], Any] = OrderedDict()
        self._bytes = [0]
        self._lock = threading.Lock()

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        typed = super().dumps_typed(obj)
        kept = _fresh(obj)
        with self._lock:
            memory = self._memory
            if typed not in memory:
                memory[typed] = kept
                self._bytes[0] += len(typed[1])
                while memory and (len(memory) > MAX_BLOBS or self._bytes[0] > MAX_BYTES):
                    (_, old), _ = memory.popitem(last=False)
                    self._bytes[0] -= len(old)
        return typed

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        hit = self._memory.get((data[0], bytes(data[1])), _MISSING)  # one dict operation: atomic
        if hit is not _MISSING:
            return _fresh(hit)
        return super().loads_typed(data)
