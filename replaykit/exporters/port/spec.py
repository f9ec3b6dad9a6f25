"""The agent a set of recordings shows, read framework-neutrally: what a port is generated from.

``AgentSpec.from_runs(runs)`` reads one or many runs of the same agent: its system prompt (a template
when the runs differ only in volatile parts: ``prompt.py``), the tools it declared (merged across runs;
one name with two different parameter schemas is a one-line ``BadInput`` naming the conflict), the
recorded model settings, the model and the API it was called through, and its subagents (child runs
launched by ``delegate_task``, read as one nested ``AgentSpec``).

``recorded_turns(run)`` splits a run into user turns, each a list of recorded model steps with the
tool calls they asked for and the results the recorded agent sent back: what the conformance driver
serves and checks. Both read a bridged call (Hermes 0.22's Tool Search ``tool_call``) as the underlying
tool call, here and only here (``bridged.py``): the port's model, answered from the recording, calls the
underlying tool, and the spec's tools are the underlying tools.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from replaykit.core.errors import BadInput
from replaykit.core.trace.bridge import BRIDGE_TOOL_NAMES
from replaykit.core.trace.bridge_view import recorded_underlying
from replaykit.core.trace.canonical import canonical_json, parsed_arguments
from replaykit.core.trace.ir import (
    LLMCallEvent,
    LLMResponse,
    Message,
    SubagentEvent,
    TextPart,
    ToolCallEvent,
    ToolSpec,
)
from replaykit.core.trace.run import Run
from replaykit.exporters.port.bridged import (
    port_call,
    port_message,
    port_messages,
    schema_from_arguments,
    underlying_tools,
)

#: the tools through which a Hermes agent launches a subagent
DELEGATE_TOOLS = frozenset({"delegate_task"})

#: recorded request fields read as model settings (request param -> setting name)
_SETTINGS = {
    "max_tokens": "max_tokens", "max_completion_tokens": "max_tokens", "max_output_tokens": "max_tokens",
    "temperature": "temperature", "top_p": "top_p", "seed": "seed", "stop": "stop_sequences",
    "stop_sequences": "stop_sequences", "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty", "parallel_tool_calls": "parallel_tool_calls",
    "tool_choice": "tool_choice", "reasoning_effort": "reasoning_effort",
}


@dataclass
class ToolCallStep:
    """One tool call a recorded response asked for, with the result the recorded agent sent back."""

    call_id: str
    name: str
    arguments: Any
    result: str | None  # None: the recording holds no result for it (the run ended first)


@dataclass
class ModelStep:
    """One recorded model call: its response message and the tool calls it asked for."""

    index: int  # the call's position among the run's llm calls
    response: Message
    llm: LLMResponse  # the whole recorded response (usage, model, finish reason)
    tool_calls: list[ToolCallStep]
    system: str | None  # the system prompt of its request


@dataclass
class Turn:
    """One user turn: the user's message text and the recorded model steps that answered it."""

    index: int
    user: str
    steps: list[ModelStep]
    before: list[Message] = field(default_factory=list)  # the conversation before the user's message

    @property
    def answer(self) -> str:
        """The turn's final answer: the text of its last response."""
        return self.steps[-1].response.text if self.steps else ""


@dataclass
class AgentSpec:
    """What a port is generated from (see the module docstring)."""

    name: str
    system_prompt: str  # the template ({{var}} for the volatile parts) or the literal prompt
    variables: dict[str, list[str]]  # template variable -> its value in each run, in run order
    tools: list[ToolSpec]
    settings: dict[str, Any]
    model: str
    api: str  # openai-chat | openai-responses | anthropic-messages | unknown
    provider: str | None
    run_ids: list[str]
    first_prompt: str  # the first user turn of the first run: the default prompt of a live run
    subagent: AgentSpec | None = None
    called: set[str] = field(default_factory=set)  # tools some run called
    #: tool -> {argument: schema typed from the recorded values}: arguments recorded calls pass that the
    #: tool's declared schema does not (the signature takes them as optional parameters; see ``undeclared_arguments``)
    undeclared: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def from_runs(cls, runs: list[Run], children: list[Run] | None = None, name: str = "agent") -> AgentSpec:
        from replaykit.exporters.port.prompt import prompt_template

        if not runs:
            raise BadInput("no run to port")
        playable = [r for r in runs if r.llm_calls()]
        if not playable:
            raise BadInput(f"run {runs[0].run_id} holds no model call: nothing to port")
        prompts = [system_prompt_of(r) for r in playable]
        template, variables = prompt_template(prompts, [r.model or "" for r in playable])
        first = playable[0]
        call = first.llm_calls()[0]
        turns = recorded_turns(first)
        called = {port_call(p, recorded_underlying(r).get(p.id))[0]
                  for r in playable for c in r.llm_calls() for p in c.response.message.tool_calls}
        tools = merged_tools(playable)
        spec = cls(
            name=name, system_prompt=template, variables=variables, tools=tools,
            settings=model_settings(call.request.params), model=call.request.model or first.model or "gpt-4o",
            api=call.request.api, provider=first.header.provider, run_ids=[r.run_id for r in playable],
            first_prompt=turns[0].user if turns else "", called=called,
            undeclared=undeclared_arguments(playable, tools))
        if children:
            spec.subagent = cls.from_runs(children, name="subagent")
        return spec

    def all_tool_names(self) -> list[str]:
        names = [t.name for t in self.tools]
        if self.subagent is not None:
            names += [n for n in self.subagent.all_tool_names() if n not in names]
        return names


def system_prompt_of(run: Run) -> str:
    """The system prompt of a run's first model call ('' when it sent none)."""
    calls = run.llm_calls()
    if not calls:
        return ""
    return _system_text(run.request_messages(calls[0]))


def _system_text(messages: list[Message]) -> str:
    """The leading system (and developer) messages' text: a prompt's instructions come first."""
    head: list[str] = []
    for message in messages:
        if message.role not in ("system", "developer"):
            break
        head.append(message.text)
    return "\n\n".join(head)


def merged_tools(runs: list[Run]) -> list[ToolSpec]:
    """Every tool the runs declared, in first-seen order; one name with two parameter schemas is an
    error naming both runs (runs of different agents), the first description wins. A port sees the
    underlying tools of bridged calls (Hermes 0.22's Tool Search), not the bridge: ``bridged.py``."""
    seen: dict[str, tuple[ToolSpec, str, str]] = {}
    for run in runs:
        for tools in run.tool_sets.values():
            for tool in tools:
                schema = canonical_json(tool.parameters or {})
                known = seen.get(tool.name)
                if known is None:
                    seen[tool.name] = (tool, schema, run.run_id)
                elif known[1] != schema:
                    raise BadInput(f"tool {tool.name!r} has different parameter schemas in runs {known[2]} and "
                                   f"{run.run_id}: these are not runs of one agent; export them separately")
    extra, still_bridged = underlying_tools(runs, {name: tool for name, (tool, _, _) in seen.items()})
    for tool in extra:
        seen[tool.name] = (tool, canonical_json(tool.parameters or {}), "")
    tools = [tool for name, (tool, _, _) in seen.items() if name not in BRIDGE_TOOL_NAMES or name in still_bridged]
    for run in runs:  # a tool the model called that no request declared (a partial log): typed loosely
        recorded = recorded_underlying(run)
        for call in run.llm_calls():
            for part in call.response.message.tool_calls:
                if port_call(part, recorded.get(part.id))[0] != part.name:
                    continue  # a bridged call: its underlying tool is in ``extra``
                if part.name not in seen:
                    seen[part.name] = (ToolSpec(name=part.name, description="(called, but not declared in the "
                                                "recording)", parameters={"type": "object"}), "", run.run_id)
                    tools.append(seen[part.name][0])
    return tools


def undeclared_arguments(runs: list[Run], tools: list[ToolSpec]) -> dict[str, dict[str, Any]]:
    """Arguments the recorded calls pass that the tool's declared schema does not name, per tool, each
    with a schema typed from its recorded values (``bridged.schema_from_arguments``).

    A recording is what the model really sent: Hermes 0.22's ``delegate_task`` declares ``tasks`` but
    accepts the legacy ``goal``, and models still send it. A signature typed from the declaration alone
    would reject the recorded call, so the port's suite would fail as exported; the signature takes
    such an argument as an optional parameter instead (``signatures.tool_signature``, with a comment).
    A tool declared without properties already takes any argument (``**extra``) and is left alone."""
    declared: dict[str, set[str]] = {}
    for tool in tools:
        props = tool.parameters.get("properties") if isinstance(tool.parameters, dict) else None
        if isinstance(props, dict) and props:
            declared[tool.name] = {str(k) for k in props}
    passed: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        recorded = recorded_underlying(run)
        for call in run.llm_calls():
            for part in call.response.message.tool_calls:
                name, arguments = port_call(part, recorded.get(part.id))
                known = declared.get(name)
                if known is None or not isinstance(arguments, dict):
                    continue
                extra = {k: v for k, v in arguments.items() if k not in known}
                if extra:
                    passed.setdefault(name, []).append(extra)
    out: dict[str, dict[str, Any]] = {}
    for name, calls in passed.items():
        properties = schema_from_arguments(calls)["properties"]
        out[name] = {key: properties[key] for key in sorted(properties)}
    return out


def model_settings(params: dict[str, Any]) -> dict[str, Any]:
    """The recorded request fields that are model settings, under neutral names."""
    out: dict[str, Any] = {}
    for key, name in _SETTINGS.items():
        if key in params and params[key] is not None and name not in out:
            out[name] = params[key]
    reasoning = params.get("reasoning")
    if isinstance(reasoning, dict) and isinstance(reasoning.get("effort"), str):
        out.setdefault("reasoning_effort", reasoning["effort"])
    thinking = params.get("thinking")
    if isinstance(thinking, dict) and thinking:
        out.setdefault("thinking", thinking)
    return out


def _user_count(messages: list[Message]) -> int:
    return sum(1 for m in messages if m.role == "user" and any(p.type != "tool_result" for p in m.parts))


def recorded_turns(run: Run) -> list[Turn]:
    """The run's user turns: a model call whose request holds one more user message than the previous
    call's starts a turn (a Hermes Anthropic run's tool results, sent in user messages, do not)."""
    calls = run.llm_calls()
    results = _results_sent(run, calls)
    recorded = recorded_underlying(run)  # a bridged call reads as its underlying call (bridged.py)
    turns: list[Turn] = []
    users = -1
    seen = 0  # messages of the previous request already counted (requests grow by appending)
    for index, call in enumerate(calls):
        messages = run.request_messages(call)
        if users >= 0 and len(messages) >= seen:
            count = users + _user_count(messages[seen:])
        else:
            count = _user_count(messages)
        seen = len(messages)
        if count != users or not turns:
            last = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "user"
                         and messages[i].text), None)
            user = messages[last].text if last is not None else ""
            before = messages[:last] if last is not None else list(messages)
            turns.append(Turn(len(turns), user, [], port_messages(before, recorded)))
            users = count
        steps = turns[-1].steps
        response = port_message(call.response.message, recorded)
        llm = call.response if response is call.response.message else call.response.model_copy(
            update={"message": response})
        tool_calls = [ToolCallStep(p.id, p.name, parsed_arguments(p.arguments, p.raw_arguments),
                                   results.get(p.id)) for p in response.tool_calls]
        steps.append(ModelStep(index, response, llm, tool_calls, _system_text(messages) or None))
    return turns


def _results_sent(run: Run, calls: list[LLMCallEvent]) -> dict[str, str]:
    """Tool results by call id as the recorded agent sent them back to the model (the next request's
    tool results; the tool_call event's result for a call no later request shows)."""
    out: dict[str, str] = {}
    for event in run.events:
        if isinstance(event, ToolCallEvent) and event.result is not None:
            out[event.call_id] = event.result
    for call in calls:
        for message in run.appended_messages(call):
            for part in message.tool_results:
                out[part.tool_call_id] = part.content
    return out


def child_run_ids(run: Run) -> list[str]:
    """The run ids of the subagents a run launched (subagent start events), in order."""
    out: list[str] = []
    for event in run.events:
        if isinstance(event, SubagentEvent) and event.phase == "start" and event.child_run_id:
            if event.child_run_id not in out:
                out.append(event.child_run_id)
    return out


def text_message(text: str) -> Message:
    return Message(role="assistant", parts=[TextPart(text=text)])
