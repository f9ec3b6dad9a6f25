"""docs/architecture.md stays true: every module of the core appears in its module map (a file, or its
package folder for the guard, redaction and corpus packages and the codecs), and every path it names exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "architecture.md").read_text()
PACKAGES_NAMED_WHOLE = ("core/guard/", "core/redaction/", "core/corpus/", "core/trace/codecs/",
                        "core/replay/transports/")


def test_every_core_module_is_in_the_module_map() -> None:
    missing = []
    for path in sorted((ROOT / "replaykit" / "core").rglob("*.py")):
        rel = path.relative_to(ROOT / "replaykit").as_posix()
        if path.name == "__init__.py" or any(rel.startswith(p) for p in PACKAGES_NAMED_WHOLE):
            continue
        if f"`{rel}`" not in DOC:
            missing.append(rel)
    assert not missing, f"docs/architecture.md does not map: {missing}"


def test_every_core_path_the_doc_names_exists() -> None:
    named = set(re.findall(r"`(core/[\w/]+(?:\.py|/))`", DOC))
    assert named, "the module map names no core paths"
    gone = sorted(p for p in named if not (ROOT / "replaykit" / p).exists())
    assert not gone, f"docs/architecture.md names paths that do not exist: {gone}"
