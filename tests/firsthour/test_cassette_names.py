"""Issue 28, item 3: ``cassette="module.test"`` names ``module.test.jsonl`` (a dot is not a suffix), and a
missing cassette next to one that was probably meant says so."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from replaykit.adapters.cassette import Cassette
from replaykit.core.errors import BadInput
from replaykit.testing.scripted_server import ScriptedServer, call, sequence_policy

pytest_plugins = ("pytester",)
pytest.importorskip("openai")

TESTS = """
import os
import openai
import pytest

@pytest.mark.replaykit(cassette=os.environ["RK_CASSETTE"])
def test_named():
    client = openai.OpenAI(base_url=os.environ["RK_URL"], api_key="sk-test", max_retries=0)
    assert client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}]).choices
"""


def test_a_near_miss_is_named(tmp_path: Path) -> None:
    (tmp_path / "test_weather.test_paris.jsonl").write_text("")
    for wrong in ("test_weather.test_paris", "test_weather.test_pariss.jsonl"):
        with pytest.raises(BadInput, match=r"did you mean test_weather\.test_paris\.jsonl"):
            Cassette(tmp_path / wrong, "none").start()
    with pytest.raises(BadInput) as info:
        Cassette(tmp_path / "other.jsonl", "none").start()
    assert "did you mean" not in str(info.value)


def test_marker_name_without_suffix(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    tests = pytester.mkdir("tests")
    (tests / "test_named.py").write_text(textwrap.dedent(TESTS))
    monkeypatch.setenv("RK_CASSETTE", "test_weather.test_paris")
    with ScriptedServer(sequence_policy([call("x", {})])) as srv:
        monkeypatch.setenv("RK_URL", srv.base_url)
        args = ("-p", "replaykit.pytest_plugin", "-p", "no:cacheprovider")
        pytester.runpytest_inprocess(*args, "--replaykit-record-mode=once").assert_outcomes(passed=1)
    assert (tests / "cassettes" / "test_weather.test_paris.jsonl").is_file()
    monkeypatch.setenv("RK_URL", "http://127.0.0.1:9/v1")
    pytester.runpytest_inprocess(*args).assert_outcomes(passed=1)  # found under the same name
