"""A real Hermes ``AIAgent`` (the installed release, in a subprocess) inside a cassette: recorded against the
scripted server, then replayed with the server stopped to the same answer with 0 provider requests.
(Hermes 0.22's session-title call is switched off: it is not part of the agent's turn, and a cassette
records every HTTP call as a step.)"""

from __future__ import annotations

import pytest

from replaykit.core.trace.run import Run
from replaykit.testing.hermes_harness import HermesSandbox
from replaykit.testing.scripted_server import ScriptedServer, hermes_default_policy
from tests.adapters.hermes.helpers import todo_name, tool_names

NO_TITLES = "auxiliary:\n  title_generation:\n    enabled: false\n"

pytestmark = [pytest.mark.hermes, pytest.mark.slow]


def test_hermes_agent_recorded_then_served_from_cassette(tmp_path):
    cassette = tmp_path / "tests" / "cassettes" / "test_hermes.jsonl"
    spec = {"turns": ["Please echo hello"], "cassette": str(cassette)}
    sandbox = HermesSandbox(tmp_path / "rec", plugin="none", extra_config=NO_TITLES)
    with ScriptedServer(hermes_default_policy()) as srv:
        recorded = sandbox.run_agent({**spec, "base_url": srv.base_url, "cassette_mode": "once"})
        sent = len(srv.llm_requests)
        url = srv.base_url
    answer = recorded["results"][0]["final_response"]
    assert answer and recorded["cassette"]["recorded"] == sent == 3
    run = Run.load(cassette)
    assert [s.kind for s in run.steps] == ["llm", "tool", "llm", "tool", "llm"]
    assert run.llm_calls()[0].provider_details == {"streamed": True}  # Hermes streams; assembled
    frames = run.llm_calls()[0].response.provider_details["stream"]  # and kept chunk for chunk
    assert frames["api"] == "openai-chat" and len(frames["frames"]) >= 4 and frames["done"] is True
    assert frames["frames"][-1]["choices"] == [] and "usage" in frames["frames"][-1]  # usage last
    assert tool_names(run) == ["harness_echo", todo_name()]  # (through the Tool Search bridge on 0.22)

    before = cassette.read_bytes()
    replay = HermesSandbox(tmp_path / "replay", plugin="none", extra_config=NO_TITLES)
    served = replay.run_agent({**spec, "base_url": url, "cassette_mode": "none"})  # the server is stopped
    assert served["results"][0]["final_response"] == answer
    assert served["cassette"]["served"] == 3 and served["cassette"]["provider_calls"] == 0
    assert served["cassette"]["misses"] == [] and cassette.read_bytes() == before

    changed = HermesSandbox(tmp_path / "changed", plugin="none", extra_config=NO_TITLES)
    missed = changed.run_agent({**spec, "turns": ["Please echo goodbye"], "base_url": url, "cassette_mode": "none"})
    assert missed["cassette"]["provider_calls"] == 0 and missed["cassette"]["served"] == 0
    explanation = missed["cassette"]["misses"][0]
    assert "nearest recorded step 0" in explanation
    assert "recorded 'Please echo hello' vs actual 'Please echo goodbye'" in explanation
    assert cassette.read_bytes() == before
