"""Live engines: each plays a run in a framework's real loop behind one seam.

``play(run, PlayOptions) -> PlayResult`` is the whole contract (``replaykit.core.replay.play``). Every engine
serves the prefix from the record through ``replaykit.core.replay.cursor``, goes live at the cut, answers tool
calls through the one live-tool ladder and calls the one live model (``replaykit.core.replay.live_model``).
Engines meet each other only through core: none imports another's modules.

    from replaykit.engines import play
    result = play(run, "openai", PlayOptions(base_url=..., model=...))
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from replaykit.core.replay.play import PlayOptions, PlayResult
    from replaykit.core.trace.run import Run


@dataclass(frozen=True)
class EngineInfo:
    """One registered engine: where its ``play`` lives and which extra installs its framework."""

    name: str
    module: str
    extra: str
    tools_module: bool = False  # runs the user's tool implementations from ``--tools-module``


#: engine name (the ``--engine`` value) -> its registration
ENGINES: dict[str, EngineInfo] = {
    info.name: info
    for info in (
        EngineInfo("openai", "replaykit.engines.openai", "openai", tools_module=True),
        EngineInfo("hermes", "replaykit.engines.hermes.engine", "hermes"),
        EngineInfo("pydantic-ai", "replaykit.engines.pydantic_ai.engine", "pydantic-ai", tools_module=True),
        EngineInfo("langgraph", "replaykit.engines.langgraph.engine", "langgraph", tools_module=True),
    )
}


def engine_info(name: str) -> EngineInfo:
    from replaykit.core.errors import BadInput

    try:
        return ENGINES[name]
    except KeyError:
        raise BadInput(f"unknown engine {name!r}; choose one of {', '.join(sorted(ENGINES))}") from None


def load_engine(name: str) -> Any:
    """The engine's module (it has ``play(run, options)``); MissingExtra when its framework is absent."""
    from replaykit.core.errors import MissingExtra

    info = engine_info(name)
    try:
        return importlib.import_module(info.module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and exc.name.split(".")[0] == "replaykit":
            raise
        raise MissingExtra(info.extra, exc.name or info.module) from exc


def play(run: Run, engine: str, options: PlayOptions) -> PlayResult:
    """Play ``run`` on ``engine``; the new run (lineage ``play``) goes to ``options.store``. A run no
    engine can play (no LLM call) is bad input before anything starts."""
    from replaykit.core.errors import BadInput

    module = load_engine(engine)
    if not run.llm_calls():
        raise BadInput(f"run {run.run_id} has no LLM call to play (nothing for --engine {engine} to run)")
    return module.play(run, options)


__all__ = ["ENGINES", "EngineInfo", "engine_info", "load_engine", "play"]
