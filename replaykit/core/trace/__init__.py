"""The trace: what a recorded run *is*, on disk and in memory.

The typed IR (``ir``: header, events, messages, parts), canonical JSON and request fingerprints
(``canonical``), exact JSON text for any string (``jsonsafe``), the provider codecs between wire formats and
the IR (``codecs``), the delta encoding of requests and its one resolver (``deltas``), the ``Recorder`` that
every adapter and engine writes events through (``recorder``), the append-only store, its stdlib listing
and its streaming reader (``store``, ``store_index``, ``reader``), schema migration (``migrate``), deep
validation (``validate``), the loaded ``Run`` (``run``) and the shared rules of step-shaped interchange
formats (``interop``). Nothing here knows how a run is replayed or judged: this package imports only the
core's root helpers.

Modules are imported by their own names (``from replaykit.core.trace.run import Run``); this file imports
nothing, so the pydantic-free readers (``store_index``, ``canonical``, ``deltas``) stay light.
"""

__all__ = ["canonical", "codecs", "deltas", "interop", "ir", "jsonsafe", "migrate", "reader", "recorder", "run",
           "store", "store_index", "validate"]
