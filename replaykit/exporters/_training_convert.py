"""IR conversation -> training-record messages, one function per target format.

All formats start from the same neutral list: the last LLM call's request plus its response (the
whole conversation as the model finally saw it), cut after the last assistant message, because a
training example must end with the model's turn. Reasoning and media are not exported (no target
format has a portable slot for them); the summary counts what was dropped.
"""

from __future__ import annotations

import json
from typing import Any

from replaykit.core.trace.ir import (
    LLMCallEvent,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)
from replaykit.core.trace.run import Run

OpenAIMessage = dict[str, Any]

HERMES_SYSTEM = (
    "You are a function calling AI model. You are provided with function signatures within <tools></tools> "
    "XML tags. You may call one or more functions to assist with the user query. Don't make assumptions "
    "about what values to plug into functions. Here are the available tools: <tools>\n{tools}\n</tools>\n"
    "For each function call return a json object with function name and arguments within "
    "<tool_call></tool_call> XML tags as follows:\n<tool_call>\n"
    '{{"name": <function-name>, "arguments": <args-dict>}}\n</tool_call>'
)


def run_conversation(run: Run) -> tuple[list[Message], list[ToolSpec] | None]:
    """(messages ending with the last assistant turn, tools offered at the last call)."""
    calls = [e for e in run.events if isinstance(e, LLMCallEvent)]
    if not calls:
        return [], None
    last = calls[-1]
    messages = [*run.request_messages(last), last.response.message]
    return messages, run.request_tools(last.request)


def _args_dict(part: ToolCallPart) -> Any:
    if part.arguments is not None:
        return part.arguments
    if part.raw_arguments:
        try:
            return json.loads(part.raw_arguments)
        except ValueError:
            return {}
    return {}


def to_openai_messages(messages: list[Message]) -> list[OpenAIMessage]:
    """OpenAI Chat Completions messages (tool results become one ``tool`` message per call)."""
    out: list[OpenAIMessage] = []
    for m in messages:
        text = "".join(p.text for p in m.parts if isinstance(p, TextPart))
        results = [p for p in m.parts if isinstance(p, ToolResultPart)]
        if m.role in ("system", "developer"):
            out.append({"role": "system", "content": text})
        elif m.role == "assistant":
            msg: OpenAIMessage = {"role": "assistant"}
            calls = [p for p in m.parts if isinstance(p, ToolCallPart)]
            if text or not calls:
                msg["content"] = text
            if calls:
                msg["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments_json()}}
                    for c in calls
                ]
            out.append(msg)
        else:  # user or tool: tool results (Anthropic puts them in user turns) become tool messages
            for r in results:
                out.append({"role": "tool", "tool_call_id": r.tool_call_id, "content": r.content})
            if m.role == "user" and (text or not results):
                out.append({"role": "user", "content": text})
    return _trim_to_last_assistant(out)


def _trim_to_last_assistant(msgs: list[OpenAIMessage]) -> list[OpenAIMessage]:
    for i in range(len(msgs) - 1, -1, -1):
        if msgs[i]["role"] == "assistant" and "tool_calls" not in msgs[i]:
            return msgs[: i + 1]
    return []


def openai_tools(tools: list[ToolSpec] | None) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description or "",
                "parameters": t.parameters or {"type": "object", "properties": {}},
            },
        }
        for t in tools or []
    ]


def to_trl_messages(oa: list[OpenAIMessage]) -> list[dict[str, Any]]:
    """transformers/TRL chat-template messages: arguments as dicts, tool messages carry the name."""
    names: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for m in oa:
        if m["role"] == "assistant" and "tool_calls" in m:
            calls = []
            for c in m["tool_calls"]:
                names[c["id"]] = c["function"]["name"]
                try:
                    args = json.loads(c["function"]["arguments"])
                except ValueError:
                    args = {"_raw": c["function"]["arguments"]}
                calls.append({"id": c["id"], "type": "function",
                              "function": {"name": c["function"]["name"], "arguments": args}})
            out.append({"role": "assistant", "content": m.get("content") or "", "tool_calls": calls})
        elif m["role"] == "tool":
            out.append({"role": "tool", "tool_call_id": m["tool_call_id"], "name": names.get(m["tool_call_id"], ""),
                        "content": m["content"]})
        else:
            out.append(dict(m))
    return out


def to_sharegpt_turns(oa: list[OpenAIMessage], tools: list[dict[str, Any]]) -> list[dict[str, str]]:
    """ShareGPT turns in the Hermes function-calling style (<tools>, <tool_call>, <tool_response>)."""
    turns: list[dict[str, str]] = []
    system_texts = [m["content"] for m in oa if m["role"] == "system" and m["content"]]
    if tools:
        preamble = HERMES_SYSTEM.format(tools=json.dumps([t["function"] for t in tools], ensure_ascii=False))
        system_texts = [preamble, *system_texts]
    if system_texts:
        turns.append({"from": "system", "value": "\n\n".join(system_texts)})
    names: dict[str, str] = {}
    for m in oa:
        role = m["role"]
        if role == "system":
            continue
        if role == "user":
            turns.append({"from": "human", "value": m["content"]})
        elif role == "assistant":
            parts = [m["content"]] if m.get("content") else []
            for c in m.get("tool_calls", []):
                names[c["id"]] = c["function"]["name"]
                try:
                    args = json.loads(c["function"]["arguments"])
                except ValueError:
                    args = c["function"]["arguments"]
                call = json.dumps({"name": c["function"]["name"], "arguments": args}, ensure_ascii=False)
                parts.append(f"<tool_call>\n{call}\n</tool_call>")
            turns.append({"from": "gpt", "value": "\n".join(parts)})
        elif role == "tool":
            response = json.dumps({"name": names.get(m["tool_call_id"], ""), "content": _maybe_json(m["content"])},
                                  ensure_ascii=False)
            block = f"<tool_response>\n{response}\n</tool_response>"
            if turns and turns[-1]["from"] == "tool":  # parallel calls: one tool turn, several responses
                turns[-1]["value"] += "\n" + block
            else:
                turns.append({"from": "tool", "value": block})
    return turns


def _maybe_json(text: str) -> Any:
    if text[:1] in ("{", "["):
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def dropped_parts(messages: list[Message]) -> int:
    return sum(1 for m in messages for p in m.parts if isinstance(p, ReasoningPart) or p.type in ("media", "opaque"))
