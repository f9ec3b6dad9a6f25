"""The tool gate: the core guard decides, with the store's guard.toml."""

from __future__ import annotations

from replaykit.core.replay import tool_gate


def test_gate_blocks_destructive_by_default() -> None:
    verdict = tool_gate.gate("write_file", {"path": "x", "content": "y"}, False)
    assert not verdict.run and verdict.status == "dry_run" and verdict.result_text
    assert tool_gate.gate("write_file", {"path": "x", "content": "y"}, True).run
    assert tool_gate.gate("read_file", {"path": "x"}, False).run


def test_gate_reads_the_stores_guard_toml(tmp_path) -> None:  # type: ignore[no-untyped-def]
    store = tmp_path / "store"
    store.mkdir()
    args = {"command": "make install"}
    assert not tool_gate.gate("terminal", args, False, store=store).run
    (store / "guard.toml").write_text('[[allow]]\ntool = "terminal"\ncommand = "make install"\n')
    assert tool_gate.gate("terminal", args, False, store=store).run
    (store / "guard.toml").write_text('[[deny]]\ntool = "read_file"\nreason = "secrets"\n')
    verdict = tool_gate.gate("read_file", {"path": "x"}, False, store=store)
    assert not verdict.run and verdict.status == "dry_run"
