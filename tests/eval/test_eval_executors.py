"""The same verdicts, counts, first divergences and totals on a local Ray and a Dask LocalCluster as with
one local worker (everything but the report's execution section)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from replaykit.eval import evaluate
from replaykit.testing.eval_candidate import mirror_policy
from replaykit.testing.scripted_server import ScriptedServer

from .corpus import FAST, Corpus, build, observed
from .test_eval_corpus import _ports_masked

pytest.importorskip("openai")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    return build(tmp_path_factory.mktemp("evalexec") / "store", 14, hermes=False)


def _stable(corpus: Corpus, out: Path, **kw: Any) -> dict[str, Any]:
    with ScriptedServer(mirror_policy(corpus.runs, corpus.plants)) as srv:
        report = evaluate(all_runs=True, engine="openai", base_url=srv.base_url, model="candidate", out=out,
                          store=corpus.store, stale_timeout=0.5, play_extra=FAST, **kw).to_json()
    assert report["execution"]["executor"] == kw.get("cluster", "local")
    report["candidate"].pop("base_url")  # each eval here has its own scripted server (and port)
    return {k: v for k, v in report.items() if k != "execution"}


@pytest.mark.slow
@pytest.mark.single_env
@pytest.mark.parametrize("cluster, module", [("ray", "ray"), ("dask", "distributed")])
def test_cluster_executors_report_the_same(corpus: Corpus, tmp_path: Path, cluster: str, module: str) -> None:
    pytest.importorskip(module)
    local = _stable(corpus, tmp_path / "local", workers=1)
    assert {r["verdict"] for r in local["runs"]} >= {"same", "failed", "regressed", "changed"}
    on_cluster = _stable(corpus, tmp_path / cluster, cluster=cluster, workers=2)
    assert _ports_masked(on_cluster) == _ports_masked(local)  # each eval had its own server
    assert observed({"runs": on_cluster["runs"]}).keys() == corpus.expected.keys()
