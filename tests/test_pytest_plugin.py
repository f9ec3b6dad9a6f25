"""The pytest plugin, run in-process with pytester: cassettes named after the test, record modes, misses.

Inner runs load the plugin with ``-p replaykit.pytest_plugin`` and no entry-point plugins
(``PYTEST_DISABLE_PLUGIN_AUTOLOAD``): the shared venvs were installed before the ``pytest11`` entry
point existed, and re-importing every installed plugin per in-process run costs seconds.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from replaykit.core.trace.run import Run
from replaykit.testing.scripted_server import ScriptedServer
from tests.adapters.recorder_support import CLOSED_URL, lines, weather_policy

pytest_plugins = ("pytester",)
pytest.importorskip("openai")


AGENT_TESTS = """
import os
import pytest
from tests.adapters.recorder_support import FINAL, chat_agent

@pytest.mark.replaykit
def test_weather():
    assert chat_agent(os.environ["RK_URL"], prompt=os.environ.get("RK_PROMPT", "Weather in Paris?")) == FINAL

def test_with_fixture(replaykit_cassette):
    assert chat_agent(os.environ["RK_URL"], stream=True) == FINAL
    counters = replaykit_cassette.session.counters
    assert counters.provider_calls == int(os.environ["RK_EXPECT_CALLS"])
"""


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    tests = pytester.mkdir("tests")
    (tests / "test_agent.py").write_text(textwrap.dedent(AGENT_TESTS))
    return tests


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "replaykit.pytest_plugin", "-p", "no:cacheprovider", *args)


def test_record_once_then_replay_offline_then_explain_a_miss(
        pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RK_URL", CLOSED_URL)
    missing = run(pytester)  # default mode none, no cassette yet
    missing.assert_outcomes(errors=2)  # the fixture fails at set-up
    missing.stdout.fnmatch_lines(["*no cassette*test_agent.test_weather.jsonl for tests/test_agent.py::"
                                  "test_weather: record it with --replaykit-record-mode=once"])

    with ScriptedServer(weather_policy()) as srv:
        monkeypatch.setenv("RK_URL", srv.base_url)
        monkeypatch.setenv("RK_EXPECT_CALLS", "2")
        run(pytester, "--replaykit-record-mode=once").assert_outcomes(passed=2)
        sent = len(srv.llm_requests)
    assert sent == 4
    cassettes = sorted(p.name for p in (project / "cassettes").iterdir())
    assert cassettes == ["test_agent.test_weather.jsonl", "test_agent.test_with_fixture.jsonl"]
    recorded = Run.load(project / "cassettes" / "test_agent.test_weather.jsonl")
    assert recorded.run_id == "test_agent.test_weather" and len(recorded.steps) == 3

    monkeypatch.setenv("RK_URL", CLOSED_URL)  # the server is gone
    monkeypatch.setenv("RK_EXPECT_CALLS", "0")
    before = {p.name: p.read_bytes() for p in (project / "cassettes").iterdir()}
    run(pytester).assert_outcomes(passed=2)

    monkeypatch.setenv("RK_PROMPT", "Weather in Rome?")
    changed = run(pytester, "-k", "test_weather")
    changed.assert_outcomes(failed=1)
    assert ("test_agent.test_weather.jsonl for tests/test_agent.py::test_weather: nearest recorded step 0, "
            "first difference at messages[1].parts[0].text: recorded 'Weather in Paris?' vs actual "
            "'Weather in Rome?'") in changed.stdout.str()
    assert {p.name: p.read_bytes() for p in (project / "cassettes").iterdir()} == before


def test_new_episodes_appends_and_failing_test_keeps_cassette(
        pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with ScriptedServer(weather_policy()) as srv:
        monkeypatch.setenv("RK_URL", srv.base_url)
        run(pytester, "--replaykit-record-mode=once", "-k", "test_weather").assert_outcomes(passed=1)
        path = project / "cassettes" / "test_agent.test_weather.jsonl"
        first = lines(path)
        monkeypatch.setenv("RK_PROMPT", "And in Lyon?")
        run(pytester, "--replaykit-record-mode=new_episodes", "-k", "test_weather").assert_outcomes(passed=1)
        second = lines(path)
        assert second[: len(first)] == first and len(second) > len(first)
        monkeypatch.setenv("RK_EXPECT_CALLS", "99")  # test_with_fixture fails after recording live calls
        (project / "cassettes" / "test_agent.test_with_fixture.jsonl").write_bytes(b"".join(first))
        before = (project / "cassettes" / "test_agent.test_with_fixture.jsonl").read_bytes()
        run(pytester, "--replaykit-record-mode=all", "-k", "test_with_fixture").assert_outcomes(failed=1)
    assert (project / "cassettes" / "test_agent.test_with_fixture.jsonl").read_bytes() == before
    assert not [p for p in (project / "cassettes").iterdir() if p.name.endswith(".tmp")]


def test_record_mode_typos_are_one_line_errors(pytester: pytest.Pytester, project: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RK_URL", CLOSED_URL)
    flag = run(pytester, "--replaykit-record-mode=nonee")
    assert flag.ret == pytest.ExitCode.USAGE_ERROR
    flag.stderr.fnmatch_lines(["*--replaykit-record-mode: invalid choice: 'nonee'*"])
    (project / "test_marker.py").write_text(textwrap.dedent("""
        import pytest

        @pytest.mark.replaykit(record_mode="onec")
        def test_typo():
            pass
    """))
    marker = run(pytester, "-k", "test_typo")
    marker.assert_outcomes(errors=1)
    assert ("unknown replaykit record mode 'onec' (@pytest.mark.replaykit of tests/test_marker.py::test_typo): "
            "use one of none, once, new_episodes, all, hybrid") in marker.stdout.str()
    pytester.makeini("[pytest]\nreplaykit_record_mode = al\n")
    ini = run(pytester)
    assert ini.ret == pytest.ExitCode.USAGE_ERROR
    ini.stderr.fnmatch_lines(["*unknown replaykit record mode 'al'*"])
