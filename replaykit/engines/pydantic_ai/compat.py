"""Feature detection across the PydanticAI majors replaykit supports (1.x under Hermes's pins, 2.x).

Every difference between the two is answered here, by looking at the installed package (never by
comparing version strings), so the converter and the engine read the same way on both:

- 2.x ``ToolReturnPart`` has ``outcome``/``retry``; 1.x has ``RetryPromptPart`` only (2.x deprecates it).
- 2.x has ``RetryFeedbackPart`` for output-validator retries.
- ``AgentRunResult.usage`` is a property in 2.x and a method in 1.x.
- ``OpenAIProvider(http_client=...)`` wants an ``httpx2`` client in 2.x (an ``httpx`` one warns).
"""

from __future__ import annotations

import inspect
from types import ModuleType
from typing import Any

from replaykit.core.errors import MissingExtra

EXTRA = "pydantic-ai"


def require() -> ModuleType:
    """Import ``pydantic_ai`` or raise ``MissingExtra`` naming the extra."""
    try:
        import pydantic_ai
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise MissingExtra(EXTRA, "pydantic_ai") from exc
    return pydantic_ai


def require_openai() -> ModuleType:
    """Import PydanticAI's OpenAI model module (needs the ``openai`` package)."""
    require()
    try:
        from pydantic_ai.models import openai as openai_models
    except ImportError as exc:
        raise MissingExtra(EXTRA, "openai") from exc
    return openai_models


def version() -> str:
    return str(getattr(require(), "__version__", "unknown"))


def has_outcome() -> bool:
    """2.x: ``ToolReturnPart(outcome=...)`` exists."""
    from pydantic_ai.messages import ToolReturnPart

    return "outcome" in getattr(ToolReturnPart, "__dataclass_fields__", {})


def has_field(cls: type, name: str) -> bool:
    return name in getattr(cls, "__dataclass_fields__", {})


def run_usage(result: Any) -> Any:
    """``result.usage`` (2.x property) or ``result.usage()`` (1.x method)."""
    usage = result.usage
    return usage() if callable(usage) else usage


def retry_parts() -> tuple[type, ...]:
    """Request-part classes that carry a retry request back to the model (legacy and current)."""
    from pydantic_ai import messages as m

    found: list[type] = [m.RetryPromptPart]
    feedback = getattr(m, "RetryFeedbackPart", None)
    if feedback is not None:
        found.append(feedback)
    return tuple(found)


def tool_from_schema(function: Any, name: str, description: str | None, schema: dict[str, Any]) -> Any:
    """``Tool.from_schema(..., takes_ctx=True)`` on both majors."""
    from pydantic_ai import Tool

    params = inspect.signature(Tool.from_schema).parameters
    kwargs: dict[str, Any] = {}
    if "takes_ctx" in params:
        kwargs["takes_ctx"] = True
    return Tool.from_schema(function, name=name, description=description, json_schema=schema, **kwargs)


def http_client(timeout: float | None) -> Any:
    """An async HTTP client of the kind the installed openai package is built on."""
    try:
        import httpx2 as httpx_mod  # openai 3.x / pydantic-ai 2.x
        import openai

        major = int(str(getattr(openai, "__version__", "0")).split(".")[0])
        if major < 3:
            raise ImportError
    except (ImportError, ValueError):
        import httpx as httpx_mod  # type: ignore[no-redef]
    return httpx_mod.AsyncClient(timeout=timeout)
