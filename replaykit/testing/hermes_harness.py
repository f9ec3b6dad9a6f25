"""Run a real Hermes Agent offline in a subprocess with a throw-away ``HERMES_HOME``.

Used by tests, fixtures and benchmarks (``hermes-agent`` must be importable by ``python``). Every run gets a
fresh home with a config that keeps Hermes off the network (no environment probe, no tirith install, a
pre-seeded update check) and points it at a local scripted server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

PluginMode = Literal["entrypoint", "directory", "none"]
REPO_ROOT = Path(__file__).resolve().parents[2]


def installed_hermes_version(python: str | None = None) -> str | None:
    """``hermes_cli.__version__`` of the Hermes ``python`` (default: this interpreter) imports, or None."""
    if python is None or python == sys.executable:
        try:
            from hermes_cli import __version__
        except Exception:
            return None
        return str(__version__)
    probe = subprocess.run([python, "-c", "from hermes_cli import __version__; print(__version__)"],
                           capture_output=True, text=True, timeout=60)
    return probe.stdout.strip() or None if probe.returncode == 0 else None


def hermes_available(python: str | None = None) -> bool:
    """True when ``python`` (default: this interpreter) can import Hermes's ``run_agent``."""
    if python is None or python == sys.executable:
        import importlib.util

        return importlib.util.find_spec("run_agent") is not None and importlib.util.find_spec("hermes_cli") is not None
    probe = subprocess.run([python, "-c", "import hermes_cli, run_agent"], capture_output=True, timeout=60)
    return probe.returncode == 0


def _yaml_scalar(value: Any) -> str:
    return json.dumps(value)  # JSON scalars are valid YAML scalars


class HermesSandbox:
    """A temporary HERMES_HOME (+ cwd) and the means to run Hermes inside it."""

    def __init__(self, root: Path, *, plugin: PluginMode = "entrypoint", python: str | None = None,
                 base_url: str = "http://127.0.0.1:9/v1", model: str = "scripted-model",
                 extra_config: str = "", extra_env: Mapping[str, str] | None = None) -> None:
        self.root = Path(root)
        self.home = self.root / "hermes_home"
        self.cwd = self.root / "cwd"
        self.python = python or sys.executable
        self.plugin = plugin
        self.extra_env = dict(extra_env or {})
        self.home.mkdir(parents=True, exist_ok=True)
        self.cwd.mkdir(parents=True, exist_ok=True)
        (self.home / ".update_check").write_text(json.dumps(
            {"ts": time.time() + 10 * 365 * 86400, "behind": 0, "rev": None,
             "ver": installed_hermes_version(self.python) or "0.0.0"}))
        self.write_config(base_url, model, extra_config)
        self._pythonpath = [str(REPO_ROOT)]
        if plugin == "entrypoint":
            self._pythonpath.insert(0, str(self._write_entry_point()))
        elif plugin == "directory":
            from replaykit.adapters.hermes.install import install_plugin

            install_plugin(self.home)

    def write_config(self, base_url: str, model: str, extra: str = "") -> None:
        enabled = "[replaykit]" if self.plugin != "none" else "[]"
        text = (
            "model:\n"
            f"  default: {_yaml_scalar(model)}\n"
            "  provider: custom\n"
            f"  base_url: {_yaml_scalar(base_url)}\n"
            "  api_key: sk-harness-fake\n"
            "  context_length: 128000\n"
            "agent:\n  environment_probe: false\n"
            "security:\n  tirith_enabled: false\n"
            f"plugins:\n  enabled: {enabled}\n"
            + extra
        )
        (self.home / "config.yaml").write_text(text)

    def _write_entry_point(self) -> Path:
        """A dist-info on PYTHONPATH that declares the real ``hermes_agent.plugins`` entry point, exactly as
        ``pip install replaykit`` would (replaykit itself is not pip-installed in the test venvs)."""
        site = self.root / "ep_site"
        info = site / "replaykit-0.1.0.dist-info"
        info.mkdir(parents=True, exist_ok=True)
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: replaykit\nVersion: 0.1.0\n")
        (info / "entry_points.txt").write_text(
            "[hermes_agent.plugins]\nreplaykit = replaykit.adapters.hermes.plugin\n")
        return site

    @property
    def env(self) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.root),
            "HERMES_HOME": str(self.home),
            "PYTHONPATH": os.pathsep.join(self._pythonpath),
            "TIRITH_ENABLED": "0",
            "NO_COLOR": "1",
            "LANG": "C.UTF-8",
        }
        env.update(self.extra_env)
        return env

    @property
    def store(self) -> Path:
        return self.home / "replaykit"

    def run_agent(self, spec: Mapping[str, Any], timeout: float = 120) -> dict[str, Any]:
        """Run :mod:`replaykit.testing.hermes_driver` with ``spec``; return its JSON output."""
        spec_path = self.root / "spec.json"
        out_path = self.root / "out.json"
        spec_path.write_text(json.dumps(dict(spec)))
        out_path.unlink(missing_ok=True)
        proc = subprocess.run([self.python, "-m", "replaykit.testing.hermes_driver", str(spec_path), str(out_path)],
                              cwd=self.cwd, env=self.env, capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0 or not out_path.exists():
            raise RuntimeError(f"hermes driver failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
        result: dict[str, Any] = json.loads(out_path.read_text())
        result["stderr"] = proc.stderr
        return result

    def run_cli(self, args: Sequence[str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Run the real ``hermes`` console script (from the same venv as ``python``)."""
        hermes = Path(self.python).with_name("hermes")
        return subprocess.run([str(hermes), *args], cwd=self.cwd, env=self.env, capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
