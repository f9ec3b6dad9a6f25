"""``replaykit mcp``: the tools, resources and prompt on the official MCP SDK's ``MCPServer`` (FastMCP
in SDK 1.x), over stdio or streamable HTTP.

Each tool is a method of ``tools.Tools``: its signature is the JSON-schema'd input, its return model
the ``outputSchema`` (the SDK validates every result against it). Around each one, two rules hold:

- a ``ReplaykitError`` (a bad run id, an edit that does not fit the step, a refused live play) becomes a
  tool error result with the core's one-line message, and the server keeps serving; anything else
  becomes a one-line internal error, never a traceback to the client;
- every result and every error message goes through the ``Scrubber`` first: no secret from the
  environment can leave.

The stdio transport moves fd 1 to stderr while it serves (the SDK does it), so an engine or a library
that prints cannot corrupt the protocol stream.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

from replaykit.core.errors import MissingExtra, ReplaykitError
from replaykit.core.trace.store import RunStore
from replaykit.mcp.scrub import Scrubber
from replaykit.mcp.tools import TOOL_NAMES, LiveEndpoint, Tools

NAME = "replaykit"
INSTRUCTIONS = (
    "replaykit holds recorded AI agent runs (every LLM call and tool call). Find runs with list_runs, "
    "read one with inspect_run and get_step, find what went wrong with failing_step, try a fix with "
    "branch_run (one edit) and play_run (offline by default), and compare with diff_runs. Runs are "
    "named by id only. The prompt debug_failing_run walks the whole loop."
)
#: Tools that only read (MCP tool annotations: clients may call them without asking).
READ_ONLY = frozenset({"list_runs", "inspect_run", "get_step", "failing_step", "diff_runs", "replay_run",
                       "run_cost", "run_health", "corpus_stats"})


def require_sdk() -> None:
    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError as exc:
        raise MissingExtra("mcp", "mcp") from exc


def _one_line(text: str) -> str:
    return " ".join(str(text).split())[:500]


def _guarded(method: Callable[..., Any], scrub: Scrubber) -> Callable[..., Any]:
    """The method as a tool: errors as one-line tool errors, results and errors scrubbed."""
    from mcp.server.mcpserver.exceptions import ToolError

    @functools.wraps(method)
    def tool(*args: Any, **kwargs: Any) -> Any:
        try:
            result = method(*args, **kwargs)
        except ReplaykitError as exc:
            raise ToolError(scrub.text(_one_line(str(exc)))) from None
        except Exception as exc:  # a replaykit bug must not take the session down, nor show a traceback
            raise ToolError(scrub.text(f"internal error ({type(exc).__name__}: {_one_line(str(exc))[:300]})")) from None
        return type(result).model_validate(scrub(result.model_dump(mode="json")))

    return tool


def _resource(read: Callable[..., dict[str, Any]], scrub: Scrubber) -> Callable[..., str]:
    from mcp.server.mcpserver.exceptions import ResourceError

    @functools.wraps(read)
    def resource(*args: Any, **kwargs: Any) -> str:
        try:
            document = read(*args, **kwargs)
        except ReplaykitError as exc:
            raise ResourceError(scrub.text(_one_line(str(exc)))) from None
        from replaykit.core.trace import jsonsafe

        return str(jsonsafe.dumps_indented(scrub(document)))

    return resource


def debug_prompt(run_id: str) -> str:
    """The steps of a debugging session on one run, for the client's model to follow with the tools."""
    run = json.dumps(run_id)
    return (
        f"Debug the recorded agent run {run} with the replaykit tools, one step at a time:\n"
        f"1. Call failing_step(run_id={run}). It names the first failed step and why it failed. If no step "
        "failed, call inspect_run and look for the step where the run went wrong (wrong tool, wrong "
        "arguments, a bad answer).\n"
        "2. Call get_step on that step (and on the LLM step that asked for it, requested_by_step) to see "
        "exactly what the model saw and what it answered or what the tool returned.\n"
        "3. Propose ONE edit that would fix it: new tool arguments (args), a working tool result (result), "
        "or a different model answer (response). Explain why you expect it to help.\n"
        f"4. Call branch_run(run_id={run}, at=STEP, <your edit>). It returns the branch's run id.\n"
        "5. Call play_run on the branch (offline unless live play is enabled): the engine plays the run "
        "in its real loop with your edit in place and records a new run.\n"
        "6. Call diff_runs with the original run and the played run (play_run's 'compare' field says "
        "which). Report the first divergence and its cause, and whether the edit fixed the failure.\n"
        "Name runs by id only. Do not repeat a tool call that returned an error without changing its "
        "arguments."
    )


def build_server(store: RunStore, *, live: LiveEndpoint | None = None, scrubber: Scrubber | None = None) -> Any:
    """The ``MCPServer`` with every tool, the two resource templates and the prompt registered."""
    require_sdk()
    from mcp.server.mcpserver import MCPServer
    from mcp_types import ToolAnnotations

    from replaykit import __version__

    tools = Tools(store, live)
    scrub = scrubber or Scrubber(extra_names=(live.api_key_env,) if live and live.api_key_env else ())
    server: Any = MCPServer(NAME, version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    for name in TOOL_NAMES:
        read_only = name in READ_ONLY
        annotations = ToolAnnotations(read_only_hint=read_only, destructive_hint=False,
                                      idempotent_hint=read_only, open_world_hint=name == "play_run" and live is not None)
        server.add_tool(_guarded(getattr(tools, name), scrub), name=name, annotations=annotations,
                        structured_output=True)
    server.resource("replaykit://run/{run_id}", name="run", mime_type="application/json",
                    description="a run whole: summary, health and timeline (replaykit inspect --json)")(
        _resource(tools.run_document, scrub))
    server.resource("replaykit://run/{run_id}/step/{step}", name="step", mime_type="application/json",
                    description="one step whole (replaykit inspect RUN --step N --json)")(
        _resource(tools.step_document, scrub))
    server.prompt(name="debug_failing_run", description="walk a failing run: find the failing step, show it, "
                                                        "propose and try a branch, diff")(debug_prompt)
    server.replaykit_tools = tools
    return server


def serve_stdio(store: RunStore, *, live: LiveEndpoint | None = None) -> None:
    build_server(store, live=live).run("stdio")
