"""Import provider request logs (OpenAI Chat, OpenAI Responses, Anthropic Messages) as runs.

A file is one JSON object or a JSONL file of objects; each object is one conversation and becomes one
run. Every assistant message in it implies one LLM call whose request is the messages before it, and
every tool result implies a tool call. Nothing about timing, usage or ids of the calls is known, so
those events are marked ``reconstructed``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from replaykit.adapters.base import ImportedRun
from replaykit.core.errors import BadInput, CodecError
from replaykit.core.trace import codecs
from replaykit.core.trace.codecs import DecodedRequest
from replaykit.core.trace.ir import (
    LLMResponse,
    Message,
    Provenance,
    RunHeader,
    Source,
    ToolCallPart,
    ToolResultPart,
)
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.store import new_run_id, utc_now_iso

ADAPTER = "replaykit.adapters.provider_logs"
MAX_BYTES = 512 * 1024 * 1024


def import_openai_chat(path: Path) -> list[ImportedRun]:
    return _import(path, framework="openai-chat", api="openai-chat", provider="openai",
                   decode=codecs.codec("openai-chat").decode_request, finish=("tool_calls", "stop"))


def import_anthropic(path: Path) -> list[ImportedRun]:
    return _import(path, framework="anthropic", api="anthropic-messages", provider="anthropic",
                   decode=codecs.codec("anthropic-messages").decode_request, finish=("tool_use", "end_turn"))


def import_openai_responses(path: Path) -> list[ImportedRun]:
    responses = codecs.codec("openai-responses")

    def decode(obj: Any) -> DecodedRequest:
        if not isinstance(obj, dict):
            raise CodecError("expected a JSON object (a Responses request body)")
        body = dict(obj)
        outputs: list[Any] = []
        if isinstance(body.get("output"), list):
            outputs += body.pop("output")
        if isinstance(body.get("response"), dict):
            outputs += list(body.pop("response").get("output") or [])
        if isinstance(body.get("responses"), list):
            for item in body.pop("responses"):
                outputs += list(item.get("output") or []) if isinstance(item, dict) else []
        decoded: DecodedRequest = responses.decode_request(body)
        decoded.messages += responses.decode_items(outputs, "output")
        return decoded

    def about(obj: Any) -> dict[str, Any]:
        """The logged responses' own fields (id, model, status, usage, service tier, ...; their output
        items are the assistant messages): kept in the run's metadata."""
        if not isinstance(obj, dict):
            return {}
        found = ([obj["response"]] if isinstance(obj.get("response"), dict) else []) + \
            [r for r in obj.get("responses") or [] if isinstance(r, dict)]
        kept = [{k: v for k, v in r.items() if k != "output"} for r in found]
        return {"responses": kept} if any(kept) else {}

    return _import(path, framework="openai-responses", api="openai-responses", provider="openai",
                   decode=decode, finish=("tool_calls", "completed"), about=about)


# ------------------------------------------------------------------------------------------ reading


def _load_objects(path: Path) -> list[tuple[str, Any]]:
    """(where, object) for each conversation in the file: one JSON value, or JSONL."""
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise BadInput(f"{path}: {size} bytes is too large to import (limit {MAX_BYTES})")
        data = path.read_bytes()
    except OSError as exc:
        raise BadInput(f"cannot read {path}: {exc.strerror or exc}") from exc
    if not data.strip():
        raise BadInput(f"{path}: empty file (expected a JSON object or JSONL of objects)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadInput(f"{path}: not UTF-8 text (byte {exc.start}); expected JSON or JSONL") from exc
    try:
        return [(path.name, json.loads(text))]
    except ValueError:
        pass
    out: list[tuple[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append((f"{path.name}:{number}", json.loads(line)))
        except json.JSONDecodeError as exc:
            raise BadInput(f"{path.name}:{number}: not valid JSON ({exc.msg} at column {exc.colno})") from exc
    return out


# ---------------------------------------------------------------------------------------- building


def _import(path: Path, *, framework: str, api: str, provider: str,
            decode: Callable[[Any], DecodedRequest], finish: tuple[str, str],
            about: Callable[[Any], dict[str, Any]] | None = None) -> list[ImportedRun]:
    runs: list[ImportedRun] = []
    for index, (where, obj) in enumerate(_load_objects(path)):
        if isinstance(obj, list):
            raise BadInput(f"{where}: expected a JSON object (one request body), got an array")
        try:
            decoded = decode(obj)
        except CodecError as exc:
            raise CodecError(f"{where}: {exc}") from exc
        run = _build_run(decoded, where=where, index=index, framework=framework, api=api,
                         provider=provider, finish=finish, source_name=path.name)
        if about is not None:
            run.header.metadata.update(about(obj))
        runs.append(run)
    return runs


def _build_run(decoded: DecodedRequest, *, where: str, index: int, framework: str, api: str, provider: str,
               finish: tuple[str, str], source_name: str) -> ImportedRun:
    params = dict(decoded.params)
    model = params.pop("model", None)
    if not isinstance(model, str):
        if model is not None:
            params["model"] = model
        model = None
    if decoded.tools == []:  # an explicit empty tool list is a body field like any other
        params["tools"] = []
    messages = decoded.messages
    warnings: list[str] = []
    header = RunHeader(
        run_id=new_run_id("import"), created_at=utc_now_iso(),
        source=Source(framework=framework, adapter=ADAPTER), model=model, provider=provider, api_mode=api,
        title=_title(messages), lineage=None,
        metadata={"imported_from": source_name, "conversation": index},
    )
    recorder = Recorder(header, clock=lambda: 0.0)
    calls: dict[str, tuple[ToolCallPart, str]] = {}  # call id -> (call, id of the llm_call asking for it)
    answered: set[str] = set()
    last_answer: str | None = None
    ended_with_answer = False
    for position, message in enumerate(messages):
        if message.role == "assistant":
            has_calls = bool(message.tool_calls)
            response = LLMResponse(message=message, finish_reason=finish[0] if has_calls else finish[1],
                                   model=model)
            event = recorder.llm_call(messages[:position], response, api=api, model=model, tools=decoded.tools,
                                      params=params, provenance=Provenance.RECONSTRUCTED)
            for call in message.tool_calls:
                calls[call.id] = (call, event.id)
            last_answer = None if has_calls else message.text
            ended_with_answer = not has_calls
            continue
        ended_with_answer = False
        results = message.tool_results
        # Every user message that is not only tool results starts a turn, an empty one ("content": "")
        # too: the live replay sends the recorded user turns from these events, in order.
        if (message.role == "user" and len(results) < len(message.parts)) or (
                message.role == "user" and not message.parts):
            recorder.turn_start(message.model_copy(update={"parts": [
                p for p in message.parts if not isinstance(p, ToolResultPart)]}),
                turn=len(recorder.events), provenance=Provenance.RECONSTRUCTED)
        for result in results:
            _tool_event(recorder, result, calls, answered, where=f"{where}: message {position}")
    if not any(m.role == "assistant" for m in messages):
        warnings.append("the conversation has no assistant message: no LLM call to reconstruct")
    unanswered = [call_id for call_id in calls if call_id not in answered]
    if unanswered:
        warnings.append(f"tool calls without a result: {', '.join(unanswered)}")
    if ended_with_answer:
        recorder.run_end(final_answer=last_answer, provenance=Provenance.RECONSTRUCTED)
    else:
        warnings.append("the conversation does not end with an assistant answer: run left incomplete")
    warnings.append("timing, usage and response ids are not in the source: events are reconstructed")
    return ImportedRun(header=header, events=recorder.events, warnings=warnings)


def _tool_event(recorder: Recorder, result: ToolResultPart, calls: dict[str, tuple[ToolCallPart, str]],
                answered: set[str], *, where: str) -> None:
    found = calls.get(result.tool_call_id)
    if found is None:
        raise BadInput(f"{where}: tool result answers no earlier tool call (id {result.tool_call_id!r})")
    call, llm_call_id = found
    answered.add(call.id)
    recorder.tool_call(
        call.id, call.name, call.arguments, raw_arguments=call.raw_arguments, result=result.content,
        result_blocks=result.blocks, status="error" if result.is_error else "ok",
        error=result.content if result.is_error else None, llm_call_id=llm_call_id,
        provenance=Provenance.RECONSTRUCTED,
    )


def _title(messages: list[Message]) -> str | None:
    for message in messages:
        if message.role == "user" and message.text.strip():
            first = message.text.strip().splitlines()[0]
            return first[:80]
    return None
