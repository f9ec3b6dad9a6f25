"""The viewer's step page of a live step played on another API shows where it went and what did not cross."""

from __future__ import annotations

import html
import urllib.request
from pathlib import Path

import pytest

from replaykit.core.replay.play import PlayOptions
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.engines import play
from replaykit.testing.script import hermes_default_policy
from replaykit.testing.scripted_server import ScriptedServer

pytest.importorskip("starlette")
pytest.importorskip("jinja2")
pytest.importorskip("openai")

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "hermes" / "codex_responses.jsonl"


def test_step_page_lists_the_translation_losses(tmp_path: Path) -> None:
    from replaykit.viewer.server import ViewerServer

    store = RunStore(tmp_path / "store")
    run = Run.load(FIXTURE)
    with ScriptedServer(hermes_default_policy(), strict=True) as srv:
        result = play(run, "openai", PlayOptions(base_url=srv.base_url, model="candidate", api="openai-chat",
                                                 store=store, cut=0, stale_timeout=5.0))
    played = store.load(result.run_id)
    losses = played.llm_calls()[0].request.provider_details["replaykit"]["wire"]["losses"]
    with ViewerServer(store) as server:
        url = server.origin + server.viewer.url(f"/run/{result.run_id}/step/0")
        with urllib.request.urlopen(url, timeout=60) as response:
            page = html.unescape(response.read().decode())
    assert "sent live on openai-chat, translated from the recording's openai-responses" in page
    assert all(f"lost in translation: {loss}" in page for loss in losses) and losses
