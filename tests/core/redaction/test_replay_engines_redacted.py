"""A redacted run still replays offline in every engine (openai, PydanticAI, LangGraph): 0 provider
calls against a scripted server that must never be asked, and the played run diffs equal (diff exit 0)
to the redacted run. Opaque provider tokens (thinking signatures, encrypted reasoning, tool call ids)
are never rewritten, and placeholders are consistent across the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replaykit.cli.main import main
from replaykit.core.analysis.diff import diff_runs
from replaykit.core.redaction import Redactor, redact_run
from replaykit.core.replay.play import PlayOptions
from replaykit.core.trace import jsonsafe
from replaykit.core.trace.ir import LLMCallEvent, Message, ReasoningPart, TextPart, ToolCallPart
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.testing.sample_pii_run import build_support_run
from replaykit.testing.scripted_server import ScriptedServer

PII = " (from Daniel Whitaker, daniel.whitaker@corp.internal, key sk-proj-Zq8w3NfT1xKp0aLm4RvB7yCe9HsD)"


def _check(store: RunStore, redacted: Run, played_id: str) -> None:
    played = store.load(played_id)
    assert diff_runs(redacted, played).equal
    assert main(["diff", redacted.run_id, played_id, "--store", str(store.root)]) == 0
    dump = json.dumps([jsonsafe.model_data(e) for e in redacted.events])
    assert "Whitaker" not in dump and "daniel.whitaker" not in dump and "Zq8w3NfT" not in dump


def _store_redacted(store: RunStore, run: Run) -> Run:
    red = redact_run(run, "patterns")
    assert red.events != run.events  # something was redacted: the test can fail
    store.write_run(red.header, red.events)
    return store.load(red.run_id)


def test_openai_engine_replays_a_redacted_run(tmp_path: Path) -> None:
    pytest.importorskip("openai")
    from replaykit.engines.openai import play

    store = RunStore(tmp_path / "s")
    red = _store_redacted(store, build_support_run())
    with ScriptedServer([]) as srv:
        result = play(red, PlayOptions(base_url=srv.base_url, model="m", store=store, serve_only=True,
                                       stale_timeout=5.0))
        assert srv.requests == []
    assert result.counters.provider_calls == 0 and result.counters.tool_executions == 0
    _check(store, red, result.run_id)


def test_pydantic_ai_engine_replays_a_redacted_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("pydantic_ai")
    from replaykit.engines.pydantic_ai.engine import play_run
    from tests.exporters import pai_fixtures

    user = pai_fixtures._user
    monkeypatch.setattr(pai_fixtures, "_user", lambda text: user(text + PII))
    store = RunStore(tmp_path / "s")
    red = _store_redacted(store, pai_fixtures.weather_run())
    with ScriptedServer([]) as srv:
        result = play_run(red, {"base_url": srv.base_url, "model": "m", "store": str(store.root)})
        assert srv.requests == []
    assert result.counters.provider_calls == 0
    _check(store, red, result.run_id)


def test_langgraph_engine_replays_a_redacted_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("langgraph")
    from replaykit.engines.langgraph import engine as langgraph_engine
    from tests.exporters import lg_fixtures

    user = lg_fixtures._user
    monkeypatch.setattr(lg_fixtures, "_user", lambda text: user(text + PII))
    store = RunStore(tmp_path / "s")
    red = _store_redacted(store, store.load(lg_fixtures.weather_run(store)))
    with ScriptedServer([]) as srv:
        result = langgraph_engine.play(red, PlayOptions(base_url=srv.base_url, model="m", store=store,
                                                        serve_only=True, extra={"checkpoint_db": str(tmp_path / "c.sqlite")}))
        assert srv.requests == []
    assert result.status == "completed", result.error
    assert result.counters.provider_calls == 0
    _check(store, red, result.run_id)


def test_opaque_provider_tokens_are_never_rewritten_and_placeholders_are_run_wide() -> None:
    run = build_support_run()
    secretish = "sk-proj-Zq8w3NfT1xKp0aLm4RvB7yCe9HsDtoken"  # secret-shaped on purpose
    call = next(e for e in run.events if isinstance(e, LLMCallEvent))
    msg = call.response.message
    reasoning = ReasoningPart(text="mail jane@corp.internal", signature=f"sig token {secretish}",
                              encrypted=f"gAAAA{secretish}==", id="rs_1")
    call.response.message = Message(role=msg.role, parts=[reasoning, *msg.parts])
    call.response.provider_details = {"id": f"resp_{secretish}", "system_fingerprint": "fp_3aa7262c27",
                                      "output": [{"type": "reasoning", "encrypted_content": f"token {secretish}"},
                                                 {"type": "redacted_thinking", "data": f"password {secretish}"}]}
    red = redact_run(run, "patterns")
    new = next(e for e in red.events if isinstance(e, LLMCallEvent) and e.id == call.id)
    part = new.response.message.parts[0]
    assert isinstance(part, ReasoningPart)
    assert (part.signature, part.encrypted, part.id) == (reasoning.signature, reasoning.encrypted, "rs_1")
    assert "jane@corp.internal" not in part.text
    assert new.response.provider_details == call.response.provider_details
    ids = [p.id for e in run.events if isinstance(e, LLMCallEvent) for p in e.response.message.parts
           if isinstance(p, ToolCallPart)]
    assert ids == [p.id for e in red.events if isinstance(e, LLMCallEvent) for p in e.response.message.parts
                   if isinstance(p, ToolCallPart)]
    # one value, one placeholder, in every event of the run
    r = Redactor(mode="patterns")
    a, b = r.redact_text("write to jane@corp.internal"), r.redact_value({"to": "jane@corp.internal"})
    assert a.split()[-1] == b["to"] and isinstance(TextPart(text=a), TextPart)
