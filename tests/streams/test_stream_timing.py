"""``--stream-timing fast|recorded`` in ``replaykit replay`` and ``replaykit play``: a step recorded as a
stream is served frame by frame (the one pacing of ``frames.play``, as over HTTP), at once or with the
recorded gap before each frame. Timing asserts are lower bounds only (a loaded machine is slower, never
faster); ``fast`` is checked by what the pacing function was handed.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from replaykit.adapters.cassette import Cassette
from replaykit.cli.main import main
from replaykit.core.replay.cursor import ReplayCursor
from replaykit.core.replay.replay import replay_run
from replaykit.core.trace.codecs import frames
from replaykit.core.trace.run import Run
from replaykit.testing.scripted_server import Reply, ScriptedServer

openai = pytest.importorskip("openai")

GAP = 0.03


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    """A streamed Chat Completions answer recorded from a server that waits ``GAP`` between frames, and
    the chunks the real client received."""
    path = tmp_path_factory.mktemp("timing") / "run.jsonl"
    reply = Reply(text="The forecast for Paris is sunny, 21 degrees, light wind from the west.",
                  reasoning="Answer from what I know.", frame_gap=GAP)
    with ScriptedServer(lambda req: reply) as srv, Cassette(path, "once"):
        client = openai.OpenAI(base_url=srv.base_url, api_key="sk-test", max_retries=0)
        stream = client.chat.completions.create(model="gpt-test", stream=True,
                                                messages=[{"role": "user", "content": "Forecast for Paris?"}])
        chunks = [chunk.to_dict() for chunk in stream]
    return path, chunks


def _gaps(path: Path) -> list[float]:
    stream = frames.recorded(Run.load(path).llm_calls()[0].response)
    assert stream is not None and stream.offsets is not None and len(stream.frames) >= 4
    return [w for w in frames.delays(stream, "recorded") if w > 0]


def _served_payloads(chunks: list[bytes]) -> list[dict[str, Any]]:
    return frames.parse_sse(b"".join(chunks)).payloads


@pytest.mark.parametrize("timing", ["fast", "recorded"])
def test_cursor_serves_recorded_frames_paced(recorded: tuple[Path, list[dict[str, Any]]], timing: str) -> None:
    path, client_chunks = recorded
    run = Run.load(path)
    waits: list[float] = []
    cursor = ReplayCursor(run, stream_timing=timing, sleep=waits.append)
    event = run.llm_calls()[0]
    decision = cursor.llm(run.request_messages(event))
    assert decision.action == "serve" and decision.stream is not None
    assert _served_payloads(decision.stream) == client_chunks  # frame for frame what the client read
    if timing == "fast":
        assert waits == []
    else:
        assert waits == _gaps(path) and sum(waits) >= GAP * (len(client_chunks) - 2) * 0.9


def test_replay_recorded_waits_the_recorded_gaps(recorded: tuple[Path, list[dict[str, Any]]],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = recorded
    total = sum(_gaps(path))
    waits: list[float] = []
    replay_run(Run.load(path), stream_timing="fast", sleep=waits.append)
    assert waits == []
    replay_run(Run.load(path), stream_timing="recorded", sleep=waits.append)
    assert waits == _gaps(path)

    assert main(["replay", str(path), "--stream-timing", "recorded", "--json"]) == 0
    paced = json.loads(capsys.readouterr().out)
    assert paced["replay_duration"] >= total
    assert main(["replay", str(path), "--json"]) == 0
    fast = json.loads(capsys.readouterr().out)
    assert fast["replay_duration"] < total / 2
    assert {k: v for k, v in paced.items() if "replay" not in k and k not in ("steps", "timing")} == \
        {k: v for k, v in fast.items() if "replay" not in k and k not in ("steps", "timing")}


@pytest.mark.parametrize("engine", ["openai", "pydantic-ai", "langgraph"])
def test_play_offline_recorded_timing(recorded: tuple[Path, list[dict[str, Any]]], tmp_path: Path,
                                      engine: str, capsys: pytest.CaptureFixture[str]) -> None:
    path, client_chunks = recorded
    total = sum(_gaps(path))
    store = str(tmp_path / "store")
    started = time.monotonic()
    assert main(["play", str(path), "--engine", engine, "--offline", "--stream-timing", "recorded",
                 "--store", store, "--json"]) == 0
    elapsed = time.monotonic() - started
    result = json.loads(capsys.readouterr().out)
    assert result["counters"]["served_llm_steps"] == 1 and result["counters"]["provider_calls"] == 0
    assert elapsed >= total
    played = Run.load(next((tmp_path / "store").rglob(f"{result['run_id']}*.jsonl")))
    stream = frames.recorded(played.llm_calls()[0].response)
    assert stream is not None and stream.payloads == client_chunks  # the played run keeps the frames


def test_hermes_child_gets_the_stream_timing(recorded: tuple[Path, list[dict[str, Any]]], tmp_path: Path) -> None:
    """The Hermes engine's cursor lives in a child process: the pacing travels in its spec."""
    from replaykit.core.replay.play import PlayOptions
    from replaykit.engines.hermes.engine import build_spec

    path, _ = recorded
    spec = build_spec(Run.load(path), PlayOptions(serve_only=True, stream_timing="recorded"), path)
    assert spec["stream_timing"] == "recorded"


@pytest.mark.parametrize("argv", [["replay", "RUN", "--stream-timing", "slow"],
                                  ["play", "RUN", "--engine", "openai", "--offline", "--stream-timing", "slow"]])
def test_bad_stream_timing_is_one_line_exit_2(recorded: tuple[Path, list[dict[str, Any]]], argv: list[str],
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = recorded
    argv = [str(path) if a == "RUN" else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "unknown stream timing 'slow': use fast or recorded" in err
