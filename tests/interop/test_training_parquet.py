"""``export --format openai-jsonl|sharegpt|trl --parquet``: the JSONL records as Parquet, read back with the
Hugging Face ``datasets`` library, plus the dataset card."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replaykit.cli.main import main
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from tests.interop.roundtrip import FIXTURES

datasets = pytest.importorskip("datasets")
pytest.importorskip("pyarrow")


@pytest.fixture()
def store(tmp_path: Path) -> RunStore:
    store = RunStore(tmp_path / "store")
    for name in ("two_turns", "tools_sequence", "parallel_tools", "subagent", "subagent.child"):
        run = Run.load(FIXTURES / "hermes" / f"{name}.jsonl")
        store.write_run(run.header, run.events)
    return store


def _from_row(key: str, value: Any, as_json: set[str]) -> Any:
    """A Parquet cell back to the JSONL value (columns listed in replaykit.json_columns hold JSON text)."""
    if isinstance(value, list):
        return [{f: json.loads(v) if f"{key}.{f}" in as_json else v for f, v in item.items() if v is not None}
                for item in value]
    return json.loads(value) if key in as_json else value


@pytest.mark.parametrize("fmt", ["openai-jsonl", "sharegpt", "trl"])
def test_parquet_loads_with_datasets_and_matches_the_jsonl(tmp_path: Path, store: RunStore, fmt: str,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    jsonl, parquet = tmp_path / "train.jsonl", tmp_path / "train.parquet"
    common = ["--format", fmt, "--all", "--no-redact", "--store", str(store.root), "--json"]
    assert main(["export", *common, "-o", str(jsonl)]) == 0
    capsys.readouterr()
    assert main(["export", *common, "--parquet", "-o", str(parquet)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["parquet"] is True and summary["records"] == 5 and len(summary["run_id"]) == 5
    assert oct(parquet.stat().st_mode & 0o777) == "0o600"
    assert not list(tmp_path.glob(".*records*"))  # the staging file is gone

    import pyarrow.parquet as pq

    as_json = set(json.loads(pq.read_schema(parquet).metadata[b"replaykit.json_columns"]))
    table = datasets.load_dataset("parquet", data_files=str(parquet), split="train")
    expected = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert table.num_rows == len(expected) == 5
    assert table["run_id"] == summary["run_id"]
    for row, record in zip(table, expected, strict=True):
        for key, value in record.items():
            assert _from_row(key, row[key], as_json) == value, key

    card = Path(summary["card"]).read_text()
    assert card.startswith("---\nconfigs:") and "NOT redacted" in card and fmt in card
    assert all(f"`{run_id}`" in card for run_id in summary["run_id"])


def test_parquet_card_names_the_redaction_mode(tmp_path: Path, store: RunStore,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "pairs.parquet"
    assert main(["export", "--format", "trl", "--all", "--mode", "patterns", "--parquet", "-o", str(out),
                 "--store", str(store.root), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["redacted"] is True
    assert "`patterns` mode" in out.with_suffix(".md").read_text()
    assert main(["export", "--format", "trl", "--all", "--parquet", "-o", str(out), "--store",
                 str(store.root)]) == 2  # exists, no --force
    assert "--force" in capsys.readouterr().err


def test_parquet_only_for_training_formats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", str(FIXTURES / "hermes" / "two_turns.jsonl"), "--format", "atif", "--parquet",
                 "-o", str(tmp_path / "x")]) == 2
    assert "--parquet applies" in capsys.readouterr().err
