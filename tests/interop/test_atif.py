"""ATIF (Harbor RFC 0001, v1.7 / v1.8): round trips on every fixture, files from other producers, subagents,
the CLI contract (run ids in --json, one-line errors, exit 2, nothing written), replay and play."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from replaykit.adapters.atif import import_atif
from replaykit.cli.main import main
from replaykit.core.trace.ir import Provenance, ReasoningPart, TextPart, ToolCallPart
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.exporters import atif as atif_export
from tests.interop.roundtrip import (
    FIXTURES,
    RUN_FIXTURES,
    first_difference,
    fixture_runs,
    provider_runs,
    view,
)

atif = pytest.importorskip("atif")
ATIF = FIXTURES / "atif"
# Event kinds ATIF has no record for (each reported as a named loss; checked below).
LOST = frozenset({"tools", "error", "desync", "synthetic", "opaque"})


def _write(tmp_path: Path, document: dict[str, Any], name: str = "t.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


def _strip_extra(value: Any) -> Any:
    """The file as a reader that ignores ``extra`` sees it (any other ATIF consumer)."""
    if isinstance(value, dict):
        return {k: _strip_extra(v) for k, v in value.items() if k != "extra"}
    if isinstance(value, list):
        return [_strip_extra(v) for v in value]
    return value


@pytest.mark.parametrize("fixture", RUN_FIXTURES, ids=lambda p: p.name)
def test_round_trip_every_fixture(tmp_path: Path, fixture: Path) -> None:
    runs = fixture_runs()
    run = Run.load(fixture)
    rendered = atif_export.render(run, children=runs.get)
    atif.Trajectory.model_validate(rendered.document)  # the spec's models accept it
    imported = import_atif(_write(tmp_path, rendered.document))
    back = Run(imported[0].header, imported[0].events)
    assert view(back, skip=LOST) == view(run, skip=LOST), first_difference(view(run, skip=LOST),
                                                                            view(back, skip=LOST))
    assert back.header.model_dump(exclude={"run_id", "tags", "lineage"}) == \
        run.header.model_dump(exclude={"run_id", "tags", "lineage"})
    # What ATIF cannot hold is named, event by event.
    dropped = {e.kind for e in run.events if e.kind in ("desync", "synthetic", "opaque")}
    assert {f"{k}_events" for k in dropped} <= set(rendered.losses.items)
    failed = [e for e in run.events if e.kind == "error"]
    assert len(rendered.losses.items.get("failed_attempts", [])) == len(failed)


def test_round_trip_provider_log_fixtures(tmp_path: Path) -> None:
    for run in provider_runs():
        rendered = atif_export.render(run)
        atif.Trajectory.model_validate(rendered.document)
        (imported,) = import_atif(_write(tmp_path, rendered.document))
        back = Run(imported.header, imported.events)
        assert view(back, skip=LOST) == view(run, skip=LOST), first_difference(view(run), view(back))


def test_every_kind_fixture_names_each_loss() -> None:
    rendered = atif_export.render(Run.load(FIXTURES / "schema" / "v1.jsonl"))
    assert set(rendered.losses.items) == {"desync_events", "failed_attempts", "opaque_events",
                                          "subagent_refs_unplaced", "subagent_runs_missing", "synthetic_events"}


def test_subagent_becomes_an_embedded_trajectory_and_a_linked_child_again(tmp_path: Path) -> None:
    runs = fixture_runs()
    parent = Run.load(FIXTURES / "hermes" / "subagent.jsonl")
    child = Run.load(FIXTURES / "hermes" / "subagent.child.jsonl")
    document = atif_export.render(parent, children=runs.get).document
    (embedded,) = document["subagent_trajectories"]
    assert embedded["trajectory_id"] == child.run_id
    refs = [ref for step in document["steps"] for result in (step.get("observation") or {}).get("results", [])
            for ref in result.get("subagent_trajectory_ref", [])]
    assert refs == [{"trajectory_id": child.run_id, "session_id": child.header.session_id}]

    new_parent, new_child = import_atif(_write(tmp_path, document))
    assert new_child.header.lineage is not None
    assert new_child.header.lineage.relation == "subagent"
    assert new_child.header.lineage.parent_run_id == new_parent.header.run_id
    assert {e.child_run_id for e in new_parent.events if e.kind == "subagent"} == {new_child.header.run_id}
    assert view(Run(new_child.header, new_child.events)) == view(child)


def test_version_1_7_is_written_and_read(tmp_path: Path) -> None:
    run = Run.load(FIXTURES / "hermes" / "two_turns.jsonl")
    document = atif_export.render(run, version="1.7").document
    assert document["schema_version"] == "ATIF-v1.7"
    (imported,) = import_atif(_write(tmp_path, document))
    assert view(Run(imported.header, imported.events)) == view(run)
    with pytest.raises(Exception, match="unknown ATIF version"):
        atif_export.render(run, version="1.2")


def test_a_file_from_another_producer_is_rebuilt_and_marked_reconstructed() -> None:
    (imported,) = import_atif(ATIF / "foreign_v1_7.json")
    run = Run(imported.header, imported.events)
    assert [s.kind for s in run.steps] == ["llm", "tool", "llm"]
    first, tool, last = (s.event for s in run.steps)
    assert {e.provenance for e in run.events if e.kind != "tools"} == {Provenance.RECONSTRUCTED}
    # The request of the last call is the conversation so far, as the steps give it.
    messages = run.request_messages(last)
    assert [m.role for m in messages] == ["system", "user", "assistant", "tool"]
    assert messages[0].text == "You are a weather bot." and messages[1].text == "Weather in Paris?"
    assistant = messages[2]
    assert isinstance(assistant.parts[0], ReasoningPart) and isinstance(assistant.parts[1], TextPart)
    assert isinstance(assistant.parts[2], ToolCallPart) and assistant.parts[2].arguments == {"city": "Paris"}
    assert messages[3].tool_results[0].content == '{"temp_c": 18, "sky": "clear"}'
    assert tool.name == "get_weather" and tool.llm_call_id == first.id  # type: ignore[union-attr]
    assert [t.name for t in run.request_tools(first.request) or []] == ["get_weather"]  # type: ignore[union-attr]
    assert first.response.usage.input_tokens == 120  # type: ignore[union-attr]
    assert first.response.provider_details == {"atif_metrics": {"cost_usd": 0.0004}}  # type: ignore[union-attr]
    assert first.response.finish_reason == "tool_calls" and last.response.finish_reason == "stop"  # type: ignore[union-attr]
    assert (tool.t, last.t) == (1.25, 2.0)
    assert run.final_answer == "It is 18 C and clear in Paris."
    assert any("reconstructed" in w for w in imported.warnings)


def test_foreign_file_goes_back_to_the_same_atif_steps(tmp_path: Path) -> None:
    source = json.loads((ATIF / "foreign_v1_8_subagent.json").read_text())
    parent, child = import_atif(ATIF / "foreign_v1_8_subagent.json")
    assert child.header.lineage is not None and child.header.lineage.parent_run_id == parent.header.run_id
    assert child.header.model == "small-model"
    runs = {parent.header.run_id: Run(parent.header, parent.events), child.header.run_id: Run(child.header, child.events)}
    document = atif_export.render(runs[parent.header.run_id], children=runs.get).document
    atif.Trajectory.model_validate(document)
    again = _strip_extra(document)
    original = _strip_extra(source)
    for step in again["steps"] + original["steps"]:
        step.pop("timestamp", None)
        step.pop("llm_call_count", None)
        step.pop("model_name", None)
        for result in (step.get("observation") or {}).get("results", []):
            for ref in result.get("subagent_trajectory_ref", []):
                ref.pop("trajectory_id")  # the child run got a new id on import
    assert again["steps"] == original["steps"]  # messages, media, tool calls, observations, token ids
    def plain(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in s.items() if k not in ("timestamp", "model_name", "llm_call_count")} for s in steps]

    assert plain(again["subagent_trajectories"][0]["steps"]) == plain(original["subagent_trajectories"][0]["steps"])


def test_a_reader_that_ignores_extra_still_gets_the_conversation(tmp_path: Path) -> None:
    run = Run.load(FIXTURES / "hermes" / "two_turns.jsonl")
    plain = _strip_extra(atif_export.render(run).document)
    atif.Trajectory.model_validate(plain)
    assert [s["source"] for s in plain["steps"][:2]] == ["system", "user"]  # the system prompt is a step
    (imported,) = import_atif(_write(tmp_path, plain))
    back = Run(imported.header, imported.events)
    assert [(s.kind, getattr(s.event, "name", None)) for s in back.steps] == \
        [(s.kind, getattr(s.event, "name", None)) for s in run.steps]
    assert [t.result for t in back.tool_calls()] == [t.result for t in run.tool_calls()]
    assert [c.response.message.tool_calls for c in back.llm_calls()] == \
        [[p.model_copy(update={"raw_arguments": None}) for p in c.response.message.tool_calls] for c in run.llm_calls()]
    assert back.final_answer == run.final_answer
    assert {e.provenance for e in back.events if e.kind in ("llm_call", "tool_call")} == {Provenance.RECONSTRUCTED}
    for mine, theirs in zip(back.llm_calls(), run.llm_calls(), strict=True):  # same texts, same roles
        assert [(m.role, m.text) for m in back.request_messages(mine)] == \
            [(m.role, m.text) for m in run.request_messages(theirs)]


# ------------------------------------------------------------------------------------------------ CLI


def test_cli_export_then_import_carries_run_ids(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = RunStore(tmp_path / "store")
    for path in (FIXTURES / "hermes" / "subagent.jsonl", FIXTURES / "hermes" / "subagent.child.jsonl"):
        run = Run.load(path)
        store.write_run(run.header, run.events)
    out = tmp_path / "t.atif.json"
    assert main(["export", "hermes-20261130_195851_909c91", "--format", "atif", "-o", str(out),
                 "--store", str(store.root), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["run_id"] == "hermes-20261130_195851_909c91"
    assert summary["run_ids"] == ["hermes-20261130_195851_909c91", "hermes-20261130_195854_47e295"]
    assert summary["losses"] == {} and oct(out.stat().st_mode & 0o777) == "0o600"
    assert main(["import", str(out), "--format", "atif", "--store", str(tmp_path / "s2"), "--json"]) == 0
    imported = json.loads(capsys.readouterr().out)
    assert len(imported["runs"]) == 2 and imported["run_id"] == imported["run_ids"][0]
    assert main(["export", "hermes-20261130_195851_909c91", "--format", "atif", "-o", str(out),
                 "--store", str(store.root)]) == 2  # exists, no --force
    assert "--force" in capsys.readouterr().err
    assert main(["export", "hermes-20261130_195851_909c91", "--format", "atif", "--atif-version", "1.7", "-o",
                 str(out), "--force", "--store", str(store.root), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["atif_version"] == "ATIF-v1.7"
    assert json.loads(out.read_text())["schema_version"] == "ATIF-v1.7"


@pytest.mark.parametrize(("content", "message"), [
    ('{"schema_version": "ATIF-v1.8", "agent": {"name": "a", "version": "1"}, "steps": [{"step_id": 1, "sou', "JSON"),
    ('{"messages": [{"role": "user", "content": "hi"}]}', "not an ATIF trajectory"),
    ('{"schema_version": "ATIF-v9.9", "agent": {"name": "a", "version": "1"}, "steps": []}', "unknown ATIF version"),
    ('{"schema_version": "ATIF-v1.8", "agent": {"name": "a"}, "steps": [{"step_id": 2, "source": "user", '
     '"message": "x"}]}', "not a valid ATIF trajectory"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    store = tmp_path / "store"
    assert main(["import", str(path), "--format", "atif", "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err
    assert not store.exists() or not any(store.iterdir())


def test_imported_trajectory_replays_with_zero_calls_and_plays_on_the_openai_engine(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("openai")
    from replaykit.testing.script import sequence_policy
    from replaykit.testing.scripted_server import ScriptedServer

    store = str(tmp_path / "store")
    assert main(["import", str(ATIF / "foreign_v1_7.json"), "--format", "atif", "--store", store, "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    assert main(["replay", run_id, "--store", store, "--json"]) == 0
    counters = json.loads(capsys.readouterr().out)["counters"]
    assert (counters["provider_calls"], counters["tool_executions"], counters["trace_bytes_changed"]) == (0, 0, 0)
    assert counters["served_llm_steps"] == 2 and counters["served_tool_steps"] == 1

    with ScriptedServer(sequence_policy([], "Sunny and 18 C.")) as srv:
        assert main(["play", run_id, "--engine", "openai", "--base-url", srv.base_url, "--model", "candidate",
                     "--at", "2", "--store", store, "--json"]) == 0
        requests = srv.llm_requests
    played = json.loads(capsys.readouterr().out)
    assert played["run_id"] != run_id
    assert len(requests) == 1  # steps 0-1 served from the trajectory, step 2 live
    sent = requests[0].body
    assert [m["role"] for m in sent["messages"]] == ["system", "user", "assistant", "tool"]
    assert sent["messages"][2]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert [t["function"]["name"] for t in sent["tools"]] == ["get_weather"]
    assert Run.load(Path(store) / f"{played['run_id']}.jsonl").final_answer == "Sunny and 18 C."


def test_file_is_not_half_written_when_validation_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from replaykit.exporters import export

    run = Run.load(FIXTURES / "hermes" / "two_turns.jsonl")
    broken = copy.deepcopy(atif_export.render(run).document)
    broken["steps"][0]["step_id"] = 7
    monkeypatch.setattr(atif_export._Writer, "trajectory", lambda self: broken)
    out = tmp_path / "t.json"
    with pytest.raises(Exception, match="not a valid ATIF trajectory"):
        export(run, "atif", out)
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_hostile_nesting_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def agent_step(child: str) -> dict[str, Any]:
        return {"step_id": 1, "source": "agent", "message": "x",
                "tool_calls": [{"tool_call_id": "c", "function_name": "f", "arguments": {}}],
                "observation": {"results": [{"source_call_id": "c",
                                             "subagent_trajectory_ref": [{"trajectory_id": child}]}]}}

    root: dict[str, Any] = {"schema_version": "ATIF-v1.8", "agent": {"name": "a", "version": "1"},
                            "steps": [agent_step("t0")], "subagent_trajectories": []}
    level = root
    for i in range(40):  # subagents of subagents, deeper than replaykit follows
        sub = {"schema_version": "ATIF-v1.8", "trajectory_id": f"t{i}", "agent": {"name": "a", "version": "1"},
               "steps": [agent_step(f"t{i + 1}")], "subagent_trajectories": []}
        level["subagent_trajectories"].append(sub)
        level = sub
    nested = _write(tmp_path, root, "nested.json")
    brackets = tmp_path / "brackets.json"
    brackets.write_text("[" * 100_000 + "]" * 100_000)
    for path, message in ((nested, "nested deeper than"), (brackets, "not valid JSON")):
        assert main(["import", str(path), "--format", "atif", "--store", str(tmp_path / "store")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err


@pytest.mark.parametrize("engine", ["openai", "pydantic-ai", "langgraph"])
@pytest.mark.parametrize("fixture", ["foreign_v1_7.json", "foreign_v1_8_subagent.json"])
def test_imported_trajectory_plays_offline_on_every_engine(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           engine: str, fixture: str) -> None:
    """`replaykit play RUN --engine E --offline` of another producer's trajectory: the engine's real loop,
    every step served from the import (the v1.8 file's user step holds an image), the record's
    conversation and answer, `diff` equal."""
    pytest.importorskip({"openai": "openai", "pydantic-ai": "pydantic_ai", "langgraph": "langgraph"}[engine])
    from replaykit.core.analysis.diff import diff_runs
    from replaykit.core.replay.replay import replay_run
    from tests.conformance._matrix import conversation

    store = RunStore(tmp_path / "store")
    assert main(["import", str(ATIF / fixture), "--format", "atif", "--store", str(store.root), "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    run = store.load(run_id)
    source = store.path_for(run_id).read_bytes()
    assert main(["play", run_id, "--engine", engine, "--offline", "--store", str(store.root), "--json"]) == 0
    played_doc = json.loads(capsys.readouterr().out)
    assert played_doc["status"] == "completed" and played_doc["parent_run_id"] == run_id
    counters = played_doc["counters"]
    assert (counters["provider_calls"], counters["tool_executions"], counters["desyncs"]) == (0, 0, 0)
    assert counters["served_llm_steps"] == len(run.llm_calls()) >= 2
    assert counters["served_tool_steps"] == len(run.tool_calls()) >= 1
    assert store.path_for(run_id).read_bytes() == source
    played = store.load(played_doc["run_id"])
    expected = replay_run(run)
    assert conversation(replay_run(played)["messages"]) == conversation(expected["messages"])
    assert played_doc["final_answer"] == expected["final_answer"] == played.final_answer is not None
    assert diff_runs(run, played).equal

    def media(r: Run) -> list[Any]:  # what conversation() does not show: the image went through the engine
        return [p for e in r.llm_calls() for m in r.request_messages(e) for p in m.parts if p.type == "media"]
    assert media(played) == media(run)
    assert bool(media(run)) == (fixture == "foreign_v1_8_subagent.json")


@pytest.mark.hermes
@pytest.mark.parametrize("fixture", [
    "foreign_v1_7.json",
    "foreign_v1_8_subagent.json",
])
def test_imported_trajectory_plays_offline_on_the_hermes_engine(tmp_path: Path, fixture: str) -> None:
    """The real Hermes agent (a sandboxed home, as in the conformance matrix) plays another producer's
    trajectory with every step served from it."""
    from replaykit.adapters import import_file
    from replaykit.engines import play
    from tests.conformance._matrix import engine_extra, options

    store = RunStore(tmp_path / "store")
    imported = import_file(ATIF / fixture, "atif")[0]
    store.write_run(imported.header, imported.events)
    run = store.load(imported.header.run_id)
    result = play(run, "hermes", options(store, serve_only=True, extra=engine_extra("hermes", tmp_path)))
    assert result.status == "completed", result.error
    counters = result.counters
    assert (counters.provider_calls, counters.tool_executions, counters.desyncs) == (0, 0, 0)
    assert counters.served_llm_steps == len(run.llm_calls())
    assert result.final_answer == run.final_answer
