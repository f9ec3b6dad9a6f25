"""What the shell-command walker (``_commands``) and the program rules (``_programs``) share: findings,
the policy knobs, the targets that change nothing, the interpreters, and the walker as the program rules
see it (a protocol, so the rules call back into the walker without importing it)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

Finding = tuple[str, str]
CommandRule = Callable[[list[str]], "tuple[bool, str, str] | None"]  # argv -> (destructive, rule, reason)

HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"})
INTERPRETERS = frozenset({"python", "python2", "python3", "pypy", "pypy3", "node", "nodejs", "deno", "bun",
                          "perl", "ruby", "php", "lua", "luajit", "Rscript", "osascript", "pwsh",
                          "powershell", "tclsh", "julia", "irb", "ipython"})


@dataclass(slots=True)
class ShellContext:
    """Policy knobs the shell rules need; built by the Policy."""

    unknown_commands_destructive: bool = False
    command_rule: CommandRule | None = None  # user allow/deny by command prefix


def is_harmless_target(target: str) -> bool:
    return target in HARMLESS_TARGETS or target.startswith("/dev/fd/")


class Walker(Protocol):
    """The command walker, as a program rule re-enters it (``sh -c``, ``xargs``, interpreters)."""

    ctx: ShellContext

    def argv(self, argv: list[str], stdin: str | None, piped: bool, depth: int) -> list[Finding]: ...

    def shell_text(self, text: str, depth: int, prefix: str = "") -> list[Finding]: ...
