"""Validity checks for each training-record format. ``validate_record`` returns the problems found
(an empty list means valid); the exporter refuses to write an invalid record and tests run every
exported record through it."""

from __future__ import annotations

import json
from typing import Any


def _check_openai_messages(msgs: Any, problems: list[str], *, must_end_assistant: bool = True) -> None:
    if not isinstance(msgs, list) or not msgs:
        problems.append("messages must be a non-empty list")
        return
    pending: set[str] = set()
    for i, m in enumerate(msgs):
        role = m.get("role") if isinstance(m, dict) else None
        if role not in ("system", "user", "assistant", "tool"):
            problems.append(f"message {i}: bad role {role!r}")
            continue
        if role == "tool":
            cid = m.get("tool_call_id")
            if cid not in pending:
                problems.append(f"message {i}: tool message answers no open assistant tool call ({cid!r})")
            pending.discard(cid)
            if not isinstance(m.get("content"), str):
                problems.append(f"message {i}: tool content must be a string")
            continue
        if pending:
            problems.append(f"message {i}: tool calls {sorted(pending)} were never answered")
            pending = set()
        if role == "assistant" and "tool_calls" in m:
            for c in m["tool_calls"]:
                fn = c.get("function", {})
                if c.get("type") != "function" or not c.get("id") or not fn.get("name"):
                    problems.append(f"message {i}: malformed tool call")
                    continue
                args = fn.get("arguments")
                if isinstance(args, str):
                    try:
                        json.loads(args)
                    except ValueError:
                        problems.append(f"message {i}: tool call arguments are not JSON")
                pending.add(c["id"])
        elif not isinstance(m.get("content"), str):
            problems.append(f"message {i}: content must be a string")
    if pending:
        problems.append(f"tool calls {sorted(pending)} were never answered")
    if must_end_assistant and msgs and msgs[-1].get("role") != "assistant":
        problems.append("the last message must be the assistant's")


def _check_tools(tools: Any, problems: list[str]) -> None:
    if tools is None:
        return
    if not isinstance(tools, list):
        problems.append("tools must be a list")
        return
    for t in tools:
        if t.get("type") != "function" or not t.get("function", {}).get("name"):
            problems.append("malformed tool declaration")


def validate_openai(record: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    _check_openai_messages(record.get("messages"), problems)
    _check_tools(record.get("tools"), problems)
    return problems


def validate_trl(record: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    msgs = record.get("messages")
    _check_openai_messages(msgs, problems)
    for i, m in enumerate(msgs or []):
        for c in m.get("tool_calls", []):
            if not isinstance(c.get("function", {}).get("arguments"), dict):
                problems.append(f"message {i}: TRL tool call arguments must be a dict")
    _check_tools(record.get("tools"), problems)
    return problems


def validate_sharegpt(record: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    turns = record.get("conversations")
    if not isinstance(turns, list) or not turns:
        return ["conversations must be a non-empty list"]
    open_calls = 0
    for i, t in enumerate(turns):
        who, value = t.get("from"), t.get("value")
        if who not in ("system", "human", "gpt", "tool") or not isinstance(value, str):
            problems.append(f"turn {i}: bad turn {who!r}")
            continue
        if who == "system" and i != 0:
            problems.append(f"turn {i}: system turn must come first")
        if who == "gpt":
            open_calls = value.count("<tool_call>")
            if open_calls != value.count("</tool_call>"):
                problems.append(f"turn {i}: unbalanced <tool_call> tags")
            for chunk in value.split("<tool_call>")[1:]:
                body = chunk.split("</tool_call>")[0].strip()
                try:
                    call = json.loads(body)
                    if not isinstance(call, dict) or "name" not in call or "arguments" not in call:
                        problems.append(f"turn {i}: tool call needs name and arguments")
                except ValueError:
                    problems.append(f"turn {i}: tool call is not JSON")
        if who == "tool":
            n = value.count("<tool_response>")
            if n == 0 or n != value.count("</tool_response>"):
                problems.append(f"turn {i}: tool turn needs balanced <tool_response> blocks")
            if n != open_calls:
                problems.append(f"turn {i}: {n} tool responses for {open_calls} tool calls")
            open_calls = 0
    if turns[-1].get("from") != "gpt":
        problems.append("the last turn must be gpt's")
    if "<tool_call>" in str(turns[-1].get("value")):
        problems.append("the last turn must be an answer, not a tool call")
    if any("<tools>" in t.get("value", "") for t in turns[1:]):
        problems.append("<tools> belongs in the system turn")
    return problems


def validate_preference(record: dict[str, Any], fmt: str) -> list[str]:
    problems: list[str] = []
    if fmt == "openai-jsonl":
        inp = record.get("input", {})
        _check_openai_messages(inp.get("messages"), problems, must_end_assistant=False)
        for key in ("preferred_output", "non_preferred_output"):
            out = record.get(key)
            if not isinstance(out, list) or not out or any(m.get("role") != "assistant" for m in out):
                problems.append(f"{key} must be a non-empty list of assistant messages")
        if record.get("preferred_output") == record.get("non_preferred_output"):
            problems.append("chosen and rejected are identical")
        return problems
    if fmt == "sharegpt":
        for key in ("chosen", "rejected"):
            if not isinstance(record.get(key), dict) or record[key].get("from") != "gpt":
                problems.append(f"{key} must be one gpt turn")
        if not record.get("conversations"):
            problems.append("conversations (the prompt) must not be empty")
    else:
        for key in ("prompt", "chosen", "rejected"):
            if not isinstance(record.get(key), list) or not record[key]:
                problems.append(f"{key} must be a non-empty message list")
        if problems:
            return problems
        if record["chosen"][0].get("role") != "assistant" or record["rejected"][0].get("role") != "assistant":
            problems.append("chosen and rejected must start with the assistant's turn")
    if fmt != "openai-jsonl" and record.get("chosen") == record.get("rejected"):
        problems.append("chosen and rejected are identical")
    return problems


VALIDATORS = {"openai-jsonl": validate_openai, "sharegpt": validate_sharegpt, "trl": validate_trl}


def validate_record(record: dict[str, Any], fmt: str) -> list[str]:
    if "chosen" in record or "preferred_output" in record:
        return validate_preference(record, fmt)
    return VALIDATORS[fmt](record)
