"""The destructive-tool guard: may this tool call run during a replay, or must it be dry-run?

Every engine that can execute a tool asks `check()` first::

    verdict = guard.check(name, arguments, allow_destructive=args.allow_destructive, policy=policy)
    if verdict.run:
        result = execute(...)
    else:
        record(result=verdict.result_text, status=verdict.status)   # "dry_run"

`classify()` is the pure judgement behind it. Shell commands are parsed (pipelines, `&&`/`||`/`;`,
subshells, `$(...)`, backticks, heredocs, `bash -c`, `sudo`/`env`/`xargs`/`find -exec`, `ssh host
cmd`) and every simple command is judged; the policy and its config file are in `_policy.py`; the
default policy is documented in docs/guard.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ._common import ShellContext
from ._model import DRY_RUN_MARKER, DRY_RUN_STATUS, Decision, GuardVerdict, dry_run_text
from ._policy import CONFIG_FILENAME, GuardConfigError, Policy, Rule, default_policy, load_policy
from ._tools import BUILTIN_TOOLS, classify_tool, shell_tool

__all__ = [
    "BUILTIN_TOOLS",
    "CONFIG_FILENAME",
    "DRY_RUN_MARKER",
    "DRY_RUN_STATUS",
    "Decision",
    "GuardConfigError",
    "GuardVerdict",
    "Policy",
    "Rule",
    "check",
    "classify",
    "default_policy",
    "dry_run_text",
    "load_policy",
]

_DEFAULT = default_policy()


def classify(tool_name: str, arguments: object, policy: Policy | None = None) -> Decision:
    """Is this tool call destructive under `policy` (the default policy when None)?

    Never raises on odd input: arguments may be a dict, a JSON string, or anything else; a shell
    command that cannot be parsed is destructive.
    """
    policy = policy or _DEFAULT
    if not isinstance(tool_name, str) or not tool_name:
        return Decision(True, f"the tool name is not a non-empty string ({type(tool_name).__name__})", "tool.invalid")
    args = _as_mapping(arguments)

    for rule in policy.deny:
        if rule.matches_call(tool_name, args):
            return Decision(True, rule.describe(), rule.rule_id, ((rule.rule_id, rule.describe()),))

    ctx = ShellContext(unknown_commands_destructive=policy.unknown_commands == "destructive",
                       command_rule=_command_rules(policy, tool_name))
    try:
        findings, family = classify_tool(tool_name, args, ctx, policy.unknown_tools == "destructive")
    except RecursionError:
        findings, family = [("shell.unparseable", "input nested too deeply to analyse")], "tool.invalid"
    denied = [f for f in findings if f[0].startswith("config.deny")]
    if denied:
        return Decision(True, denied[0][1], denied[0][0], tuple(findings))

    for rule in policy.allow:
        if rule.matches_call(tool_name, args):
            return Decision(False, rule.describe(), rule.rule_id)

    destructive = [f for f in findings if not f[0].startswith("config.allow")]
    if destructive:
        rule_id, reason = destructive[0]
        return Decision(True, reason, rule_id, tuple(destructive))
    return Decision(False, _safe_reason(tool_name, family), family)


def check(tool_name: str, arguments: object, allow_destructive: bool, policy: Policy | None = None) -> GuardVerdict:
    """What an engine must do: run the call, or record the dry-run text with status "dry_run"."""
    decision = classify(tool_name, arguments, policy)
    if not decision.destructive or allow_destructive:
        return GuardVerdict("run", decision)
    name = tool_name if isinstance(tool_name, str) else repr(tool_name)
    return GuardVerdict("dry_run", decision, dry_run_text(name, decision), DRY_RUN_STATUS)


def _as_mapping(arguments: object) -> Mapping[str, Any]:
    if isinstance(arguments, Mapping):
        return arguments
    if isinstance(arguments, str | bytes):
        try:
            parsed = json.loads(arguments)
        except (ValueError, RecursionError):
            return {}
        return parsed if isinstance(parsed, Mapping) else {}
    return {}


def _command_rules(policy: Policy, tool_name: str) -> Any:
    deny = [r for r in policy.deny if r.command and r.matches_tool(tool_name)]
    allow = [r for r in policy.allow if r.command and r.matches_tool(tool_name)]
    if not deny and not allow:
        return None

    def rule_for(argv: list[str]) -> tuple[bool, str, str] | None:
        for r in deny:
            if r.matches_argv(argv):
                return True, r.rule_id, r.describe()
        for r in allow:
            if r.matches_argv(argv):
                return False, r.rule_id, r.describe()
        return None

    return rule_for


def _safe_reason(tool_name: str, family: str) -> str:
    handler = BUILTIN_TOOLS.get(tool_name)
    if handler is shell_tool:
        return "no part of the shell command is known to change state"
    if handler is not None and handler.__doc__:
        return " ".join(handler.__doc__.split())
    return {
        "tool.shell": "no part of the shell command is known to change state",
        "tool.http": "an HTTP request with a read-only method",
        "tool.heuristic": "its name or action reads rather than changes",
        "tool.unknown": "unknown tool; the policy treats unknown tools as safe",
    }.get(family, "not destructive")
