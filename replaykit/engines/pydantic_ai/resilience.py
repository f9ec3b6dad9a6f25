"""The live part's resilience at PydanticAI's model layer: the core's primitives, plus glue only.

``LiveModel`` is a PydanticAI ``WrapperModel`` around the live OpenAI model (``OpenAIChatModel`` or
``OpenAIResponsesModel``). Every decision comes from ``replaykit.core.resilience``, the same code the
openai, Hermes and LangGraph engines use:

- ``aretry_call`` + ``RetryPolicy``: which failures are retried (``classify``: 429 honouring
  ``Retry-After``, 5xx, timeouts, dropped connections, stalled streams) with jittered exponential
  backoff, bounded attempts; 401/400/404/context overflow fail at once (``GaveUp``, one line);
- ``astale_guard``: each attempt is *streamed* through PydanticAI (``request_stream``) and a stream that
  sends nothing for ``stale_timeout`` seconds raises ``StaleStream`` (retried);
- ``acontinue_truncated``: an answer cut by the length limit is continued and joined.

The iteration budget and its grace call (``IterationBudget``) are applied by the engine's cursor model,
which knows the turns; ``grace_request`` here only shapes the grace request for PydanticAI.

What is PydanticAI-specific (and so lives here): PydanticAI wraps the openai SDK's errors in its own
(``ModelHTTPError`` without the response headers in 1.x, ``ModelAPIError`` for connection failures),
so ``provider_error`` lifts the SDK error out of the chain into a small exception that
``core.resilience.classify`` reads (status, headers with ``Retry-After``, timeout / connection kind).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterable, Callable, Mapping
from typing import Any

from replaykit.core.ir import LLMResponse, Message
from replaykit.core.resilience import (
    GRACE_PROMPT,
    ContinuationPolicy,
    OnError,
    RetryPolicy,
    StaleStream,
    acontinue_truncated,
    aretry_call,
    astale_guard,
    is_truncated,
)

# ------------------------------------------------------------------------------- error mapping


class ProviderHTTPError(Exception):
    """An HTTP failure as ``classify`` reads it: ``status_code``, ``headers``, ``body``."""

    def __init__(self, status_code: int, headers: Mapping[str, str] | None, body: Any, text: str) -> None:
        super().__init__(text)
        self.status_code = status_code
        self.headers = dict(headers) if headers is not None else None
        self.body = body


class ProviderTimeout(TimeoutError):
    """The provider did not answer in time (classified ``timeout``: retried)."""


class ProviderConnectionError(ConnectionError):
    """The provider could not be reached (classified ``connection``: retried)."""


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not s for s in seen):
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300] or type(exc).__name__


def provider_error(exc: BaseException) -> BaseException:
    """The failure behind a PydanticAI model error, in the shape ``core.resilience.classify`` expects.

    The openai SDK error is found in the ``__cause__`` chain (PydanticAI raises ``from`` it): its status
    and response headers (``Retry-After``) are kept; a timeout or connection error becomes a
    ``TimeoutError`` / ``ConnectionError``. Anything else is returned unchanged."""
    if isinstance(exc, StaleStream):
        return exc
    for error in _chain(exc):
        names = {cls.__name__ for cls in type(error).__mro__}
        if "APIStatusError" in names:
            response = getattr(error, "response", None)
            headers = getattr(response, "headers", None)
            mapped = {str(k): str(v) for k, v in headers.items()} if headers is not None else None
            return ProviderHTTPError(int(error.status_code), mapped,  # type: ignore[attr-defined]
                                     getattr(error, "body", None), _one_line(error))
        if "APITimeoutError" in names or "ReadTimeout" in names or "TimeoutException" in names:
            return ProviderTimeout(f"the provider did not answer in time ({type(error).__name__})")
        if "APIConnectionError" in names or "ConnectError" in names or "RemoteProtocolError" in names:
            return ProviderConnectionError(f"connection failed: {_one_line(error)}")
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):  # ModelHTTPError without an SDK cause (2.x keeps the headers on it)
        headers = getattr(exc, "headers", None)
        return ProviderHTTPError(status, headers if isinstance(headers, dict) else None,
                                 getattr(exc, "body", None), _one_line(exc))
    return exc


# ----------------------------------------------------------------------------------- grace call


def grace_request(messages: list[Any], params: Any) -> tuple[list[Any], Any]:
    """The budget's grace call for PydanticAI: the core's ``GRACE_PROMPT`` appended as a user request
    and no function tools offered (the model can only answer)."""
    from pydantic_ai.messages import ModelRequest, UserPromptPart

    if dataclasses.is_dataclass(params) and not isinstance(params, type):
        params = dataclasses.replace(params, function_tools=[])
    return [*messages, ModelRequest(parts=[UserPromptPart(content=GRACE_PROMPT)])], params


# ------------------------------------------------------------------------------------ the model


def live_model_class() -> type:
    from pydantic_ai.models.wrapper import WrapperModel

    class LiveModel(WrapperModel):  # type: ignore[misc, valid-type]
        """The live model with the core policies applied (see the module docstring)."""

        def __init__(self, wrapped: Any, policy: RetryPolicy, *, stale_timeout: float | None,
                     continuation: ContinuationPolicy) -> None:
            super().__init__(wrapped)
            self.policy = policy
            self.stale_timeout = stale_timeout
            self.continuation = continuation
            self.on_attempt: Callable[[int], None] = lambda attempt: None
            self.on_error: OnError = lambda error, attempt, wait: None
            self.openai_client: Any = None

        async def request(self, messages: Any, model_settings: Any, model_request_parameters: Any) -> Any:
            from replaykit.engines.pydantic_ai.messages import (
                from_pydantic_ai,
                response_from_pydantic_ai,
                response_to_pydantic_ai,
                to_pydantic_ai,
            )

            first = await self._with_retries(list(messages), model_settings, model_request_parameters)
            ir_first = response_from_pydantic_ai(first)
            if not is_truncated(ir_first):
                return first
            # The core continues in IR terms; what it appends after the history (the partial answer,
            # the continue prompt) is converted and sent after the agent's own PydanticAI messages.
            base: list[Message] = from_pydantic_ai(messages)

            async def more(history: list[Message]) -> LLMResponse:
                tail = to_pydantic_ai(history[len(base):]).messages
                answer = await self._with_retries([*messages, *tail], model_settings, model_request_parameters)
                return response_from_pydantic_ai(answer)

            joined = await acontinue_truncated(base, ir_first, more, self.continuation)
            return response_to_pydantic_ai(joined, provider_name=first.provider_name)

        async def _with_retries(self, messages: list[Any], settings: Any, params: Any) -> Any:
            async def attempt() -> Any:
                try:
                    return await self._streamed(messages, settings, params)
                except Exception as exc:
                    mapped = provider_error(exc)
                    if mapped is exc:
                        raise
                    raise mapped from exc

            return await aretry_call(attempt, self.policy, on_attempt=self.on_attempt, on_error=self.on_error)

        async def _streamed(self, messages: list[Any], settings: Any, params: Any) -> Any:
            """One attempt, streamed so a silent stream is noticed (``astale_guard``); the response is
            the one PydanticAI assembles from the stream."""
            timeout = self.stale_timeout
            async with contextlib.AsyncExitStack() as stack:
                opening = stack.enter_async_context(self.wrapped.request_stream(messages, settings, params))
                try:  # a server that never sends the headers is as stale as one that stops mid-stream
                    stream = await (asyncio.wait_for(opening, timeout) if timeout and timeout > 0 else opening)
                except TimeoutError:
                    raise StaleStream(f"no response for {timeout:g}s (stale-stream timeout)") from None
                events: AsyncIterable[Any] = stream
                async for _event in astale_guard(events, timeout):
                    pass
                return stream.get()

    return LiveModel


def LiveModel(wrapped: Any, policy: RetryPolicy, *, stale_timeout: float | None,
              continuation: ContinuationPolicy | None = None) -> Any:
    return live_model_class()(wrapped, policy, stale_timeout=stale_timeout,
                              continuation=continuation or ContinuationPolicy())
