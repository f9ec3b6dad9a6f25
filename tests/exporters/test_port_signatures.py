"""JSON Schema -> typed tool functions, and the safety of everything a port generates from trace content.

Property tests: hostile tool names, property names, descriptions, enum values, defaults, model names and
prompts never change the generated program (the module defines exactly the expected names, its values
read back equal), and whatever the schema, the module compiles and imports.
"""

from __future__ import annotations

import ast
import inspect
import sys
import typing
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replaykit.core.trace.ir import ToolSpec
from replaykit.exporters.port.prompt import prompt_template, render
from replaykit.exporters.port.signatures import tool_signature
from replaykit.exporters.port.tools_module import render_tools_module

HOSTILE = st.one_of(
    st.text(max_size=40),
    st.sampled_from(['"""', "'''", "\\", "\\u0000", "class", "def", "None", "TOOLS", "Any", "__import__", "1abc",
                     "a-b", "x y", "\u2028", "\ud800", "é", "import os", "\"); import os; (\"", "{{date}}",
                     "NotRequired", "TypedDict", "Literal", "json", "self", "extra", "__class__", "_", "match",
                     "dict", "list", "str", "type", "NotImplementedError"]),
)
JSON_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                        st.text(max_size=20))


def _load(text: str, name: str = "agent_tools_under_test") -> ModuleType:
    module = ModuleType(name)
    exec(compile(text, f"{name}.py", "exec", dont_inherit=True), module.__dict__)
    return module


def _schema_strategy() -> st.SearchStrategy[dict[str, Any]]:
    leaf = st.one_of(
        st.fixed_dictionaries({"type": st.sampled_from(["string", "integer", "number", "boolean", "null"])},
                              optional={"description": HOSTILE, "default": JSON_SCALAR}),
        st.fixed_dictionaries({"enum": st.lists(st.one_of(HOSTILE, st.integers(), st.booleans(), st.none(),
                                                          st.floats()), max_size=5)}),
        st.fixed_dictionaries({"$ref": st.just("#/defs/x")}),
        st.just({}),
        st.fixed_dictionaries({"type": st.lists(st.sampled_from(["string", "null", "integer"]), max_size=3)}),
    )
    return st.recursive(leaf, lambda inner: st.one_of(
        st.fixed_dictionaries({"type": st.just("array"), "items": inner}),
        st.fixed_dictionaries({"type": st.just("object"),
                               "properties": st.dictionaries(HOSTILE, inner, max_size=4)},
                              optional={"required": st.lists(HOSTILE, max_size=3), "description": HOSTILE}),
        st.fixed_dictionaries({"anyOf": st.lists(inner, min_size=1, max_size=3)}),
    ), max_leaves=8)


TOOL = st.builds(
    lambda name, description, props, required: ToolSpec(
        name=name, description=description,
        parameters={"type": "object", "properties": props, "required": required}),
    HOSTILE.filter(lambda n: n != "delegate_task"), st.one_of(st.none(), HOSTILE),
    st.dictionaries(HOSTILE, _schema_strategy(), max_size=5), st.lists(HOSTILE, max_size=3))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(TOOL, max_size=4, unique_by=lambda t: t.name))
def test_any_tools_give_a_module_that_compiles_and_defines_only_what_it_should(tools: list[ToolSpec]) -> None:
    text, signatures = render_tools_module(tools, hermes=False)
    module = _load(text)
    assert set(module.TOOLS) == {t.name for t in tools}
    imported = {alias.name for node in ast.parse(text).body if isinstance(node, ast.ImportFrom)
                for alias in node.names}
    assert "Any" in imported and imported <= {"Any", "Literal", "NotRequired", "TypedDict"}  # only what it uses
    expected = imported | {"TOOLS"} | {s.func for s in signatures}
    expected |= {c.split("(")[0].split()[1] if c.startswith("class ") else c.split(" = ")[0]
                 for s in signatures for c in s.classes}
    defined = {n for n in vars(module) if not n.startswith("__")}
    assert defined == expected  # no statement of trace content ever ran
    for tool, sig in zip(tools, signatures, strict=True):
        function = module.TOOLS[tool.name]
        assert function.__name__ == sig.func and sig.func.isidentifier()
        hints = typing.get_type_hints(function, include_extras=True)  # every annotation resolves
        assert "return" in hints
        def visible(text: str) -> str:  # the docstring keeps every printable character but quotes
            return "".join(c for c in "".join(text.split()) if c.isprintable() and c not in "\"'?")

        doc = visible(function.__doc__ or "")
        if tool.description and tool.description.strip():
            assert visible(tool.description) in doc
        params = inspect.signature(function).parameters
        props = tool.parameters["properties"]
        for name, parameter in params.items():
            if parameter.kind is inspect.Parameter.VAR_KEYWORD:
                continue
            assert name in props
            default = props[name].get("default") if isinstance(props[name], dict) else None
            if parameter.default is not inspect.Parameter.empty and parameter.default is not None:
                assert parameter.default == default
        with pytest.raises((NotImplementedError, TypeError)):
            function()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(HOSTILE, st.integers(), st.booleans()), min_size=1, max_size=6))
def test_enum_becomes_literal_of_exactly_its_values(values: list[Any]) -> None:
    tool = ToolSpec(name="pick", parameters={"type": "object", "properties": {"choice": {"enum": values}},
                                             "required": ["choice"]})
    text, _ = render_tools_module([tool], hermes=False)
    module = _load(text)
    annotation = typing.get_type_hints(module.pick)["choice"]
    assert typing.get_origin(annotation) is typing.Literal
    assert {(type(v), v) for v in typing.get_args(annotation)} == {(type(v), v) for v in values}


def test_typed_signature_of_a_hermes_like_schema() -> None:
    schema = {"type": "object", "properties": {
        "todos": {"type": "array", "description": "Task items to write.", "items": {
            "type": "object", "properties": {
                "id": {"type": "string"},
                "status": {"type": "string", "enum": ["pending", "in_progress", "completed", "cancelled"]}},
            "required": ["id", "status"]}},
        "merge": {"type": "boolean", "default": False, "description": "Update by id."},
        "limit": {"type": ["integer", "null"]},
        "class": {"type": "string"}, "file-path": {"type": "string"},
        "blob": {"$ref": "#/defs/blob"}}, "required": ["todos"]}
    sig = tool_signature("todo", "Manage your task list.", schema, set())
    assert sig.signature() == ("(todos: list[TodoTodosItem], merge: bool = False, limit: int | None = None, "
                               "blob: Any = None, **extra: Any)")
    assert sig.extra_names == ["class", "file-path"]
    assert any("blob: $ref is not typed" in f for f in sig.fallbacks)
    assert 'Literal["pending", "in_progress", "completed", "cancelled"]' in sig.classes[0]
    assert "Args:\n    todos: Task items to write.\n    merge: Update by id." in sig.doc()


def test_tool_names_that_are_not_identifiers_keep_their_names() -> None:
    tools = [ToolSpec(name=n, parameters={"type": "object", "properties": {"x": {"type": "string"}}})
             for n in ("class", "web-search", "1st", "web_search", "TOOLS", "")]
    text, sigs = render_tools_module(tools, hermes=False)
    module = _load(text)
    assert list(module.TOOLS) == ["class", "web-search", "1st", "web_search", "TOOLS", ""]
    assert [s.func for s in sigs] == ["class_", "web_search", "tool_1st", "web_search_2", "TOOLS_2", "tool"]


def test_hermes_builtins_bind_opt_in() -> None:
    tools = [ToolSpec(name="terminal", parameters={"type": "object", "properties": {
        "command": {"type": "string"}, "timeout": {"type": "integer"}}, "required": ["command"]})]
    text, _ = render_tools_module(tools, hermes=True)
    assert "from hermes_tools import USE_HERMES_TOOLS, hermes_tool" in text
    assert 'return hermes_tool("terminal", {"command": command, "timeout": timeout})' in text
    assert "PORT_HERMES_TOOLS=1" in text


# ------------------------------------------------------------------------------------------- prompts

def test_prompt_template_marks_only_what_differs() -> None:
    a = "Today is 2026-12-01. cwd: /home/ana/proj. Model: gpt-4o. Session 2026-11-30."
    b = "Today is 2026-12-05. cwd: /home/bo/proj. Model: gpt-4o. Session 2026-11-30."
    template, variables = prompt_template([a, b], ["gpt-4o"])
    assert template == "Today is {{date}}. cwd: {{path}}. Model: gpt-4o. Session 2026-11-30."
    assert variables == {"date": ["2026-12-01", "2026-12-05"], "path": ["/home/ana/proj", "/home/bo/proj"]}
    assert render(template, {k: v[1] for k, v in variables.items()}) == b


def test_prompt_template_models_and_literal_fallbacks() -> None:
    template, variables = prompt_template(["You are m-one.", "You are m-two."], ["m-one", "m-two"])
    assert template == "You are {{model}}." and variables == {"model": ["m-one", "m-two"]}
    assert prompt_template(["Be brief.", "Be verbose."]) == ("Be brief.", {})  # not only volatile parts
    assert prompt_template(["A {{x}} 2026-12-01", "A {{x}} 2026-12-02"]) == ("A {{x}} 2026-12-01", {})
    assert prompt_template(["same", "same"]) == ("same", {})


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(max_size=30), min_size=1, max_size=3), st.lists(st.dates().map(str), min_size=2, max_size=3))
def test_prompt_template_renders_back_every_run(pieces: list[str], dates: list[str]) -> None:
    prompts = [" ".join([*pieces, d]) for d in dates]
    template, variables = prompt_template(prompts)
    for n, prompt in enumerate(prompts):
        assert render(template, {k: v[n] for k, v in variables.items()}) == prompt or not variables


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(model=HOSTILE, prompt=HOSTILE, tool=HOSTILE.filter(lambda n: n != "delegate_task"),
       max_tokens=st.one_of(st.integers(), st.floats(allow_nan=True), HOSTILE),
       choice=st.one_of(HOSTILE, st.dictionaries(HOSTILE, HOSTILE, max_size=2)))
def test_agent_source_is_safe_for_any_model_prompt_and_settings(model: str, prompt: str, tool: str,
                                                                max_tokens: Any, choice: Any) -> None:
    from replaykit.exporters.port.pydantic_ai import model_string, render_agent
    from replaykit.exporters.port.spec import AgentSpec

    spec = AgentSpec(name="agent", system_prompt=prompt, variables={}, tools=[ToolSpec(name=tool)],
                     settings={"max_tokens": max_tokens, "tool_choice": choice}, model=model, api="openai-chat",
                     provider=None, run_ids=["r"], first_prompt=prompt)
    _, signatures = render_tools_module(spec.tools, hermes=False)
    text = render_agent(spec, signatures)["agent.py"]
    tree = ast.parse(text)
    assigned = {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
                if isinstance(t, ast.Name)}
    assigned |= {node.target.id for node in tree.body if isinstance(node, ast.AnnAssign)
                 and isinstance(node.target, ast.Name)}
    functions = {node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
    assert assigned == {"HERE", "MODEL", "TOOL_SCHEMAS", "agent"}
    assert functions == {"prompt", "prompt_variables", "recorded_declaration", "tools", "agent_system_prompt",
                         "main"}
    model_node = next(node for node in tree.body if isinstance(node, ast.Assign)
                      and getattr(node.targets[0], "id", "") == "MODEL")
    assert ast.literal_eval(model_node.value.args[1]) == model_string(spec)  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def _no_leftover_modules() -> Any:
    yield
    sys.modules.pop("agent_tools_under_test", None)


def test_the_ports_prompt_reader_is_render_and_reads_live_values(tmp_path: Path) -> None:
    """PROMPT_READER (embedded verbatim in every port's agent.py) fills a template as ``render`` does, and
    reads the values ``live_values`` writes: today's date in the recorded form, else the first value."""
    import datetime as dt
    import json

    from replaykit.exporters.port.prompt import PROMPT_READER, live_values, prompt_template, render

    prompts = ["Today is 2026-12-01 (Tuesday, December 01, 2026) in /tmp/a1 {braces} $x",
               "Today is 2026-12-05 (Saturday, December 05, 2026) in /tmp/b2 {braces} $x"]
    template, variables = prompt_template(prompts)
    assert set(variables) == {"date", "date_2", "path"}
    values = live_values(variables)
    assert values == {"date": {"today": "%Y-%m-%d"}, "date_2": {"today": "%A, %B %d, %Y"}, "path": "/tmp/a1"}
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "system.md").write_text(template, encoding="utf-8")
    (tmp_path / "prompts" / "system.variables.json").write_text(json.dumps(values), encoding="utf-8")
    namespace: dict[str, Any] = {"HERE": tmp_path, "json": json, "date": dt.date}
    exec(compile(PROMPT_READER, "agent.py", "exec"), namespace)  # the port's own lines
    reader = namespace["prompt"]
    for n, recorded in enumerate(prompts):
        given = {k: v[n] for k, v in variables.items()}
        assert reader("system", given) == render(template, given) == recorded
    today = dt.date.today()
    assert reader("system") == render(template, {"date": today.isoformat(),
                                                  "date_2": today.strftime("%A, %B %d, %Y"), "path": "/tmp/a1"})
    (tmp_path / "prompts" / "other.md").write_text("no {{variables}} here", encoding="utf-8")
    assert reader("other") == "no {{variables}} here"  # no values file: nothing replaced


def test_signature_widened_by_arguments_the_schema_does_not_declare() -> None:
    """An argument recorded calls pass beyond the declared schema becomes an optional parameter typed from
    the recorded values, with a comment; a declared one is untouched; a non-identifier goes to **extra."""
    from replaykit.exporters.port.signatures import tool_signature

    schema = {"type": "object", "properties": {"tasks": {"type": "array", "items": {"type": "string"}}}}
    undeclared = {"goal": {"type": "string"}, "tasks": {"type": "integer"}, "max-depth": {"type": "integer"}}
    sig = tool_signature("delegate_task", "Delegate.", schema, set(), undeclared)
    assert sig.signature() == "(tasks: list[str] | None = None, goal: str | None = None, **extra: Any)"
    assert sig.extra_names == ["max-depth"]
    assert any(line.startswith("# goal: not in the declared schema") for line in sig.comments())
    assert "goal: not in the declared schema; recorded calls pass it" in sig.doc()
    plain = tool_signature("delegate_task", "Delegate.", schema, set())
    assert plain.signature() == "(tasks: list[str] | None = None)" and plain.comments() == []


def test_undeclared_arguments_are_read_from_the_recorded_calls() -> None:
    from replaykit.core.trace.run import Run
    from replaykit.exporters.port.spec import AgentSpec

    run = Run.load(Path(__file__).resolve().parents[1] / "fixtures" / "hermes" / "0.22" / "subagent.jsonl")
    spec = AgentSpec.from_runs([run])
    assert spec.undeclared == {"delegate_task": {"goal": {"type": "string"}}}
    old = Run.load(Path(__file__).resolve().parents[1] / "fixtures" / "hermes" / "subagent.jsonl")
    assert AgentSpec.from_runs([old]).undeclared == {}  # 0.19 declares goal: nothing to widen


def test_task_text_of_a_delegation_call() -> None:
    """TASK_TEXT (embedded verbatim in a port with a subagent): text arguments, and each task entry's text."""
    from replaykit.exporters.port.tools_module import TASK_TEXT

    namespace: dict[str, Any] = {"Any": Any}
    exec(compile(TASK_TEXT, "agent.py", "exec"), namespace)  # the port's own lines
    task_text = namespace["task_text"]
    assert task_text("Goal.", None, "") == "Goal."
    assert task_text([{"goal": "A", "context": "ctx", "images": ["x.png"], "output_schema": {}}, {"goal": "B"}],
                     None) == "A\n\nctx\n\nB"
    assert task_text(None, []) == ""
