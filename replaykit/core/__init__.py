"""The core: everything that is true of a run whatever framework recorded it or plays it.

Subpackages by concern, each depending only on those before it (``tests/test_layering.py`` enforces it):

- the root: ``errors`` (the one exception tree), ``files`` (atomic private writes), ``progress``, ``gcpause``;
- ``trace``: the IR, canonical JSON, codecs, deltas, the recorder, the store and its readers, the loaded run;
- ``guard``: may a tool call run during a replay (root only);
- ``redaction``: personal data and secrets out of runs (trace);
- ``replay``: the serve decision, cursor, replay, branch, the play contract, live tools, the live model (trace, guard);
- ``analysis``: diff, cost, health, timeline, inspect, step detail (trace, replay);
- ``corpus``: many runs at once on local processes, Ray or Dask (any of the above).

The core never imports adapters, engines, exporters, the viewer or the CLI.
"""
