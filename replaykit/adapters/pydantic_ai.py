"""Record a PydanticAI agent's runs (``replaykit.adapters.pydantic_ai``), PydanticAI 1.x and 2.x.

PydanticAI's OpenAI models (``OpenAIChatModel``, ``OpenAIResponsesModel``, any OpenAI-compatible
provider) talk HTTP through httpx (1.x) or httpx2 (2.x), so the recording happens at that seam
(``replaykit.adapters.openai``): every model request exactly as sent (messages, tools, settings),
every response whole (streamed ones assembled: ``run_stream`` and ``iter`` included), failed attempts as
``error`` events, and every tool call with the result PydanticAI sent back to the model (a tool's retry
prompt included, ``status`` error when PydanticAI marked it so). Nothing is wired into the agent::

    from replaykit.adapters.pydantic_ai import record_agent
    with record_agent(agent, "weather-1") as session:
        agent.run_sync("Weather in Paris?")
    with replaykit.serve("weather-1"):            # the same agent, answered from the run, 0 requests
        agent.run_sync("Weather in Paris?")

The run's source names ``pydantic-ai`` and the installed version; the agent's name goes into metadata.

A model that makes no OpenAI HTTP call (``FunctionModel``, ``TestModel``, another provider's model) is
recorded one level up instead: ``record_agent(agent, wrap_model=True)`` runs the agent with its model
wrapped (``recording_model``: a PydanticAI ``WrapperModel``), which records each ``ModelRequest`` history
and ``ModelResponse`` (streamed ones when the stream ends) converted to the IR by the PydanticAI engine's
converter. Those requests are PydanticAI's view (not a provider wire body); they are stored as
``openai-chat`` requests, the neutral format every engine plays.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Iterator
from typing import Any

from replaykit.adapters import cassette
from replaykit.adapters.openai import Exchange, Session
from replaykit.core.errors import BadInput, MissingExtra
from replaykit.core.trace.codecs import DecodedRequest
from replaykit.core.trace.ir import ToolSpec

FRAMEWORK = "pydantic-ai"


def framework_version() -> str:
    try:
        import pydantic_ai
    except ImportError as exc:
        raise MissingExtra("pydantic-ai", "pydantic_ai") from exc
    return str(getattr(pydantic_ai, "__version__", "unknown"))


@contextlib.contextmanager
def record_agent(agent: Any = None, run_id: str | None = None, *, store: str | os.PathLike[str] | None = None,
                 path: str | os.PathLike[str] | None = None, title: str | None = None,
                 wrap_model: bool = False) -> Iterator[Session]:
    """Record every model call the block makes (``agent``'s runs and any other PydanticAI agent's).

    ``wrap_model``: record at the model instead of at HTTP (for models that make no OpenAI HTTP call);
    only ``agent``'s runs are recorded then."""
    metadata: dict[str, Any] = {"framework_version": framework_version()}
    name = getattr(agent, "name", None)
    if name:
        metadata["agent"] = str(name)
    if wrap_model:
        metadata["recorded_at"] = "model"
    with cassette.record(run_id, store=store, path=path, framework=FRAMEWORK, title=title,
                         metadata=metadata, http=not wrap_model) as session:
        if not wrap_model:
            yield session
            return
        if agent is None or agent.model is None:
            raise BadInput("record_agent(wrap_model=True) needs an agent with a model")
        with agent.override(model=recording_model(agent.model, session)):
            yield session


def recording_model(model: Any, session: Session) -> Any:
    """``model`` wrapped so every request and response (streamed too) is recorded through ``session``."""
    from pydantic_ai.models import infer_model
    from pydantic_ai.models.wrapper import WrapperModel

    from replaykit.engines.pydantic_ai.messages import from_pydantic_ai, response_from_pydantic_ai

    def begin(messages: list[Any], params: Any, name: str) -> Exchange:
        tools = [ToolSpec(name=t.name, description=t.description, parameters=t.parameters_json_schema)
                 for t in [*(params.function_tools or []), *(params.output_tools or [])]]
        request = DecodedRequest(messages=from_pydantic_ai(messages), tools=tools or None, params={"model": name})
        return session.begin(request)

    class RecordingModel(WrapperModel):  # type: ignore[misc]
        async def request(self, messages: list[Any], model_settings: Any, model_request_parameters: Any) -> Any:
            ex = begin(messages, model_request_parameters, self.model_name)
            try:
                response = await super().request(messages, model_settings, model_request_parameters)
            except Exception as exc:
                session.fail(ex, message=f"{type(exc).__name__}: {exc}", error_type=type(exc).__name__)
                raise
            session.finish(ex, response_from_pydantic_ai(response))
            return response

        @contextlib.asynccontextmanager
        async def request_stream(self, messages: list[Any], model_settings: Any, model_request_parameters: Any,
                                 run_context: Any = None) -> AsyncIterator[Any]:
            ex = begin(messages, model_request_parameters, self.model_name)
            try:
                async with super().request_stream(messages, model_settings, model_request_parameters,
                                                  run_context) as stream:
                    yield stream
            except Exception as exc:
                session.fail(ex, message=f"{type(exc).__name__}: {exc}", error_type=type(exc).__name__)
                raise
            session.finish(ex, response_from_pydantic_ai(stream.get()))

    return RecordingModel(infer_model(model))
