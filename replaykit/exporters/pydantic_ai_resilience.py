"""The live part's resilience, applied at PydanticAI's model layer.

``ResilientModel`` is a PydanticAI ``WrapperModel`` around the live OpenAI model. It does not decide
anything itself: every decision (is this failure retryable, how long to wait, how long a stalled
response may stay silent, whether a length-truncated answer is continued, how many calls the live part
may make) comes from a ``LivePolicy``. When the core's shared policy (``replaykit.core.resilience``) is
available it is used; the small fallback below only exists so this module imports before it lands.

What it does with those decisions:

- a retryable failure (HTTP 429 honouring ``Retry-After``, 5xx, a timeout, a dropped connection) is
  retried with backoff and jitter; a non-retryable one (401, 400, ...) fails at once;
- a stalled response is cut by the HTTP read timeout (``--stale-timeout``: the longest silence allowed
  between bytes) and retried;
- an answer cut by ``finish_reason == "length"`` is continued: the partial answer goes back to the model
  with a request to continue, and the pieces are joined into one response;
- past the iteration budget, one grace call is made with no tools offered, then the run ends.

Every attempt is counted (``on_attempt``) and every failed one reported (``on_error``), so the engine
records it as an ``error`` event; on final failure ``LiveCallFailed`` carries one clear line.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from replaykit.core.errors import ProviderError

CONTINUE_PROMPT = "Continue exactly where your previous answer stopped. Do not repeat anything."
GRACE_PROMPT = ("You have reached the step budget for this run. Do not call any tools; give your final "
                "answer now with what you have.")


class LiveCallFailed(ProviderError):
    """A live model call failed for good (the one-line reason is the message)."""


@dataclass
class Failure:
    retryable: bool
    reason: str  # one line: "HTTP 429", "timeout", ...
    retry_after: float | None = None
    status_code: int | None = None


@dataclass
class LivePolicy:
    max_attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 30.0
    jitter: float = 0.25
    stale_timeout: float = 60.0
    connect_timeout: float = 10.0
    max_continuations: int = 3
    iteration_budget: int | None = None
    sleep: Callable[[float], Any] = field(default=asyncio.sleep, repr=False)

    def http_timeout(self) -> Any:
        """A timeout whose *read* part is the stale timeout: a response silent for that long is cut."""
        import openai

        return openai.Timeout(self.stale_timeout, connect=min(self.connect_timeout, self.stale_timeout))

    def classify(self, exc: BaseException) -> Failure:
        return classify(exc)

    def delay(self, attempt: int, failure: Failure) -> float:
        """Seconds to wait before attempt ``attempt + 1``: Retry-After when given, else exponential
        backoff with jitter, capped."""
        if failure.retry_after is not None:
            return min(max(failure.retry_after, 0.0), self.max_delay)
        base = min(self.base_delay * (2 ** (attempt - 1)), self.max_delay)
        return base * (1 + random.uniform(-self.jitter, self.jitter))  # noqa: S311 - jitter, not crypto


def policy_for(opts: Any) -> LivePolicy:
    """The live policy for these play options (the core's when present)."""
    resilience: Any
    try:
        from replaykit.core import resilience
    except ImportError:
        resilience = None
    policy = LivePolicy()
    if resilience is not None and hasattr(resilience, "live_policy"):
        policy = resilience.live_policy(opts)  # pragma: no cover - wired when the core's policy lands
    if getattr(opts, "stale_timeout", None):
        policy.stale_timeout = float(opts.stale_timeout)
    if getattr(opts, "max_attempts", None):
        policy.max_attempts = int(opts.max_attempts)
    if getattr(opts, "retry_base_delay", None) is not None:
        policy.base_delay = float(opts.retry_base_delay)
    if getattr(opts, "iteration_budget", None):
        policy.iteration_budget = int(opts.iteration_budget)
    return policy


def classify(exc: BaseException) -> Failure:
    """Retry class of a failure raised through PydanticAI's OpenAI models (the openai error is chained)."""
    import openai

    chain: list[BaseException] = []
    cursor: BaseException | None = exc
    while cursor is not None and cursor not in chain:
        chain.append(cursor)
        cursor = cursor.__cause__ or cursor.__context__
    for error in chain:
        if isinstance(error, openai.APITimeoutError):
            return Failure(True, "timeout: the response stalled")
        if isinstance(error, openai.APIConnectionError):
            return Failure(True, f"connection error: {_one_line(error)}")
        if isinstance(error, openai.APIStatusError):
            return _status_failure(error.status_code, _retry_after(error), error)
    for error in chain:
        status = getattr(error, "status_code", None)
        if isinstance(status, int):
            return _status_failure(status, None, error)
        if type(error).__name__ in ("ReadTimeout", "TimeoutException", "RemoteProtocolError", "ReadError"):
            return Failure(True, f"transport error: {type(error).__name__}")
    return Failure(False, f"{type(exc).__name__}: {_one_line(exc)}")


def _status_failure(status: int, retry_after: float | None, error: BaseException) -> Failure:
    retryable = status in (408, 409, 425, 429) or status >= 500
    hint = {401: " (check --api-key-env)", 403: " (permission denied)", 404: " (check --base-url and --model)"}
    return Failure(retryable, f"HTTP {status}{hint.get(status, '')}: {_one_line(error)[:200]}", retry_after,
                   status)


def _retry_after(error: Any) -> float | None:
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    value = headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300] or type(exc).__name__


# ----------------------------------------------------------------------------------- the wrapper


def resilient_model_class() -> type:
    from pydantic_ai.models.wrapper import WrapperModel

    class ResilientModel(WrapperModel):  # type: ignore[misc, valid-type]
        """The live model with the policy applied (retries, stale timeout, length continuation, budget)."""

        def __init__(self, wrapped: Any, policy: LivePolicy) -> None:
            super().__init__(wrapped)
            self.policy = policy
            self.calls = 0  # completed live calls (for the iteration budget)
            self.on_attempt: Callable[[], None] = lambda: None
            self.on_error: Callable[[Failure, int, float], None] = lambda failure, attempt, t: None
            self.budget_exhausted = False

        async def request(self, messages: Any, model_settings: Any, model_request_parameters: Any) -> Any:
            params = model_request_parameters
            budget = self.policy.iteration_budget
            if budget is not None and self.calls > budget:
                raise LiveCallFailed(f"iteration budget of {budget} live calls used up (the grace call too)")
            if budget is not None and self.calls == budget:
                # The grace call: no tools, and a clear request to finish.
                messages, params = _grace(messages, params)
                self.budget_exhausted = True
            response = await self._attempts(messages, model_settings, params)
            response = await self._continue_length(messages, model_settings, params, response)
            self.calls += 1
            return response

        async def _attempts(self, messages: Any, settings: Any, params: Any) -> Any:
            attempt = 0
            while True:
                attempt += 1
                self.on_attempt()
                try:
                    return await self.wrapped.request(messages, settings, params)
                except Exception as exc:
                    failure = self.policy.classify(exc)
                    last = not failure.retryable or attempt >= self.policy.max_attempts
                    wait = 0.0 if last else self.policy.delay(attempt, failure)
                    self.on_error(failure, attempt, wait)
                    if last:
                        tries = f"after {attempt} attempts" if attempt > 1 else "(not retryable)"
                        raise LiveCallFailed(f"live call to {self.model_name} failed {tries}: "
                                             f"{failure.reason}") from exc
                    await self.policy.sleep(wait)

        async def _continue_length(self, messages: Any, settings: Any, params: Any, response: Any) -> Any:
            from pydantic_ai.messages import ModelRequest, TextPart, UserPromptPart

            pieces = [response]
            while (response.finish_reason == "length" and not _tool_calls(response)
                   and len(pieces) <= self.policy.max_continuations):
                follow = [*messages, *_interleave(pieces),
                          ModelRequest(parts=[UserPromptPart(content=CONTINUE_PROMPT)])]
                response = await self._attempts(follow, settings, params)
                pieces.append(response)
            if len(pieces) == 1:
                return response
            merged = pieces[-1]
            text = "".join(p.content for r in pieces for p in r.parts if isinstance(p, TextPart))
            others = [p for p in merged.parts if not isinstance(p, TextPart)]
            merged.parts = [TextPart(content=text), *others]
            for earlier in pieces[:-1]:
                merged.usage = merged.usage + earlier.usage if hasattr(merged.usage, "__add__") else merged.usage
            return merged

    return ResilientModel


def _interleave(pieces: list[Any]) -> list[Any]:
    from pydantic_ai.messages import ModelRequest, UserPromptPart

    out: list[Any] = []
    for index, piece in enumerate(pieces):
        if index:
            out.append(ModelRequest(parts=[UserPromptPart(content=CONTINUE_PROMPT)]))
        out.append(piece)
    return out


def _tool_calls(response: Any) -> bool:
    from pydantic_ai.messages import ToolCallPart

    return any(isinstance(p, ToolCallPart) for p in response.parts)


def _grace(messages: Any, params: Any) -> tuple[Any, Any]:
    import dataclasses

    from pydantic_ai.messages import ModelRequest, UserPromptPart

    if dataclasses.is_dataclass(params) and not isinstance(params, type):
        params = dataclasses.replace(params, function_tools=[])  # type: ignore[type-var]
    return [*messages, ModelRequest(parts=[UserPromptPart(content=GRACE_PROMPT)])], params


def ResilientModel(wrapped: Any, policy: LivePolicy) -> Any:
    return resilient_model_class()(wrapped, policy)
