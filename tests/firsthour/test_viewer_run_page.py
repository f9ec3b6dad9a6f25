"""Issue 28, item 10: the viewer's run page carries what the static report has (health, cost, graph), a
failed run is a banner and a red status, a play shows its endpoint and model, the play form starts from
the last endpoint and model, a step's request is folded under its response, usage reads as a line, and a
tool step recorded without a duration says how long it took."""

from __future__ import annotations

import re
import urllib.request

import pytest

from replaykit.core.trace.ir import LLMResponse, Message, TextPart, ToolCallPart, Usage
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.store import RunStore

pytest.importorskip("starlette")
pytest.importorskip("jinja2")
from replaykit.viewer.app import usage_line
from replaykit.viewer.server import ViewerServer


def _get(server: ViewerServer, path: str) -> str:
    with urllib.request.urlopen(server.origin + server.viewer.url(path), timeout=20) as response:
        return str(response.read().decode())


def _record(store: RunStore, run_id: str, *, failed: bool, base_url: str | None = None) -> None:
    from replaykit.core.trace.ir import RunHeader

    header = RunHeader(run_id=run_id, created_at="2026-12-03T10:00:00Z", model="m", base_url=base_url,
                       provider="local" if base_url else None)
    clock = iter([0.0, 0.0, 1.0, 1.0, 1.4, 1.5, 2.0, 2.0, 2.1, 2.2, 2.3, 2.4, 2.5])
    rec = Recorder(header, store.create(header), clock=lambda: next(clock))
    user = Message(role="user", parts=[TextPart(text="Weather in Paris?")])
    ask = Message(role="assistant", parts=[ToolCallPart(id="c1", name="get_weather", arguments={"city": "Paris"})])
    event = rec.llm_call([user], LLMResponse(message=ask, finish_reason="tool_calls",
                                             usage=Usage(input_tokens=251, output_tokens=10)), duration=0.2)
    rec.tool_call("c1", "get_weather", {"city": "Paris"}, result="sunny", llm_call_id=event.id)
    rec.run_end(None if failed else "Sunny.", status="failed" if failed else "completed")
    rec.close()


def test_run_and_step_pages(store_dir) -> None:
    store = RunStore(store_dir)
    _record(store, "broken", failed=True)
    _record(store, "played", failed=False, base_url="http://127.0.0.1:8000/v1")
    with ViewerServer(store) as server:
        page = _get(server, "/run/broken")
        assert 'id="failure-banner"' in page and 'class="status-failed bad-text"' in page
        assert 'id="health"' in page and "/100" in page and "<svg" in page and "<b>cost</b>" in page
        played = _get(server, "/run/played")
        assert "failure-banner" not in played and "http://127.0.0.1:8000/v1" in played
        assert 'name="base_url" size="34" placeholder="http://127.0.0.1:8000/v1" value=""' in page
        step = _get(server, "/run/broken/step/0")
        assert re.search(r'<details id="request">', step) and step.index("<h2>Response</h2>") < step.index(
            "<h2>Request</h2>")
        assert "251 in + 10 out = 261 tokens" in step and "input_tokens=" not in step
        tool = _get(server, "/run/broken/step/1")
        duration = re.search(r'<span id="duration">([^<]*)</span>', tool)
        assert duration is not None and "?" not in duration.group(1) and " s" in duration.group(1), duration
        # the last play form submitted here pre-fills the next one
        server.viewer._last_play = {"engine": "openai", "base_url": "http://127.0.0.1:9999/v1", "model": "mine",
                                    "api_key_env": "MY_KEY"}
        again = _get(server, "/run/broken")
        assert 'value="http://127.0.0.1:9999/v1"' in again and 'value="mine"' in again and 'value="MY_KEY"' in again


def test_a_play_prefills_from_its_own_endpoint(store_dir) -> None:
    from replaykit.core.trace.ir import Lineage

    store = RunStore(store_dir)
    _record(store, "orig", failed=False)
    run = store.load("orig")
    header = run.header.model_copy(update={"run_id": "orig-play", "base_url": "http://127.0.0.1:7/v1",
                                           "model": "their-model",
                                           "lineage": Lineage(relation="play", parent_run_id="orig", engine="openai")})
    store.write_run(header, run.events)
    with ViewerServer(store) as server:
        page = _get(server, "/run/orig")
        assert 'value="http://127.0.0.1:7/v1"' in page and 'value="their-model"' in page


def test_usage_line() -> None:
    assert usage_line({"input_tokens": 1200, "output_tokens": 30, "cache_read_tokens": 1024}) == \
        "1200 in + 30 out = 1,230 tokens (cache read 1,024)"
    assert usage_line({}) == ""
