"""The redact command end to end, through a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from replaykit.core.trace.store import RunStore
from replaykit.testing.sample_pii_run import build_support_run

ROOT = Path(__file__).resolve().parents[3]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "replaykit", *args], capture_output=True, text=True, env=env, timeout=120)


def test_redact_json_into_store_and_file(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "s")
    run = build_support_run("orig-1")
    store.write_run(run.header, run.events)
    proc = _cli("redact", "orig-1", "--mode", "patterns", "--json", "--store", str(store.root))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    new = store.load(doc["run_id"])
    assert new.header.lineage.parent_run_id == "orig-1"
    assert doc["placeholders"]["EMAIL_ADDRESS"] >= 1
    plain = _cli("redact", "orig-1", "--mode", "patterns", "--store", str(store.root))
    assert plain.returncode == 0 and store.exists(plain.stdout.strip())
    out = tmp_path / "out.jsonl"
    proc = _cli("redact", "orig-1", "-o", str(out), "--store", str(store.root), "--mode", "ner")
    assert proc.returncode == 0, proc.stderr
    assert "John Smith" not in out.read_text() and "<PERSON_1>" in out.read_text()


def test_redact_bad_input_is_one_line_exit_2(tmp_path: Path) -> None:
    proc = _cli("redact", "no-such-run", "--store", str(tmp_path))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    proc = _cli("redact", "x", "--mode", "bogus", "--store", str(tmp_path))
    assert proc.returncode == 2


def test_redact_several_runs_in_parallel(tmp_path: Path) -> None:
    from replaykit.core.redaction import redact_corpus

    store = RunStore(tmp_path / "s")
    paths = []
    for i in range(3):
        run = build_support_run(f"r{i}", user=f"I am Ann Lee, mail ann{i}@example.com")
        paths.append(store.write_run(run.header, run.events))
    results = redact_corpus(paths, store.root, "patterns", workers=2, progress=False)
    assert [r.source_run_id for r in results] == ["r0", "r1", "r2"]
    for i, r in enumerate(results):
        text = Path(r.path).read_text()
        assert f"ann{i}@example.com" not in text and store.load(r.run_id).header.lineage.parent_run_id == f"r{i}"
    proc = _cli("redact", "--all", "--mode", "patterns", "--json", "--store", str(store.root))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert len(doc["runs"]) == 3 and len(doc["run_id"]) == 3  # redacted copies are not redacted again



def test_ner_model_option_and_store_config(tmp_path: Path, capsys, monkeypatch) -> None:
    from replaykit.cli.main import main
    from replaykit.core.redaction import NER_MODEL_ENV

    monkeypatch.setenv(NER_MODEL_ENV, "default")  # restored afterwards: the option sets it for workers
    store = RunStore(tmp_path / "s")
    run = build_support_run("orig-m")
    store.write_run(run.header, run.events)

    def one_line_error(*args: str) -> str:
        assert main(list(args)) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        return err

    for name in ("en_core_web_nonexistent", "/no/such/model/dir"):
        assert "not installed" in one_line_error("redact", "orig-m", "--store", str(store.root), "--ner-model", name)
    (store.root / "config.json").write_text(json.dumps({"redaction": {"ner_model": "en_core_web_missing"}}))
    assert "en_core_web_missing" in one_line_error("redact", "orig-m", "--store", str(store.root))  # config read
    assert "en_core_web_missing" in one_line_error(  # training exports read it too
        "export", "orig-m", "--format", "openai-jsonl", "-o", str(tmp_path / "t.jsonl"), "--store", str(store.root))
    (store.root / "config.json").write_text("[not json")
    assert "config.json" in one_line_error("redact", "orig-m", "--store", str(store.root))
    # named explicitly, a pipeline wins over the config ("best": the best installed one)
    assert main(["redact", "orig-m", "--store", str(store.root), "--ner-model", "best", "--json"]) == 0
    rid = json.loads(capsys.readouterr().out)["run_id"]
    assert "John Smith" not in store.path_for(rid).read_text()


def test_a_pipeline_is_described_by_name_and_version(tmp_path: Path) -> None:
    """The benches name the pipeline of each row: a package with its version, a folder by its meta.json."""
    pytest.importorskip("spacy")
    from replaykit.core.redaction._engine_models import DEFAULT_MODEL, describe_model

    assert describe_model(DEFAULT_MODEL).startswith(f"{DEFAULT_MODEL} 3.")
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "meta.json").write_text(json.dumps({"lang": "en", "name": "core_web_md", "version": "3.8.0"}))
    assert describe_model(str(folder)) == f"en_core_web_md 3.8.0 (folder {folder})"
    (folder / "meta.json").write_text("{")
    assert describe_model(str(folder)) == f"folder {folder}"
    assert describe_model("no_such_pipeline") == "no_such_pipeline"
