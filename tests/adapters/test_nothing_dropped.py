"""The rule every importer keeps (docs/importers.md, issue 39): whatever the source holds becomes part of the
run or is listed as not imported, with a reason. Checked generically, per importer, on the real files in
``../shared/realworld`` (read where they lie) and on each importer's fixtures: every string value of the
source (JSON held in a string is opened and walked too) is found in the runs the import makes, or a
``metadata.not_imported`` entry covers it (its field, or the unit it belongs to: a span, an observation).

What the check lets through, and why (each is mapped, only not as the same string):
- times (ISO 8601 text, ``*UnixNano``): they become the events' offsets ``t`` and the run's ``created_at``;
- the values of ``type`` / ``role`` / ``from`` / ``kind`` / ``code`` keys, which name a shape the IR holds
  as its own types (a ``function`` tool, a ``human`` speaker, an OTLP span kind or status code), OTLP
  attribute names (``key``: the attribute's value is what is checked), OpenAI's ``object`` tags, LangChain
  class paths (``{"lc": 1, "id": [...]}``: the message type), ATIF step sources (the role), and values
  that are the format's default (Langfuse ``level: DEFAULT``, a LangChain tool message's ``status:
  success``);
- markup the importers take apart (Hermes ``<think>`` / ``<tool_call>`` tags): the text between the tags
  must be there, line by line;
- strings under three characters.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from replaykit.adapters import import_file
from replaykit.adapters.base import ImportedRun
from replaykit.core.trace import jsonsafe

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
REALWORLD = next((d / "shared" / "realworld" / "data" for d in ROOT.parents
                  if (d / "shared" / "realworld" / "data" / "MANIFEST.json").is_file()), None)

ISO = re.compile(r"^\d{4}-\d\d-\d\d[T ]\d\d:\d\d")
TAG = re.compile(r"</?[a-z_]+>")
SHAPE_KEYS = {"type", "role", "from", "kind", "code", "key", "object"}
DEFAULTS = {("level", "DEFAULT"), ("status", "success"), ("source", "agent"), ("source", "user"),
            ("source", "system")}


def _realworld() -> list[Any]:
    if REALWORLD is None:
        return []
    manifest = json.loads((REALWORLD / "MANIFEST.json").read_text(encoding="utf-8"))
    return [pytest.param(REALWORLD / e["path"], e["format"], id=f"realworld-{e['path']}")
            for e in manifest["files"] if e["expect"] == "import"]


def _fixtures() -> list[Any]:
    out = [pytest.param(p, "langfuse", id=f"fixture-{p.name}") for p in sorted((FIXTURES / "platforms").glob("*.json"))]
    out += [pytest.param(p, "atif", id=f"fixture-{p.name}") for p in sorted((FIXTURES / "atif").glob("*.json"))]
    return out


def _leaves(value: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], str]]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "id" and value.get("lc") == 1:  # a LangChain class path: the message's type
                continue
            yield from _leaves(item, (*path, str(key)))
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item, path)
    elif isinstance(value, str):
        text = value.strip()
        if text[:1] in "{[":
            try:
                yield from _leaves(json.loads(text), path)
                return
            except ValueError:
                pass
        yield path, value


def _documents(path: Path) -> list[Any]:
    text = path.read_text(encoding="utf-8-sig")
    try:
        return [json.loads(text)]
    except ValueError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def _run_text(runs: list[ImportedRun]) -> str:
    lines = []
    for run in runs:
        lines.append(json.dumps(jsonsafe.model_data(run.header, exclude_none=True), ensure_ascii=False))
        lines += [json.dumps(jsonsafe.model_data(e, exclude_none=True), ensure_ascii=False) for e in run.events]
    return "\n".join(lines)


def _encoded(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


def unaccounted(source: list[Any], runs: list[ImportedRun]) -> dict[str, str]:
    """``{path: value}`` of the source's string values the runs neither hold nor list as not imported."""
    text = _run_text(runs)
    record = [e for run in runs for e in run.header.metadata.get("not_imported", [])]
    fields = {f for e in record for f in e.get("fields", [])}
    listed = "\n".join(str(i) for e in record for i in [*e.get("examples", []), *e.get("items", [])])
    missing: dict[str, str] = {}
    for document in source:
        for path, value in _leaves(document):
            stripped = value.strip()
            if len(stripped) < 3 or ISO.match(stripped) or (path and path[-1].endswith("UnixNano")):
                continue
            if path and (path[-1] in SHAPE_KEYS or (path[-1], stripped) in DEFAULTS):
                continue
            if fields.intersection(path) or _encoded(value) in text or _encoded(stripped) in text:
                continue
            if stripped in listed:  # the unit it belongs to is listed by its id
                continue
            pieces = [line.strip() for line in TAG.sub("\n", value).splitlines() if len(line.strip()) >= 3]
            if TAG.search(value) and all(_encoded(p) in text for p in pieces):
                continue
            missing[".".join(path)] = value[:100]
    return missing


def _listed_units(source: list[Any], runs: list[ImportedRun]) -> list[Any]:
    """The source without the units (spans) a not_imported entry names by id: those are accounted whole."""
    listed = "\n".join(str(i) for run in runs for e in run.header.metadata.get("not_imported", [])
                       for i in [*e.get("examples", []), *e.get("items", [])])

    def prune(value: Any) -> Any:
        if isinstance(value, dict):
            ident = value.get("spanId") or value.get("span_id") or value.get("spanID")
            if isinstance(ident, str) and f"span {ident.lower()}" in listed:
                return None
            return {k: prune(v) for k, v in value.items()}
        if isinstance(value, list):
            return [prune(v) for v in value]
        return value

    return [prune(d) for d in source]


@pytest.mark.parametrize(("path", "fmt"), [*_realworld(), *_fixtures()])
def test_every_value_of_the_source_is_in_the_run_or_listed(path: Path, fmt: str) -> None:
    if fmt == "atif":
        pytest.importorskip("atif")
    runs = import_file(path, fmt)
    missing = unaccounted(_listed_units(_documents(path), runs), runs)
    assert not missing, f"{path.name}: dropped without a word: {json.dumps(missing, indent=1)[:3000]}"


def test_langsmith_runs(tmp_path: Path) -> None:
    pytest.importorskip("langsmith")
    pytest.importorskip("langchain_core")
    from tests.adapters.platform_fixtures import langchain_trace, openai_trace

    source = langchain_trace() + openai_trace()
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(source))
    runs = import_file(path, "langsmith")
    missing = unaccounted(source, runs)
    assert not missing, json.dumps(missing, indent=1)[:3000]


def test_inspect_ai_log(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai")
    from inspect_ai.log import read_eval_log

    from tests.adapters.test_inspect_ai import write_log

    path = write_log(tmp_path / "weather.json")
    source = [read_eval_log(str(path)).model_dump(mode="json", exclude={"location"})]
    runs = import_file(path, "inspect-ai")
    missing = unaccounted(source, runs)
    assert not missing, json.dumps(missing, indent=1)[:3000]


def test_the_check_catches_a_dropped_value(tmp_path: Path) -> None:
    """The check can fail: a value the importer never reads is reported."""
    source = json.loads((FIXTURES / "platforms" / "langfuse_traces.json").read_text())
    source[0]["observations"][1]["input"]["messages"][0]["content"] = "a value nobody imports"
    source[0]["observations"][1]["completelyUnknownLeaf"] = "never read by the importer"
    path = tmp_path / "t.json"
    path.write_text(json.dumps(source))
    runs = import_file(path, "langfuse")
    assert "never read by the importer" in unaccounted(source, runs).values()
