"""Streams served back chunk for chunk: for each API, the real SDK's stream iterator sees the same events,
in the same order, from the cassette (server stopped) as it saw from the provider when recording.

Every delta is compared (tool-call argument fragments, reasoning deltas, usage in the last chunk), not
only the assembled answer. A run recorded without boundaries keeps the old behaviour (one delta holding
the whole text), and ``stream_timing="recorded"`` paces the frames as they arrived.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import replaykit
from replaykit.adapters.cassette import Cassette
from replaykit.core.trace.codecs import frames
from replaykit.core.trace.run import Run
from replaykit.testing.scripted_server import Reply, ScriptedServer, ToolCall

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")

CLOSED = "http://127.0.0.1:9"  # nothing listens: a request that left the process would fail
ARGS = {"city": "Paris", "units": "metric", "days": 3}
TOOL = {"type": "object", "properties": {"city": {"type": "string"}, "units": {"type": "string"},
                                         "days": {"type": "integer"}}}


def _reply(gap: float = 0.0) -> Reply:
    return Reply(text="Let me look that up.", reasoning="The user wants a forecast; call the tool.",
                 tool_calls=(ToolCall("forecast", ARGS),), frame_gap=gap)


def chat_events(root: str) -> list[dict[str, Any]]:
    client = openai.OpenAI(base_url=f"{root}/v1", api_key="sk-test", max_retries=0)
    stream = client.chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": "Forecast for Paris?"}], stream=True,
        stream_options={"include_usage": True},
        tools=[{"type": "function", "function": {"name": "forecast", "parameters": TOOL}}])
    return [chunk.to_dict() for chunk in stream]


def responses_events(root: str) -> list[dict[str, Any]]:
    client = openai.OpenAI(base_url=f"{root}/v1", api_key="sk-test", max_retries=0)
    stream = client.responses.create(model="gpt-test", input="Forecast for Paris?", stream=True,
                                     tools=[{"type": "function", "name": "forecast", "parameters": TOOL}])
    return [event.to_dict() for event in stream]


def anthropic_events(root: str) -> list[dict[str, Any]]:
    client = anthropic.Anthropic(base_url=root, api_key="sk-ant-test", max_retries=0)
    stream = client.messages.create(model="claude-test", max_tokens=512, stream=True,
                                    messages=[{"role": "user", "content": "Forecast for Paris?"}],
                                    tools=[{"name": "forecast", "input_schema": TOOL}])
    return [event.to_dict() for event in stream]


def _argument_fragments(api: str, events: list[dict[str, Any]]) -> list[str]:
    if api == "openai-chat":
        return [tc["function"]["arguments"] for e in events for c in e["choices"]
                for tc in (c["delta"].get("tool_calls") or []) if tc.get("function", {}).get("arguments")]
    if api == "openai-responses":
        return [e["delta"] for e in events if e["type"] == "response.function_call_arguments.delta"]
    return [e["delta"]["partial_json"] for e in events
            if e["type"] == "content_block_delta" and e["delta"]["type"] == "input_json_delta"]


def _reasoning_deltas(api: str, events: list[dict[str, Any]]) -> list[str]:
    if api == "openai-chat":
        # openai's ChoiceDelta keeps the provider's extra keys (reasoning_content) in to_dict()
        return [c["delta"]["reasoning_content"] for e in events for c in e["choices"]
                if c["delta"].get("reasoning_content")]
    if api == "openai-responses":
        return [e["delta"] for e in events if e["type"] == "response.reasoning_summary_text.delta"]
    return [e["delta"]["thinking"] for e in events
            if e["type"] == "content_block_delta" and e["delta"]["type"] == "thinking_delta"]


CLIENTS: dict[str, Callable[[str], list[dict[str, Any]]]] = {
    "openai-chat": chat_events, "openai-responses": responses_events, "anthropic-messages": anthropic_events}


def _record(tmp_path: Path, api: str, gap: float = 0.0) -> tuple[Path, list[dict[str, Any]]]:
    path = tmp_path / f"{api}.jsonl"
    with ScriptedServer(lambda req: _reply(gap)) as srv:
        root = srv.base_url.removesuffix("/v1")
        with Cassette(path, "once") as session:
            events = CLIENTS[api](root)
    assert session.counters.recorded == 1 and session.counters.provider_calls == 1
    return path, events


@pytest.mark.parametrize("api", sorted(CLIENTS))
def test_stream_served_equal_frame_for_frame(tmp_path: Path, api: str) -> None:
    path, recorded = _record(tmp_path, api)
    fragments = _argument_fragments(api, recorded)
    assert len(fragments) >= 2 and json.loads("".join(fragments)) == ARGS  # the provider split them
    assert len(_reasoning_deltas(api, recorded)) >= 2

    with Cassette(path, "none") as session:
        served = CLIENTS[api](CLOSED)
    assert session.counters.served == 1 and session.counters.provider_calls == 0
    assert len(served) == len(recorded)
    for n, (got, want) in enumerate(zip(served, recorded, strict=True)):
        assert got == want, f"frame {n} differs"
    assert _argument_fragments(api, served) == fragments
    if api == "openai-chat":  # usage rides on the last chunk, which carries no choice
        assert served[-1]["choices"] == [] and served[-1]["usage"] == recorded[-1]["usage"]


@pytest.mark.parametrize("api", sorted(CLIENTS))
def test_frames_are_stored_compactly_and_assemble_to_the_response(tmp_path: Path, api: str) -> None:
    path, recorded = _record(tmp_path, api)
    event = Run.load(path).llm_calls()[0]
    packed = event.response.provider_details["stream"]
    assert packed["api"] == api and len(packed["frames"]) == len(recorded)
    if api == "openai-chat":  # id, object, created, model: once, not on every chunk
        assert {"id", "object", "created", "model"} <= set(packed["common"])
        assert all("id" not in f for f in packed["frames"]) and packed["done"] is True
    else:
        assert packed["names"] == "type"
    if api == "openai-responses":  # sequence numbers and the early copies of the response are derived
        assert "seq" in packed and all("sequence_number" not in f for f in packed["frames"])
        assert packed["frames"][0]["response"].keys() == {"$patch"}
    stream = frames.recorded(event.response)
    assert stream is not None and frames.faithful(stream, event.response)


@pytest.mark.parametrize("api", sorted(CLIENTS))
def test_run_recorded_without_boundaries_is_served_as_before(tmp_path: Path, api: str) -> None:
    path, recorded = _record(tmp_path, api)
    legacy = tmp_path / "legacy.jsonl"
    out = []
    for line in path.read_text().splitlines():
        data = json.loads(line)
        if data.get("kind") == "llm_call":
            data["response"]["provider_details"].pop("stream")
        out.append(json.dumps(data))
    legacy.write_text("\n".join(out) + "\n")
    with Cassette(legacy, "none"):
        served = CLIENTS[api](CLOSED)
    single = _argument_fragments(api, served)
    assert len(single) == 1 and json.loads(single[0]) == ARGS  # the whole arguments in one delta
    assert len(served) < len(recorded)


def test_edited_answer_is_not_served_with_stale_frames(tmp_path: Path) -> None:
    """A response changed after recording (a branch, a hand edit) no longer matches its frames: the
    stream is synthesized from the response instead of sending the old text."""
    path, _ = _record(tmp_path, "openai-chat")
    run = Run.load(path)
    event = run.llm_calls()[0]
    edited = event.response.message.model_copy(update={"parts": [
        p.model_copy(update={"text": "Edited."}) if p.type == "text" else p for p in event.response.message.parts]})
    response = event.response.model_copy(update={"message": edited})
    stream = frames.recorded(response)
    assert stream is not None and not frames.faithful(stream, response)
    served = frames.for_serving("openai-chat", response, {"stream": True})
    text = "".join(c["delta"].get("content") or "" for p in served.payloads for c in p.get("choices", []))
    assert text == "Edited."


def test_recorded_timing_paces_frames_as_they_arrived(tmp_path: Path) -> None:
    path, recorded = _record(tmp_path, "anthropic-messages", gap=0.02)
    event = Run.load(path).llm_calls()[0]
    ms = event.response.provider_details["stream"]["ms"]
    assert ms == sorted(ms) and ms[-1] - ms[0] >= 20 * (len(ms) - 2)  # the server's gaps, as received
    start = time.monotonic()
    with replaykit.serve(path, stream_timing="recorded"):
        paced = anthropic_events(CLOSED)
    paced_seconds = time.monotonic() - start
    with replaykit.serve(path):  # fast (the default): every frame at once
        fast = anthropic_events(CLOSED)
    assert paced == fast == recorded
    assert paced_seconds >= (ms[-1] - ms[0]) / 1000


def test_recorded_timing_async_client(tmp_path: Path) -> None:
    import asyncio

    path, recorded = _record(tmp_path, "openai-chat", gap=0.01)

    async def read() -> list[dict[str, Any]]:
        client = openai.AsyncOpenAI(base_url=f"{CLOSED}/v1", api_key="sk-test", max_retries=0)
        stream = await client.chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "Forecast for Paris?"}], stream=True,
            stream_options={"include_usage": True},
            tools=[{"type": "function", "function": {"name": "forecast", "parameters": TOOL}}])
        return [chunk.to_dict() async for chunk in stream]

    with replaykit.serve(path, stream_timing="recorded"):
        served = asyncio.run(read())
    assert served == recorded


def test_unknown_stream_timing_is_one_line_bad_input(tmp_path: Path) -> None:
    from replaykit.core.errors import BadInput

    with pytest.raises(BadInput, match="unknown stream timing 'slow': use fast or recorded"):
        Cassette(tmp_path / "x.jsonl", "once", stream_timing="slow")


def test_redacted_run_keeps_no_frames(tmp_path: Path) -> None:
    """Frames cut the answer anywhere (an address split over two deltas escapes the detectors): a redacted
    run drops them, and its streams are served whole, redacted."""
    from replaykit.core.redaction import redact_run

    path = tmp_path / "pii.jsonl"
    secret = "write to jane.doe@example.com today"
    with ScriptedServer(lambda req: Reply(text=secret)) as srv, Cassette(path, "once"):
        events = chat_events(srv.base_url.removesuffix("/v1"))
    assert len([e for e in events if e["choices"] and e["choices"][0]["delta"].get("content")]) >= 2
    redacted = redact_run(Run.load(path))
    event = redacted.llm_calls()[0]
    assert "stream" not in (event.response.provider_details or {})
    from replaykit.core.trace import jsonsafe

    assert "jane.doe" not in json.dumps([jsonsafe.model_data(e) for e in redacted.events])
    assert "jane.doe" not in event.response.message.text
    with replaykit.serve(redacted):
        served = chat_events(CLOSED)
    text = "".join(c["delta"].get("content") or "" for e in served for c in e["choices"])
    assert text == event.response.message.text


def test_trace_with_frames_validates_and_keeps_its_schema_version(tmp_path: Path) -> None:
    """Frames are an optional key of ``provider_details``: no schema bump, so a reader of the same
    version loads the file (and one that does not know the key serves the assembled response)."""
    from replaykit.core.trace.store_index import SCHEMA_VERSION
    from tests.adapters.recorder_support import cli

    path, _ = _record(tmp_path, "openai-responses")
    assert json.loads(path.read_text().splitlines()[0])["schema_version"] == SCHEMA_VERSION
    code, _, err = cli("validate", str(path))
    assert code == 0, err
