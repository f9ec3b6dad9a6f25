"""Issue 28, item 5: an unreachable endpoint is one clear line naming the URL (no doubled phrase), and a
terminal sees each retry while it waits."""

from __future__ import annotations

import socket

import pytest

from replaykit.core.replay.live_model import LiveModel
from replaykit.core.replay.play import PlayOptions
from replaykit.core.replay.resilience import GaveUp, RetryPolicy, classify, retry_call
from replaykit.core.trace.ir import Message, TextPart


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again when the block ends: nothing listens there


def test_live_model_names_the_url_once() -> None:
    pytest.importorskip("openai")
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    model = LiveModel(PlayOptions(base_url=url, model="m", max_attempts=2, extra={"retry_base_delay": 0.01}))
    with pytest.raises(GaveUp) as info:
        model.complete([Message(role="user", parts=[TextPart(text="hi")])], None, {})
    text = str(info.value)
    assert text.startswith(f"cannot reach the provider at {url}")
    assert text.lower().count("connection error") == 1, text
    assert text.endswith("(gave up after 2 attempts)")


def test_the_doubled_client_message_is_said_once() -> None:
    class ClientError(ConnectionError):
        message = "Connection error."

    assert classify(ClientError("Connection error.")).describe() == "cannot reach the provider: Connection error."


def test_retries_are_announced_on_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    def refuse() -> None:
        with socket.create_connection(("127.0.0.1", _closed_port()), timeout=1):
            pass

    policy = RetryPolicy(max_attempts=3, base_delay=0.0, jitter=0.0)
    with pytest.raises(GaveUp):
        retry_call(refuse, policy, where="http://x/v1", announce=True, sleep=lambda _s: None)
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["replaykit: cannot reach the provider at http://x/v1; retry 2 of 3 in 0.0 s",
                     "replaykit: cannot reach the provider at http://x/v1; retry 3 of 3 in 0.0 s"]
    with pytest.raises(GaveUp):  # not a terminal (pytest captures stderr): quiet
        retry_call(refuse, policy, where="http://x/v1", announce=None, sleep=lambda _s: None)
    assert capsys.readouterr().err == ""
