"""Any string JSON can carry survives every export exactly: the standalone script, the LangGraph
module, the PydanticAI module, the training formats, and the HTML report (which shows what HTML
cannot carry as a visible escape). Generated modules are executed in-process."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings

from replaykit.core.replay.replay import replay_run
from replaykit.core.trace import jsonsafe
from replaykit.core.trace.run import Run
from replaykit.exporters import html_report, python_script
from replaykit.exporters.training import FORMATS, sft_record
from replaykit.testing.json_strings import SLOTS, lone_surrogate, slot_strings, strings_run, texts_of
from replaykit.testing.script import ReplyList, text
from replaykit.testing.scripted_server import ScriptedServer
from tests.exporters.script_support import call_main, load_script, masked, run_script

SOME = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                       HealthCheck.function_scoped_fixture])
CONVERSATION = ("system", "user", "thinking_text", "result", "answer", "user2")


def _module(source: str, name: str) -> Any:
    """Import generated source as a real module (LangGraph and PydanticAI resolve type hints through
    ``sys.modules``), from a temporary file; nothing is left in ``sys.modules`` afterwards."""
    import importlib.util
    import sys
    import tempfile
    import types

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}.py"
        path.write_text(source, encoding="utf-8")
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
    assert isinstance(module, types.ModuleType)
    return module


def _has(value: Any, slots: dict[str, str], names: tuple[str, ...] = CONVERSATION) -> None:
    found = set(texts_of(value))
    for name in names:
        assert slots[name] in found, (name, slots[name])


@SOME
@given(slots=slot_strings())
def test_standalone_script_replays_every_string(slots: dict[str, str]) -> None:
    run = strings_run(slots)
    namespace = load_script(python_script.render(run))
    status, out, err = call_main(namespace, ["--quiet"])
    assert status == 0, err
    out.decode("utf-8")  # stdout stays UTF-8 (surrogates are \u-escaped in the JSON)
    doc = json.loads(out)
    assert masked(doc) == masked(json.loads(jsonsafe.dumps(replay_run(run))))
    _has(doc["messages"], slots)
    status, out, _ = call_main(namespace, ["--dump-trace"])
    _has(json.loads(out), slots, SLOTS)


@SOME
@given(slots=slot_strings())
def test_langgraph_module_replays_every_string(slots: dict[str, str]) -> None:
    pytest.importorskip("langgraph")
    from replaykit.exporters import langgraph_source

    run = strings_run(slots)
    module = _module(langgraph_source.render(run), "rk_strings_graph")
    status, out, err = call_main(vars(module), [])
    assert status == 0, err
    doc = json.loads(out)
    assert doc["final_answer"] == slots["answer"]
    _has(doc["messages"], slots, ("system", "user", "result", "answer", "user2"))


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(slots=slot_strings())
def test_pydantic_ai_module_replays_every_string(slots: dict[str, str]) -> None:
    # PydanticAI itself refuses an empty text answer ("Please return text or call a tool", then
    # UnexpectedModelBehavior): a run whose final answer is "" cannot be replayed by an Agent.
    assume(slots["answer"] != "")
    pytest.importorskip("pydantic_ai")
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    from replaykit.exporters import pydantic_ai_source

    run = strings_run(slots)
    source = pydantic_ai_source.render(run)
    module = _module(source, "rk_strings_agent")
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()) as printed:
        messages = module.run()
    assert printed.getvalue().encode("utf-8")
    history = ModelMessagesTypeAdapter.dump_python(messages, mode="python")
    _has(history, slots, ("system", "user", "result", "answer"))
    # the raw argument string is kept as the provider sent it (json.loads: pydantic's own parser
    # refuses surrogate escapes, see core/trace/jsonsafe.py)
    raw = [p.args for m in messages for p in m.parts if getattr(p, "part_kind", "") == "tool-call"]
    args = raw[0] if isinstance(raw[0], dict) else json.loads(raw[0])
    assert args[slots["arg_key"]] == slots["arg_value"]


@SOME
@given(slots=slot_strings())
def test_training_formats_carry_every_string(slots: dict[str, str]) -> None:
    run = strings_run(slots)
    for fmt in FORMATS:
        record = sft_record(run, fmt)
        line = jsonsafe.dumps(record)
        line.encode("utf-8")
        assert json.loads(line) == record
        # ShareGPT's Hermes function-calling turns embed a tool result that parses as JSON as JSON
        # (the format's convention), so only the plain message texts are compared there
        # and the system turn is the function-calling preamble followed by the recorded system text
        if fmt == "sharegpt":
            _has(record, slots, ("user", "answer"))
            assert record["conversations"][0]["value"].endswith(slots["system"])
        else:
            _has(record, slots, ("system", "user", "result", "answer"))


@SOME
@given(slots=slot_strings())
def test_html_shows_every_string_and_escapes_what_html_cannot_carry(slots: dict[str, str]) -> None:
    page = html_report.render_run(strings_run(slots))
    page.encode("utf-8")
    assert "<script" not in page.lower()
    visible = html.unescape(page)
    for name in ("system", "user", "result", "answer"):
        shown = re.sub("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]", lambda m: f"\\u{ord(m.group()):04x}",
                       slots[name])
        assert shown in visible, name


def test_training_export_file_is_utf8_and_exact(tmp_path: Path) -> None:
    from replaykit.core.trace.store import RunStore
    from replaykit.exporters.training import export_training

    slots = dict.fromkeys(SLOTS, "x \x00 \u2028")
    slots["answer"] = "half an emoji " + lone_surrogate(0xD83D)
    store = RunStore(tmp_path / "s")
    path = store.write_run(*(lambda r: (r.header, r.events))(strings_run(slots)))
    out = tmp_path / "train.jsonl"
    export_training([path], out, "openai-jsonl", redact=False, store=store)
    record = json.loads(out.read_bytes().decode("utf-8"))
    assert record["messages"][-1]["content"] == slots["answer"]


def test_script_live_replay_sends_empty_system_and_user_turns(tmp_path: Path) -> None:
    """An empty system or user message ("content": "") is reproduced by the script's live replay."""
    from replaykit.adapters.provider_logs import import_openai_chat
    from replaykit.core.trace.store import RunStore

    body = {"model": "m", "messages": [{"role": "system", "content": ""}, {"role": "user", "content": ""},
                                       {"role": "assistant", "content": "first"}, {"role": "user", "content": ""},
                                       {"role": "assistant", "content": "second"}]}
    source = tmp_path / "chat.json"
    source.write_text(json.dumps(body))
    (imported,) = import_openai_chat(source)
    store = RunStore(tmp_path / "store")
    run = Run.load(store.write_run(imported.header, imported.events))
    script = tmp_path / "run.py"
    from replaykit.exporters import export

    export(run, "python", script)
    with ScriptedServer(ReplyList([text("live 1"), text("live 2")])) as srv:
        proc = run_script(script, "--live", "--base-url", srv.base_url, "--model", "x", "--quiet")
        requests = [r.body["messages"] for r in srv.llm_requests]
    assert proc.returncode == 0, proc.stderr
    assert requests[0] == body["messages"][:2]
    assert requests[1] == [*body["messages"][:2], {"role": "assistant", "content": "live 1"},
                           {"role": "user", "content": ""}]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(slots=slot_strings())
def test_atif_and_otel_files_are_utf8_and_import_back_exactly(tmp_path_factory: pytest.TempPathFactory,
                                                              slots: dict[str, str]) -> None:
    from replaykit.adapters.atif import import_atif
    from replaykit.adapters.otel import import_otel
    from replaykit.exporters import export
    from tests.interop.roundtrip import first_difference, view

    run = strings_run(slots)
    folder = tmp_path_factory.mktemp("x")
    for fmt, importer, options in (("atif", import_atif, {}), ("otel", import_otel, {"include_content": True})):
        path = folder / f"run.{fmt}.json"
        try:
            export(run, fmt, path, **options)
        except ModuleNotFoundError:
            continue  # the format's extra is not installed in this environment
        path.read_bytes().decode("utf-8")
        (back,) = importer(path)
        texts = set(texts_of([json.loads(jsonsafe.model_json(e)) for e in back.events]))
        for name in ("system", "user", "result", "answer"):
            assert slots[name] in texts, (fmt, name)
        if fmt == "otel":  # every event, the assistant text beside the tool call and the run_end included
            again = Run(back.header, back.events)
            assert view(again) == view(run), first_difference(view(run), view(again))
            assert again.events[-1].kind == "run_end" and again.final_answer == slots["answer"]
            assert again.llm_calls()[0].response.message.text == slots["thinking_text"]
