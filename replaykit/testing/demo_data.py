"""The example that ``replaykit demo`` runs on: a bundled recording of a real Hermes Agent run, and the
scripted model policy that plays its branches live.

The recording (``data/hermes_echo_todo.jsonl``) was made by hermes-agent 0.19.0, driven offline by
``replaykit.testing.hermes_harness`` against ``replaykit.testing.scripted_server`` with
``hermes_default_policy()`` (scenario ``tools_sequence`` of ``tests/fixtures/hermes/rerecord.py``):
the user asks to echo hello and track it; the model calls ``harness_echo``, then ``todo``, then answers
``All done: HELLO REPLAYKIT.``.

:func:`demo_policy` answers every request exactly as that recording did, except that its final answer
quotes the ``echo`` field of the first tool result it is shown. So a live continuation of the unedited
run reproduces the record, and a branch whose echo result was edited visibly reacts to the edit.
Stdlib only.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

from replaykit.testing.script import Reply, ScriptRequest, ToolCall

RECORDING = "hermes_echo_todo.jsonl"
#: The step the demo edits (the ``harness_echo`` tool call) and what its new result says.
BRANCH_TOOL = "harness_echo"
EDITED_ECHO = "HELLO FROM A BRANCH"

_ECHO = ToolCall("harness_echo", {"text": "hello replaykit"})
_TODO = ToolCall("todo", {"todos": [{"id": "1", "content": "record the run", "status": "completed"}]})


@contextmanager
def recording_path() -> Iterator[Path]:
    """A filesystem path to the bundled recording (works from a wheel, a zip or a checkout)."""
    ref = resources.files("replaykit.testing").joinpath("data", RECORDING)
    with resources.as_file(ref) as path:
        yield Path(path)


def edited_result(recorded: str | None) -> str:
    """The branch's new tool result: the recorded JSON with a different ``echo`` value."""
    try:
        data = json.loads(recorded or "")
    except ValueError:
        data = None
    if isinstance(data, dict):
        return json.dumps({**data, "echo": EDITED_ECHO})
    return json.dumps({"echo": EDITED_ECHO})


def _first_tool_text(body: Mapping[str, Any]) -> str | None:
    """The content of the first tool result after the last user message (Chat Completions bodies)."""
    messages = [m for m in body.get("messages") or () if isinstance(m, Mapping)]
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    for message in messages[last_user + 1:]:
        if message.get("role") == "tool":
            content = message.get("content")
            if isinstance(content, list):
                content = "".join(p.get("text", "") for p in content if isinstance(p, Mapping))
            return content if isinstance(content, str) else None
    return None


def echo_of(tool_text: str | None) -> str:
    """What the final answer quotes: the ``echo`` field of a tool result, else the text itself."""
    try:
        data = json.loads(tool_text or "")
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("echo"), str):
        return data["echo"]
    return (tool_text or "nothing").strip()[:200]


def demo_policy(request: ScriptRequest) -> Reply:
    """Stateless, like ``sequence_policy``: the reply depends on the tool results since the user spoke."""
    if not request.has_tools or request.tool_results_since_user >= 2:
        return Reply(text=f"All done: {echo_of(_first_tool_text(request.body))}.")
    if request.tool_results_since_user == 0:
        return Reply(tool_calls=(_ECHO,))
    return Reply(tool_calls=(_TODO,))


__all__ = ["BRANCH_TOOL", "EDITED_ECHO", "RECORDING", "demo_policy", "echo_of", "edited_result", "recording_path"]
