"""Langfuse: what a trace holds comes in (issue 39). Two traces of one session are linked runs (lineage, as
``runs`` shows it); an EVENT observation (a guardrail check) is an event of the run that ``inspect --all
--json`` and ``replay --json`` list; a TOOL observation with level ERROR is a failed step that ``inspect``
shows; the Langfuse UI's "download trace" JSON (``{"trace", "observations"}``, out of time order) imports.
Files: the SDK-written fixtures (tests/fixtures/platforms/make_langfuse.py), edited as Langfuse writes
these cases."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from replaykit.adapters.langfuse import import_langfuse
from replaykit.cli.main import main
from replaykit.core.trace.run import Run
from tests.adapters.platform_proof import prove

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "platforms"
V1 = FIXTURES / "langfuse_traces.json"
GUARDRAIL_OUTPUT = {"passed": False, "violations": ["pii:email"], "action": "redact"}


def _traces() -> list[dict[str, Any]]:
    return list(json.loads(V1.read_text()))


def _with_guardrail_and_failed_tool(trace: dict[str, Any]) -> dict[str, Any]:
    trace = copy.deepcopy(trace)
    observations = trace["observations"]
    tool = next(o for o in observations if o["type"] == "TOOL")
    tool.update(level="ERROR", statusMessage="weather API returned 503", output="error: weather API returned 503")
    event = next(o for o in observations if o["type"] == "EVENT")
    event.update(id="obs-guard-1", name="pii-guardrail", input={"text": "mail me at a@b.c"}, output=GUARDRAIL_OUTPUT,
                 level="WARNING", statusMessage="PII found")
    # the next generation saw the failure as the tool message's text (Chat has no error flag)
    for obs in observations:
        if obs["type"] == "GENERATION" and isinstance(obs["input"], dict):
            for message in obs["input"].get("messages", []):
                if message.get("role") == "tool":
                    message["content"] = "error: weather API returned 503"
    return trace


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    code = main(list(args))
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out) if "--json" in args else out


def test_traces_of_one_session_are_linked_by_lineage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    traces = _traces()
    assert traces[0]["sessionId"] == traces[1]["sessionId"]
    first, second = import_langfuse(V1)
    assert first.header.lineage is None
    assert second.header.lineage is not None and second.header.lineage.relation == "import"
    assert second.header.lineage.parent_run_id == first.header.run_id
    assert second.header.lineage.details == {"link": "session", "session_id": traces[0]["sessionId"],
                                             "position": 1, "source": "langfuse"}
    store = tmp_path / "store"
    _cli(capsys, "import", str(V1), "--format", "langfuse", "--store", str(store), "--json")
    listed = _cli(capsys, "runs", "--store", str(store), "--json")
    rows = listed if isinstance(listed, list) else listed.get("runs", listed)
    linked = [r for r in rows if r.get("parent_run_id")]
    assert len(linked) == 1 and linked[0]["relation"] == "import"
    assert linked[0]["parent_run_id"] in {r["run_id"] for r in rows}


def test_a_failed_tool_and_a_guardrail_event_come_in(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "guard.json"
    path.write_text(json.dumps([_with_guardrail_and_failed_tool(_traces()[0])]))
    (imported,) = import_langfuse(path)
    run = Run(imported.header, imported.events)
    (tool,) = run.tool_calls()
    assert (tool.status, tool.error) == ("error", "weather API returned 503")
    assert run.failing_step == 1
    guard = next(e for e in run.events if e.kind == "opaque" and e.corr and e.corr.api_request_id == "obs-guard-1")
    assert guard.data["name"] == "pii-guardrail" and guard.data["output"] == GUARDRAIL_OUTPUT  # type: ignore[union-attr]
    assert guard.provider_details is not None
    assert (guard.provider_details["langfuse"]["level"], guard.provider_details["langfuse"]["status_message"]) == \
        ("WARNING", "PII found")

    store = tmp_path / "store"
    run_id = _cli(capsys, "import", str(path), "--format", "langfuse", "--store", str(store), "--json")["run_id"]
    view = _cli(capsys, "inspect", run_id, "--all", "--store", str(store), "--json")
    assert view["failing_step"] == 1
    row = next(r for r in view["timeline"] if r["kind"] == "opaque" and r.get("source_id") == "obs-guard-1")
    assert "pii-guardrail" in row["summary"] and "pii:email" in row["summary"]
    text = _cli(capsys, "inspect", run_id, "--store", str(store))
    assert "FAILING STEP 1" in text
    step = _cli(capsys, "inspect", run_id, "--step", "1", "--store", str(store))
    assert "status error" in step and "weather API returned 503" in step
    replayed = _cli(capsys, "replay", run_id, "--store", str(store), "--json")
    (listed,) = [e for e in replayed["events"] if e["name"] == "event"]
    assert listed["before_step"] == 2 and "pii-guardrail" in listed["summary"]
    assert [s["status"] for s in replayed["steps"]] == ["ok", "error", "ok"]


def test_a_failed_tool_still_plays_offline_with_diff_equal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("openai")
    pytest.importorskip("atif")
    path = tmp_path / "guard.json"
    first, second = _traces()
    path.write_text(json.dumps([_with_guardrail_and_failed_tool(first), second]))
    runs = prove(path, "langfuse", tmp_path, capsys)
    assert runs[0].tool_calls()[0].status == "error"


def test_the_ui_download_out_of_time_order_imports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("openai")
    pytest.importorskip("atif")
    whole = _traces()[0]
    trace = {k: v for k, v in whole.items() if k != "observations"}
    download = {"trace": trace, "observations": list(reversed(whole["observations"]))}
    path = tmp_path / "trace-download.json"
    path.write_text(json.dumps(download))
    (run,) = prove(path, "langfuse", tmp_path, capsys)
    reference = Run(*(lambda r: (r.header, r.events))(import_langfuse(V1)[0]))
    assert [(s.kind, s.event.t) for s in run.steps] == [(s.kind, s.event.t) for s in reference.steps]
    assert run.header.metadata["langfuse"]["scores"] == whole["scores"]
