"""The conformance driver a port's suite runs (``pytest DIR``): the recordings as regression tests of the
port's own agent. Framework-neutral; a framework's plug-in (``pydantic_ai.drive_turn``,
``langgraph.drive_turn``) runs one user turn of the port's agent with this driver answering its model and
watching its tools.

One case per recording and user turn (``cases(DIR)``). A case starts its turn from the recorded
conversation before it (``framework.recorded_history(messages)``), or, for a framework without that
hook, runs the earlier turns of its recording first (every tool answered from the recording, nothing
checked: they are their own cases); then its turn, checked:

- the model is answered from the recording, step by step (``respond``): the recorded response of each
  model call, in order; a call the recording does not hold (the port asked again after the recorded
  turn ended) fails;
- the tool results the port sends back must be for the recorded calls, in the recorded order;
- a tool is called through ``call_tool``: a body still raising ``NotImplementedError`` is answered from
  the recording (reported as not ported yet); a real body runs and its result must equal the recorded
  one (as text, or as JSON when both parse; after the suite's declared normaliser for that tool, if
  any);
- the turn's final answer must equal the recorded one, and every recorded model call must be used.

A failure is a ``ConformanceFailure`` whose message names the recording, turn, step, tool, expected and
actual value (``fail`` turns it into a pytest failure without a traceback).
"""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import json
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import wraps
from pathlib import Path
from types import ModuleType
from typing import Any

from replaykit.core.trace.ir import LLMResponse, Message, TextPart
from replaykit.core.trace.run import Run
from replaykit.exporters.port.spec import ModelStep, ToolCallStep, Turn, recorded_turns

MARKER = "port.json"
TOOLS_MODULE = "agent_tools"
#: the answer served when a recording stops right after a tool step (nothing recorded to serve)
RECORDING_ENDS = "[the recording ends after these tool calls]"
#: one line per tool: how the suite's cases met it (filled while the suite runs; ``summary_lines``)
TOOL_REPORT: dict[str, dict[str, int]] = {}


class ConformanceFailure(AssertionError):
    """The port does not do what the recording did (the message says where and how)."""


@dataclass
class Case:
    recording: str  # the file, relative to the port directory
    agent: str  # the port module's attribute holding the agent ("agent", "subagent")
    turn: int
    turns: list[Turn]
    variables: dict[str, str]  # the prompt template's values for this recording
    check_prompt: bool  # the template reproduces this recording's system prompt
    delegated: dict[str, str] = field(default_factory=dict)  # delegate call id -> recorded result

    @property
    def id(self) -> str:
        return f"{Path(self.recording).stem}-turn{self.turn}"

    def __str__(self) -> str:
        return self.id


def load_manifest(port_dir: Path) -> dict[str, Any]:
    with open(port_dir / MARKER, encoding="utf-8") as handle:
        data: dict[str, Any] = json.load(handle)
    return data


def cases(port_dir: str | Path) -> list[Case]:
    """One case per recording (``port.json``'s list) and user turn."""
    root = Path(port_dir)
    out: list[Case] = []
    for entry in load_manifest(root)["recordings"]:
        run = Run.load(root / entry["file"])
        turns = recorded_turns(run)
        delegated = {c.call_id: c.result or "" for t in turns for s in t.steps for c in s.tool_calls
                     if c.name in entry.get("delegate_tools", ["delegate_task"])}
        for turn in turns:
            out.append(Case(entry["file"], entry.get("agent", "agent"), turn.index, turns,
                            dict(entry.get("variables") or {}), bool(entry.get("check_prompt", True)), delegated))
    return out


def _short(value: Any, limit: int = 600) -> str:
    text = repr(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def wire(value: Any) -> str:
    """A tool's return value as the model receives it: a str as is, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(_jsonable(value), ensure_ascii=False)


def _jsonable(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def same_result(recorded: str, actual: Any, normalize: Callable[[str], str] | None = None) -> bool:
    """Whether a tool's actual result equals the recorded one: as text, or as JSON when both parse."""
    left, right = recorded, wire(actual)
    if normalize is not None:
        left, right = normalize(left), normalize(right)
    if left == right:
        return True
    try:
        return bool(json.loads(left) == json.loads(right))
    except (ValueError, TypeError):
        return False


def _arguments_match(recorded: Any, actual: dict[str, Any]) -> bool:
    """The recorded arguments are what the port's tool received (keys the model left out may carry the
    signature's defaults)."""
    if not isinstance(recorded, dict):
        return not actual
    got = _jsonable(actual)
    return all(k in got and got[k] == v for k, v in recorded.items())


class TurnDriver:
    """Answers one port run's model calls from a recorded turn and watches its tools (module docstring).
    ``checked`` False: a warm-up turn (every tool answered from the recording, nothing compared)."""

    def __init__(self, case: Case, turn: Turn, *, checked: bool,
                 normalizers: dict[str, Callable[[str], str]] | None = None) -> None:
        self.case = case
        self.turn = turn
        self.checked = checked
        self.normalizers = normalizers or {}
        self.position = 0  # the next recorded model step to serve
        self.used: set[str] = set()  # recorded call ids a tool call was matched to
        self.failure: ConformanceFailure | None = None
        self.ran: list[str] = []  # tools that ran for real (ok), in order
        self.stubbed: list[str] = []  # tools answered from the recording (not ported yet)
        self.ended_early = False  # the recording stopped after a tool step (no final answer to compare)
        self._lock = threading.Lock()

    # ------------------------------------------------------------------------------------- failures

    def where(self, step: int | None = None, tool: str | None = None) -> str:
        user = self.turn.user if len(self.turn.user) <= 60 else self.turn.user[:57] + "..."
        text = f"{self.case.recording}, turn {self.turn.index} ({user!r})"
        if step is not None:
            text += f", step {step}"
        if tool is not None:
            text += f", tool {tool}"
        return text

    def fail(self, message: str) -> ConformanceFailure:
        failure = ConformanceFailure(message)
        with self._lock:
            if self.failure is None:
                self.failure = failure
        return self.failure or failure

    # ---------------------------------------------------------------------------------------- model

    def respond(self, sent: list[Message]) -> ModelStep:
        """The recorded step answering the port's next model call, after checking what it sent."""
        if self.failure is not None:
            raise self.failure
        step_no = self.position
        if 0 < step_no <= len(self.turn.steps) and self.checked:
            self._check_results_sent(self.turn.steps[step_no - 1], sent, step_no)
        if step_no == len(self.turn.steps) and self.turn.steps and self.turn.steps[-1].tool_calls:
            # the recording stops after the tools ran (a partial log): the turn ends here, with no answer
            self.position += 1
            self.ended_early = True
            end = Message(role="assistant", parts=[TextPart(text=RECORDING_ENDS)])
            return ModelStep(step_no, end, LLMResponse(message=end, finish_reason="stop"), [], None)
        if step_no >= len(self.turn.steps):
            raise self.fail(f"conformance: {self.where(step_no)}: the port called the model again after the "
                            f"recorded turn ended (the recording has {len(self.turn.steps)} model calls); "
                            f"last request ends with {_short(_tail(sent), 300)}")
        step = self.turn.steps[step_no]
        if step_no == 0 and self.checked and self.case.check_prompt and step.system is not None:
            system = "\n\n".join(m.text for m in sent if m.role in ("system", "developer"))
            if system != step.system:
                raise self.fail(f"conformance: {self.where(0)}: the system prompt differs from the recorded one\n"
                                f"  {_first_difference(step.system, system)}")
        self.position += 1
        return step

    def _check_results_sent(self, previous: ModelStep, sent: list[Message], step_no: int) -> None:
        results = [p for m in _after_last_assistant(sent) for p in m.tool_results]
        expected = [(c.call_id, c.name) for c in previous.tool_calls]
        actual = [(p.tool_call_id, p.name or "") for p in results]
        if [i for i, _ in actual] != [i for i, _ in expected]:
            raise self.fail(f"conformance: {self.where(step_no - 1)}: the port sent tool results for other calls "
                            f"than the recorded ones\n  expected: {_short(expected)}\n  actual:   {_short(actual)}")
        sent_for = {p.tool_call_id: p.content for p in results}
        for call in previous.tool_calls:
            if call.call_id not in self.used:  # the framework answered it without calling the tool
                raise self.fail(f"conformance: {self.where(step_no - 1, call.name)}: the port did not run the tool "
                                f"for the recorded call (its arguments were rejected?)\n"
                                f"  arguments: {_short(call.arguments)}\n"
                                f"  sent back: {_short(sent_for.get(call.call_id, ''))}")

    # ---------------------------------------------------------------------------------------- tools

    def recorded_call(self, name: str, arguments: dict[str, Any]) -> ToolCallStep:
        """The recorded call this tool call answers (the latest served step's, by name and arguments)."""
        step_no = self.position - 1
        pending = [c for c in (self.turn.steps[step_no].tool_calls if step_no >= 0 else [])
                   if c.call_id not in self.used]
        for candidate in ([c for c in pending if c.name == name and _arguments_match(c.arguments, arguments)]
                          or [c for c in pending if c.name == name]):
            self.used.add(candidate.call_id)
            return candidate
        raise self.fail(f"conformance: {self.where(step_no, name)}: the port called {name} with "
                        f"{_short(_jsonable(arguments))}, which the recording did not call here (recorded: "
                        f"{_short([(c.name, c.arguments) for c in pending])})")

    def call_tool(self, name: str, function: Callable[..., Any], arguments: dict[str, Any]) -> Any:
        """Run the port's tool (sync) the conformance way (module docstring)."""
        with self._lock:
            call = self.recorded_call(name, arguments)
        if not self.checked:
            return call.result or ""
        try:
            value = function(**arguments)
        except NotImplementedError:
            return self._stubbed(call)
        return self._check(call, arguments, value)

    async def call_tool_async(self, name: str, function: Callable[..., Any], arguments: dict[str, Any]) -> Any:
        with self._lock:
            call = self.recorded_call(name, arguments)
        if not self.checked:
            return call.result or ""
        try:
            value = await function(**arguments)
        except NotImplementedError:
            return self._stubbed(call)
        return self._check(call, arguments, value)

    def _stubbed(self, call: ToolCallStep) -> str:
        with self._lock:
            self.stubbed.append(call.name)
            _count(call.name, "not ported yet (answered from the recording)")
        return call.result or ""

    def _check(self, call: ToolCallStep, arguments: dict[str, Any], value: Any) -> Any:
        step_no = self.position - 1
        if call.result is None:
            pass  # the recording holds no result to compare (the run ended first)
        elif not same_result(call.result, value, self.normalizers.get(call.name)):
            raise self.fail(f"conformance: {self.where(step_no, call.name)}: the tool's result differs from the "
                            f"recorded one\n  arguments: {_short(call.arguments)}\n"
                            f"  expected:  {_short(call.result)}\n  actual:    {_short(wire(value))}")
        with self._lock:
            self.ran.append(call.name)
            _count(call.name, "ran for real, result equal to the recording")
        return value

    # ----------------------------------------------------------------------------------------- end

    def finish(self, answer: str | None) -> None:
        """Check the turn's end: every recorded model call used, the final answer equal."""
        if self.failure is not None:
            raise self.failure
        if not self.checked:
            return
        if self.ended_early:
            return
        if self.position < len(self.turn.steps):
            raise self.fail(f"conformance: {self.where(self.position)}: the port ended the turn after "
                            f"{self.position} model calls; the recording has {len(self.turn.steps)}")
        last = self.turn.steps[-1] if self.turn.steps else None
        if last is not None and not last.tool_calls and answer is not None and answer != last.response.text:
            raise self.fail(f"conformance: {self.where(len(self.turn.steps) - 1)}: the final answer differs\n"
                            f"  expected: {_short(last.response.text)}\n  actual:   {_short(answer)}")


def _count(tool: str, how: str) -> None:
    TOOL_REPORT.setdefault(tool, {}).setdefault(how, 0)
    TOOL_REPORT[tool][how] += 1


def summary_lines() -> list[str]:
    """The suite's closing lines: each tool and how the cases met it."""
    return [f"{tool}: " + ", ".join(f"{how} x{n}" for how, n in sorted(hows.items()))
            for tool, hows in sorted(TOOL_REPORT.items())]


def _after_last_assistant(messages: list[Message]) -> list[Message]:
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "assistant":
            return messages[index + 1:]
    return messages


def _tail(messages: list[Message]) -> Any:
    if not messages:
        return None
    last = messages[-1]
    return {"role": last.role, "text": last.text[:200],
            "tool_results": [p.content[:200] for p in last.tool_results]}


def _first_difference(expected: str, actual: str) -> str:
    n = next((i for i, (a, b) in enumerate(zip(expected, actual, strict=False)) if a != b),
             min(len(expected), len(actual)))
    start = max(0, n - 40)
    return (f"first difference at character {n}:\n  expected: {_short(expected[start:n + 80])}\n"
            f"  actual:   {_short(actual[start:n + 80])}")


# ------------------------------------------------------------------------------ loading the port

def wrap_tools(module: ModuleType, driver_of: Callable[[], TurnDriver | None]) -> None:
    """Route every tool of the port's tool module (``TOOLS`` and the module-level names) through the
    current driver (``driver_of()``; None: call the body as is). Signatures are kept (``wraps``), so a
    framework reads the same parameters and types."""
    tools: dict[str, Any] = getattr(module, "TOOLS", {})
    for name, function in list(tools.items()):
        wrapped = _wrap(name, function, driver_of)
        tools[name] = wrapped
        attr = getattr(function, "__name__", None)
        if attr and getattr(module, attr, None) is function:
            setattr(module, attr, wrapped)


def _wrap(name: str, function: Callable[..., Any], driver_of: Callable[[], TurnDriver | None]) -> Callable[..., Any]:
    if inspect.iscoroutinefunction(function):
        @wraps(function)
        async def run_async(**arguments: Any) -> Any:
            driver = driver_of()
            if driver is None:
                return await function(**arguments)
            return await driver.call_tool_async(name, function, arguments)

        return run_async

    @wraps(function)
    def run(**arguments: Any) -> Any:
        driver = driver_of()
        if driver is None:
            return function(**arguments)
        return driver.call_tool(name, function, arguments)

    return run


def load_port(port_dir: Path, driver_of: Callable[[], TurnDriver | None], name: str = "agent.py") -> ModuleType:
    """The port's agent module, loaded fresh (a fresh tool module too: tool state does not leak between
    cases), with its tools routed through the driver. Loaded under a private module name, never as
    ``agent`` (Hermes ships a package of that name)."""
    root = str(port_dir.resolve())
    if root not in sys.path:
        sys.path.insert(0, root)
    sys.modules.pop(TOOLS_MODULE, None)
    spec = importlib.util.spec_from_file_location(TOOLS_MODULE, port_dir / f"{TOOLS_MODULE}.py")
    assert spec is not None and spec.loader is not None
    tools = importlib.util.module_from_spec(spec)
    sys.modules[TOOLS_MODULE] = tools
    spec.loader.exec_module(tools)
    wrap_tools(tools, driver_of)
    module_name = f"_replaykit_port_{abs(hash(root))}"
    spec = importlib.util.spec_from_file_location(module_name, port_dir / name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def run_case(case: Case, port_dir: str | Path, framework: Any,
             normalizers: dict[str, Callable[[str], str]] | None = None) -> TurnDriver:
    """Run one case against the port (the earlier turns as warm-up), raising ``ConformanceFailure``."""
    root = Path(port_dir)
    current: list[TurnDriver | None] = [None]
    module = load_port(root, lambda: current[0])
    history: Any = None
    driver: TurnDriver | None = None
    turns = case.turns[: case.turn + 1]
    seed = getattr(framework, "recorded_history", None)
    if seed is not None and case.turn > 0:
        # the framework starts the turn from the recorded conversation (linear in the recording's
        # length), instead of replaying every earlier turn first (those are their own cases)
        history, turns = seed(case.turns[case.turn].before), turns[-1:]
    for turn in turns:
        driver = TurnDriver(case, turn, checked=turn.index == case.turn, normalizers=normalizers)
        current[0] = driver
        try:
            answer, history = framework.drive_turn(driver, module, case, history)
        except ConformanceFailure:
            raise
        except BaseException as exc:  # the port (or the framework) stopped: say where, no traceback
            if driver.failure is not None:
                raise driver.failure from None
            found = _failure_in(exc)
            if found is not None:
                raise found from None
            raise ConformanceFailure(f"conformance: {driver.where(max(driver.position - 1, 0))}: the port raised "
                                     f"{type(exc).__name__}: {str(exc)[:800]}") from None
        finally:
            current[0] = None
        driver.finish(answer)
    assert driver is not None
    return driver


def _failure_in(exc: BaseException) -> ConformanceFailure | None:
    """A ConformanceFailure inside an exception chain or group (a framework may wrap a tool's error)."""
    seen: set[int] = set()
    stack: list[BaseException] = [exc]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, ConformanceFailure):
            return item
        stack.extend(e for e in (item.__cause__, item.__context__) if e is not None)
        stack.extend(getattr(item, "exceptions", ()) or ())
    return None


def check(case: Case, port_dir: str | Path, framework: Any,
          normalizers: dict[str, Callable[[str], str]] | None = None) -> None:
    """A suite's test body: run the case; a failure becomes a pytest failure without a traceback."""
    import pytest

    message: str | None = None
    try:
        driver = run_case(case, port_dir, framework, normalizers)
    except ConformanceFailure as failure:
        message = str(failure)
    if message is not None:  # outside the except block: no "during handling" chain in the report
        pytest.fail(message, pytrace=False)
    if driver.stubbed:
        print(f"{case.id}: not ported yet (answered from the recording): {', '.join(sorted(set(driver.stubbed)))}")
    if driver.ran:
        print(f"{case.id}: ran for real: {', '.join(sorted(set(driver.ran)))}")


def run_coroutine(coroutine: Any) -> Any:
    """Run a coroutine to completion from synchronous code (a fresh event loop)."""
    return asyncio.run(coroutine)
