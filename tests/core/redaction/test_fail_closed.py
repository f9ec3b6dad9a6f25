"""--fail-closed: a string that cannot be analysed (too long, undecodable) is replaced whole."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from replaykit.core.redaction import Redactor
from replaykit.core.trace.store import RunStore
from replaykit.testing.json_strings import SLOTS, lone_surrogate, strings_run

ROOT = Path(__file__).resolve().parents[3]
BLOB = "QUJD" * 300_000  # 1.2 M characters of base64: over the analysed limit


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "replaykit", *args], capture_output=True, text=True, env=env,
                          timeout=300)


def test_redactor_replaces_unanalysable_strings_whole_only_when_asked() -> None:
    half_emoji = "key is " + lone_surrogate(0xD83D) + " sk-proj-abc123DEF456ghi789JKL012mno345"
    undecoded = "bytes \ufffd\ufffd from a bad decode"
    closed = Redactor(mode="patterns", fail_closed=True, max_chars=1000)
    assert closed.redact_text("x" * 1001) == "<UNANALYSED_1>"
    assert closed.redact_text(half_emoji) == "<UNANALYSED_2>"
    assert closed.redact_text(undecoded) == "<UNANALYSED_3>"
    assert closed.redact_text("plain text") == "plain text"
    assert closed.redact_value({"args": json.dumps({"blob": "y" * 2000})}) == {"args": '{"blob": "<UNANALYSED_4>"}'}
    opened = Redactor(mode="patterns")  # default: analysed anyway (a surrogate is analysed as U+FFFD)
    out = opened.redact_text(half_emoji)
    assert "sk-proj" not in out and lone_surrogate(0xD83D) in out


def test_cli_redact_and_training_export_fail_closed(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "s")
    slots = dict.fromkeys(SLOTS, "hello")
    slots["result"] = BLOB
    run = strings_run(slots, run_id="blob-run")
    store.write_run(run.header, run.events)
    proc = _cli("redact", "blob-run", "--mode", "patterns", "--fail-closed", "--json", "--store", str(store.root))
    assert proc.returncode == 0, proc.stderr
    red = store.load(json.loads(proc.stdout)["run_id"])
    assert red.tool_calls()[0].result == "<UNANALYSED_1>" and red.final_answer == "hello"
    out = tmp_path / "train.jsonl"
    proc = _cli("export", "blob-run", "--format", "openai-jsonl", "-o", str(out), "--mode", "patterns",
                "--fail-closed", "--store", str(store.root), "--json")
    assert proc.returncode == 0, proc.stderr
    text = out.read_text(encoding="utf-8")
    assert BLOB not in text and "<UNANALYSED_1>" in text
