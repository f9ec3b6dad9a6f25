"""The conformance matrix's axes: engines, code exports, recordings; and the helpers every cell uses.

Every cell compares an engine (or an export) with ``replaykit replay`` of the same recording: the same
message sequence and final answer, requests only from the cut on (counted on the scripted server), the
right diff verdict, the same guard verdicts.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from replaykit.core.replay.play import PlayOptions
from replaykit.core.trace.ir import Message
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.testing.script import Policy, Reply, ScriptRequest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

# The engines of ``replaykit play``. Hermes's slot: its engine lives in replaykit/engines/hermes and its
# cells are filled by the Hermes engine's owner (drop the skip mark once ``play --engine hermes
# --offline`` and branches pass this matrix).
ENGINES = [
    pytest.param("openai", id="openai"),
    pytest.param("pydantic-ai", id="pydantic-ai"),
    pytest.param("langgraph", id="langgraph"),
    pytest.param("hermes", id="hermes", marks=pytest.mark.skip(reason="hermes slot: filled by the hermes engine")),
]
ENGINE_NAMES = ["openai", "pydantic-ai", "langgraph"]
# Offline cells run the real Hermes agent too (a fresh process in a throw-away HERMES_HOME per test). Its
# live cells (a branch per api mode, destructive dry-runs, a retried 500) are in
# tests/engines/test_hermes_engine.py, where one recording serves several plays.
OFFLINE_ENGINES = [*ENGINES[:3], pytest.param("hermes", id="hermes", marks=pytest.mark.hermes)]
EXPORTS = ["python", "langgraph"]  # the standalone script and the LangGraph module

HERMES = ["tools_sequence", "two_turns", "parallel_tools", "retry_500", "subagent", "codex_responses",
          "anthropic_messages"]
PROVIDERS = {  # imported provider logs (name -> (file, import format))
    "openai-chat": ("openai_chat_weather.json", "openai-chat"),
    "openai-responses": ("openai_responses_reasoning.json", "openai-responses"),
    "anthropic": ("anthropic_thinking_tools.json", "anthropic"),
}
RECORDINGS = [f"hermes/{name}" for name in HERMES] + [f"import/{name}" for name in PROVIDERS]
QUICK = {"hermes/tools_sequence", "import/openai-chat"}  # the unmarked representative subset


def recordings(quick: set[str] = QUICK) -> list[Any]:
    """The recordings as parameters; those outside ``quick`` are marked slow."""
    return [pytest.param(r, id=r) if r in quick else pytest.param(r, id=r, marks=pytest.mark.slow)
            for r in RECORDINGS]


def load_recording(name: str) -> Run:
    kind, _, key = name.partition("/")
    if kind == "hermes":
        path = FIXTURES / "hermes" / f"{key}.jsonl"
        if not path.exists():
            pytest.skip(f"{path.name} is not in this checkout")
        return Run.load(path)
    from replaykit.adapters import import_file

    file, fmt = PROVIDERS[key]
    imported = import_file(FIXTURES / "providers" / file, fmt)[0]
    return Run(imported.header, imported.events)


def stored(store: RunStore, name: str) -> Run:
    """The recording written into ``store`` (branches need their parent there)."""
    run = load_recording(name)
    store.write_run(run.header, list(run.events))
    return store.load(run.run_id)


def engine_extra(engine: str, tmp_path: Path) -> dict[str, Any]:
    """What an engine needs besides the options every engine takes: Hermes runs in a sandboxed home."""
    if engine != "hermes":
        return {}
    from replaykit.testing.hermes_harness import HermesSandbox

    sandbox = HermesSandbox(tmp_path / "hermes", plugin="entrypoint")
    return {"env": sandbox.env, "cwd": str(sandbox.cwd), "timeout": 300}


def options(store: RunStore, base_url: str = "", **kw: Any) -> PlayOptions:
    kw.setdefault("stale_timeout", 5.0)
    extra = {"retry_base_delay": 0.01, "retry_max_delay": 0.05, **kw.pop("extra", {})}
    return PlayOptions(base_url=base_url, model="candidate" if base_url else "", store=store, extra=extra, **kw)


def conversation(messages: list[Any]) -> list[tuple[str, str, tuple[str, ...]]]:
    """What a model sees of a message list, engine-neutral: role, text, tool call names / result texts."""
    out = []
    for raw in messages:
        message = raw if isinstance(raw, Message) else Message.model_validate(raw)
        extras = tuple(f"call:{c.name}" for c in message.tool_calls) + tuple(
            f"result:{p.content if isinstance(p.content, str) else json.dumps(p.content)}"
            for p in message.parts if getattr(p, "type", "") == "tool_result")
        results = tuple(e for e in extras if e.startswith("result:"))
        # A tool result reads the same in a user message (Anthropic) and a tool message (OpenAI).
        out.extend(("tool", "", (r,)) for r in results)
        if len(results) < len(extras) or message.text or not results:
            out.append((message.role, message.text or "", tuple(e for e in extras if e not in results)))
    return out


def wire_conversation(body: dict[str, Any]) -> list[tuple[str, str, tuple[str, ...]]]:
    """The same view of a Chat Completions request body (what an engine actually sent)."""
    from replaykit.core.trace.codecs import decode_request

    return conversation(list(decode_request("openai-chat", body).messages))


class Switch:
    """One scripted server per module: each test sets the policy it needs."""

    def __init__(self) -> None:
        self.policy: Policy = lambda request: Reply(text="(no policy set)")

    def __call__(self, request: ScriptRequest) -> Reply:
        return self.policy(request)


def run_export(run: Run, fmt: str) -> dict[str, Any]:
    """Render ``run`` as ``fmt`` and run the generated program in this process; its replay document."""
    import importlib

    from replaykit.exporters import FORMATS

    source: str = importlib.import_module(FORMATS[fmt].module).render(run)
    name = f"replaykit_export_{fmt.replace('-', '_')}"
    module = types.ModuleType(name)
    sys.modules[name] = module  # dataclasses and typing look the module up while it executes
    try:
        exec(compile(source, f"<export {fmt}>", "exec"), module.__dict__)  # our own generated code
        raw = io.BytesIO()
        out = io.TextIOWrapper(raw, encoding="utf-8")
        with contextlib.redirect_stdout(out):
            main: Callable[..., int] = module.__dict__["main"]
            code = main([])
        out.flush()
    finally:
        sys.modules.pop(name, None)
    assert code == 0
    document: dict[str, Any] = json.loads(raw.getvalue().decode("utf-8"))
    return document

