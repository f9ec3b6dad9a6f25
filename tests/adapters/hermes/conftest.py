from __future__ import annotations

import pytest

from replaykit.testing.hermes_harness import hermes_available

HERMES = hermes_available()


def pytest_collection_modifyitems(config, items):
    skip = pytest.mark.skip(reason="hermes-agent is not importable in this venv")
    for item in items:
        if item.get_closest_marker("hermes") is not None and not HERMES:
            item.add_marker(skip)
