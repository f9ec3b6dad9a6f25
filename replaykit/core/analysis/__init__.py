"""Analysis: what a person or a CI job learns about a run or a pair of runs.

Step-aligned diff and the message diff behind it (``diff``, ``message_diff``), the cost ledger and where
a call went (``cost``, ``endpoint``), the health score (``health``), the timeline rows, the streaming
``inspect`` view and one step whole (``timeline``, ``inspect_view``, ``step_detail``). Reads the trace and
the replay package's stdlib pieces; never plays, never writes a run.

Modules are imported by their own names; this file imports nothing.
"""

__all__ = ["cost", "diff", "endpoint", "health", "inspect_view", "message_diff", "step_detail", "timeline"]
