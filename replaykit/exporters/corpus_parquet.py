"""Parquet shards (``export -o DIR --parquet``): the records of a JSONL shard as a table, with pyarrow.

One column per top-level key of the records. Plain values (strings, numbers, booleans) keep their
type; nested values (message lists, tool declarations) are stored as canonical JSON strings
(sorted keys), because their shapes differ from record to record (tool JSON schemas above all) and a
column type inferred per shard would differ between shards. ``json.loads`` on a cell gives the
record's value back exactly. Every shard of a job therefore has the same column types, so a dataset
reader can read all shards as one table. Rows are in the JSONL shard's order; the bytes depend only on
the records. The corpus pipeline calls ``write_parquet`` on the driver for each finished partition.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from replaykit.core.errors import MissingExtra


def require_pyarrow() -> Any:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise MissingExtra("training", "pyarrow") from exc
    return pa, pq


def _plain(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def records_table(lines: list[str]) -> Any:
    pa, _ = require_pyarrow()
    records = [json.loads(line) for line in lines]
    keys = sorted({k for r in records for k in r})
    columns: dict[str, Any] = {}
    for key in keys:
        values = [r.get(key) for r in records]
        if all(_plain(v) for v in values):
            try:
                columns[key] = pa.array(values)
                continue
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                pass  # mixed plain types: fall back to JSON text
        columns[key] = pa.array(
            [None if v is None else json.dumps(v, ensure_ascii=False, sort_keys=True) for v in values],
            type=pa.string(),
        )
    return pa.table(columns) if columns else pa.table({"record": pa.array([], type=pa.string())})


def write_parquet(lines: list[str], path: Path) -> None:
    """Write the records atomically (temp file, then rename) and 0600."""
    _, pq = require_pyarrow()
    table = records_table(lines)
    tmp = path.with_name(f".{path.name}.tmp")
    pq.write_table(table, tmp, compression="zstd")
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
