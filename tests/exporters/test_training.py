"""Training-data export: every record valid for its format, redacted by default, preference pairs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.exporters._training_validate import validate_record
from replaykit.exporters.training import export_training, preference_record, sft_record
from replaykit.testing.sample_pii_run import build_support_run
from replaykit.testing.sample_runs import record_weather_run, sample_header

ROOT = Path(__file__).resolve().parents[2]
FORMATS = ["openai-jsonl", "sharegpt", "trl"]


def _weather_run(run_id: str) -> Run:
    rec = Recorder(sample_header(run_id))
    record_weather_run(rec)
    return Run(rec.header, rec.events)


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    s = RunStore(tmp_path / "store")
    for run in (build_support_run("orig"), _weather_run("weather"),
                build_support_run("br", final_text="Sorry John Smith, I cannot share that.", branch_of="orig")):
        s.write_run(run.header, run.events)
    return s


@pytest.mark.parametrize("fmt", FORMATS)
def test_sft_records_are_valid_and_complete(fmt: str) -> None:
    run = build_support_run()
    rec = sft_record(run, fmt)
    assert rec is not None and validate_record(rec, fmt) == []
    if fmt == "openai-jsonl":
        roles = [m["role"] for m in rec["messages"]]
        assert roles == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant"]
        assert rec["tools"][0]["function"]["name"] == "lookup_customer"
        call = rec["messages"][2]["tool_calls"][0]
        assert call["id"] == "call_1" and json.loads(call["function"]["arguments"]) == {"email": "john.smith@example.com"}
        assert rec["messages"][3]["tool_call_id"] == "call_1"
    elif fmt == "sharegpt":
        turns = rec["conversations"]
        assert [t["from"] for t in turns] == ["system", "human", "gpt", "tool", "gpt", "tool", "gpt"]
        assert "<tools>" in turns[0]["value"] and "lookup_customer" in turns[0]["value"]
        assert turns[2]["value"].startswith("<tool_call>\n") and "<tool_response>" in turns[3]["value"]
        assert json.loads(turns[2]["value"].split("\n")[1])["arguments"] == {"email": "john.smith@example.com"}
    else:
        msgs = rec["messages"]
        assert msgs[2]["tool_calls"][0]["function"]["arguments"] == {"email": "john.smith@example.com"}
        assert msgs[3]["name"] == "lookup_customer"


def test_validators_catch_broken_records() -> None:
    bad_openai = {"messages": [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "x", "content": "r"},
                               {"role": "assistant", "content": "ok"}]}
    assert any("answers no open" in p for p in validate_record(bad_openai, "openai-jsonl"))
    unanswered = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}]}
    assert validate_record(unanswered, "openai-jsonl")
    assert validate_record({"conversations": [{"from": "human", "value": "x"}, {"from": "tool", "value": "y"}]}, "sharegpt")


@pytest.mark.parametrize("fmt", FORMATS)
def test_corpus_export_redacted_by_default(store: RunStore, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / f"train-{fmt}.jsonl"
    sources = [s.path for s in store.iter_summaries()]
    summary = export_training(sources, out, fmt, mode="patterns", store=store)
    lines = out.read_text().splitlines()
    assert summary.records == len(lines) == 3
    for line in lines:
        assert validate_record(json.loads(line), fmt) == []
    text = out.read_text()
    assert "john.smith@example.com" not in text and "<EMAIL_ADDRESS_1>" in text
    assert "ghp_1234567890" not in text and "sk-proj-Abc123" not in text
    assert (out.stat().st_mode & 0o777) == 0o600


def test_no_redact_is_explicit(store: RunStore, tmp_path: Path) -> None:
    out = tmp_path / "raw.jsonl"
    export_training([store.path_for("orig")], out, "openai-jsonl", redact=False, store=store)
    assert "john.smith@example.com" in out.read_text()


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("chosen", ["original", "branch"])
def test_preference_pairs_from_branch(store: RunStore, tmp_path: Path, fmt: str, chosen: str) -> None:
    out = tmp_path / "pairs.jsonl"
    sources = [s.path for s in store.iter_summaries()]
    summary = export_training(sources, out, fmt, mode="ner", preference_chosen=chosen, store=store)
    assert summary.records == 1 and summary.skipped["not a branch"] == 2
    rec = json.loads(out.read_text())
    assert validate_record(rec, fmt) == []
    flat = json.dumps(rec)
    assert "John Smith" not in flat
    if fmt == "openai-jsonl":
        good, bad = rec["preferred_output"][0]["content"], rec["non_preferred_output"][0]["content"]
    elif fmt == "sharegpt":
        good, bad = rec["chosen"]["value"], rec["rejected"]["value"]
    else:
        good, bad = rec["chosen"][0]["content"], rec["rejected"][0]["content"]
    original_answer, branch_answer = ("the order ships", "cannot share")
    if chosen == "branch":
        original_answer, branch_answer = branch_answer, original_answer
    assert original_answer in good and branch_answer in bad
    # the shared prompt uses the same placeholders as both completions
    person = good.split("<PERSON_")[1].split(">")[0]
    assert f"<PERSON_{person}>" in bad


def test_identical_runs_give_no_pair() -> None:
    a, b = build_support_run("a"), build_support_run("b")
    assert preference_record(a, b, "trl") is None


def test_cli_export_training(store: RunStore, tmp_path: Path) -> None:
    out = tmp_path / "cli.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "replaykit", "export", "--all", "--format", "sharegpt", "-o", str(out),
           "--store", str(store.root), "--mode", "patterns", "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    # --all reads original recordings: the branch "br" is left out unless --include branches asks for it
    assert doc["records"] == 2 and doc["redacted"] is True and len(doc["run_id"]) == 2
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2 and "exists" in proc.stderr  # no silent overwrite


HERMES = ROOT / "tests" / "fixtures" / "hermes"


@pytest.mark.parametrize("fmt", FORMATS)
def test_recorded_hermes_runs_export_valid_records(tmp_path: Path, fmt: str) -> None:
    sources = sorted(HERMES.glob("*.jsonl"))
    assert sources
    out = tmp_path / "hermes.jsonl"
    summary = export_training(sources, out, fmt, mode="patterns")
    lines = out.read_text().splitlines()
    assert summary.records == len(lines) >= len(sources) - 1  # a run may end without an answer
    tool_turns = 0
    for line in lines:
        rec = json.loads(line)
        assert validate_record(rec, fmt) == []
        tool_turns += line.count('"tool"')
    assert tool_turns > 0  # the recorded runs use tools; they must survive the export


@pytest.mark.parametrize("fmt", FORMATS)
def test_preference_from_a_real_branch(tmp_path: Path, fmt: str) -> None:
    from replaykit.core.replay.branch import branch

    store = RunStore(tmp_path / "s")
    parent = build_support_run("p1")
    store.write_run(parent.header, parent.events)
    last_llm = max(s.index for s in parent.steps if s.kind == "llm")
    child = branch(store, store.load("p1"), last_llm, response="I escalated this to Maria Gonzalez.")
    out = tmp_path / "pref.jsonl"
    summary = export_training([store.path_for(child.run_id)], out, fmt, mode="ner",
                              preference_chosen="branch", store=store)
    assert summary.records == 1, summary.skipped
    rec = json.loads(out.read_text())
    assert validate_record(rec, fmt) == []
    assert "Maria Gonzalez" not in out.read_text() and "escalated" in out.read_text()


def test_parallel_export_matches_serial(store: RunStore, tmp_path: Path) -> None:
    sources = [s.path for s in store.iter_summaries()] * 3
    serial, parallel = tmp_path / "serial.jsonl", tmp_path / "parallel.jsonl"
    a = export_training(sources, serial, "trl", mode="patterns", store=store, workers=1)
    b = export_training(sources, parallel, "trl", mode="patterns", store=store, workers=2)
    assert a.records == b.records == 9
    assert serial.read_text() == parallel.read_text()  # same order, same placeholders per run


# ------------------------------------------------------- Hermes 0.22 Tool Search: calls as the model made them

BRIDGED = ROOT / "tests" / "fixtures" / "hermes" / "0.22"


@pytest.mark.parametrize("fixture", ["tools_sequence", "two_turns", "anthropic_messages", "codex_responses"])
def test_bridged_calls_are_trained_as_made_with_the_offered_tool_list(fixture: str) -> None:
    """A fine-tuning example teaches what the model emits given the tools it was offered: with Tool
    Search on those are the bridge tools, so the calls stay ``tool_call({"calls": [...]})`` and the
    example's tool list is the bridge: every call names a tool of the list (docs/training-data.md)."""
    run = Run.load(BRIDGED / f"{fixture}.jsonl")
    underlying = {e.underlying.name for e in run.tool_calls() if e.underlying is not None}
    assert underlying  # the fixture holds bridged calls
    rec = sft_record(run, "openai-jsonl")
    assert rec is not None and validate_record(rec, "openai-jsonl") == []
    offered = {t["function"]["name"] for t in rec["tools"]}
    assert "tool_call" in offered and not offered & underlying
    calls = [c["function"] for m in rec["messages"] for c in m.get("tool_calls", [])]
    assert calls and {c["name"] for c in calls} <= offered
    named = {entry["name"] for c in calls if c["name"] == "tool_call"
             for entry in json.loads(c["arguments"])["calls"]}
    assert named == underlying  # the underlying tool is in the call's arguments, as the model wrote it
    sharegpt = sft_record(run, "sharegpt")
    assert sharegpt is not None and validate_record(sharegpt, "sharegpt") == []
    turns = sharegpt["conversations"]
    tools_text = turns[0]["value"].rsplit("</tools>", 1)[0].rsplit("<tools>", 1)[1]
    shown = {t["name"] for t in json.loads(tools_text)}
    made = [json.loads(chunk.split("</tool_call>", 1)[0])["name"] for t in turns if t["from"] == "gpt"
            for chunk in t["value"].split("<tool_call>")[1:]]
    assert shown == offered and made and set(made) <= shown
