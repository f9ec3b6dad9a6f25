"""The httpx-level recorder and cassettes, driven by the real openai client against the scripted server."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

import replaykit
from replaykit.adapters.cassette import Cassette
from replaykit.adapters.openai import CassetteMiss
from replaykit.core.errors import BadInput
from replaykit.core.trace import codecs
from replaykit.core.trace.canonical import canonical_json
from replaykit.core.trace.ir import ErrorEvent, LLMCallEvent
from replaykit.core.trace.run import Run
from replaykit.testing.scripted_server import ScriptedServer, fail_first
from tests.adapters.recorder_support import (
    CLOSED_URL,
    FINAL,
    async_chat_agent,
    chat_agent,
    cli,
    lines,
    responses_agent,
    weather_policy,
)

openai = pytest.importorskip("openai")


def _assert_exact_requests(run: Run, bodies: list[dict]) -> None:
    """Every request the server received is rebuilt exactly from the trace (delta-encoded)."""
    calls = run.llm_calls()
    assert len(calls) == len(bodies)
    for event, body in zip(calls, bodies, strict=True):
        rebuilt = codecs.encode_llm_request(event.request, run.request_messages(event),
                                            run.request_tools(event.request)).body
        assert canonical_json(rebuilt) == canonical_json(body)
    assert calls[1].request.context.base == calls[0].id  # a delta, not a second full copy


@pytest.mark.parametrize("stream", [False, True])
def test_chat_recorded_then_served_offline(tmp_path: Path, stream: bool) -> None:
    path = tmp_path / "chat.jsonl"
    with ScriptedServer(weather_policy()) as srv:
        with Cassette(path, "once") as session:
            assert chat_agent(srv.base_url, stream=stream) == FINAL
        bodies = [r.body for r in srv.llm_requests]
    assert session.counters.recorded == 2 and session.counters.provider_calls == 2
    run = Run.load(path)
    assert [s.kind for s in run.steps] == ["llm", "tool", "llm"]
    tool = run.tool_calls()[0]
    assert tool.name == "weather" and tool.arguments == {"city": "Paris"} and '"temp_c": 21' in (tool.result or "")
    assert tool.llm_call_id == run.llm_calls()[0].id
    assert run.final_answer == FINAL and run.status == "completed"
    assert bool((run.llm_calls()[0].provider_details or {}).get("streamed")) is stream
    _assert_exact_requests(run, bodies)
    assert b"sk-test" not in path.read_bytes()  # headers (the API key) are never recorded

    before = path.read_bytes()
    with Cassette(path, "none") as served:  # the server is gone: any request leaving would fail
        assert chat_agent(CLOSED_URL, stream=stream) == FINAL
    assert served.counters.served == 2 and served.counters.provider_calls == 0
    assert path.read_bytes() == before


@pytest.mark.parametrize("stream", [False, True])
def test_responses_api_recorded_then_served(tmp_path: Path, stream: bool) -> None:
    path = tmp_path / "responses.jsonl"
    with ScriptedServer(weather_policy()) as srv:
        with Cassette(path, "once"):
            assert responses_agent(srv.base_url, stream=stream) == FINAL
        bodies = [r.body for r in srv.llm_requests]
    run = Run.load(path)
    assert [e.request.api for e in run.llm_calls()] == ["openai-responses"] * 2
    assert [s.kind for s in run.steps] == ["llm", "tool", "llm"]
    _assert_exact_requests(run, bodies)
    with Cassette(path, "none") as served:
        assert responses_agent(CLOSED_URL, stream=stream) == FINAL
    assert served.counters.provider_calls == 0 and served.counters.served == 2


def test_changed_prompt_in_none_mode_explains_and_sends_nothing(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    with ScriptedServer(weather_policy()) as srv, Cassette(path, "once"):
        chat_agent(srv.base_url)
    cassette = Cassette(path, "none", label="tests/test_x.py::test_weather")
    session = cassette.start()
    try:
        with pytest.raises(openai.BadRequestError) as info:
            chat_agent(CLOSED_URL, prompt="Weather in Rome?")
    finally:
        cassette.stop()
    message = session.misses[0]
    assert "tests/test_x.py::test_weather" in message and str(path) in message
    assert "nearest recorded step 0" in message
    assert "messages[1].parts[0].text: recorded 'Weather in Paris?' vs actual 'Weather in Rome?'" in message
    assert "\n" not in message and message in str(info.value)
    assert session.counters.provider_calls == 0


def test_miss_message_clips_long_values(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    with ScriptedServer(weather_policy()) as srv, Cassette(path, "once"):
        chat_agent(srv.base_url, prompt="x" * 500)
    with pytest.raises(CassetteMiss) as info, Cassette(path, "none"):
        try:
            chat_agent(CLOSED_URL, prompt="x" * 499 + "y")
        except openai.BadRequestError:
            pass  # an agent that swallows the error: the block still fails with the explanation
    assert "…" in str(info.value) and len(str(info.value)) < 600


def test_new_episodes_and_hybrid_append_without_rewriting(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    with ScriptedServer(weather_policy()) as srv:
        with Cassette(path, "once"):
            chat_agent(srv.base_url, prompt="Weather in Paris?")
        first = lines(path)
        with Cassette(path, "new_episodes") as s:
            chat_agent(srv.base_url, prompt="Weather in Paris?")  # served
            chat_agent(srv.base_url, prompt="And in Lyon?")  # new: live, appended
        assert (s.counters.served, s.counters.recorded) == (2, 2)
        second = lines(path)
        assert second[: len(first)] == first and len(second) > len(first)
        with Cassette(path, "hybrid") as h:
            for _ in range(2):  # hybrid serves a matching request again
                chat_agent(srv.base_url, prompt="And in Lyon?")
            chat_agent(srv.base_url, prompt="Now Nice?")
        assert (h.counters.served, h.counters.recorded) == (4, 2)
        assert lines(path)[: len(second)] == second
        sent = len(srv.llm_requests)
    assert sent == 2 + 2 + 2
    run = Run.load(path)
    assert cli("validate", str(path), "--json")[0] == 0
    assert len(run.llm_calls()) == 6 and len({e.seq for e in run.events}) == len(run.events)
    with Cassette(path, "none") as offline:
        for prompt in ("Weather in Paris?", "And in Lyon?", "Now Nice?"):
            assert chat_agent(CLOSED_URL, prompt=prompt) == FINAL
    assert offline.counters.provider_calls == 0


def test_concurrent_tasks_match_by_task_not_global_order(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    prompts = [f"Weather, agent {i}" for i in range(3)]

    async def together(url: str, order: list[str]) -> list[str]:
        return await asyncio.gather(*(async_chat_agent(url, p) for p in order))

    with ScriptedServer(weather_policy()) as srv, Cassette(path, "once"):
        assert asyncio.run(together(srv.base_url, prompts)) == [FINAL] * 3
    run = Run.load(path)
    assert len({e.corr.task_id for e in run.llm_calls() if e.corr}) == 3
    with Cassette(path, "none") as s:
        assert asyncio.run(together(CLOSED_URL, prompts[::-1])) == [FINAL] * 3
    assert s.counters.served == 6 and not s.misses


def test_errors_and_retries_are_events(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    with ScriptedServer(fail_first(1, weather_policy())) as srv, Cassette(path, "once"):
        client = openai.OpenAI(base_url=srv.base_url, api_key="sk-test", max_retries=1)
        client.with_options(timeout=10).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}])
    run = Run.load(path)
    errors = [e for e in run.events if isinstance(e, ErrorEvent)]
    assert len(errors) == 1 and errors[0].status_code == 500 and errors[0].retryable and errors[0].attempt == 1
    call = next(e for e in run.events if isinstance(e, LLMCallEvent))
    assert call.attempt == 2 and call.request.context.base == errors[0].id


def test_python_api_record_and_serve(tmp_path: Path, store_dir: Path) -> None:
    with ScriptedServer(weather_policy()) as srv, replaykit.record("weather-run") as rec:
        assert chat_agent(srv.base_url) == FINAL
    assert rec.recorder is not None and rec.recorder.run_id == "weather-run"
    assert (store_dir / "runs").exists() or any(store_dir.rglob("weather-run.jsonl"))
    with replaykit.serve("weather-run") as s:
        assert chat_agent(CLOSED_URL) == FINAL
    assert s.counters.served == 2 and s.counters.provider_calls == 0
    with pytest.raises(CassetteMiss, match="nearest recorded step"), replaykit.serve("weather-run"):
        try:
            chat_agent(CLOSED_URL, prompt="something else")
        except openai.BadRequestError:
            pass
    with pytest.raises(BadInput, match="already exists"), replaykit.record("weather-run"):
        pass


def test_recording_of_a_failing_block_is_kept_and_marked(tmp_path: Path) -> None:
    path = tmp_path / "failed.jsonl"
    with ScriptedServer(weather_policy()) as srv, pytest.raises(RuntimeError):
        with replaykit.record(path=path):
            chat_agent(srv.base_url)
            raise RuntimeError("the agent crashed after its run")
    run = Run.load(path)
    assert run.status == "failed" and len(run.llm_calls()) == 2


def test_cassette_never_truncated_by_a_failing_block(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    with ScriptedServer(weather_policy()) as srv:
        with Cassette(path, "once"):
            chat_agent(srv.base_url)
        before = path.read_bytes()
        with pytest.raises(RuntimeError), Cassette(path, "all"):
            chat_agent(srv.base_url, prompt="half a new recording")
            raise RuntimeError("test failed")
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl"]  # no temp file left behind


def test_bad_cassettes_and_modes_are_one_line_errors(tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    with ScriptedServer(weather_policy()) as srv, Cassette(good, "once"):
        chat_agent(srv.base_url)
    newer = tmp_path / "newer.jsonl"
    header, *rest = lines(good)
    newer.write_bytes(re.sub(rb'"schema_version":\d+', b'"schema_version":99', header) + b"".join(rest))
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(header + b"{not json\n" + b"".join(rest))
    cases = [(newer, "none", "schema version 99"), (damaged, "none", "damaged cassette"),
             (good, "nonee", "unknown replaykit record mode 'nonee'"),
             (tmp_path / "missing.jsonl", "none", "record it with --replaykit-record-mode=once")]
    for path, mode, expected in cases:
        with pytest.raises(BadInput) as info:
            Cassette(path, mode, label="t").start()
        text = str(info.value)
        assert expected in text and "\n" not in text, text
        if mode != "nonee":
            assert str(path) in text and "--replaykit-record-mode" in text


def test_recorded_run_replays_and_validates(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    with ScriptedServer(weather_policy()) as srv, Cassette(path, "once"):
        chat_agent(srv.base_url, stream=True)
    code, out, _ = cli("validate", str(path), "--json")
    assert code == 0 and json.loads(out)["valid"]
    code, out, _ = cli("replay", str(path), "--json")
    doc = json.loads(out)
    assert code == 0 and doc["counters"]["provider_calls"] == 0 and doc["counters"]["tool_executions"] == 0


@pytest.mark.parametrize("engine", ["openai", "pydantic-ai", "langgraph"])
def test_cassette_plays_on_every_engine(tmp_path: Path, engine: str) -> None:
    pytest.importorskip({"openai": "openai", "pydantic-ai": "pydantic_ai", "langgraph": "langgraph"}[engine])
    path = tmp_path / "c.jsonl"
    with ScriptedServer(weather_policy()) as srv, Cassette(path, "once"):
        chat_agent(srv.base_url)
    store = tmp_path / "store2"
    with ScriptedServer(weather_policy("Played answer.")) as srv:
        code, out, err = cli("play", str(path), "--engine", engine, "--base-url", srv.base_url, "--model",
                             "candidate", "--store", str(store), "--at", "2", "--json")
        sent = len(srv.llm_requests)
    assert code == 0, err
    played = json.loads(out)
    assert sent == 1  # steps 0-1 served from the cassette, step 2 live
    new = Run.load(next(store.rglob(f"{played['run_id']}.jsonl")))
    assert new.final_answer == "Played answer." and new.header.lineage is not None


@pytest.mark.parametrize("recorded_stream", [False, True])
def test_served_in_the_shape_the_client_asks_for(tmp_path: Path, recorded_stream: bool) -> None:
    path = tmp_path / "c.jsonl"
    with ScriptedServer(weather_policy()) as srv, Cassette(path, "once"):
        chat_agent(srv.base_url, stream=recorded_stream)
    with Cassette(path, "none") as served:  # parameters are not compared: the other shape is rendered
        assert chat_agent(CLOSED_URL, stream=not recorded_stream) == FINAL
    assert served.counters.served == 2


def test_transport_wired_by_hand(tmp_path: Path) -> None:
    """No patching: one client built with ``RecordingTransport`` records into a Recorder of its own."""
    from replaykit.adapters.openai import RecordingTransport, active_session, recording_session
    from replaykit.core.trace.ir import RunHeader
    from replaykit.core.trace.recorder import Recorder
    from replaykit.core.trace.store import RunWriter

    package = "httpx2" if int(openai.__version__.split(".")[0]) >= 3 else "httpx"
    http = pytest.importorskip(package)
    header = RunHeader(run_id="by-hand", created_at="2026-12-01T00:00:00Z")
    recorder = Recorder(header, RunWriter(tmp_path / "by-hand.jsonl", header))
    session = recording_session(recorder)
    with ScriptedServer(weather_policy()) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="sk-test", max_retries=0,
                               http_client=http.Client(transport=RecordingTransport(session, package=package)))
        reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    recorder.close()
    assert active_session() is None and reply.choices[0].message.content == FINAL
    run = Run.load(tmp_path / "by-hand.jsonl")
    assert [s.kind for s in run.steps] == ["llm"] and run.llm_calls()[0].response.message.text == FINAL


def test_torn_cassette_serves_but_refuses_appends(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    with ScriptedServer(weather_policy()) as srv, Cassette(path, "once"):
        chat_agent(srv.base_url)
    with path.open("ab") as fh:
        fh.write(b'{"seq": 99, "kind": "llm_ca')  # a crash in the middle of a write
    before = path.read_bytes()
    with Cassette(path, "none"):
        assert chat_agent(CLOSED_URL) == FINAL  # every complete event is still there
    with pytest.raises(BadInput, match="torn line"):
        Cassette(path, "new_episodes").start()
    assert path.read_bytes() == before


def test_identical_requests_of_two_tasks_keep_their_own_answers(tmp_path: Path) -> None:
    """Two threads send the same request twice, interleaved, and got different answers: replayed one
    thread after the other, each still gets its own recorded answers (matched per task, not by order)."""
    import threading

    from replaykit.testing.scripted_server import ReplyList, text

    def ask(url: str) -> str:
        client = openai.OpenAI(base_url=url, api_key="sk-test", max_retries=0)
        reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        return reply.choices[0].message.content or ""

    path = tmp_path / "c.jsonl"
    got: dict[str, list[str]] = {"x": [], "y": []}
    turns = [threading.Event() for _ in range(4)]

    def worker(name: str, mine: list[int], url: str) -> None:
        for i in mine:  # x asks 1st and 3rd, y 2nd and 4th
            if i:
                turns[i - 1].wait(10)
            got[name].append(ask(url))
            turns[i].set()

    with ScriptedServer(ReplyList([text(a) for a in "ABCD"])) as srv, Cassette(path, "once"):
        threads = [threading.Thread(target=worker, args=("x", [0, 2], srv.base_url)),
                   threading.Thread(target=worker, args=("y", [1, 3], srv.base_url))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(20)
    assert got == {"x": ["A", "C"], "y": ["B", "D"]}

    replayed: dict[str, list[str]] = {}
    with Cassette(path, "none"):
        for name in ("x", "y"):  # one after the other this time, each on its own thread
            thread = threading.Thread(target=lambda n=name: replayed.setdefault(n, [ask(CLOSED_URL),
                                                                                  ask(CLOSED_URL)]))
            thread.start()
            thread.join(20)
    assert replayed == {"x": ["A", "C"], "y": ["B", "D"]}
