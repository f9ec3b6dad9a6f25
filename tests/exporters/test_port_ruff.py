"""Generated port code passes ``ruff check`` and ``ruff format --check`` as exported.

The port is product code a team keeps under its own linter and formatter: every generated Python file of
real exports (Hermes fixtures of both versions, a subagent, generated runs with enums, nested objects and
a dated prompt, hostile tool and property names), for both frameworks, is checked with ruff itself:
its default rules plus unused imports (F401), blank lines (E303, a preview rule) and import order (I),
and the formatter's default style (line length 88). Run from the port's directory, as a team runs it.
Writing a port needs no framework, so this runs in every environment that has ruff (the dev extra).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replaykit.core.trace.ir import ToolSpec
from replaykit.exporters.port import layout
from replaykit.exporters.port.tools_module import render_tools_module
from tests.exporters import port_runs
from tests.exporters.port_support import FIXTURES, export

ruff_main = pytest.importorskip("ruff.__main__")

CHECK = ["check", "--isolated", "--preview", "--extend-select", "E303,I,F401", "--output-format", "concise",
         "--no-cache"]
FORMAT = ["format", "--isolated", "--check", "--diff", "--no-cache"]
FORMATS = ["pydantic-ai", "langgraph"]


def ruff(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ruff_main.find_ruff_bin(), *args, "."], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def assert_clean(folder: Path) -> None:
    python = sorted(p.name for p in folder.rglob("*.py"))
    assert python, f"no Python file in {folder}"
    checked = ruff(CHECK, folder)
    assert checked.returncode == 0, f"ruff check in {folder.name}:\n{checked.stdout}{checked.stderr}"
    formatted = ruff(FORMAT, folder)
    assert formatted.returncode == 0, f"ruff format in {folder.name}:\n{formatted.stdout}{formatted.stderr}"


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", ["two_turns", "subagent", "0.22/subagent", "anthropic_messages",
                                  "0.22/codex_responses"])
def test_hermes_fixture_ports_pass_ruff(tmp_path: Path, name: str, fmt: str) -> None:
    port = tmp_path / "port"
    export([FIXTURES / f"{name}.jsonl"], port, fmt)
    assert_clean(port)


@pytest.mark.parametrize("fmt", FORMATS)
def test_generated_runs_port_passes_ruff(tmp_path: Path, fmt: str) -> None:
    runs = port_runs.write_ops_runs(tmp_path / "runs")  # enums, nested objects, optionals, a dated prompt
    port = tmp_path / "port"
    export(runs, port, fmt)
    assert (port / "prompts" / "system.variables.json").is_file()
    assert_clean(port)


def test_a_module_with_unused_imports_or_bad_layout_fails(tmp_path: Path) -> None:
    """The check itself can fail: an unused import, three blank lines, a single-quoted string."""
    (tmp_path / "bad.py").write_text("from typing import Any, Literal\n\n\n\nX: Any = 'a'\n", encoding="utf-8")
    assert ruff(CHECK, tmp_path).returncode != 0
    assert ruff(FORMAT, tmp_path).returncode != 0


_NAME = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=30)
_LONG = st.text(st.sampled_from("abcdefghij_ -.\"'\\{}[](),:é中\n\t"), min_size=0, max_size=70)


def _schema() -> st.SearchStrategy[dict[str, object]]:
    leaf = st.one_of(
        st.just({"type": "string"}), st.just({"type": "integer", "default": 3}),
        st.builds(lambda d: {"type": "string", "description": d}, _LONG),
        st.builds(lambda v: {"type": "string", "enum": v}, st.lists(_LONG, min_size=1, max_size=12)),
        st.builds(lambda v: {"type": "string", "default": v}, _LONG),
        st.just({"type": ["string", "null"]}), st.just({"$ref": "#/x"}))
    return st.recursive(leaf, lambda inner: st.one_of(
        st.builds(lambda i: {"type": "array", "items": i}, inner),
        st.builds(lambda p, r: {"type": "object", "properties": p, "required": r},
                  st.dictionaries(st.one_of(_NAME, st.sampled_from(["status", "a_very_long_property_name_x" * 2])),
                                  inner, max_size=4),
                  st.lists(_NAME, max_size=2))), max_leaves=8)


_TOOL = st.builds(
    lambda name, description, props, required: ToolSpec(
        name=name, description=description, parameters={"type": "object", "properties": props, "required": required}),
    st.one_of(_NAME, st.sampled_from(["class", "web.search", "t" * 60])), st.one_of(st.none(), _LONG),
    st.dictionaries(st.one_of(_NAME, st.just("a_long_parameter_name_that_pushes_the_line" * 2)), _schema(),
                    max_size=6),
    st.lists(_NAME, max_size=3))


def test_any_tool_schemas_give_a_tools_module_ruff_leaves_alone(tmp_path: Path) -> None:
    """Hostile names, long enums, nested objects, quotes and wide characters in descriptions and
    defaults: every generated agent_tools.py is ruff-clean (one ruff run over all of them)."""
    modules: list[str] = []

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
    @given(st.lists(_TOOL, min_size=1, max_size=3, unique_by=lambda t: t.name), st.booleans())
    def collect(tools: list[ToolSpec], hermes: bool) -> None:
        undeclared = {tools[0].name: {"goal": {"type": "string"}, "legacy_flag": {"type": "boolean"}}}
        text, _ = render_tools_module(tools, hermes, undeclared)
        modules.append(text)

    collect()
    for n, text in enumerate(modules):
        (tmp_path / f"tools_{n}.py").write_text(text, encoding="utf-8")
    (tmp_path / "hermes_tools.py").write_text("USE_HERMES_TOOLS = False\n\n\ndef hermes_tool(name, args):\n"
                                              "    return ''\n".replace("''", '""'), encoding="utf-8")
    assert_clean(tmp_path)


@pytest.mark.parametrize("text", [
    'X: dict[str, Any] = {"a": 1, "b": [1, 2, 3], "c": {"d": "e"}, "f": "a long string value here"}',
    'def f(a: Literal["x", "y", "z", "w", "v", "u", "t", "s", "r", "q", "p", "o"] | None = None) -> str:',
    'def f(a_long_parameter_name_for_the_single_parameter_case: list[SomeTypedDictName]) -> str:',
    "raise NotImplementedError(\"port the tool (or PORT_HERMES_TOOLS=1: Hermes's own) " + "x" * 40 + '")',
    'agent = Agent(MODEL, deps_type=dict[str, str] | None, model_settings=ModelSettings(max_tokens=1), '
    'tools=tools(["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n"]), x=True)',
])
def test_layout_statement_is_what_ruff_format_writes(tmp_path: Path, text: str) -> None:
    laid = layout.statement("", text)
    body = laid + ("\n    pass\n" if laid.endswith(":") else "\n")
    (tmp_path / "case.py").write_text(body, encoding="utf-8")
    formatted = ruff(FORMAT, tmp_path)
    assert formatted.returncode == 0, formatted.stdout
    assert json.dumps(text) != json.dumps(laid) or len(text) <= layout.LINE_LENGTH


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
