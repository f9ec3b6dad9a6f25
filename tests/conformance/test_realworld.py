"""Conformance on real files other projects wrote (``../shared/realworld/data``, read where it lies).

Every file its MANIFEST.json marks ``import``: `replaykit import` exits 0; each run it makes validates,
replays with 0 provider calls and 0 tool executions, exports to every format, and plays offline in
every engine that can express it with `replaykit diff RUN PLAYED` equal (exit 0). Every file marked
``may-refuse``: one line on stderr and exit 2. The corpus is absent from some checkouts: then this
module skips.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from replaykit.cli.main import main
from replaykit.core.analysis.diff import diff_runs
from replaykit.core.replay.replay import replay_run
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.engines import play
from tests.conformance._matrix import OFFLINE_ENGINES, engine_extra, options

# ``../shared/realworld/data`` from the project root (a worktree sits deeper: the nearest one above wins).
DATA = next((d / "shared" / "realworld" / "data" for d in Path(__file__).resolve().parents[2].parents
             if (d / "shared" / "realworld" / "data" / "MANIFEST.json").is_file()), Path("/nonexistent"))
if not (DATA / "MANIFEST.json").is_file():
    pytest.skip(f"the real-world corpus is not beside this checkout ({DATA})", allow_module_level=True)

ENTRIES: list[dict[str, Any]] = json.loads((DATA / "MANIFEST.json").read_text(encoding="utf-8"))["files"]
IMPORTS = [e for e in ENTRIES if e["expect"] == "import"]
REFUSALS = [e for e in ENTRIES if e["expect"] == "may-refuse"]

#: (engine, file) cells that do not conform yet, with why (strict: such a cell fails once it passes)
KNOWN_GAPS: dict[tuple[str, str], str] = {}
#: engines (and code exports) whose loop starts from the user's input: they cannot express a run whose
#: first model call was sent no message at all (two OpenInference logs begin so)
NEEDS_INPUT = {"pydantic-ai", "langgraph", "hermes"}


def _expressible(run: Run, engine: str) -> bool:
    calls = run.llm_calls()
    if not calls:
        return False  # nothing to play: a run of an outer agent that only delegated
    return engine not in NEEDS_INPUT or bool(run.request_messages(calls[0]))


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _run_ids(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [v for k, v in value.items() if k == "run_id"] + [i for k, v in value.items() if k != "run_id"
                                                                 for i in _run_ids(v)]
    if isinstance(value, list):
        return [i for v in value for i in _run_ids(v)]
    return []


@cache
def _imported(path: str, fmt: str) -> list[Run]:
    """The runs ``replaykit.adapters.import_file`` makes of one corpus file (once per session)."""
    from replaykit.adapters import import_file

    return [Run(r.header, r.events) for r in import_file(DATA / path, fmt)]


#: formats whose export runs a framework or the redactor (seconds per run): the slow half of the matrix
HEAVY = ("langgraph", "pydantic-ai", "openai-jsonl")


@pytest.mark.parametrize("heavy", [pytest.param(False, id="light"),
                                   pytest.param(True, id="heavy", marks=pytest.mark.slow)])
@pytest.mark.parametrize("entry", IMPORTS, ids=lambda e: e["path"])
def test_import_validate_replay_export(entry: dict[str, Any], heavy: bool, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    code, out, err = _cli(capsys, "import", str(DATA / entry["path"]), "--format", entry["format"], "--json",
                          "--store", str(store))
    assert code == 0, err
    run_ids = sorted(set(_run_ids(json.loads(out))))
    assert run_ids
    loaded = RunStore(store)
    for run_id in run_ids:
        code, _, err = _cli(capsys, "validate", str(loaded.path_for(run_id)))
        assert code == 0, err
        run = loaded.load(run_id)
        before = loaded.path_for(run_id).read_bytes()
        document = replay_run(run)
        assert (document["counters"]["provider_calls"], document["counters"]["tool_executions"]) == (0, 0)
        assert loaded.path_for(run_id).read_bytes() == before
        _export_everywhere(run, loaded, tmp_path / run_id, heavy)


def _export_everywhere(run: Run, store: RunStore, where: Path, heavy: bool) -> None:
    from replaykit.exporters import FORMATS, TRAINING_FORMATS, export
    from replaykit.exporters.training import export_training

    where.mkdir()
    for fmt in FORMATS:
        if (fmt in HEAVY) != heavy:
            continue
        if FORMATS[fmt].python and fmt != "python" and not _expressible(run, fmt):
            continue  # a framework module replays through that framework's engine (see NEEDS_INPUT)
        if FORMATS[fmt].extra == "langgraph":
            pytest.importorskip("langgraph")
        summary = export(run, fmt, where / f"out.{fmt}", children=store.load) if fmt == "atif" else \
            export(run, fmt, where / f"out.{fmt}")
        assert (where / f"out.{fmt}").stat().st_size > 0, summary
    for fmt in TRAINING_FORMATS:  # the pattern redactor: the corpus's point is formats, not NER speed
        if (fmt in HEAVY) != heavy:
            continue
        export_training([store.path_for(run.run_id)], where / f"train.{fmt}", fmt, mode="patterns")


#: The Hermes engine plays in a child process running a real AIAgent (seconds per play): by default one
#: file of each format stands for its column, so the suite stays inside its time budget; set
#: RK_REALWORLD_ALL=1 for the whole column (the known gaps above are its strict xfails).
ALL_HERMES_CELLS = os.environ.get("RK_REALWORLD_ALL") == "1"
#: and of a file of many runs (a trajectory file of 13), the first few stand for the file
HERMES_RUNS_PER_FILE = 3
HERMES_SAMPLE = {path for fmt, path in {e["format"]: e["path"] for e in reversed(IMPORTS)}.items()}


def _playable() -> list[Any]:
    cells = []
    for entry in IMPORTS:
        for engine in OFFLINE_ENGINES:
            name = engine.values[0]
            if name == "hermes" and not ALL_HERMES_CELLS and entry["path"] not in HERMES_SAMPLE:
                continue
            marks = list(engine.marks)
            if name != "openai":
                marks.append(pytest.mark.slow)  # the openai engine's cells are the quick representative
            gap = KNOWN_GAPS.get((name, entry["path"]))
            if gap is not None:
                marks.append(pytest.mark.xfail(strict=True, reason=gap))
            cells.append(pytest.param(name, entry, id=f"{name}-{entry['path']}", marks=marks))
    return cells


@pytest.mark.parametrize(("engine", "entry"), _playable())
def test_plays_offline_with_diff_equal(engine: str, entry: dict[str, Any], tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    played_any = False
    runs = [run for run in _imported(entry["path"], entry["format"]) if _expressible(run, engine)]
    if engine == "hermes" and not ALL_HERMES_CELLS:
        runs = runs[:HERMES_RUNS_PER_FILE]
    for run in runs:
        store.write_run(run.header, list(run.events))
        run = store.load(run.run_id)
        result = play(run, engine, options(store, serve_only=True, extra=engine_extra(engine, tmp_path)))
        assert result.status == "completed", result.error
        assert (result.counters.provider_calls, result.counters.tool_executions) == (0, 0)
        played = store.load(result.run_id)
        diff = diff_runs(run, played)
        assert diff.equal, (run.run_id, diff.first.to_json() if diff.first else None)
        played_any = True
    if not played_any:
        pytest.skip(f"no run of {entry['path']} can be expressed by the {engine} engine")


@pytest.mark.parametrize("entry", REFUSALS, ids=lambda e: e["path"])
def test_may_refuse_is_one_line_and_exit_2(entry: dict[str, Any], tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    code, _, err = _cli(capsys, "import", str(DATA / entry["path"]), "--format", entry["format"],
                        "--store", str(store))
    if code == 0:  # importing a neighbour format is allowed too; then it must be a valid run
        return
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not list(store.glob("*.jsonl")) if store.exists() else True
