"""The tool gate: the guard decides when present; the name rule stands in otherwise."""

from __future__ import annotations

from replaykit.core import tool_gate


def test_name_rule_fallback() -> None:
    assert tool_gate._name_rule("read_file", False).run
    blocked = tool_gate._name_rule("write_file", False)
    assert not blocked.run and blocked.status == "dry_run" and "NOT executed" in (blocked.result_text or "")
    assert tool_gate._name_rule("write_file", True).run


def test_gate_blocks_destructive_by_default() -> None:
    verdict = tool_gate.gate("write_file", {"path": "x", "content": "y"}, False)
    assert not verdict.run and verdict.status == "dry_run" and verdict.result_text
    assert tool_gate.gate("write_file", {"path": "x", "content": "y"}, True).run
    assert tool_gate.gate("read_file", {"path": "x"}, False).run
