"""Replay: how a recorded run is served back and played forward.

The serve decision (``serve``: position, request fingerprint, tool matching; stdlib, embedded verbatim in
generated code) and the cursor every engine wraps around it (``cursor``), deterministic in-process replay
and its stdlib document (``replay``, ``replay_doc``), branching with one edit (``branch``), the play
contract every engine implements (``play``: ``PlayOptions`` in, ``PlayResult`` out), cassette request
matching (``match``), the live-tool ladder, its guard gate and its wiring to a play (``tool_ladder``,
``tool_gate``, ``live_tools``), and the one live model with its resilience and iteration budget
(``live_model``, ``resilience``). Uses the trace and the guard; knows nothing of analysis.

Modules are imported by their own names; this file imports nothing.
"""

__all__ = ["branch", "cursor", "live_model", "live_tools", "match", "play", "replay", "replay_doc", "resilience",
           "serve", "tool_gate", "tool_ladder"]
