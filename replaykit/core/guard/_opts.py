"""Option scanning shared by the command rules: getopt-style short clusters and --long[=value]."""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["Opts", "scan_opts", "show"]


@dataclass(slots=True)
class Opts:
    flags: dict[str, list[str]] = field(default_factory=dict)  # option -> values ("" for a bare flag)
    positionals: list[str] = field(default_factory=list)

    def has(self, *names: str) -> bool:
        return any(n in self.flags for n in names)

    def values(self, *names: str) -> list[str]:
        out: list[str] = []
        for n in names:
            out.extend(self.flags.get(n, []))
        return out


def scan_opts(
    args: list[str],
    short_values: Iterable[str] = (),
    long_values: Iterable[str] = (),
    *,
    stop_at_first_positional: bool = False,
) -> Opts:
    """Split `args` into options and positionals.

    `short_values` are the single letters that take a value (`o` for `-o FILE` / `-ofile` / `-sSo f`);
    `long_values` are long options that take one (`--output FILE` / `--output=FILE`). Options are keyed
    as `-o` / `--output`. After `--`, everything is positional.
    """
    sv = set(short_values)
    lv = set(long_values)
    out = Opts()
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            out.positionals.extend(args[i + 1 :])
            break
        if a.startswith("--") and len(a) > 2:
            name, eq, val = a.partition("=")
            if not eq and name in lv and i + 1 < len(args):
                val = args[i + 1]
                i += 1
            out.flags.setdefault(name, []).append(val)
        elif a.startswith("-") and len(a) > 1 and a != "-":
            j = 1
            while j < len(a):
                ch = a[j]
                if ch in sv:
                    val = a[j + 1 :]
                    if not val and i + 1 < len(args):
                        val = args[i + 1]
                        i += 1
                    out.flags.setdefault("-" + ch, []).append(val)
                    break
                out.flags.setdefault("-" + ch, []).append("")
                j += 1
        else:
            if stop_at_first_positional:
                out.positionals.extend(args[i:])
                break
            out.positionals.append(a)
        i += 1
    return out


def show(argv: list[str], limit: int = 120) -> str:
    """A short, quoted rendering of a command for a reason text."""
    text = shlex.join(argv)
    return text if len(text) <= limit else text[: limit - 1] + "…"
