"""Adapters: readers that turn a framework's run (live, through a recorder) or a file into the trace IR.

File importers are registered in ``IMPORTERS`` (the ``replaykit import --format`` values); each is a
function ``(path, **options) -> list[ImportedRun]`` (``replaykit.adapters.base``).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from replaykit.adapters.base import ImportedRun

#: import format -> "module:function"
IMPORTERS: dict[str, str] = {
    "openai-chat": "replaykit.adapters.provider_logs:import_openai_chat",
    "openai-responses": "replaykit.adapters.provider_logs:import_openai_responses",
    "anthropic": "replaykit.adapters.provider_logs:import_anthropic",
    "hermes-unroll": "replaykit.adapters.hermes.import_unroll:import_unroll",
    "hermes-session": "replaykit.adapters.hermes.import_session:import_session",
    "hermes-export": "replaykit.adapters.hermes.import_export:import_export",
    "hermes-trajectory": "replaykit.adapters.hermes.import_trajectory:import_trajectory",
    "atif": "replaykit.adapters.atif:import_atif",
    "otel": "replaykit.adapters.otel:import_otel",
    "langfuse": "replaykit.adapters.langfuse:import_langfuse",
    "langsmith": "replaykit.adapters.langsmith:import_langsmith",
    "inspect-ai": "replaykit.adapters.inspect_ai:import_inspect_ai",
}


def import_file(path: str | Path, fmt: str, **options: Any) -> list[ImportedRun]:
    """Read ``path`` as ``fmt`` into runs (not yet stored); BadInput for an unknown format or file."""
    from replaykit.core.errors import BadInput

    target = IMPORTERS.get(fmt)
    if target is None:
        raise BadInput(f"unknown import format {fmt!r}; choose one of {', '.join(sorted(IMPORTERS))}")
    source = Path(path).expanduser()
    if not source.exists():
        raise BadInput(f"no such file: {path}")
    module_name, _, func_name = target.partition(":")
    runs: list[ImportedRun] = getattr(importlib.import_module(module_name), func_name)(source, **options)
    return runs


__all__ = ["IMPORTERS", "import_file"]
