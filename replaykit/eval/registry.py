"""Where the viewer finds evals: one small file per eval in the store, ``<store>/.evals/<eval id>.json``,
naming its report (``-o DIR/report.json``, which may live anywhere). Outside the store's run files (a
hidden folder), so nothing that lists runs sees it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from replaykit.core.files import write_private
from replaykit.core.trace.store import RunStore, utc_now_iso

FOLDER = ".evals"
_ID = re.compile(r"^[0-9a-f]{10}$")


def record_eval(store: RunStore, eval_id: str, report: Path, totals: dict[str, Any], model: str) -> None:
    folder = store.root / FOLDER
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    entry = {"eval_id": eval_id, "report": str(report.resolve()), "model": model, "updated_at": utc_now_iso(),
             "selected": totals.get("selected"), "verdicts": totals.get("verdicts")}
    write_private(folder / f"{eval_id}.json", json.dumps(entry, sort_keys=True))


def list_evals(store: RunStore) -> list[dict[str, Any]]:
    """Every eval recorded in ``store``, newest first (entries that cannot be read are left out)."""
    out = []
    for path in sorted((store.root / FOLDER).glob("*.json")):
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(entry, dict) and _ID.match(str(entry.get("eval_id", ""))):
            out.append(entry)
    return sorted(out, key=lambda e: str(e.get("updated_at", "")), reverse=True)


def load_eval(store: RunStore, eval_id: str) -> dict[str, Any] | None:
    """The report of eval ``eval_id`` (None when unknown or its report is gone)."""
    if not _ID.match(eval_id):
        return None
    try:
        entry = json.loads((store.root / FOLDER / f"{eval_id}.json").read_text(encoding="utf-8"))
        report = json.loads(Path(entry["report"]).read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return report if isinstance(report, dict) else None
