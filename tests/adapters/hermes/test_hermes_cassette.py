"""A real Hermes ``AIAgent`` (0.19.0, in a subprocess) inside a cassette: recorded against the scripted
server, then replayed with the server stopped to the same answer with 0 provider requests."""

from __future__ import annotations

import pytest

from replaykit.core.trace.run import Run
from replaykit.testing.hermes_harness import HermesSandbox
from replaykit.testing.scripted_server import ScriptedServer, hermes_default_policy

pytestmark = [pytest.mark.hermes, pytest.mark.slow]


def test_hermes_agent_recorded_then_served_from_cassette(tmp_path):
    cassette = tmp_path / "tests" / "cassettes" / "test_hermes.jsonl"
    spec = {"turns": ["Please echo hello"], "cassette": str(cassette)}
    sandbox = HermesSandbox(tmp_path / "rec", plugin="none")
    with ScriptedServer(hermes_default_policy()) as srv:
        recorded = sandbox.run_agent({**spec, "base_url": srv.base_url, "cassette_mode": "once"})
        sent = len(srv.llm_requests)
        url = srv.base_url
    answer = recorded["results"][0]["final_response"]
    assert answer and recorded["cassette"]["recorded"] == sent == 3
    run = Run.load(cassette)
    assert [s.kind for s in run.steps] == ["llm", "tool", "llm", "tool", "llm"]
    assert run.llm_calls()[0].provider_details == {"streamed": True}  # Hermes streams; assembled
    assert [t.name for t in run.tool_calls()] == ["harness_echo", "todo"]

    before = cassette.read_bytes()
    replay = HermesSandbox(tmp_path / "replay", plugin="none")
    served = replay.run_agent({**spec, "base_url": url, "cassette_mode": "none"})  # the server is stopped
    assert served["results"][0]["final_response"] == answer
    assert served["cassette"]["served"] == 3 and served["cassette"]["provider_calls"] == 0
    assert served["cassette"]["misses"] == [] and cassette.read_bytes() == before

    changed = HermesSandbox(tmp_path / "changed", plugin="none")
    missed = changed.run_agent({**spec, "turns": ["Please echo goodbye"], "base_url": url, "cassette_mode": "none"})
    assert missed["cassette"]["provider_calls"] == 0 and missed["cassette"]["served"] == 0
    explanation = missed["cassette"]["misses"][0]
    assert "nearest recorded step 0" in explanation
    assert "recorded 'Please echo hello' vs actual 'Please echo goodbye'" in explanation
    assert cassette.read_bytes() == before
