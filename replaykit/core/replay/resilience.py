"""Live-call resilience shared by every engine: small pieces, no framework, no provider SDK import.

- ``classify(exc_or_status, headers, body)`` names a provider failure: ``rate_limit`` (honours
  ``Retry-After``), ``server`` / ``timeout`` / ``stale`` / ``connection`` (retried), ``auth``,
  ``bad_request``, ``not_found``, ``context_overflow`` (fail at once, one line).
- ``RetryPolicy`` + ``retry_call``: a bounded retry loop with jittered exponential
  backoff; ``on_attempt`` / ``on_error`` callbacks let the engine count provider calls and record errors.
- ``stale_guard``: a stream that goes silent for ``timeout`` seconds raises
  ``StaleStream`` (classified ``stale``: retried).
- ``continue_truncated``: an answer cut by the length limit is continued
  (bounded) and joined.
- ``IterationBudget``: at most N LLM calls per turn, then one grace call without tools.

Exceptions are recognised by duck typing (``status_code``, ``response.headers``, class names such as
``APITimeoutError``), so the openai client, httpx, PydanticAI's ``ModelHTTPError`` and plain
``urllib`` errors all classify without importing any of them.
"""

from __future__ import annotations

import email.utils
import queue
import random
import re
import threading
import time
from collections.abc import (
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from replaykit.core.errors import ProviderError
from replaykit.core.trace.ir import LLMResponse, Message, TextPart, Usage

T = TypeVar("T")
ErrorKind = Literal["rate_limit", "server", "timeout", "stale", "connection", "auth", "bad_request",
                    "not_found", "context_overflow", "unknown"]

RETRYABLE: frozenset[str] = frozenset({"rate_limit", "server", "timeout", "stale", "connection"})
_OVERFLOW_MARKERS = ("context_length_exceeded", "context length", "maximum context", "context window",
                     "too many tokens", "prompt is too long", "input is too long", "reduce the length",
                     "exceeds the context")


class StaleStream(TimeoutError):
    """A streamed response sent nothing for longer than the stale timeout."""


class StreamFailure(Exception):
    """An error the provider sent inside a stream (after a 200), raised by a transport whose SDK does not
    raise one itself: ``code`` is the provider's error code (classified by ``PROVIDER_CODES``)."""

    def __init__(self, code: str, message: str = "", status_code: int | None = None) -> None:
        super().__init__(f"{code}: {message}" if message else code)
        self.code = code
        self.status_code = status_code


#: provider error codes (as the provider spells them, compared case-insensitively) and what they are,
#: for errors without a usable HTTP status: Anthropic's ``error`` event types, Gemini's gRPC status
#: names, Bedrock's exception codes, OpenAI's in-stream error codes. One table for every wire API.
PROVIDER_CODES: dict[str, str] = {
    # Anthropic
    "overloaded_error": "server", "api_error": "server", "rate_limit_error": "rate_limit",
    "authentication_error": "auth", "permission_error": "auth", "not_found_error": "not_found",
    "invalid_request_error": "bad_request", "request_too_large": "bad_request", "timeout_error": "timeout",
    # Gemini (google.rpc.Code names)
    "resource_exhausted": "rate_limit", "unavailable": "server", "internal": "server",
    "deadline_exceeded": "timeout", "unauthenticated": "auth", "permission_denied": "auth",
    "invalid_argument": "bad_request", "failed_precondition": "bad_request", "not_found": "not_found",
    # Bedrock (botocore error codes; stream exceptions arrive lower-camel-cased)
    "throttlingexception": "rate_limit", "toomanyrequestsexception": "rate_limit",
    "serviceunavailableexception": "server", "internalserverexception": "server",
    "modelstreamerrorexception": "server", "modelnotreadyexception": "server",
    "modeltimeoutexception": "timeout", "accessdeniedexception": "auth", "unrecognizedclientexception": "auth",
    "expiredtokenexception": "auth", "validationexception": "bad_request", "resourcenotfoundexception": "not_found",
    "modelerrorexception": "server",
    # OpenAI (error events inside a stream)
    "rate_limit_exceeded": "rate_limit", "server_error": "server", "insufficient_quota": "auth",
}


@dataclass(frozen=True)
class Classified:
    """A provider failure, named. ``message`` is one line, safe to show (no headers, no key)."""

    kind: ErrorKind
    status_code: int | None = None
    retry_after: float | None = None
    message: str = ""

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE

    def describe(self) -> str:
        code = f" (HTTP {self.status_code})" if self.status_code else ""
        labels = {
            "rate_limit": "rate limited", "server": "provider server error", "timeout": "request timed out",
            "stale": "stream stalled", "connection": "cannot reach the provider",
            "auth": "authentication failed: check the key in the variable named by --api-key-env",
            "bad_request": "the provider rejected the request", "not_found": "not found (check --base-url and --model)",
            "context_overflow": "context overflow: the conversation is longer than the model's context window",
            "unknown": "provider call failed",
        }
        detail = f": {self.message}" if self.message else ""
        return " ".join(f"{labels[self.kind]}{code}{detail}".split())[:400]


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``Retry-After`` (seconds or an HTTP date)."""
    if not headers:
        return None
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    ms = lowered.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


#: Google APIs (Gemini, Vertex) name the wait in a ``google.rpc.RetryInfo`` detail of the error body
_RETRY_DELAY = re.compile(r"""['"]retryDelay['"]\s*:\s*['"](\d+(?:\.\d+)?)s['"]""")


def _wait_hint(headers: Mapping[str, str] | None, text: str) -> float | None:
    """Seconds the provider asked to wait: ``Retry-After`` headers, else a RetryInfo ``retryDelay``."""
    after = parse_retry_after(headers)
    if after is None:
        match = _RETRY_DELAY.search(text)
        after = float(match.group(1)) if match else None
    return after


_STATUS_IN_TEXT = re.compile(r"\b(?:Error code|HTTP(?: error)?|status(?: code)?)[:= ]+([1-5]\d\d)\b", re.IGNORECASE)


def _status_of(exc: BaseException) -> int | None:
    # The exception itself, its response, then what it wraps (frameworks re-raise provider errors).
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        for holder in (current, getattr(current, "response", None)):
            for attr in ("status_code", "status", "code"):
                value = getattr(holder, attr, None)
                if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
                    return value
        current = current.__cause__ or current.__context__
    # Last resort: a wrapper that kept only the provider's message ("Error code: 500 - {...}").
    match = _STATUS_IN_TEXT.search(str(exc))
    return int(match.group(1)) if match else None


def _codes_of(exc: BaseException) -> list[str]:
    """Provider error codes carried by ``exc`` (or what it wraps): ``code`` / ``status`` / ``type``
    strings, ``body["error"]["type"|"code"|"status"]``, botocore's ``response["Error"]["Code"]``."""
    out: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        for attr in ("code", "status", "type", "error_code"):
            value = getattr(current, attr, None)
            if isinstance(value, str):
                out.append(value)
        for holder in (getattr(current, "body", None), getattr(current, "response", None),
                       getattr(current, "details", None)):
            if not isinstance(holder, Mapping):
                continue
            for inner in (holder.get("error"), holder.get("Error"), holder):
                if isinstance(inner, Mapping):
                    for key in ("type", "code", "status", "Code"):
                        value = inner.get(key)
                        if isinstance(value, str):
                            out.append(value)
        current = current.__cause__ or current.__context__
    return out


def _code_kind(exc: BaseException) -> ErrorKind | None:
    for code in _codes_of(exc):
        kind = PROVIDER_CODES.get(code.strip().lower())
        if kind is not None:
            return kind  # type: ignore[return-value]
    return None


def _botocore_status(exc: BaseException) -> int | None:
    response = getattr(exc, "response", None)
    if isinstance(response, Mapping):
        meta = response.get("ResponseMetadata")
        status = meta.get("HTTPStatusCode") if isinstance(meta, Mapping) else None
        if isinstance(status, int) and 100 <= status <= 599:
            return status
    return None


def _headers_of(exc: BaseException) -> Mapping[str, str] | None:
    for holder in (getattr(exc, "response", None), exc):
        headers = getattr(holder, "headers", None)
        if headers is not None and hasattr(headers, "items"):
            return {str(k): str(v) for k, v in headers.items()}
    response = getattr(exc, "response", None)  # botocore: a dict with ResponseMetadata.HTTPHeaders
    if isinstance(response, Mapping):
        meta = response.get("ResponseMetadata")
        headers = meta.get("HTTPHeaders") if isinstance(meta, Mapping) else None
        if isinstance(headers, Mapping):
            return {str(k): str(v) for k, v in headers.items()}
    return None


def _body_text(exc: BaseException | None, body: Any) -> str:
    parts: list[str] = []
    if body is not None:
        parts.append(str(body))
    if exc is not None:
        for attr in ("body", "message"):
            value = getattr(exc, attr, None)
            if value is not None:
                parts.append(str(value))
        parts.append(str(exc))
    # A client's ``message`` is usually its ``str()`` too ("Connection error." twice): each text once.
    out: list[str] = []
    for part in (" ".join(p.split()) for p in parts):
        if part and not any(part in seen for seen in out):
            out = [seen for seen in out if seen not in part] + [part]
    return " ".join(out)


def _kind_for_status(status: int, text: str) -> ErrorKind:
    lowered = text.lower()
    if status in (400, 413, 422) and any(marker in lowered for marker in _OVERFLOW_MARKERS):
        return "context_overflow"
    if status == 429:
        return "rate_limit"
    if status in (401, 403):
        return "auth"
    if status == 404:
        return "not_found"
    if status in (408, 409, 425) or status >= 500:
        return "server" if status != 408 else "timeout"
    if 400 <= status < 500:
        return "bad_request"
    return "unknown"


def classify(exc_or_status: BaseException | int, headers: Mapping[str, str] | None = None,
             body: Any = None) -> Classified:
    """Name a provider failure from an exception (any client) or an HTTP status code."""
    if isinstance(exc_or_status, int):
        text = _body_text(None, body)
        return Classified(_kind_for_status(exc_or_status, text), exc_or_status, _wait_hint(headers, text),
                          text[:300])
    exc = exc_or_status
    text = _body_text(exc, body)
    status = _status_of(exc) or _botocore_status(exc)
    headers = headers if headers is not None else _headers_of(exc)
    coded = _code_kind(exc)
    if coded is not None and (status is None or status < 400 or _kind_for_status(status, text) in
                              ("bad_request", "unknown")):
        # A provider code is more precise than a generic status (an error event after a 200, a 400
        # that is really an overflow, a gRPC status): it wins, unless the text says context overflow.
        if coded == "bad_request" and any(marker in text.lower() for marker in _OVERFLOW_MARKERS):
            coded = "context_overflow"
        return Classified(coded, status if status and status >= 400 else None, _wait_hint(headers, text),
                          text[:300])
    if status is not None:
        return Classified(_kind_for_status(status, text), status, _wait_hint(headers, text), text[:300])
    names = " ".join(cls.__name__ for cls in type(exc).__mro__)
    if isinstance(exc, StaleStream):
        return Classified("stale", None, None, text[:300])
    if "Timeout" in names or isinstance(exc, TimeoutError):
        return Classified("timeout", None, None, text[:300])
    if "Connect" in names or "RemoteProtocol" in names or isinstance(exc, ConnectionError | OSError):
        return Classified("connection", None, None, text[:300])
    if any(marker in text.lower() for marker in _OVERFLOW_MARKERS):
        return Classified("context_overflow", None, None, text[:300])
    return Classified("unknown", None, None, text[:300])


# ------------------------------------------------------------------------------------------- retry


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded retries with jittered exponential backoff; ``Retry-After`` wins when the server sent it."""

    max_attempts: int = 4  # first try included
    base_delay: float = 0.5
    max_delay: float = 20.0
    jitter: float = 0.5  # delay * (1 + jitter * U[0,1))
    max_retry_after: float = 120.0  # a server asking for longer than this is not waited for

    def delay(self, attempt: int, error: Classified, rng: random.Random | None = None) -> float | None:
        """Seconds to wait before attempt ``attempt + 1``; None means give up now."""
        if not error.retryable or attempt >= self.max_attempts:
            return None
        if error.retry_after is not None:
            if error.retry_after > self.max_retry_after:
                return None
            return error.retry_after
        draw = (rng or random).random()
        return min(self.max_delay, self.base_delay * (2 ** (attempt - 1))) * (1 + self.jitter * draw)


class GaveUp(ProviderError):
    """A live provider call failed for good. ``error`` names why; ``attempts`` were made; ``where`` is
    the endpoint (its URL), named in the message."""

    def __init__(self, error: Classified, attempts: int, where: str | None = None) -> None:
        retried = f" (gave up after {attempts} attempts)" if attempts > 1 else ""
        at = f" at {where}" if where else ""
        label, _, detail = error.describe().partition(": ") if at else (error.describe(), "", "")
        text = f"{label}{at}: {detail}" if detail else f"{label}{at}"
        super().__init__(f"{text.rstrip('.')}{retried}")
        self.error = error
        self.attempts = attempts
        self.where = where


def retry_notice(error: Classified, attempt: int, wait: float | None, policy: RetryPolicy,
                 where: str | None = None) -> str | None:
    """The line a terminal shows while a call is retried (None: no retry follows)."""
    if wait is None:
        return None
    at = f" at {where}" if where else ""
    return (f"replaykit: {error.describe().split(': ')[0]}{at}; retry {attempt + 1} of {policy.max_attempts} "
            f"in {wait:.1f} s")


OnError = Callable[[Classified, int, float | None], None]


def retry_call(fn: Callable[[], T], policy: RetryPolicy | None = None, *,
               on_attempt: Callable[[int], None] | None = None, on_error: OnError | None = None,
               sleep: Callable[[float], None] = time.sleep, rng: random.Random | None = None,
               where: str | None = None, announce: bool | None = False) -> T:
    """Call ``fn`` until it succeeds or the policy gives up (then ``GaveUp``). ``on_attempt(n)`` runs
    before each attempt; ``on_error(error, attempt, delay)`` after each failure (delay None: final).
    ``where`` (the endpoint) is named in the error; ``announce`` prints each retry on stderr (None: only
    when stderr is a terminal, so seconds of backoff are never silent there and logs stay clean)."""
    import sys

    show = sys.stderr.isatty() if announce is None else announce
    policy = policy or RetryPolicy()
    attempt = 0
    while True:
        attempt += 1
        if on_attempt is not None:
            on_attempt(attempt)
        try:
            return fn()
        except Exception as exc:
            error = classify(exc)
            wait = policy.delay(attempt, error, rng)
            if on_error is not None:
                on_error(error, attempt, wait)
            if wait is None:
                raise GaveUp(error, attempt, where) from exc
            notice = retry_notice(error, attempt, wait, policy, where) if show else None
            if notice is not None:
                print(notice, file=sys.stderr, flush=True)
            sleep(wait)


# ------------------------------------------------------------------------------------------ stale

_END = object()


def stale_guard(items: Iterable[T], timeout: float | None,
                on_source_end: Callable[[], None] | None = None) -> Iterator[T]:
    """Yield from ``items`` but raise ``StaleStream`` if the next item takes longer than ``timeout``.

    The source is read on a daemon thread (a blocking socket read cannot be interrupted otherwise). A
    consumer that gives up (a ``StaleStream``, or it stops iterating) leaves the thread draining the source
    to its end, discarding what comes: the connection stays open until the server ends it (or the
    client's read timeout does). ``on_source_end()`` runs once the source has ended, however it ended:
    the moment the request is no longer in flight at the server (``LiveModel`` frees its limiter slot
    then, not when the consumer gave up)."""
    if timeout is None or timeout <= 0:
        try:
            yield from items
        finally:
            if on_source_end is not None:
                on_source_end()
        return
    box: queue.Queue[Any] = queue.Queue(maxsize=64)
    abandoned = threading.Event()

    def hand(item: Any) -> None:
        while not abandoned.is_set():  # a consumer that left never blocks the drain
            try:
                box.put(item, timeout=0.05)
                return
            except queue.Full:
                continue

    def pump() -> None:
        try:
            for item in items:
                hand(item)
            hand(_END)
        except BaseException as exc:  # handed to the consumer
            hand(exc)
        finally:
            if on_source_end is not None:
                on_source_end()

    threading.Thread(target=pump, name="replaykit-stream", daemon=True).start()
    try:
        while True:
            try:
                item = box.get(timeout=timeout)
            except queue.Empty:
                raise StaleStream(f"no data for {timeout:g}s (stale-stream timeout)") from None
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        abandoned.set()


# ------------------------------------------------------------------------------------ continuation

CONTINUE_PROMPT = "Continue exactly where your previous message stopped. Do not repeat anything."


@dataclass(frozen=True)
class ContinuationPolicy:
    max_continuations: int = 3
    prompt: str = CONTINUE_PROMPT


#: finish reasons meaning "cut by the output token limit", per API (Chat, Anthropic, Bedrock, Gemini)
LENGTH_REASONS = frozenset({"length", "max_tokens", "MAX_TOKENS"})


def is_truncated(response: LLMResponse) -> bool:
    if response.message.tool_calls:
        return False
    if response.finish_reason in LENGTH_REASONS:
        return True
    # Responses: status "incomplete" with incomplete_details.reason "max_output_tokens"
    if response.finish_reason == "incomplete":
        top = ((response.provider_details or {}).get("openai-responses") or {}).get("top") or {}
        details = top.get("incomplete_details") if isinstance(top, dict) else None
        return isinstance(details, dict) and details.get("reason") == "max_output_tokens"
    return False


def continue_truncated(messages: Sequence[Message], response: LLMResponse,
                       call: Callable[[list[Message]], LLMResponse],
                       policy: ContinuationPolicy | None = None) -> LLMResponse:
    """Ask ``call`` to continue a length-truncated text answer (at most ``max_continuations`` times)
    and return one response whose text is the pieces joined, usage summed, and
    ``provider_details["replaykit"]["continuations"]`` the number of extra calls."""
    policy = policy or ContinuationPolicy()
    pieces = [response]
    history = list(messages)
    current = response
    while is_truncated(current) and len(pieces) <= policy.max_continuations:
        history += continuation_turn(current, policy)
        current = call(list(history))
        pieces.append(current)
    return join_pieces(pieces)


def continuation_turn(partial: LLMResponse, policy: ContinuationPolicy) -> list[Message]:
    """What is appended to the history to ask for the rest: the partial answer, then the prompt."""
    return [partial.message, Message(role="user", parts=[TextPart(text=policy.prompt)])]


def join_pieces(pieces: Sequence[LLMResponse]) -> LLMResponse:
    """One response from an answer and its continuations (the first alone when there were none)."""
    if len(pieces) == 1:
        return pieces[0]
    current = pieces[-1]
    text = "".join(piece.message.text for piece in pieces)
    calls = [c for c in current.message.parts if c.type == "tool_call"]
    message = Message(role="assistant", parts=[TextPart(text=text), *calls])
    details = dict(current.provider_details or {})
    details["replaykit"] = {"continuations": len(pieces) - 1,
                            "finish_reasons": [p.finish_reason for p in pieces]}
    return LLMResponse(message=message, finish_reason=current.finish_reason, usage=_sum_usage(pieces),
                       model=current.model, response_id=current.response_id, provider_details=details)


def _sum_usage(pieces: Sequence[LLMResponse]) -> Usage | None:
    usages = [p.usage for p in pieces if p.usage is not None]
    if not usages:
        return None
    total: dict[str, Any] = {}
    for usage in usages:
        for key, value in usage.model_dump(exclude_none=True, exclude={"details"}).items():
            total[key] = total.get(key, 0) + int(value)
    return Usage(**total)


# ----------------------------------------------------------------------------------------- budget

GRACE_PROMPT = ("You have used every tool call this turn allows. Do not call any tool; give your final "
                "answer now with what you have.")


@dataclass
class IterationBudget:
    """At most ``max_iterations`` LLM calls per turn, then exactly one grace call (tools withdrawn,
    ``GRACE_PROMPT`` appended) so the model can still answer."""

    max_iterations: int = 50
    used: int = 0
    grace_used: bool = False
    log: list[str] = field(default_factory=list)

    def next_call(self) -> Literal["ok", "grace", "exhausted"]:
        if self.used < self.max_iterations:
            self.used += 1
            return "ok"
        if not self.grace_used:
            self.grace_used = True
            self.log.append(f"iteration budget of {self.max_iterations} reached: one grace call")
            return "grace"
        return "exhausted"

    @staticmethod
    def grace_message() -> Message:
        """The user message a grace call's request ends with (every engine sends the same)."""
        return Message(role="user", parts=[TextPart(text=GRACE_PROMPT)])

    @property
    def exhausted_text(self) -> str:
        """Why a turn that asked for a completion after its grace call is stopped."""
        return f"iteration budget of {self.max_iterations} live LLM calls per turn exhausted (the grace call was used)"

    @property
    def reason(self) -> str | None:
        """Why the current turn ended on the budget (for its ``turn_end`` event); None if it did not."""
        return self.log[-1] if self.grace_used and self.log else None

    def reset(self) -> None:
        """A new user turn gets a fresh budget."""
        self.used = 0
        self.grace_used = False


# ------------------------------------------------------------------------------ shared endpoint limiter

class EndpointLimiter:
    """One endpoint's limits, shared by every process on this machine that opens the same directory
    (the local workers, Ray or Dask workers of one ``eval``): at most ``max_in_flight`` requests at once,
    and a pause every process honours, so a 429's ``Retry-After`` slows all of them, not only the one that
    got it. It also counts the requests started and the money noted, for budgets.

    State is files, so it needs no server: ``slot-K`` files held with ``flock`` while a request is in
    flight (a killed process's slot frees itself: the kernel drops its locks), ``pause`` (the time
    before which no request starts), ``calls`` and ``spent`` (updated under the ``lock`` file's flock).
    ``limits.json`` (written by ``create``) holds ``max_in_flight`` for the processes that only open it.
    """

    POLL = 0.005  # seconds between sweeps over the slots when all are taken

    def __init__(self, root: str, max_in_flight: int | None = None) -> None:
        import json
        import os

        self.root = root
        if max_in_flight is None:
            try:
                with open(os.path.join(root, "limits.json"), encoding="utf-8") as handle:
                    max_in_flight = json.load(handle).get("max_in_flight")
            except (OSError, ValueError):
                max_in_flight = None
        self.max_in_flight = max_in_flight

    @classmethod
    def create(cls, root: str, max_in_flight: int | None) -> EndpointLimiter:
        """Make (or reset the limits of) the directory; counters already there are kept (a resumed job)."""
        import json
        import os

        os.makedirs(root, mode=0o700, exist_ok=True)
        tmp = os.path.join(root, ".limits.tmp")
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump({"max_in_flight": max_in_flight}, handle)
        os.replace(tmp, os.path.join(root, "limits.json"))
        return cls(root, max_in_flight)

    # -- the counters, read-modify-written under one lock
    def _update(self, name: str, change: Callable[[float], float]) -> float:
        import fcntl
        import os

        with open(os.path.join(self.root, "lock"), "a+b") as lock:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            path = os.path.join(self.root, name)
            try:
                with open(path, encoding="ascii") as handle:
                    current = float(handle.read().strip() or 0)
            except (OSError, ValueError):
                current = 0.0
            new = change(current)
            if new != current:
                with open(path, "w", encoding="ascii") as handle:
                    handle.write(repr(new))
            return new

    def calls(self) -> int:
        return int(self._update("calls", lambda v: v))

    def spent(self) -> float:
        return self._update("spent", lambda v: v)

    def note_cost(self, usd: float) -> None:
        self._update("spent", lambda v: v + usd)

    def pause(self, seconds: float) -> None:
        """No request from any process starts in the next ``seconds`` (a later pause never shortens one)."""
        until = time.time() + seconds
        self._update("pause", lambda v: max(v, until))

    def wait_pause(self) -> None:
        while True:
            left = self._update("pause", lambda v: v) - time.time()
            if left <= 0:
                return
            time.sleep(min(left, 1.0))

    def request(self) -> LimiterSlot:
        """``with limiter.request(): ...`` around one HTTP request: waits for the pause and a free slot."""
        return LimiterSlot(self)


class LimiterSlot:
    def __init__(self, limiter: EndpointLimiter) -> None:
        self.limiter = limiter
        self.handle: Any = None

    def __enter__(self) -> LimiterSlot:
        import fcntl
        import os

        limiter = self.limiter
        limiter.wait_pause()
        if limiter.max_in_flight:
            while self.handle is None:
                for k in range(limiter.max_in_flight):
                    handle = open(os.path.join(limiter.root, f"slot-{k}"), "a+b")
                    try:
                        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except OSError:
                        handle.close()
                        continue
                    self.handle = handle
                    break
                else:
                    time.sleep(limiter.POLL)
        limiter._update("calls", lambda v: v + 1)
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def release(self) -> None:
        """Free the slot (idempotent; any thread may call it)."""
        handle, self.handle = self.handle, None
        if handle is not None:
            handle.close()  # closing the file drops the flock
