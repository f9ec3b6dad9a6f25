from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"

# Tests never touch the user's real store or Hermes home.
os.environ.pop("HERMES_HOME", None)


@pytest.fixture(autouse=True)
def _isolated_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    store = tmp_path / "store"
    monkeypatch.setenv("REPLAYKIT_HOME", str(store))
    return store


@pytest.fixture
def store_dir(_isolated_store: Path) -> Path:
    return _isolated_store


def subprocess_env(**extra: str) -> dict[str, str]:
    """Environment for child processes: this checkout first on the path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.update(extra)
    return env


PYTHON = sys.executable
