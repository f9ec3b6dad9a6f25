"""Resilience pieces: classification, retry policy and loop, stale guard, continuation, budget."""

from __future__ import annotations

import email.utils
import random
import time
import urllib.error
from collections.abc import Iterator
from typing import Any

import pytest

from replaykit.core.replay.resilience import (
    Classified,
    GaveUp,
    IterationBudget,
    RetryPolicy,
    StaleStream,
    classify,
    continue_truncated,
    parse_retry_after,
    retry_call,
    stale_guard,
)
from replaykit.core.trace.ir import LLMResponse, Message, TextPart, Usage


class FakeHTTPError(Exception):
    """Shaped like openai.APIStatusError / PydanticAI ModelHTTPError (status_code, response.headers)."""

    def __init__(self, status: int, headers: dict[str, str] | None = None, body: Any = None) -> None:
        super().__init__(f"HTTP {status}")
        self.status_code = status
        self.body = body
        self.response = type("R", (), {"headers": headers or {}, "status_code": status})()


class APITimeoutError(Exception):
    pass


@pytest.mark.parametrize(
    ("exc", "kind", "retryable"),
    [
        (FakeHTTPError(429, {"Retry-After": "7"}), "rate_limit", True),
        (FakeHTTPError(500), "server", True),
        (FakeHTTPError(503), "server", True),
        (FakeHTTPError(401), "auth", False),
        (FakeHTTPError(403), "auth", False),
        (FakeHTTPError(400, body={"error": {"message": "bad tool schema"}}), "bad_request", False),
        (FakeHTTPError(400, body={"error": {"code": "context_length_exceeded"}}), "context_overflow", False),
        (FakeHTTPError(404), "not_found", False),
        (APITimeoutError("timed out"), "timeout", True),
        (StaleStream("no data"), "stale", True),
        (ConnectionRefusedError(111, "refused"), "connection", True),
        (ValueError("weird"), "unknown", False),
    ],
)
def test_classify(exc: BaseException, kind: str, retryable: bool) -> None:
    error = classify(exc)
    assert error.kind == kind and error.retryable is retryable
    assert "\n" not in error.describe()


def test_classify_wrapped_and_message_only() -> None:
    try:
        try:
            raise FakeHTTPError(503)
        except FakeHTTPError as inner:
            raise RuntimeError("agent call failed") from inner
    except RuntimeError as outer:
        assert classify(outer).kind == "server" and classify(outer).status_code == 503
    text_only = Exception("Error code: 429 - {'error': {'message': 'slow down'}}")
    assert classify(text_only).kind == "rate_limit"
    assert classify(Exception("nothing numeric here 500x")).kind == "unknown"


def test_classify_status_and_urllib() -> None:
    assert classify(429, {"retry-after-ms": "1500"}).retry_after == 1.5
    assert classify(502).kind == "server"
    err = urllib.error.HTTPError("http://x", 401, "Unauthorized", {}, None)  # type: ignore[arg-type]
    assert classify(err).kind == "auth"
    assert classify(FakeHTTPError(429, {"Retry-After": "7"})).retry_after == 7.0


def test_retry_after_http_date() -> None:
    now = time.time()
    header = email.utils.formatdate(now + 30, usegmt=True)
    assert 28 <= (parse_retry_after({"Retry-After": header}, now=now) or 0) <= 31
    assert parse_retry_after({"Retry-After": "garbage"}) is None
    assert parse_retry_after(None) is None


def test_policy_delays() -> None:
    policy = RetryPolicy(max_attempts=4, base_delay=1.0, max_delay=3.0, jitter=0.5)
    rng = random.Random(1)
    server = Classified("server")
    delays = [policy.delay(n, server, rng) for n in (1, 2, 3)]
    assert 1.0 <= delays[0] < 1.5 and 2.0 <= delays[1] < 3.0 and delays[2] == pytest.approx(3.0, abs=1.5)
    assert policy.delay(4, server) is None  # bounded
    assert policy.delay(1, Classified("auth")) is None  # not retryable
    assert policy.delay(1, Classified("rate_limit", retry_after=9.0)) == 9.0  # Retry-After wins
    assert policy.delay(1, Classified("rate_limit", retry_after=999.0)) is None


def test_retry_call_counts_and_gives_up() -> None:
    attempts: list[int] = []
    errors: list[tuple[str, int, float | None]] = []
    sleeps: list[float] = []
    outcomes: Iterator[Any] = iter([FakeHTTPError(500), FakeHTTPError(429, {"Retry-After": "2"}), "ok"])

    def fn() -> str:
        item = next(outcomes)
        if isinstance(item, Exception):
            raise item
        return str(item)

    assert retry_call(fn, RetryPolicy(base_delay=0.1), on_attempt=attempts.append,
                      on_error=lambda e, n, w: errors.append((e.kind, n, w)), sleep=sleeps.append) == "ok"
    assert attempts == [1, 2, 3]
    assert [e[0] for e in errors] == ["server", "rate_limit"] and sleeps[1] == 2.0

    with pytest.raises(GaveUp) as info:
        retry_call(lambda: (_ for _ in ()).throw(FakeHTTPError(401)), sleep=sleeps.append)
    assert info.value.attempts == 1 and info.value.error.kind == "auth"


def test_stale_guard() -> None:
    def slow() -> Iterator[int]:
        yield 1
        time.sleep(2)
        yield 2

    got: list[int] = []
    started = time.monotonic()
    with pytest.raises(StaleStream):
        for item in stale_guard(slow(), 0.2):
            got.append(item)
    assert got == [1] and time.monotonic() - started < 1.5
    assert list(stale_guard(iter([1, 2, 3]), 0.5)) == [1, 2, 3]


def _resp(text: str, finish: str) -> LLMResponse:
    return LLMResponse(message=Message(role="assistant", parts=[TextPart(text=text)]), finish_reason=finish,
                       usage=Usage(input_tokens=10, output_tokens=5))


def test_continuation_bounded_and_joined() -> None:
    seen: list[list[Message]] = []

    def call(history: list[Message]) -> LLMResponse:
        seen.append(history)
        return _resp("more", "length")

    out = continue_truncated([], _resp("start ", "length"), call)
    assert out.message.text == "start moremoremore" and len(seen) == 3  # bounded at 3
    assert out.usage.input_tokens == 40 and out.provider_details["replaykit"]["continuations"] == 3
    assert seen[0][-1].role == "user" and seen[0][-2].text == "start "


def test_continuation_stops_at_a_complete_answer() -> None:
    answers = iter([_resp("mid ", "length"), _resp("end", "stop"), _resp("never", "stop")])
    seen: list[list[Message]] = []

    def call(history: list[Message]) -> LLMResponse:
        seen.append(history)
        return next(answers)

    start = [Message(role="user", parts=[TextPart(text="q")])]
    out = continue_truncated(start, _resp("start ", "length"), call)
    assert out.message.text == "start mid end" and out.finish_reason == "stop" and len(seen) == 2
    assert [m.role for m in seen[1]] == ["user", "assistant", "user", "assistant", "user"]
    assert out.provider_details["replaykit"] == {"continuations": 2, "finish_reasons": ["length", "length", "stop"]}
    untouched = _resp("whole", "stop")
    assert continue_truncated(start, untouched, call) is untouched


def test_budget_grace() -> None:
    budget = IterationBudget(2)
    assert [budget.next_call() for _ in range(2)] == ["ok", "ok"] and budget.reason is None
    assert [budget.next_call() for _ in range(2)] == ["grace", "exhausted"]
    assert budget.reason == "iteration budget of 2 reached: one grace call"  # the turn_end reason
    budget.reset()
    assert budget.next_call() == "ok" and budget.reason is None


def test_stale_guard_drains_an_abandoned_source_and_says_when_it_ended() -> None:
    import threading
    import time as _time

    from replaykit.core.replay.resilience import StaleStream, stale_guard

    ended = threading.Event()

    def source():  # one item, a stall longer than the timeout, then more items than the hand-off queue holds
        yield 0
        _time.sleep(0.4)
        yield from range(1, 200)

    seen = []
    with pytest.raises(StaleStream):
        for item in stale_guard(source(), 0.1, on_source_end=ended.set):
            seen.append(item)
    assert seen == [0]
    assert not ended.is_set()  # the server still holds the request open: not ended yet
    assert ended.wait(5)  # drained to its end without a consumer, then said so
