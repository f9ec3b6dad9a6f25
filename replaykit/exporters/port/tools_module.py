"""The port's framework-neutral tool module (``agent_tools.py``) and its opt-in Hermes binding
(``hermes_tools.py``).

The tool-module convention (the port, ``replaykit play --tools-module`` and the standalone script share
it): a tool is called ``fn(**arguments)``, the model's JSON arguments as keyword arguments (nested
objects as plain dicts); the module lists its tools as ``TOOLS = {recorded name: function}`` (so a tool
name that is not a Python identifier, or is a keyword, keeps its name); a function may be async; it
returns a str (sent as is) or a JSON-able value (sent as JSON); ``NotImplementedError`` means "not
ported yet".

The module is called ``agent_tools``, not ``tools``: Hermes ships a top-level ``tools`` package, which
the Hermes binding imports.
"""

from __future__ import annotations

from typing import Any

from replaykit.core.trace.ir import ToolSpec
from replaykit.exporters.port import layout
from replaykit.exporters.port import source as src
from replaykit.exporters.port.signatures import ToolSignature, tool_signature

#: Hermes's built-in tools the binding can run (registry tools, and ``todo``/``memory`` with a store)
HERMES_BUILTINS = frozenset({
    "terminal", "process", "read_file", "write_file", "patch", "search_files", "todo", "memory",
    "web_search", "web_extract", "vision_analyze", "image_generate", "execute_code", "skills_list",
    "skill_view", "skill_manage", "browser_navigate", "browser_snapshot", "browser_click", "browser_type",
    "browser_scroll", "browser_back", "browser_press", "browser_get_images", "browser_vision",
    "browser_console", "text_to_speech", "cronjob", "send_message", "clarify", "session_search",
})
#: delegation tools: the port's nested agent answers them (agent.py), not this module
DELEGATE = frozenset({"delegate_task"})

#: the subagent's task from a delegation call's arguments, embedded verbatim in both frameworks' agent.py
#: (a port with a subagent): Hermes 0.19 passes ``goal``/``context`` strings, 0.22 a ``tasks`` list of
#: entries whose text fields (goal, context) make the task
TASK_TEXT = '''

def task_text(*values: Any) -> str:
    """The subagent's task: the delegation call's text arguments and the text fields of each task
    entry (goal, context, ...), one paragraph each."""
    parts: list[str] = []
    for value in values:
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict):
                parts += [str(v) for v in item.values() if isinstance(v, str) and v]
            elif item:
                parts.append(str(item))
    return "\\n\\n".join(parts)
'''


def task_arguments(sig: ToolSignature) -> list[str]:
    """The parameters of a delegation tool that make the subagent's task: text ones, and lists of task
    entries (a list of the tool's own TypedDicts)."""
    classes = {c.split("(")[0].split()[1] if c.startswith("class ") else c.split(" = ")[0] for c in sig.classes}
    out: list[str] = []
    for p in sig.params:
        kind = p.annotation.removesuffix(" | None")
        if kind == "str" or (kind.startswith("list[") and kind[5:-1] in classes):
            out.append(p.name)
    return out

_HEADER = '''"""The tools of this port: one function per tool the recorded agent declared.

Each tool is called with the model's arguments as keyword arguments and returns a str (sent to the model
as is) or a JSON-able value (sent as JSON). A body that raises NotImplementedError is not ported yet:
the conformance suite (`pytest`) answers it from the recordings and says so; a live run that reaches
it stops, naming the tool. Port a tool by replacing its body, then run `pytest` again: the suite runs it for
real and compares its results with the recorded ones.
{hermes_note}
TOOLS maps each tool's recorded name to its function: `replaykit play --tools-module agent_tools.py`
and the standalone script (`python run.py --tools-module agent_tools.py`) call the same functions.
"""

{imports}
'''

_HERMES_NOTE = '''
Hermes's own implementations of its built-in tools are bound, opt-in: with hermes-agent installed,
`PORT_HERMES_TOOLS=1 python agent.py` runs those tools through Hermes's code (see hermes_tools.py), so the
port runs on day one; port them one at a time.
'''


def render_tools_module(tools: list[ToolSpec], hermes: bool,
                        undeclared: dict[str, dict[str, Any]] | None = None) -> tuple[str, list[ToolSignature]]:
    """``agent_tools.py`` for ``tools`` (delegation tools excluded), and the signatures it holds.
    ``hermes``: bind Hermes's built-in tools (the recording came from Hermes); ``undeclared``: the
    arguments recorded calls pass beyond each tool's schema (``spec.undeclared_arguments``)."""
    taken: set[str] = set()
    signatures = [tool_signature(t.name, t.description, t.parameters, taken, (undeclared or {}).get(t.name))
                  for t in tools if t.name not in DELEGATE]
    bound = [s for s in signatures if hermes and s.tool_name in HERMES_BUILTINS]
    body = ""
    for signature in signatures:
        for cls in signature.classes:
            body += "\n\n" + cls + "\n"
    for signature in signatures:
        body += "\n\n" + _function(signature, signature in bound)
    entries = "".join(f"    {src.py_str(s.tool_name)}: {s.func},\n" for s in signatures)
    body += f"\n\nTOOLS: dict[str, Any] = {{\n{entries}}}\n" if entries else "\n\nTOOLS: dict[str, Any] = {}\n"
    typing, extensions = src.typing_imports(body)
    imports = "\n\n".join(line for line in (typing, extensions, "from hermes_tools import USE_HERMES_TOOLS, hermes_tool"
                                             if bound else "") if line)
    if not body.lstrip("\n").startswith(("class ", "def ")):  # isort: one blank line before a statement
        body = body[1:]
    text = _HEADER.format(hermes_note=_HERMES_NOTE if bound else "", imports=imports) + body
    src.check_compiles(text, "agent_tools.py")
    return text, signatures


def _function(sig: ToolSignature, hermes: bool) -> str:
    lines = [layout.statement("", f"def {sig.func}{sig.signature()} -> str:"), "    " + src.docstring(sig.doc(), "    ")]
    lines += [f"    {line}" for line in sig.comments()]
    todo = f"port the {sig.tool_name} tool"
    if hermes:
        given = [f"{src.py_str(p.name)}: {p.name}" for p in sig.params] + ([f"**{sig.extra}"] if sig.extra else [])
        lines += ["    if USE_HERMES_TOOLS:",
                  layout.statement("        ", f"return hermes_tool({src.py_str(sig.tool_name)}, {{{', '.join(given)}}})")]
        todo += " (or PORT_HERMES_TOOLS=1: Hermes's own)"
    lines.append(layout.statement("    ", f"raise NotImplementedError({src.py_str(todo)})"))
    return "\n".join(lines) + "\n"


HERMES_TOOLS = '''"""Opt-in binding of the port's tools to Hermes's own implementations (needs hermes-agent installed).

Off unless PORT_HERMES_TOOLS=1. Then a built-in tool (terminal, read_file, write_file, patch,
search_files, web_search, ...) runs through Hermes's dispatcher (model_tools.handle_function_call), and
todo / memory through Hermes's stores (kept for the process, as one Hermes session keeps them).
Hermes ships top-level packages named `agent` and `tools`; they are imported with this directory off
sys.path, so this port's agent.py does not shadow them.
"""

import importlib
import os
import sys
from pathlib import Path
from typing import Any

USE_HERMES_TOOLS = os.environ.get("PORT_HERMES_TOOLS", "") not in ("", "0")
_HERE = str(Path(__file__).resolve().parent)
_STATE: dict[str, Any] = {}


def _hermes(module: str) -> Any:
    """Import a Hermes module with this directory off sys.path (see the module docstring)."""
    if module in sys.modules:
        return sys.modules[module]
    shadow = sys.modules.get("agent")
    if shadow is not None and not hasattr(shadow, "__path__"):
        # this port's agent.py, imported as `agent`: not Hermes's package
        del sys.modules["agent"]
    saved = list(sys.path)
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise RuntimeError(
            f"PORT_HERMES_TOOLS=1 needs hermes-agent installed ({exc})"
        ) from exc
    finally:
        sys.path[:] = saved


def hermes_tool(name: str, arguments: dict[str, Any]) -> str:
    """Run Hermes's implementation of the tool `name` (arguments left out, None, are not passed)."""
    args = {key: value for key, value in arguments.items() if value is not None}
    if name == "todo":
        todo = _hermes("tools.todo_tool")
        store = _STATE.setdefault("todo", todo.TodoStore())
        todos, merge = args.get("todos"), bool(args.get("merge"))
        return str(todo.todo_tool(todos=todos, merge=merge, store=store))
    if name == "memory":
        memory = _hermes("tools.memory_tool")
        if "memory" not in _STATE:
            _STATE["memory"] = memory.MemoryStore()
        return str(memory.memory_tool(store=_STATE["memory"], **args))
    model_tools = _hermes("model_tools")
    task = _STATE.setdefault("task_id", f"port-{os.getpid()}")
    return str(model_tools.handle_function_call(name, args, task_id=task))
'''
