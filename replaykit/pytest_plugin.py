"""pytest plugin: model-call cassettes (entry point ``pytest11 = replaykit``, the ``pytest`` extra).

- ``@pytest.mark.replaykit`` on a test (or the ``replaykit_cassette`` fixture) activates its cassette:
  every model call any httpx / httpx2 client makes during the test (openai, anthropic, PydanticAI,
  LangChain / LangGraph, Hermes; OpenAI Chat / Responses and Anthropic Messages) is served from, or recorded into, ``<test dir>/cassettes/<module>.<test>
  .jsonl``, an ordinary replaykit run file (``replaykit inspect / replay / validate`` read it).
- Record mode: ``--replaykit-record-mode`` beats ``@pytest.mark.replaykit(record_mode=...)``, which beats
  the ini option ``replaykit_record_mode``; default ``none`` (see ``replaykit.adapters.cassette``).
- Streams are served chunk for chunk; ``--replaykit-stream-timing recorded`` (ini
  ``replaykit_stream_timing``) paces them with the recorded gaps, ``fast`` (default) sends them at once.
- In ``none`` mode a request the cassette does not hold fails the test with one line naming the test,
  the nearest recorded step and the first differing field; the request never leaves the process.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from replaykit.adapters.cassette import RECORD_MODES, Cassette, check_mode, run_id_for
from replaykit.core.errors import ReplaykitError
from replaykit.core.trace.codecs.frames import STREAM_TIMINGS, check_timing

_MARK = "replaykit"
_CASSETTE = pytest.StashKey[Cassette]()
_CALL_FAILED = pytest.StashKey[bool]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("replaykit", "replaykit model-call cassettes")
    group.addoption("--replaykit-record-mode", action="store", default=None, choices=RECORD_MODES,
                    help="cassette record mode: none (default), once, new_episodes, all, hybrid")
    group.addoption("--replaykit-stream-timing", action="store", default=None, choices=STREAM_TIMINGS,
                    help="pacing of served streams: fast (default: every frame at once) or recorded")
    parser.addini("replaykit_record_mode", "default cassette record mode", default="none")
    parser.addini("replaykit_stream_timing", "pacing of served streams (fast, recorded)", default="fast")
    parser.addini("replaykit_cassette_dir", "cassette folder, relative to each test file", default="cassettes")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{_MARK}(record_mode=None, cassette=None): serve or record this test's model calls from a cassette",
    )
    try:
        check_mode(str(config.getini("replaykit_record_mode")), "ini option replaykit_record_mode")
        check_timing(str(config.getini("replaykit_stream_timing")))
    except ReplaykitError as exc:
        raise pytest.UsageError(str(exc)) from exc


def _mode(request: pytest.FixtureRequest, marker: pytest.Mark | None) -> str:
    cli = request.config.getoption("--replaykit-record-mode")
    if cli:
        return str(cli)
    if marker is not None and marker.kwargs.get("record_mode"):
        return check_mode(str(marker.kwargs["record_mode"]), f"@pytest.mark.replaykit of {request.node.nodeid}")
    return str(request.config.getini("replaykit_record_mode"))


def cassette_path(request: pytest.FixtureRequest, marker: pytest.Mark | None = None) -> Path:
    """``<test dir>/<cassette dir>/<module>.<test name>.jsonl`` (or the marker's ``cassette=``)."""
    node_path = Path(str(request.node.path))
    folder = node_path.parent / str(request.config.getini("replaykit_cassette_dir"))
    named = marker.kwargs.get("cassette") if marker is not None else None
    if named:
        path = Path(str(named))
        # "test_weather.test_paris" names test_weather.test_paris.jsonl (a dot in a name is not a suffix)
        name = path.name if path.suffix == ".jsonl" else f"{path.name}.jsonl"
        return path.with_name(name) if path.is_absolute() else folder / path.parent / name
    return folder / f"{run_id_for(f'{node_path.stem}.{request.node.name}')}.jsonl"


@pytest.fixture
def replaykit_cassette(request: pytest.FixtureRequest) -> Iterator[Cassette]:
    """The test's active cassette (``.session.counters``: served / recorded / misses / provider calls)."""
    marker = request.node.get_closest_marker(_MARK)
    problem = None
    try:
        timing = request.config.getoption("--replaykit-stream-timing") or \
            str(request.config.getini("replaykit_stream_timing"))
        cassette = Cassette(cassette_path(request, marker), _mode(request, marker), label=request.node.nodeid,
                            metadata={"test": request.node.nodeid}, stream_timing=timing)
        cassette.start()
    except ReplaykitError as exc:
        problem = str(exc)
    if problem is not None:
        pytest.fail(problem, pytrace=False)
    request.node.stash[_CASSETTE] = cassette
    yield cassette
    # A failing test never replaces (or truncates) a cassette: a new recording is only committed on success.
    cassette.stop(ok=not request.node.stash.get(_CALL_FAILED, True))


@pytest.fixture(autouse=True)
def _replaykit_marker(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker(_MARK) is not None:
        request.getfixturevalue("replaykit_cassette")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    cassette = item.stash.get(_CASSETTE, None)
    try:
        result = yield
    except BaseException:
        session = cassette.session if cassette is not None else None
        if session is not None and session.misses:  # the refused request is why the agent failed
            pytest.fail(session.misses[0], pytrace=False)
        raise
    session = cassette.session if cassette is not None else None
    if session is not None and session.misses:
        # The agent may have swallowed the refused request's error: the test fails with the explanation.
        item.stash[_CALL_FAILED] = True
        pytest.fail(session.misses[0], pytrace=False)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item,
                              call: pytest.CallInfo[Any]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.when == "call":
        item.stash[_CALL_FAILED] = item.stash.get(_CALL_FAILED, False) or report.failed
    return report
