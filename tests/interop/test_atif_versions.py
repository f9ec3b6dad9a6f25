"""ATIF from its first published version to the newest: one fixture per version (tests/fixtures/atif/
v1_N.json, written from RFC 0001's version history), each read with what its version added, written
back as the newest, and played offline with `diff` equal. Also: results without ``source_call_id``
bound as the spec allows (Terminus-2 / OpenHands write them so), and a record that ends mid-round."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replaykit.adapters.atif import import_atif
from replaykit.core.analysis.diff import diff_runs, ends_open
from replaykit.core.errors import BadInput
from replaykit.core.trace.interop import ATIF_HISTORY, ATIF_VERSIONS, upgrade_atif
from replaykit.core.trace.ir import MediaPart
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.engines import play
from replaykit.exporters import atif as atif_export
from tests.conformance._matrix import options
from tests.interop.roundtrip import FIXTURES, view

atif = pytest.importorskip("atif")
ATIF = FIXTURES / "atif"
OLDER = [f"1.{n}" for n in range(7)]  # the versions before the ones replaykit used to read


def _fixture(version: str) -> Path:
    return ATIF / f"v{version.replace('.', '_')}.json"


def _runs(path: Path) -> list[Run]:
    return [Run(r.header, r.events) for r in import_atif(path)]


def _write(tmp_path: Path, document: dict[str, Any], name: str = "t.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


def test_every_published_version_is_known() -> None:
    assert ATIF_VERSIONS == tuple(f"ATIF-v1.{n}" for n in range(9))
    assert all(ATIF_HISTORY.values())
    for version in [*OLDER, "1.7", "1.8"]:
        assert version in ATIF_HISTORY


@pytest.mark.parametrize("version", OLDER)
def test_each_older_version_reads_and_is_written_as_the_newest(version: str, tmp_path: Path) -> None:
    document = json.loads(_fixture(version).read_text())
    assert document["schema_version"] == f"ATIF-v{version}"
    run = _runs(_fixture(version))[0]
    assert run.header.metadata["atif_version"] == f"ATIF-v{version}"
    assert run.llm_calls() and run.final_answer
    rendered = atif_export.render(run)
    assert rendered.document["schema_version"] == f"ATIF-v{next(reversed(ATIF_HISTORY))}"
    atif.Trajectory.model_validate(rendered.document)
    back = Run(*(lambda r: (r.header, r.events))(import_atif(_write(tmp_path, rendered.document))[0]))
    lost = frozenset({"tools", "opaque"})  # opaque events are a named loss of the ATIF export
    assert view(back, skip=lost) == view(run, skip=lost)
    assert ("opaque_events" in rendered.losses.items) == any(e.kind == "opaque" for e in run.events)


@pytest.mark.parametrize("version", OLDER)
def test_each_older_version_plays_offline_with_diff_equal(version: str, tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    run = _runs(_fixture(version))[0]
    store.write_run(run.header, list(run.events))
    run = store.load(run.run_id)
    result = play(run, "openai", options(store, serve_only=True))
    assert (result.counters.provider_calls, result.counters.tool_executions, result.counters.desyncs) == (0, 0, 0)
    assert diff_runs(run, store.load(result.run_id)).equal


def test_what_each_version_added_is_read() -> None:
    v11 = _runs(_fixture("1.1"))[0]
    assert v11.header.metadata["atif_extra"] == {"task": "weather", "harness": "fixture"}  # root extra
    v12 = _runs(_fixture("1.2"))[0]  # a system step's observation: kept, not a message
    assert [e.data for e in v12.events if e.kind == "opaque"] == [{"content": "checkpoint ck-1 saved"}]
    v13 = _runs(_fixture("1.3"))[0]
    kept = [c.response.provider_details["atif_metrics"] for c in v13.llm_calls()]
    assert kept[0]["completion_token_ids"] == list(range(11, 19)) and len(kept[1]["logprobs"]) == 9
    v14 = _runs(_fixture("1.4"))[0]
    assert v14.llm_calls()[0].response.provider_details["atif_metrics"]["prompt_token_ids"] == list(range(50))
    v15 = _runs(_fixture("1.5"))[0]
    assert [t.name for t in v15.request_tools(v15.llm_calls()[0].request) or []] == ["get_weather"]
    v16 = _runs(_fixture("1.6"))[0]
    first = v16.user_turns()[0].message
    assert any(isinstance(p, MediaPart) and p.url == "images/cat.png" for p in first.parts)


def test_results_without_source_call_id_answer_the_steps_calls_then_become_user_input() -> None:
    run = _runs(_fixture("1.5"))[0]
    (tool,) = run.tool_calls()
    assert (tool.call_id, tool.result) == ("call_1", "18 C, clear")  # bound to the step's one call
    # The step without tool calls: its observation is what the agent handed the model next.
    last_request = run.request_messages(run.llm_calls()[-1])
    assert last_request[-1].role == "user" and last_request[-1].text == "Lyon: 16 C, rain"
    assert [m.role for m in last_request][-4:] == ["assistant", "tool", "assistant", "user"]


def test_results_bind_in_order_to_the_calls_no_result_names(tmp_path: Path) -> None:
    document = json.loads(_fixture("1.5").read_text())
    step = document["steps"][1]
    step["tool_calls"] = [{"tool_call_id": f"c{i}", "function_name": "get_weather", "arguments": {"city": c}}
                          for i, c in enumerate(["Paris", "Rome", "Oslo"])]
    step["observation"] = {"results": [{"content": "P"}, {"source_call_id": "c0", "content": "first"},
                                       {"content": "R"}]}
    run = _runs(_write(tmp_path, document))[0]
    assert [(t.call_id, t.result) for t in run.tool_calls()] == [("c1", "P"), ("c0", "first"), ("c2", "R")]


def test_a_v1_6_subagent_ref_by_session_id_is_upgraded_and_kept_as_a_reference() -> None:
    document = json.loads(_fixture("1.6").read_text())
    upgraded = upgrade_atif(document)
    ref = upgraded["steps"][1]["observation"]["results"][0]["subagent_trajectory_ref"][0]
    assert ref == {"session_id": "vision-helper-7", "trajectory_id": "vision-helper-7"}
    assert document["steps"][1]["observation"]["results"][0]["subagent_trajectory_ref"][0] == \
        {"session_id": "vision-helper-7"}  # the input is not changed
    with pytest.raises(ValueError):  # v1.7's rule: a ref by session_id alone no longer validates
        atif.Trajectory.model_validate({**document, "schema_version": "ATIF-v1.8"})
    imported = import_atif(_fixture("1.6"))[0]
    assert any("vision-helper-7" in w for w in imported.warnings)
    assert [e.name for e in imported.events if e.kind == "opaque"] == ["subagent_trajectory_ref"]
    newer = json.loads((ATIF / "foreign_v1_7.json").read_text())
    assert upgrade_atif(newer) is newer


@pytest.mark.parametrize("version", ["ATIF-v1.9", "ATIF-v2.0", "ATIF-1.5", "v1.5"])
def test_an_unknown_version_is_one_line(version: str, tmp_path: Path) -> None:
    document = {**json.loads(_fixture("1.0").read_text()), "schema_version": version}
    with pytest.raises(BadInput) as info:
        import_atif(_write(tmp_path, document))
    message = str(info.value)
    assert "\n" not in message and "ATIF-v1.0" in message and "ATIF-v1.8" in message


def test_a_trajectory_that_stops_at_a_tool_call_plays_offline_with_diff_equal(tmp_path: Path) -> None:
    """The last step asks for a tool and the file ends (an agent killed by a timeout, OpenHands's
    ``finish``): the play answers the call and the next request synthetically, with no desync, and
    diff lists those steps as past the record's end instead of differences."""
    document = json.loads(_fixture("1.0").read_text())
    document["steps"] = document["steps"][:3]
    del document["steps"][2]["observation"]
    store = RunStore(tmp_path / "store")
    run = _runs(_write(tmp_path, document))[0]
    assert ends_open(run) and not run.tool_calls()
    store.write_run(run.header, list(run.events))
    run = store.load(run.run_id)
    result = play(run, "openai", options(store, serve_only=True))
    assert result.counters.desyncs == 0 and result.counters.provider_calls == 0
    played = store.load(result.run_id)
    assert len(played.steps) == len(run.steps) + 2  # the stand-in tool answer and the synthetic end
    outcome = diff_runs(run, played)
    assert outcome.equal
    assert [n["kind"] for n in outcome.notes].count("past_record_end") == 2
    # A record that ends with its answer is not open: the same extra steps would be differences.
    complete = _runs(_fixture("1.0"))[0]
    assert not ends_open(complete)
