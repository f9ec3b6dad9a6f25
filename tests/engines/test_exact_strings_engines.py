"""The live path of every engine sends any string JSON can carry exactly (one live model in core:
``core/replay/live_model.py``), here through the openai engine against the scripted server on 127.0.0.1,
and the played run stores what came back exactly."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from replaykit.core.replay.play import PlayOptions
from replaykit.core.trace.store import RunStore
from replaykit.testing.json_strings import slot_strings, strings_run
from replaykit.testing.script import ReplyList, text
from replaykit.testing.scripted_server import ScriptedServer

pytest.importorskip("openai")


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(slots=slot_strings())
def test_live_requests_and_answers_keep_every_string(tmp_path_factory: pytest.TempPathFactory,
                                                     slots: dict[str, str]) -> None:
    from replaykit.engines.openai import play

    store = RunStore(tmp_path_factory.mktemp("s"))
    run = strings_run(slots)
    store.write_run(run.header, run.events)
    run = store.load(run.run_id)
    answers = [slots["answer"] or "x", slots["result"] or "y", "z"]
    with ScriptedServer(ReplyList([text(a) for a in answers])) as srv:
        result = play(run, PlayOptions(base_url=srv.base_url, model="m", store=store, cut=0, stale_timeout=5.0))
        sent = [r.body["messages"] for r in srv.llm_requests]
    assert sent[0] == [{"role": "system", "content": slots["system"]}, {"role": "user", "content": slots["user"]}]
    assert sent[1][-1] == {"role": "user", "content": slots["user2"]}  # the empty turn too
    played = store.load(result.run_id)
    assert [c.response.message.text for c in played.llm_calls()] == answers[:2]
