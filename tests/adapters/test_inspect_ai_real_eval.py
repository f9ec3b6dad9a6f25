"""Inspect AI logs written by a real ``inspect_ai.eval`` run (the mockllm model scripted to call a tool five
times, then answer; the ``match`` scorer): Inspect's recorder writes the model inputs deduplicated into a
message pool (``events_data``, ``input_refs``). Issue 39: all six LLM steps play offline with ``diff``
equal, and the sample's scores, id and uuid are in the run where an evaluation user filters on them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai")

from replaykit.adapters.inspect_ai import _Sample, import_inspect_ai
from replaykit.cli.main import main
from replaykit.core.errors import BadInput
from replaykit.core.trace.run import Run
from tests.adapters.platform_proof import prove


def _run_eval(log_dir: Path, log_format: str) -> Path:
    import inspect_ai.model._model as model_module
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, get_model
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import tool

    @tool
    def add() -> Any:
        async def execute(x: int, y: int) -> int:
            """Add two numbers.

            Args:
                x: the first number
                y: the second number
            """
            return x + y

        return execute

    outputs = [ModelOutput.for_tool_call("mockllm/model", "add", {"x": i, "y": 1}, tool_call_id=f"c{i}")
               for i in range(5)]
    outputs.append(ModelOutput.from_content("mockllm/model", "The answer is 5"))
    task = Task(dataset=[Sample(input="Add 1 five times, starting from 0", target="5", id="s1")],
                solver=[use_tools(add()), generate()], scorer=match())
    counting = model_module.count_text_tokens
    model_module.count_text_tokens = lambda text: max(1, len(text) // 4)  # mockllm's usage: no tiktoken download
    try:
        (log,) = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=outputs), log_dir=str(log_dir),
                              display="none", log_format=log_format)
    finally:
        model_module.count_text_tokens = counting
    assert log.status == "success", log.error
    return Path(log.location)


@pytest.fixture(scope="module", params=["eval", "json"])
def pooled_log(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _run_eval(tmp_path_factory.mktemp("inspect-real"), request.param)


def test_the_log_is_pooled(pooled_log: Path) -> None:
    from inspect_ai.log import read_eval_log

    if pooled_log.suffix == ".json":  # the .eval archive is read through Inspect's own zip reader
        sample = json.loads(pooled_log.read_text())["samples"][0]
        assert sample["events_data"]["messages"] and all(
            e.get("input_refs") and not e.get("input") for e in sample["events"] if e["event"] == "model")
    assert read_eval_log(str(pooled_log)).samples


def test_all_six_llm_steps_play_offline(pooled_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("openai")
    pytest.importorskip("atif")
    (run,) = prove(pooled_log, "inspect-ai", tmp_path, capsys)
    assert (len(run.llm_calls()), len(run.tool_calls())) == (6, 5)
    assert [len(run.request_messages(c)) for c in run.llm_calls()] == [1, 3, 5, 7, 9, 11]
    assert run.final_answer == "The answer is 5"


def test_scores_id_and_uuid_are_kept_and_filterable(pooled_log: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from replaykit.core.trace.store import RunStore
    from replaykit.eval.select import select_runs

    (imported,) = import_inspect_ai(pooled_log)
    meta = imported.header.metadata["inspect_ai"]
    score = meta["scores"]["match"]
    assert (score["value"], score["answer"], score["explanation"]) == ("C", "The answer is 5", "The answer is 5")
    assert meta["sample_id"] == "s1" and meta["sample_uuid"]
    tags = imported.header.tags
    assert {"score:match=C", "sample:s1", f"sample_uuid:{meta['sample_uuid']}", "sample_epoch:1",
            "task:task"} <= set(tags)

    store = tmp_path / "store"
    assert main(["import", str(pooled_log), "--format", "inspect-ai", "--store", str(store), "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    assert main(["inspect", run_id, "--store", str(store), "--json"]) == 0
    assert "score:match=C" in json.loads(capsys.readouterr().out)["tags"]
    chosen = select_runs(RunStore(store), [], all_runs=True, filter_expr="tag=score:match=C")
    assert [p.stem for p in chosen] == [run_id]
    with pytest.raises(BadInput):  # no run scored I: an empty selection is bad input
        select_runs(RunStore(store), [], all_runs=True, filter_expr="tag=score:match=I")


def test_references_the_reader_left_are_expanded_from_the_pool() -> None:
    pool = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},
            {"role": "user", "content": "again"}]
    sample = {"id": 1, "epoch": 1, "events": [], "events_data": {"messages": pool, "calls": []}}
    reader = _Sample({"eval": {}}, sample, "log.json")
    assert reader.pooled_input({"event": "model", "input": [], "input_refs": [[0, 1], [2, 3]]}) == [pool[0], pool[2]]
    assert reader.pooled_input({"event": "model", "input": [pool[1]]}) == [pool[1]]
    bare = _Sample({"eval": {}}, {"id": 1, "events": []}, "log.json")
    assert bare.pooled_input({"event": "model", "input": [], "input_refs": [[0, 2]]}) is None


def test_a_pool_missing_from_the_log_is_named_not_dropped(pooled_log: Path, tmp_path: Path) -> None:
    if pooled_log.suffix != ".json":
        pytest.skip("edits the JSON form of the log")
    document = json.loads(pooled_log.read_text())
    del document["samples"][0]["events_data"]
    path = tmp_path / "no-pool.json"
    path.write_text(json.dumps(document))
    (imported,) = import_inspect_ai(path)
    run = Run(imported.header, imported.events)
    assert len(run.llm_calls()) == 6
    record = {e["what"]: e for e in imported.header.metadata["not_imported"]}
    assert record["model inputs"]["count"] == 6 and "message pool" in record["model inputs"]["reason"]
