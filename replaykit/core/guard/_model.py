"""The guard's answers: a Decision about one tool call, and the GuardVerdict an engine acts on."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["DRY_RUN_MARKER", "DRY_RUN_STATUS", "Decision", "GuardVerdict", "dry_run_text"]

DRY_RUN_STATUS = "dry_run"
"""Status an engine records on a tool call the guard dry-ran instead of executing."""

DRY_RUN_MARKER = "[replaykit dry-run]"
"""Prefix of every dry-run result text, so a reader (or a model) can tell it was not executed."""


@dataclass(frozen=True, slots=True)
class Decision:
    """Whether one tool call is destructive, why, and which rule said so.

    `rule` is a stable identifier (`shell.delete`, `tool.write`, `config.deny[0]`, ...) that tests,
    reports and config files can refer to. `findings` lists every destructive finding when several
    parts of a shell command were destructive; `reason` describes the first.
    """

    destructive: bool
    reason: str
    rule: str
    findings: tuple[tuple[str, str], ...] = field(default=())  # (rule, reason) pairs


@dataclass(frozen=True, slots=True)
class GuardVerdict:
    """What an engine must do with a tool call: run it, or record `result_text` as a dry run."""

    action: Literal["run", "dry_run"]
    decision: Decision
    result_text: str | None = None  # the tool result to record when action == "dry_run"
    status: str | None = None  # DRY_RUN_STATUS when dry-run

    @property
    def run(self) -> bool:
        return self.action == "run"


def dry_run_text(tool_name: str, decision: Decision) -> str:
    """The exact result text recorded (and shown to the model) for a dry-run tool call.

    It is deterministic (same call, same policy, same text) so a replay of a branch that was dry-run
    reproduces byte for byte.
    """
    return (
        f"{DRY_RUN_MARKER} The tool call `{_clip(tool_name, 80)}` was NOT executed: the replaykit guard "
        f"classified it as destructive ({_clip(decision.reason, 300)}; rule {decision.rule}). "
        "Nothing was changed. Re-run with --allow-destructive to execute destructive tool calls."
    )


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
