"""A cassette recorded by a test, redacted with ``replaykit redact``, still serves that test offline.

pytest-in-pytest (pytester): the inner test drives the real ``openai`` client through a tool loop against
the scripted server on 127.0.0.1 with a name, a phone number and an e-mail address in its prompt. It is
recorded (``--replaykit-record-mode=once``), the cassette is redacted by the real command line, and the
same test runs again with the server gone: every request is matched in redacted space
(``replaykit/adapters/redacted_cassette.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from replaykit.core.trace.run import Run
from replaykit.testing.scripted_server import ScriptedServer
from tests.adapters.recorder_support import CLOSED_URL, weather_policy

pytest_plugins = ("pytester",)
pytest.importorskip("openai")
pytest.importorskip("presidio_analyzer")

NAME, PHONE, EMAIL = "Ingrid Halvorsen", "+44 20 7946 0958", "ingrid.halvorsen@northwind.example"
PROMPT = f"Weather in Paris? I am {NAME}, call me on {PHONE} or write to {EMAIL}. Thanks, {NAME}"

AGENT_TEST = """
import os
import pytest
from tests.adapters.recorder_support import FINAL, chat_agent

@pytest.mark.replaykit
def test_weather_for_a_customer():
    assert chat_agent(os.environ["RK_URL"], prompt=os.environ["RK_PROMPT"]) == FINAL
"""


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "replaykit.pytest_plugin", "-p", "no:cacheprovider", *args)


def _redact(path: Path) -> None:
    """``replaykit redact CASSETTE -o NEW`` (the real command), then the redacted file replaces it."""
    out = path.with_name("redacted.jsonl")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    done = subprocess.run([sys.executable, "-m", "replaykit.cli.main", "redact", str(path), "-o", str(out),
                           "--mode", "patterns"], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    out.replace(path)


def _opaque_ids(run: Run) -> list[str]:
    return [p.id for e in run.events if e.kind == "llm_call"
            for p in e.response.message.parts if p.type == "tool_call"]


@pytest.mark.slow
def test_a_redacted_cassette_still_serves_the_test_that_recorded_it(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    tests = pytester.mkdir("tests")
    (tests / "test_agent.py").write_text(textwrap.dedent(AGENT_TEST))
    monkeypatch.setenv("RK_PROMPT", PROMPT)
    with ScriptedServer(weather_policy()) as srv:
        monkeypatch.setenv("RK_URL", srv.base_url)
        _run(pytester, "--replaykit-record-mode=once").assert_outcomes(passed=1)
        assert len(srv.llm_requests) == 2  # the tool call, then the answer
    cassette = tests / "cassettes" / "test_agent.test_weather_for_a_customer.jsonl"
    original = Run.load(cassette)
    assert NAME in cassette.read_text(encoding="utf-8")

    _redact(cassette)
    text = cassette.read_text(encoding="utf-8")
    # a piece of the phone number with its space: "7946" alone turns up in timestamps and durations
    for value in (NAME, "Halvorsen", "20 7946", "7946 0958", EMAIL, "northwind"):
        assert value not in text, value
    redacted = Run.load(cassette)
    assert redacted.header.lineage is not None and redacted.header.lineage.relation == "redaction"
    assert _opaque_ids(redacted) == _opaque_ids(original) and _opaque_ids(original)  # tool-call ids untouched

    monkeypatch.setenv("RK_URL", CLOSED_URL)  # offline: nothing answers on port 9
    _run(pytester).assert_outcomes(passed=1)  # record mode none: served from the redacted cassette

    # Another customer in the same places: the cassette cannot tell (it no longer knows the values).
    monkeypatch.setenv("RK_PROMPT", PROMPT.replace(NAME, "Tomasz Wiśniewski"))
    _run(pytester).assert_outcomes(passed=1)

    # Two people where the record had one, or other words: a miss, explained in redacted text only.
    monkeypatch.setenv("RK_PROMPT", PROMPT.replace(f"Thanks, {NAME}", "Thanks, Tomasz Wiśniewski"))
    two = _run(pytester)
    two.assert_outcomes(failed=1)
    assert "not in cassette" in two.stdout.str() and "Wiśniewski" not in two.stdout.str()
    monkeypatch.setenv("RK_PROMPT", PROMPT.replace("Paris", "Rome"))
    _run(pytester).assert_outcomes(failed=1)

    # A redacted cassette is never appended to: live calls would land in it in the clear.
    refused = _run(pytester, "--replaykit-record-mode=new_episodes")
    refused.assert_outcomes(errors=1)
    assert "is redacted" in refused.stdout.str()
    assert json.loads(cassette.read_text(encoding="utf-8").splitlines()[0])["lineage"]["relation"] == "redaction"
