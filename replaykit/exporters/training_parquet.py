"""``export --format openai-jsonl|sharegpt|trl --parquet``: the same training records as Parquet, with a card.

The records come from ``replaykit.exporters.training.export_training`` (same conversion, validation and
redaction), streamed to a private temporary JSONL beside the output, then written as one Parquet file
with a fixed schema so that ``datasets.load_dataset("parquet", data_files=PATH)`` reads it:

- a list of messages (``messages``, ``conversations``, ``prompt``, ``chosen``, ...) is a list of structs
  whose fields are the keys seen in the file, every value a string; a field that holds anything but
  strings somewhere (``tool_calls``, multimodal ``content``) is JSON text in every row, so decoding is
  never ambiguous; the schema metadata ``replaykit.json_columns`` and the card list those columns;
- any other value (``tools``, ``input``, a ShareGPT ``chosen`` turn) is JSON text the same way;
- ``run_id`` names the source run of every row.

A dataset card (``PATH`` with the suffix ``.md``: rename it ``README.md`` to publish) lists the fields,
the redaction mode and the source runs. Both files are written atomically and 0600.
"""

from __future__ import annotations

import datetime as dt
import io
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from replaykit import __version__
from replaykit.core.errors import BadInput, MissingExtra
from replaykit.core.files import write_private
from replaykit.exporters.training import TrainingExportSummary, export_training

BATCH = 2048


def card_path(out: Path) -> Path:
    return out.with_suffix(".md")


def export_training_parquet(sources: Iterable[Path], out: Path, fmt: str, *, overwrite: bool = False,
                            **options: Any) -> tuple[TrainingExportSummary, Path]:
    """Write the training records of ``sources`` to ``out`` as Parquet plus its dataset card."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ModuleNotFoundError as exc:
        raise MissingExtra("training", "pyarrow") from exc
    card = card_path(out)
    for path in (out, card):
        if path.exists() and not overwrite:
            raise BadInput(f"{path} exists; pass --force to overwrite")
    if not out.parent.is_dir():
        raise BadInput(f"directory {out.parent} does not exist")
    staging = out.with_name(f".{out.name}.records.jsonl")
    try:
        summary = export_training(sources, staging, fmt, overwrite=True, **options)
        list_fields, object_keys, as_json = _shape(staging)
        schema = _schema(pa, list_fields, object_keys, as_json)
        buffer = io.BytesIO()
        with pq.ParquetWriter(buffer, schema, compression="zstd") as writer:
            for rows in _batches(staging, summary.run_ids, list_fields, object_keys, as_json):
                writer.write_table(pa.Table.from_pylist(rows, schema=schema))
        write_private(out, buffer.getvalue())
    finally:
        staging.unlink(missing_ok=True)
    summary.path = str(out)
    write_private(card, dataset_card(summary, out, list_fields, object_keys, as_json))
    return summary, card


# ------------------------------------------------------------------------------------------- schema


def _records(staging: Path) -> Iterator[dict[str, Any]]:
    with staging.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def _is_message_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _shape(staging: Path) -> tuple[dict[str, list[str]], list[str], set[str]]:
    """First pass: which top-level keys are message lists (and their fields), which are other values, and
    which columns must be JSON text (``key`` or ``key.field``: some value in them is not a string)."""
    list_fields: dict[str, dict[str, None]] = {}
    others: dict[str, None] = {}
    as_json: set[str] = set()
    for record in _records(staging):
        for key, value in record.items():
            if _is_message_list(value) and key not in others:
                fields = list_fields.setdefault(key, {})
                for item in value:
                    fields.update(dict.fromkeys(item))
                    as_json.update(f"{key}.{f}" for f, v in item.items() if v is not None and not isinstance(v, str))
            else:
                others[key] = None
                if value is not None and not isinstance(value, str):
                    as_json.add(key)
    for key in others:  # a key that is sometimes not a message list is stored as JSON text throughout
        if list_fields.pop(key, None) is not None:
            as_json.add(key)
    return {k: list(v) for k, v in list_fields.items()}, list(others), as_json


def _schema(pa: Any, list_fields: dict[str, list[str]], object_keys: list[str], as_json: set[str]) -> Any:
    columns = [pa.field("run_id", pa.string(), nullable=False)]
    for key, fields in list_fields.items():
        columns.append(pa.field(key, pa.list_(pa.struct([pa.field(f, pa.string()) for f in fields]))))
    columns.extend(pa.field(key, pa.string()) for key in object_keys)
    return pa.schema(columns, metadata={"replaykit.json_columns": json.dumps(sorted(as_json))})


def _cell(value: Any, is_json: bool) -> str | None:
    if value is None:
        return None
    return json.dumps(value, ensure_ascii=False) if is_json else value


def _batches(staging: Path, run_ids: list[str], list_fields: dict[str, list[str]],
             object_keys: list[str], as_json: set[str]) -> Iterator[list[dict[str, Any]]]:
    rows: list[dict[str, Any]] = []
    for index, record in enumerate(_records(staging)):
        row: dict[str, Any] = {"run_id": run_ids[index]}
        for key, fields in list_fields.items():
            items = record.get(key)
            row[key] = None if items is None else [
                {f: _cell(item.get(f), f"{key}.{f}" in as_json) for f in fields} for item in items]
        for key in object_keys:
            row[key] = _cell(record.get(key), key in as_json)
        rows.append(row)
        if len(rows) >= BATCH:
            yield rows
            rows = []
    if rows or not run_ids:
        yield rows


# --------------------------------------------------------------------------------------------- card


def dataset_card(summary: TrainingExportSummary, out: Path, list_fields: dict[str, list[str]],
                 object_keys: list[str], as_json: set[str]) -> str:
    sources = sorted(set(summary.run_ids))
    redaction = (f"redacted with replaykit's `{summary.mode}` mode (Presidio and secret recognizers, consistent "
                 "placeholders such as `<PERSON_1>` across a run)" if summary.redacted
                 else "**NOT redacted** (exported with --no-redact): review before sharing")
    lines = [
        "---",
        "configs:",
        "- config_name: default",
        f"  data_files: {json.dumps(out.name)}",
        "tags:",
        "- replaykit",
        f"- {summary.format}",
        "---",
        "",
        f"# Training data: {summary.format} ({summary.records} rows)",
        "",
        f"Written by replaykit {__version__} on {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')} from "
        f"{summary.runs} recorded agent runs. Load it with `datasets.load_dataset(\"parquet\", "
        f"data_files={json.dumps(out.name)})`.",
        "",
        f"Redaction: {redaction}.",
        "",
        "## Fields",
        "",
        "| column | type | holds |",
        "|---|---|---|",
        "| `run_id` | string | the replaykit run the row came from |",
    ]
    for key, fields in list_fields.items():
        names = ", ".join(f"`{f}`" + (" (JSON text)" if f"{key}.{f}" in as_json else "") for f in fields)
        lines.append(f"| `{key}` | list of structs | one entry per message; string fields {names} |")
    for key in object_keys:
        lines.append(f"| `{key}` | string | {'JSON text' if key in as_json else 'text'} |")
    skipped = ", ".join(f"{n} {why}" for why, n in summary.skipped.items()) or "none"
    lines += ["", f"Skipped runs: {skipped}.", "", "## Source runs", ""]
    lines += [f"- `{run_id}`" for run_id in sources[:200]]
    if len(sources) > 200:
        lines.append(f"- ... and {len(sources) - 200} more")
    return "\n".join(lines) + "\n"


__all__ = ["card_path", "dataset_card", "export_training_parquet"]
