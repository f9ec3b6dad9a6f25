"""``replaykit import PATH --format hermes-trajectory``: Hermes ``save_trajectories`` JSONL as runs.

Hermes (``AIAgent(save_trajectories=True)``) appends one line per conversation to
``trajectory_samples.jsonl`` / ``failed_trajectories.jsonl``: ``{"conversations": [{"from", "value"}],
"timestamp", "model", "completed"}`` in ShareGPT form with Hermes's function-calling tags. Mapping:

- ``system``: Hermes's function-calling prompt; its ``<tools>`` JSON gives the tool declarations;
- ``human``: a user turn;
- ``gpt``: an LLM call's answer: ``<think>`` is reasoning, each ``<tool_call>{"name", "arguments"}`` a
  tool call, the rest text; every ``gpt`` turn is one LLM call, a ``gpt`` turn right after another one
  too (its request ends with the answer before it);
- ``human`` turns in a row are user turns in a row (the next request carries them all);
- ``tool``: ``<tool_response>{"tool_call_id", "name", "content"}`` blocks, one tool call event each.

What the file does not hold is reported: the system prompt Hermes really sent (the file has the
training prompt instead), sampling parameters, usage, timing, and the exact text of JSON tool results
(Hermes parsed them; they are re-serialized). Every event is ``reconstructed``.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

from replaykit import __version__
from replaykit.adapters.base import ImportedRun, read_import_text
from replaykit.core.errors import BadInput
from replaykit.core.trace.interop import Conversation
from replaykit.core.trace.ir import (
    LLMResponse,
    Message,
    Provenance,
    ReasoningPart,
    RunHeader,
    Source,
    TextPart,
    ToolCallPart,
    ToolSpec,
)
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.store import new_run_id, utc_now_iso

ADAPTER = "replaykit.adapters.hermes.import_trajectory"
_THINK = re.compile(r"<think>\n?(.*?)\n?</think>\n?", re.S)
_CALL = re.compile(r"<tool_call>\n?(.*?)\n?</tool_call>\n?", re.S)
_RESPONSE = re.compile(r"<tool_response>\n?(.*?)\n?</tool_response>", re.S)
_TOOLS = re.compile(r"<tools>\n(.*?)\n</tools>", re.S)  # the prose before it mentions "<tools> </tools>"
LACKS = ("a Hermes trajectory keeps the conversation in training form: the system prompt is Hermes's "
         "function-calling prompt (not the one sent), and there are no sampling parameters, usage or timing; "
         "events are reconstructed")


def import_trajectory(path: Path) -> list[ImportedRun]:
    path = Path(path)
    text = read_import_text(path)
    runs: list[ImportedRun] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path.name}:{number}"
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise BadInput(f"{where}: not valid JSON ({exc}); truncated?") from exc
        if not isinstance(entry, dict) or not isinstance(entry.get("conversations"), list):
            raise BadInput(f"{where}: not a Hermes trajectory line (no conversations array)")
        runs.append(_run(entry, where, path.name, len(runs)))
    if not runs:
        raise BadInput(f"{path.name}: empty file (expected Hermes trajectory JSONL)")
    return runs


def _created_at(value: Any) -> str:
    if isinstance(value, str):
        try:
            moment = dt.datetime.fromisoformat(value)
            if moment.tzinfo is None:  # Hermes writes local time without an offset
                moment = moment.astimezone()
            return moment.astimezone(dt.UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
        except ValueError:
            pass
    return utc_now_iso()


def _tools(system: str, where: str) -> list[ToolSpec] | None:
    match = _TOOLS.search(system)
    if match is None:
        return None
    try:
        items = json.loads(match.group(1))
    except ValueError as exc:
        raise BadInput(f"{where}: the system message's <tools> block is not JSON") from exc
    return [ToolSpec(name=str(t["name"]), description=t.get("description") or None, parameters=t.get("parameters"))
            for t in items if isinstance(t, dict) and t.get("name")] or None


def _assistant(value: str, where: str, counter: list[int]) -> Message:
    parts: list[Any] = []
    thoughts = [m.strip() for m in _THINK.findall(value) if m.strip()]
    if thoughts:
        parts.append(ReasoningPart(text="\n".join(thoughts)))
    calls = []
    for raw in _CALL.findall(value):
        try:
            call = json.loads(raw)
        except ValueError as exc:
            raise BadInput(f"{where}: a <tool_call> block is not JSON") from exc
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise BadInput(f"{where}: a <tool_call> block has no name")
        counter[0] += 1
        calls.append(ToolCallPart(id=f"call_{counter[0]:03d}", name=call["name"], arguments=call.get("arguments")))
    rest = _CALL.sub("", _THINK.sub("", value)).strip()
    if rest:
        parts.append(TextPart(text=rest))
    return Message(role="assistant", parts=[*parts, *calls])


def _responses(value: str, where: str) -> list[dict[str, Any]]:
    out = []
    for raw in _RESPONSE.findall(value):
        try:
            item = json.loads(raw)
        except ValueError as exc:
            raise BadInput(f"{where}: a <tool_response> block is not JSON") from exc
        if not isinstance(item, dict):
            raise BadInput(f"{where}: a <tool_response> block is not an object")
        out.append(item)
    return out


def _run(entry: dict[str, Any], where: str, source_name: str, index: int) -> ImportedRun:
    turns = entry["conversations"]
    model = entry.get("model") if isinstance(entry.get("model"), str) else None
    warnings = [LACKS]
    header = RunHeader(
        run_id=new_run_id("hermes-trajectory"), created_at=_created_at(entry.get("timestamp")),
        source=Source(framework="hermes", adapter=ADAPTER, replaykit_version=__version__), model=model,
        tags=["imported", "reconstructed"],
        metadata={"imported_from": source_name, "line": index + 1, "completed": entry.get("completed"),
                  # any other field of the line (a later Hermes may add some): kept, not dropped
                  **({"trajectory_extra": extra} if (extra := {k: v for k, v in entry.items() if k not in
                     ("conversations", "timestamp", "model", "completed")}) else {})},
    )
    recorder = Recorder(header, clock=lambda: 0.0)
    conv = Conversation()
    tools: list[ToolSpec] | None = None
    counter = [0]
    pending: list[ToolCallPart] = []
    llm_id: str | None = None
    rejson = 0
    answer: str | None = None
    previous: Any = None
    consecutive = 0
    for position, turn in enumerate(turns):
        here = f"{where}: message {position}"
        if not isinstance(turn, dict) or not isinstance(turn.get("value"), str):
            raise BadInput(f"{here}: expected {{from, value}}")
        role, value = turn.get("from"), turn["value"]
        if role == "system":
            tools = _tools(value, here)
            conv.add(Message(role="system", parts=[TextPart(text=value)]))
        elif role == "human":
            message = Message(role="user", parts=[TextPart(text=value)])
            recorder.turn_start(message, turn=sum(1 for e in recorder.events if e.kind == "turn_start"),
                                provenance=Provenance.RECONSTRUCTED)
            conv.add(message)
        elif role == "gpt":
            # Every gpt turn is the answer of one LLM call, two in a row too (the second call's request
            # ends with the first answer: a continuation, a retry after an empty or cut-off reply).
            if previous == "gpt":
                consecutive += 1
            message = _assistant(value, here, counter)
            pending = list(message.tool_calls)
            finish = "tool_calls" if pending else "stop"
            event = recorder.llm_call(conv.expected(), LLMResponse(message=message, finish_reason=finish, model=model),
                                      model=model, tools=tools, provenance=Provenance.RECONSTRUCTED)
            llm_id = event.id
            conv.add(message)
            answer = None if pending else message.text
        elif role == "tool":
            for k, item in enumerate(_responses(value, here)):
                call = pending[k] if k < len(pending) else None
                call_id = str(item.get("tool_call_id") or (call.id if call else f"call_{k}"))
                name = str(item.get("name") or (call.name if call else "unknown"))
                content = item.get("content")
                if not isinstance(content, str):
                    content = json.dumps(content, ensure_ascii=False)
                    rejson += 1
                if call is not None and call.id != call_id:  # the response names the real call id
                    _rename(recorder, llm_id, call.id, call_id)
                recorder.tool_call(call_id, name, call.arguments if call else None, result=content,
                                   llm_call_id=llm_id, provenance=Provenance.RECONSTRUCTED)
                conv.tool_result(call_id, name, content)
        else:
            raise BadInput(f"{here}: unknown speaker {role!r} (expected system, human, gpt or tool)")
        previous = role
    if consecutive:
        warnings.append(f"{consecutive} assistant turn(s) follow another assistant turn: each is an LLM call "
                        "whose request ends with the answer before it")
    if rejson:
        warnings.append(f"{rejson} tool result(s) were JSON that Hermes parsed: re-serialized, spacing may differ")
    completed = entry.get("completed")
    recorder.run_end(final_answer=answer, status="completed" if completed is not False else "failed",
                     provenance=Provenance.RECONSTRUCTED)
    return ImportedRun(header=header, events=recorder.events, warnings=warnings)


def _rename(recorder: Recorder, llm_id: str | None, old: str, new: str) -> None:
    """Give a tool call part the id its ``<tool_response>`` names (the gpt turn does not carry ids)."""
    for event in reversed(recorder.events):
        if event.id == llm_id and event.kind == "llm_call":
            for part in event.response.message.parts:
                if isinstance(part, ToolCallPart) and part.id == old:
                    part.id = new
            return
