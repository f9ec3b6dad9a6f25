"""Live plays on every wire API (--api), driven through the real openai and anthropic SDKs against a
scripted server on 127.0.0.1 that checks each request against its API's rules (strict: a broken rule is
a 400, as from the provider): every Hermes fixture played from step 0 and from a middle step, the
served prefix, the live continuation and its translation losses in the play's trace, diff against the
original."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replaykit.core.analysis.diff import diff_runs
from replaykit.core.replay import resilience
from replaykit.core.replay.play import PlayOptions
from replaykit.core.trace.ir import Provenance
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.engines import play
from replaykit.testing.script import ReplyList, fail_first, fault, hermes_default_policy, text
from replaykit.testing.scripted_server import ScriptedServer
from tests.engines._wire_matrix import LIVE_APIS, ROUTE, base_url, fast

pytest.importorskip("openai")
pytest.importorskip("anthropic")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hermes"
HERMES = sorted(p.stem for p in FIXTURES.glob("*.jsonl") if not p.stem.endswith(".child"))


def _wire(event: object) -> dict:
    details = getattr(getattr(event, "request", None), "provider_details", None) or {}
    return details.get("replaykit", {}).get("wire", {})


def _play(run: Run, api: str, store: RunStore, cut: int, srv: ScriptedServer, engine: str = "openai") -> Run:
    options = PlayOptions(base_url=base_url(srv, api), model="candidate", api=api, store=store, cut=cut,
                          stale_timeout=5.0, extra=fast())
    result = play(run, engine, options)
    assert result.status == "completed", result.error
    return store.load(result.run_id)


QUICK = {"tools_sequence", "anthropic_messages", "codex_responses"}  # the rest of the matrix is marked slow


def _cells(names: list[str], quick: set[str]) -> list[object]:
    return [pytest.param(n, api, where, id=f"{n}-{api}-{where}",
                         marks=() if n in quick else pytest.mark.slow)
            for n in names for api in LIVE_APIS for where in ("start", "middle")]


@pytest.mark.parametrize(("name", "api", "where"), _cells(HERMES, QUICK))
def test_every_hermes_fixture_plays_on_every_api(name: str, api: str, where: str, tmp_path: Path) -> None:
    run = Run.load(FIXTURES / f"{name}.jsonl")
    cut = 0 if where == "start" else len(run.steps) // 2
    store = RunStore(tmp_path / "store")
    with ScriptedServer(hermes_default_policy(), strict=True) as srv:
        played = _play(run, api, store, cut, srv)
        requests = srv.llm_requests
    assert srv.violations == []
    assert requests and {r.api for r in requests} == {ROUTE[api]}
    # the served prefix: the record's steps before the cut, none sent
    assert [s.event.provenance for s in played.steps[:cut]] == [Provenance.SERVED] * cut
    live = [e for e in played.llm_calls() if e.provenance == Provenance.LIVE]
    assert len(live) == len(requests)
    recorded_api = run.llm_calls()[0].request.api
    for event in live:
        wire = _wire(event)
        assert event.request.api == api and wire["api"] == api
        assert wire.get("from") == (None if recorded_api == api else recorded_api)
    # diff against the original works and counts the losses
    report = diff_runs(run, played)
    assert report.losses == sum(len(_wire(e).get("losses", [])) for e in live)


# ------------------------------------------------------------------------------------- resilience

FAULTS = [("429", "rate_limit"), ("500", "server"), ("529", "server"), ("stall", "stale"),
          ("stream_error", "server")]


@pytest.mark.parametrize("api", LIVE_APIS)
@pytest.mark.parametrize(("kind", "classified"), FAULTS, ids=[f for f, _ in FAULTS])
def test_faults_are_retried_on_every_api(api: str, kind: str, classified: str, tmp_path: Path) -> None:
    """429 (Retry-After), 5xx, Anthropic's 529 overloaded, a stalled stream, an error event inside a 200
    stream: classified, recorded as an error event, retried, and the play completes."""
    run = Run.load(FIXTURES / "tools_sequence.jsonl")
    store = RunStore(tmp_path / "store")
    policy = fail_first(1, hermes_default_policy(), kind, retry_after=0.05, stall_seconds=3, stall_after_chunks=2)
    with ScriptedServer(policy, strict=True) as srv:
        options = PlayOptions(base_url=base_url(srv, api), model="candidate", api=api, store=store, cut=0,
                              stale_timeout=1.0, extra=fast())
        result = play(run, "openai", options)
        sent = len(srv.llm_requests)
    assert result.status == "completed" and srv.violations == []
    assert result.counters.provider_calls == sent == result.counters.live_llm_steps + 1
    played = store.load(result.run_id)
    errors = [e for e in played.events if e.kind == "error"]
    assert len(errors) == 1 and errors[0].error_type == classified and errors[0].retryable


@pytest.mark.parametrize("api", LIVE_APIS)
def test_a_length_cut_answer_is_continued_on_every_api(api: str, tmp_path: Path) -> None:
    run = Run.load(FIXTURES / "two_turns.jsonl")
    store = RunStore(tmp_path / "store")
    replies = ReplyList([fault("length"), text("and the rest.")], then=hermes_default_policy())
    with ScriptedServer(replies, strict=True) as srv:
        options = PlayOptions(base_url=base_url(srv, api), model="candidate", api=api, store=store, cut=0,
                              stale_timeout=5.0, extra=fast())
        result = play(run, "openai", options)
        bodies = [r.body for r in srv.llm_requests]
    assert result.status == "completed" and srv.violations == []
    first = store.load(result.run_id).llm_calls()[0]
    assert first.response.provider_details["replaykit"]["continuations"] == 1
    assert first.response.message.text.endswith("and the rest.")
    # the continuation request carries the cut answer and the prompt to go on
    assert resilience.CONTINUE_PROMPT in json.dumps(bodies[1])


# ------------------------------------------------------------------------ every engine, one live model

@pytest.mark.parametrize("engine", ["pydantic-ai", "langgraph"])
@pytest.mark.parametrize("api", ["openai-responses", "anthropic-messages"])
def test_every_engine_goes_live_through_the_one_live_model(engine: str, api: str, tmp_path: Path) -> None:
    pytest.importorskip("pydantic_ai" if engine == "pydantic-ai" else "langgraph")
    run = Run.load(FIXTURES / "tools_sequence.jsonl")
    store = RunStore(tmp_path / "store")
    with ScriptedServer(hermes_default_policy(), strict=True) as srv:
        played = _play(run, api, store, 2, srv, engine=engine)
        requests = srv.llm_requests
    assert srv.violations == [] and requests and {r.api for r in requests} == {ROUTE[api]}
    live = [e for e in played.llm_calls() if e.provenance == Provenance.LIVE]
    assert len(live) == len(requests)
    assert all(e.request.api == api and _wire(e)["from"] == "openai-chat" for e in live)


@pytest.mark.hermes
@pytest.mark.slow
@pytest.mark.parametrize(("name", "api", "cut"), [
    ("tools_sequence", "anthropic-messages", 2), ("codex_responses", "anthropic-messages", 0),
    ("anthropic_messages", "openai-responses", 2), ("anthropic_messages", "openai-chat", 0)])
def test_hermes_plays_on_another_api_in_its_own_api_mode(name: str, api: str, cut: int, tmp_path: Path) -> None:
    """--engine hermes has its own provider client: --api picks its api mode, and the step says so."""
    from replaykit.testing.hermes_harness import HermesSandbox

    sandbox = HermesSandbox(tmp_path, plugin="entrypoint")
    store = RunStore(sandbox.store)
    source = Run.load(FIXTURES / f"{name}.jsonl")
    store.write_run(source.header, list(source.events))
    run = store.load(source.run_id)
    with ScriptedServer(hermes_default_policy(), strict=True) as srv:
        options = PlayOptions(base_url=srv.base_url, model="candidate", api=api, store=store, cut=cut,
                              extra={"env": sandbox.env, "cwd": str(sandbox.cwd), "timeout": 300})
        result = play(run, "hermes", options)
        requests = srv.llm_requests
    assert result.status == "completed" and srv.violations == []
    assert requests and {r.api for r in requests} == {ROUTE[api]}
    played = store.load(result.run_id)
    live = [e for e in played.llm_calls() if e.provenance == Provenance.LIVE]
    assert len(live) == len(requests) and all(e.request.api == api and _wire(e)["api"] == api for e in live)
    # the scripted model behaves as recorded on every API, and diff compares steps of different APIs in the
    # words they share (finish reasons): the same behaviour on another API is no difference. Tools run live
    # here: on Hermes 0.22 its todo tool answers in a richer shape than the 0.19.0 recording holds.
    from tests.adapters.hermes.helpers import hermes_release

    first = diff_runs(run, played).first
    assert first is None or (hermes_release() >= (0, 22) and first.cause == "tool_result"), first


def test_hermes_refuses_an_api_it_cannot_speak(tmp_path: Path) -> None:
    from replaykit.core.errors import BadInput
    from replaykit.engines.hermes.engine import build_spec

    run = Run.load(FIXTURES / "tools_sequence.jsonl")
    options = PlayOptions(base_url="http://127.0.0.1:9/v1", model="m", api="google-gemini",
                          store=RunStore(tmp_path))
    with pytest.raises(BadInput, match="--engine hermes speaks openai-chat, openai-responses, anthropic-messages"):
        build_spec(run, options, tmp_path / "x.jsonl")


# -------------------------------------------------------------------------------- same API: verbatim

@pytest.mark.parametrize("name", ["anthropic_messages", "codex_responses", "parallel_tools", "two_turns"])
def test_a_same_api_play_sends_the_recorded_request_verbatim(name: str, tmp_path: Path) -> None:
    """Played on the API it was recorded on, from an LLM step in the middle: the first live request carries
    the recorded parameters and tools verbatim (but the model and the streaming flags) and the recorded
    conversation (the engine's loop rebuilds it from the recorded answers), and nothing is translated."""
    from replaykit.core.trace.canonical import canonical_json
    from replaykit.core.trace.codecs import decode_request, encode_llm_request
    from tests.conformance._matrix import conversation

    run = Run.load(FIXTURES / f"{name}.jsonl")
    api = run.llm_calls()[0].request.api
    calls = [s for s in run.steps if s.kind == "llm"]
    step = calls[len(calls) // 2]
    recorded = step.event
    store = RunStore(tmp_path / "store")
    with ScriptedServer(hermes_default_policy(), strict=True) as srv:
        played = _play(run, api, store, step.index, srv)
        sent = srv.llm_requests[0].body
    expected = encode_llm_request(recorded.request, run.request_messages(recorded),
                                  run.request_tools(recorded.request)).body
    carried = {"messages", "input", "instructions", "system", "model", "stream", "stream_options"}
    assert canonical_json({k: v for k, v in sent.items() if k not in carried}) == \
        canonical_json({k: v for k, v in expected.items() if k not in carried})
    assert conversation(decode_request(api, sent).messages) == conversation(run.request_messages(recorded))
    live = [e for e in played.llm_calls() if e.provenance == Provenance.LIVE]
    assert _wire(live[0]) == {"api": api}  # nothing translated, nothing lost


@pytest.mark.parametrize("api", ["openai-responses", "anthropic-messages"])
def test_lone_surrogates_reach_every_api_exactly(api: str, tmp_path: Path) -> None:
    """JSON may carry a lone surrogate; the SDKs' UTF-8 encoders cannot: the transports write such a body
    ASCII-escaped themselves, on every API."""
    from replaykit.testing.json_strings import lone_surrogate, strings_run

    odd = "a" + lone_surrogate(0xD83D) + "b"
    slots = {slot: f"{slot} {odd}" for slot in
             ("title", "system", "user", "thinking_text", "arg_key", "arg_value", "result", "answer", "user2")}
    store = RunStore(tmp_path / "store")
    run = strings_run(slots)
    store.write_run(run.header, run.events)
    run = store.load(run.run_id)
    with ScriptedServer(ReplyList([text(odd), text(odd), text(odd)]), strict=True) as srv:
        result = play(run, "openai", PlayOptions(base_url=srv.base_url, model="m", api=api, store=store, cut=0,
                                                 stale_timeout=5.0))
        first = srv.llm_requests[0].body
    assert result.status == "completed" and srv.violations == []
    assert slots["user"] in json.dumps(first, ensure_ascii=False) and slots["system"] in json.dumps(first, ensure_ascii=False)
    played = store.load(result.run_id)
    assert played.llm_calls()[0].response.message.text == odd


# ------------------------------------------------------------------------- real-world recordings

def _realworld() -> list[tuple[str, Run]]:
    root = Path(__file__).resolve().parents[2]
    data = next((d / "shared" / "realworld" / "data" for d in root.parents
                 if (d / "shared" / "realworld" / "data" / "MANIFEST.json").is_file()), None)
    if data is None:
        return []
    from replaykit.adapters import import_file

    out = []
    for entry in json.loads((data / "MANIFEST.json").read_text(encoding="utf-8"))["files"]:
        if entry["expect"] != "import" or entry["kind"] not in ("openai-chat", "openai-responses", "anthropic"):
            continue
        imported = import_file(data / entry["path"], entry["format"])[0]
        run = Run(imported.header, imported.events)
        if any(c.response.message.tool_calls for c in run.llm_calls()):
            out.append((Path(entry["path"]).stem, run))
    return out


REALWORLD = _realworld()


REALWORLD_QUICK = {"pydantic-ai-test_multiple_agent_tool_calls", "pydantic-ai-test_anthropic_tool_with_thinking",
                   "openinference-agent-framework-test_multiple_tools", "openinference-openai-test_tool_calls"}


@pytest.mark.skipif(not REALWORLD, reason="the real-world corpus is not beside this checkout")
@pytest.mark.parametrize(("name", "api", "where"), _cells([n for n, _ in REALWORLD], REALWORLD_QUICK))
def test_real_world_recordings_with_tool_calls_play_on_every_api(name: str, api: str, where: str,
                                                                 tmp_path: Path) -> None:
    """Provider logs other projects recorded (Chat, Responses, Anthropic): played live on each API from
    step 0 and from the middle, every request legal for its API; a request no API can express (a log whose
    first call was sent nothing but a system prompt) is a one-line error naming the step, nothing sent."""
    from replaykit.core.errors import BadInput

    run = dict(REALWORLD)[name]
    cut = 0 if where == "start" else len(run.steps) // 2
    store = RunStore(tmp_path / "store")
    with ScriptedServer(hermes_default_policy(), strict=True) as srv:
        options = PlayOptions(base_url=srv.base_url, model="candidate", api=api, store=store, cut=cut,
                              stale_timeout=5.0, max_attempts=1, extra=fast())
        try:
            result = play(run, "openai", options)
        except BadInput as exc:
            assert "the recorded request holds no message but a system prompt" in str(exc)
            assert srv.llm_requests == []
            return
        requests = srv.llm_requests
    assert result.status == "completed" and srv.violations == [] and requests
    played = store.load(result.run_id)
    live = [e for e in played.llm_calls() if e.provenance == Provenance.LIVE]
    assert len(live) == len(requests) and all(_wire(e)["api"] == api for e in live)
    diff_runs(run, played)


def test_a_pointer_to_the_providers_stored_conversation_is_not_sent(tmp_path: Path) -> None:
    """A Responses recording's previous_response_id names a conversation stored at the original provider;
    a play sends the whole history, so the pointer is dropped, and the step says so."""
    from replaykit.core.replay.live_model import LiveModel
    from replaykit.core.trace.ir import Message, TextPart

    options = PlayOptions(base_url="http://127.0.0.1:9/v1", model="m", api="openai-responses",
                          store=RunStore(tmp_path))
    model = LiveModel(options, source_api="openai-responses")
    body, sent = model.encode([Message(role="user", parts=[TextPart(text="hi")])], None,
                              {"previous_response_id": "resp_1", "store": False})
    assert "previous_response_id" not in body and body["store"] is False
    assert sent.losses == ["parameter 'previous_response_id' dropped (the play sends the whole history, not a "
                           "pointer to the provider's stored conversation)"]
