"""replaykit: record, replay, branch, diff and export AI agent runs.

The public Python surface is re-exported here lazily (importing ``replaykit`` stays cheap; each name is
imported on first use)::

    import replaykit
    run = replaykit.RunStore().load("my-run")        # or replaykit.Run.load("path/to/trace.jsonl")
    doc = replaykit.replay_run(run)                    # deterministic, 0 provider calls, 0 tools
    result = replaykit.diff_runs(run, other)           # first divergence and its cause
    with replaykit.record("my-run"): agent.run_sync("...")   # every OpenAI / Anthropic model call in the block
    with replaykit.serve("my-run"): agent.run_sync("...")    # answered from the run, 0 requests sent
    replaykit.export(run, "python", "run.py")          # any single-run format (replaykit.exporters.FORMATS)
    replaykit.play(run, "openai", replaykit.PlayOptions(base_url=..., model=...))   # a live engine
    replaykit.evaluate(["run-1"], engine="openai", base_url=..., model=..., out="ev")  # replay-based eval
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

#: public name -> module that defines it
_EXPORTS = {
    "Run": "replaykit.core.trace.run",
    "Step": "replaykit.core.trace.run",
    "RunStore": "replaykit.core.trace.store",
    "RunWriter": "replaykit.core.trace.store",
    "Recorder": "replaykit.core.trace.recorder",
    "replay_run": "replaykit.core.replay.replay",
    "replay_path": "replaykit.core.replay.replay",
    "branch": "replaykit.core.replay.branch",
    "diff_runs": "replaykit.core.analysis.diff",
    "DiffResult": "replaykit.core.analysis.diff",
    "ReplayCursor": "replaykit.core.replay.cursor",
    "PlayOptions": "replaykit.core.replay.play",
    "PlayResult": "replaykit.core.replay.play",
    "fingerprint": "replaykit.core.trace.canonical",
    "canonical_json": "replaykit.core.trace.canonical",
    "json_schema": "replaykit.core.trace.ir",
    "ReplaykitError": "replaykit.core.errors",
    "record": "replaykit.adapters.cassette",
    "serve": "replaykit.adapters.cassette",
    "Cassette": "replaykit.adapters.cassette",
    "CassetteMiss": "replaykit.adapters.openai",
    "play": "replaykit.engines",
    "export": "replaykit.exporters",
    "evaluate": "replaykit.eval",
    "EvalReport": "replaykit.eval",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'replaykit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # cache: later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
