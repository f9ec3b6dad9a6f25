"""Shared pieces of the MCP tests: a failing run recorded into a store, the server command, checks."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from replaykit.core.trace.store import RunStore
from replaykit.testing.engine_runs import record_sample_run

ROOT = Path(__file__).resolve().parents[2]
#: A key-shaped secret put in the server's environment AND into a tool result of the recorded run
#: (as if a tool had printed its environment): it must reach no client all the same.
SECRET_VAR = "RK_TEST_PROVIDER_API_KEY"
SECRET = "sk-test-3f9c2a7d41e8b6a0c5d9e2f1"
FAILING_RUN = "failing-run"


def failing_store(root: Path) -> RunStore:
    """A store with one recorded run whose step 4 (write_file) failed; step 2's result leaks the key."""
    store = RunStore(root)
    record_sample_run(store, FAILING_RUN, weather=f"Sunny, 21C (debug: {SECRET_VAR}={SECRET})")
    return store


def server_env(**extra: str) -> dict[str, str]:
    """What the spawned server gets besides the SDK's safe defaults (PATH, HOME...): this checkout
    first on the path, and the secret."""
    return {"PYTHONPATH": str(ROOT), SECRET_VAR: SECRET, **extra}


def server_args(store: Path, *flags: str) -> list[str]:
    return ["-m", "replaykit.cli.main", "mcp", "--store", str(store), *flags]


def stdio_params(store: Path, *flags: str, **env: str) -> Any:
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(command=sys.executable, args=server_args(store, *flags), env=server_env(**env),
                                 cwd=str(ROOT))


def check_schema(tool: Any, result: Any) -> None:
    """The structured result is valid against the tool's published output schema."""
    import jsonschema

    assert tool.output_schema, f"{tool.name} publishes no output schema"
    assert result.structured_content is not None, f"{tool.name} returned no structured content"
    jsonschema.validate(result.structured_content, tool.output_schema)


def wire_text(result: Any) -> str:
    """Everything a client receives from one tool call: text blocks and structured content."""
    parts = [getattr(block, "text", "") for block in result.content]
    return "\n".join(parts) + json.dumps(result.structured_content)
