"""The guard policy: built-in defaults plus user allow / deny rules from a TOML file.

Precedence, simplest first to explain: a matching **deny** rule always wins (whole call or one shell
command); then a matching **allow** rule; then the built-in default policy. See docs/guard.md.
"""

from __future__ import annotations

import fnmatch
import json
import posixpath
import re
import shlex
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from replaykit.core.errors import BadInput

__all__ = ["CONFIG_FILENAME", "GuardConfigError", "Policy", "Rule", "default_policy", "load_policy"]

CONFIG_FILENAME = "guard.toml"
_TOP_KEYS = {"unknown_tools", "unknown_commands", "allow", "deny"}
_RULE_KEYS = {"tool", "command", "argument", "pattern", "reason"}


class GuardConfigError(BadInput):
    """The guard config file is missing, not TOML, or has an invalid rule."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One allow or deny rule.

    - `tool`: a glob on the tool name (`*` by default; `mcp_github_*`, `terminal`).
    - `command`: a shell command prefix, in shell words (`git push`, `make test`). The rule then applies
      to each simple command inside a shell tool's command line (after sudo/env/timeout are unwrapped),
      not to the whole line: allowing `make test` does not allow `make test && rm -rf /`.
    - `argument` + `pattern`: a regular expression searched in that argument's value (`argument` is a
      glob on the argument name, `*` for any; non-string values are matched as compact JSON).
    """

    index: int
    kind: Literal["allow", "deny"]
    tool: str = "*"
    command: tuple[str, ...] = ()
    argument: str | None = None
    pattern: re.Pattern[str] | None = None
    reason: str | None = None

    @property
    def rule_id(self) -> str:
        return f"config.{self.kind}[{self.index}]"

    def describe(self) -> str:
        if self.reason:
            return self.reason
        parts = [f"tool {self.tool!r}"]
        if self.command:
            parts.append(f"command {shlex.join(self.command)!r}")
        if self.pattern is not None:
            parts.append(f"argument {self.argument or '*'!r} matching /{self.pattern.pattern}/")
        return f"{self.kind} rule: " + ", ".join(parts)

    def matches_tool(self, tool_name: str) -> bool:
        return fnmatch.fnmatchcase(tool_name, self.tool)

    def matches_call(self, tool_name: str, arguments: Mapping[str, Any]) -> bool:
        """Whole-call match (rules without `command`)."""
        if self.command or not self.matches_tool(tool_name):
            return False
        if self.pattern is None:
            return True
        glob = self.argument or "*"
        for key, value in arguments.items():
            if fnmatch.fnmatchcase(str(key), glob):
                text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
                if self.pattern.search(text):
                    return True
        return False

    def matches_argv(self, argv: list[str]) -> bool:
        if not self.command or len(argv) < len(self.command):
            return False
        head = [posixpath.basename(argv[0]), *argv[1 : len(self.command)]]
        return head == [posixpath.basename(self.command[0]), *self.command[1:]]


@dataclass(frozen=True, slots=True)
class Policy:
    """Built-in defaults plus user rules. `default_policy()` is the policy with no user rules."""

    allow: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()
    unknown_tools: Literal["safe", "destructive"] = "safe"
    unknown_commands: Literal["safe", "destructive"] = "safe"
    source: str | None = field(default=None, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "<config>") -> Policy:
        if not isinstance(data, Mapping):
            raise GuardConfigError(f"{source}: the guard config must be a table")
        unknown = set(data) - _TOP_KEYS
        if unknown:
            raise GuardConfigError(f"{source}: unknown key(s) {', '.join(sorted(unknown))} "
                                   f"(expected {', '.join(sorted(_TOP_KEYS))})")
        modes = {}
        for key in ("unknown_tools", "unknown_commands"):
            value = data.get(key, "safe")
            if value not in ("safe", "destructive"):
                raise GuardConfigError(f"{source}: {key} must be \"safe\" or \"destructive\", not {value!r}")
            modes[key] = value
        rules: dict[str, list[Rule]] = {"allow": [], "deny": []}
        for kind in ("allow", "deny"):
            entries = data.get(kind, [])
            if not isinstance(entries, list):
                raise GuardConfigError(f"{source}: {kind} must be an array of tables ([[{kind}]])")
            for i, entry in enumerate(entries):
                rules[kind].append(_rule_from(entry, kind, i, source))
        return cls(allow=tuple(rules["allow"]), deny=tuple(rules["deny"]), unknown_tools=modes["unknown_tools"],
                   unknown_commands=modes["unknown_commands"], source=source)


def _rule_from(entry: object, kind: Literal["allow", "deny"], index: int, source: str) -> Rule:
    where = f"{source}: {kind}[{index}]"
    if not isinstance(entry, Mapping):
        raise GuardConfigError(f"{where} must be a table")
    unknown = set(entry) - _RULE_KEYS
    if unknown:
        raise GuardConfigError(f"{where}: unknown key(s) {', '.join(sorted(unknown))} "
                               f"(expected {', '.join(sorted(_RULE_KEYS))})")
    for key in _RULE_KEYS & set(entry):
        if not isinstance(entry[key], str) or not entry[key]:
            raise GuardConfigError(f"{where}: {key} must be a non-empty string")
    if "argument" in entry and "pattern" not in entry:
        raise GuardConfigError(f"{where}: 'argument' needs a 'pattern'")
    command: tuple[str, ...] = ()
    if "command" in entry:
        if "pattern" in entry:
            raise GuardConfigError(f"{where}: use either 'command' or 'pattern', not both")
        try:
            command = tuple(shlex.split(entry["command"]))
        except ValueError as exc:
            raise GuardConfigError(f"{where}: command {entry['command']!r} is not valid shell words ({exc})") from exc
        if not command:
            raise GuardConfigError(f"{where}: command is empty")
    pattern = None
    if "pattern" in entry:
        try:
            pattern = re.compile(entry["pattern"])
        except re.error as exc:
            raise GuardConfigError(f"{where}: pattern {entry['pattern']!r} is not a valid regex ({exc})") from exc
    if "tool" not in entry and not command and pattern is None:
        raise GuardConfigError(f"{where}: a rule needs at least one of tool, command, pattern")
    return Rule(index=index, kind=kind, tool=entry.get("tool", "*"), command=command,
                argument=entry.get("argument"), pattern=pattern, reason=entry.get("reason"))


def default_policy() -> Policy:
    return Policy(source="<default>")


def load_policy(path: str | Path | None = None, *, store: str | Path | None = None) -> Policy:
    """The policy from an explicit file, else `<store>/guard.toml` when it exists, else the default.

    An explicit `path` that does not exist is an error; a missing `<store>/guard.toml` is not.
    """
    if path is not None:
        target = Path(path)
        if not target.is_file():
            raise GuardConfigError(f"guard config not found: {target}")
    elif store is not None and (Path(store) / CONFIG_FILENAME).is_file():
        target = Path(store) / CONFIG_FILENAME
    else:
        return default_policy()
    try:
        data = tomllib.loads(target.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise GuardConfigError(f"{target}: not valid TOML ({exc})") from exc
    except OSError as exc:
        raise GuardConfigError(f"{target}: cannot read ({exc.strerror})") from exc
    return Policy.from_dict(data, source=str(target))
