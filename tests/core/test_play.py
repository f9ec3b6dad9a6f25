"""PlayOptions / start_play: credentials never stored, lineage of the new run, cut validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from replaykit.core.errors import BadInput
from replaykit.core.replay.branch import branch
from replaykit.core.replay.play import PlayOptions, lineage_chain, start_play
from replaykit.core.trace.store import RunStore
from replaykit.testing.engine_runs import record_sample_run


def test_safe_base_url_and_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    options = PlayOptions(base_url="https://user:s3cret@example.test:8443/v1?key=abc", model="m", api_key_env="RK_KEY")
    assert options.safe_base_url() == "https://example.test:8443/v1"
    monkeypatch.delenv("RK_KEY", raising=False)
    with pytest.raises(BadInput, match="RK_KEY"):
        options.api_key()
    monkeypatch.setenv("RK_KEY", "sk-live")
    assert options.api_key() == "sk-live"
    assert PlayOptions(base_url="http://x/v1", model="m").api_key() is None
    with pytest.raises(BadInput, match="http"):
        PlayOptions(base_url="file:///etc/passwd", model="m").safe_base_url()


def test_start_play_header_and_cut(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    parent = store.load(record_sample_run(store, "p"))
    child = branch(store, parent, 4, result="ok")
    assert [r.run_id for r in lineage_chain(store, child)] == ["p"]
    session = start_play(child, PlayOptions(base_url="http://u:pw@127.0.0.1:9/v1", model="cand", store=store),
                         engine="test")
    header = session.recorder.header
    assert header.lineage.relation == "play" and header.lineage.parent_run_id == child.run_id
    assert header.lineage.engine == "test" and header.lineage.details["live_from"] == 5
    assert header.base_url == "http://127.0.0.1:9/v1" and header.model == "cand"
    assert session.cursor.cut == 5 and [r.run_id for r in session.cursor.reference] == [child.run_id, "p"]
    result = session.finish("done")
    assert result.status == "completed" and result.cut == 5
    text = store.path_for(result.run_id).read_text()
    assert "pw@" not in text
    with pytest.raises(BadInput, match="out of range"):
        start_play(parent, PlayOptions(base_url="http://127.0.0.1:9/v1", model="m", store=store, cut=99), engine="test")
