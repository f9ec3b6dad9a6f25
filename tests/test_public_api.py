"""The public surface in ``replaykit.__all__`` resolves, and importing replaykit stays cheap."""

from __future__ import annotations

import subprocess
import sys

import replaykit
from tests.conftest import subprocess_env


def test_every_public_name_resolves() -> None:
    for name in replaykit.__all__:
        assert getattr(replaykit, name) is not None, name


def test_import_replaykit_imports_no_model_code() -> None:
    code = "import sys, replaykit; print('replaykit.core.trace.ir' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env(),
                         check=True)
    assert out.stdout.strip() == "False"
