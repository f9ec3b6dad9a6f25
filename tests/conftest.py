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


def pytest_collection_modifyitems(config, items):
    """Tests marked ``hermes`` need hermes-agent; the latest environment does not have it. Tests marked
    ``single_env`` run once per ``scripts/test.sh``: it names the second environment with RK_ENV=latest
    (Ray, Dask and Chromium are the same in both, and those tests are minutes of the budget)."""
    from replaykit.testing.hermes_harness import hermes_available

    skip_hermes = None if hermes_available() else pytest.mark.skip(reason="hermes-agent is not importable in this venv")
    skip_single = pytest.mark.skip(reason="run in the hermes environment (single_env)") \
        if os.environ.get("RK_ENV") == "latest" else None
    if os.environ.get("RK_ENV") == "hermes-next":
        # The third environment (Hermes 0.22) runs only what differs between Hermes releases.
        kept = [item for item in items if _differs_between_hermes_releases(item)]
        config.hook.pytest_deselected(items=[item for item in items if item not in kept])
        items[:] = kept
    for item in items:
        if skip_hermes is not None and item.get_closest_marker("hermes") is not None:
            item.add_marker(skip_hermes)
        if skip_single is not None and item.get_closest_marker("single_env") is not None:
            item.add_marker(skip_single)


#: Test files that exercise Hermes-specific code without running Hermes (scripts/test.sh runs them, and every
#: test marked ``hermes``, again in the hermes-next environment).
HERMES_PATHS = ("tests/adapters/hermes/", "tests/engines/test_hermes_engine.py")


def _differs_between_hermes_releases(item: pytest.Item) -> bool:
    path = Path(str(item.path)).resolve().relative_to(ROOT).as_posix()
    return item.get_closest_marker("hermes") is not None or path.startswith(HERMES_PATHS)
