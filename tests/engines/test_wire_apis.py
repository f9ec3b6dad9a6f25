"""Live plays on every wire API (--api), driven through the real openai and anthropic SDKs against a
scripted server on 127.0.0.1 that checks each request against its API's rules (strict: a broken rule is
a 400, as from the provider): every Hermes fixture played from step 0 and from a middle step, the
served prefix, the live continuation and its translation losses in the play's trace, diff against the
original."""

from __future__ import annotations

from pathlib import Path

import pytest

from replaykit.core.analysis.diff import diff_runs
from replaykit.core.replay.play import PlayOptions
from replaykit.core.trace.ir import Provenance
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.engines import play
from replaykit.testing.script import hermes_default_policy
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


@pytest.mark.parametrize("api", LIVE_APIS)
@pytest.mark.parametrize("where", ["start", "middle"])
@pytest.mark.parametrize("name", HERMES)
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
