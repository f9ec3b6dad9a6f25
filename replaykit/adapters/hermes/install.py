"""``replaykit hermes install``: write the directory plugin and enable it in config.yaml.

Idempotent, and it never clobbers the rest of the user's config: it only adds ``replaykit`` to
``plugins.enabled`` (and removes it from ``plugins.disabled``). ruamel.yaml (a Hermes dependency) keeps
comments and layout; without it PyYAML is used; the file is replaced atomically.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from replaykit.core.errors import BadInput
from replaykit.core.files import write_private

PLUGIN_NAME = "replaykit"
PLUGIN_YAML = """name: replaykit
version: "0.1.0"
description: Record every LLM call, tool call and subagent of this Hermes into replaykit runs.
author: replaykit
provides_hooks: [on_session_start, pre_llm_call, api_request_error, post_tool_call, post_llm_call, on_session_end, on_session_finalize, on_session_reset, subagent_start, subagent_stop]
"""
PLUGIN_INIT = '''"""replaykit directory plugin (written by `replaykit hermes install`): the code lives in the replaykit
package, which must be importable by this Hermes's Python."""

from replaykit.adapters.hermes.plugin import register

__all__ = ["register"]
'''


def _load_yaml(text: str) -> tuple[Any, Any]:
    try:
        from ruamel.yaml import YAML

        yaml = YAML()
        yaml.preserve_quotes = True
        return yaml, yaml.load(text) if text.strip() else None
    except ImportError:
        pass
    try:
        import yaml as pyyaml
    except ImportError as exc:
        from replaykit.core.errors import MissingExtra

        raise MissingExtra("hermes", "ruamel.yaml or PyYAML") from exc
    return None, pyyaml.safe_load(text) if text.strip() else None


def _dump_yaml(yaml: Any, data: Any) -> str:
    if yaml is not None:
        import io

        buf = io.StringIO()
        yaml.dump(data, buf)
        return buf.getvalue()
    import yaml as pyyaml

    return str(pyyaml.safe_dump(data, sort_keys=False))


def enable_in_config(config_path: Path) -> bool:
    """Add the plugin to ``plugins.enabled``; returns True when the file changed."""
    text = config_path.read_text(encoding="utf-8") if config_path.exists() else ""
    try:
        yaml, data = _load_yaml(text)
    except Exception as exc:
        if exc.__class__.__name__ == "MissingExtra":
            raise
        raise BadInput(f"{config_path} is not valid YAML ({type(exc).__name__}); fix it, then rerun") from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise BadInput(f"{config_path} does not hold a YAML mapping; refusing to edit it")
    plugins = data.get("plugins")
    if plugins is None:
        data["plugins"] = plugins = {}
    if not isinstance(plugins, dict):
        raise BadInput(f"{config_path}: 'plugins' is not a mapping; refusing to edit it")
    enabled = plugins.get("enabled")
    if enabled is None:
        plugins["enabled"] = enabled = []
    if not isinstance(enabled, list):
        raise BadInput(f"{config_path}: 'plugins.enabled' is not a list; refusing to edit it")
    changed = False
    if PLUGIN_NAME not in enabled:
        enabled.append(PLUGIN_NAME)
        changed = True
    disabled = plugins.get("disabled")
    if isinstance(disabled, list) and PLUGIN_NAME in disabled:
        disabled.remove(PLUGIN_NAME)
        changed = True
    if changed:
        new_text = _dump_yaml(yaml, data) if yaml is not None else _text_edit(text, data)
        _atomic_write(config_path, new_text)
    return changed


_FLOW = re.compile(r"^(\s+)(enabled|disabled):\s*\[(.*)\]\s*(#.*)?$")


def _text_edit(text: str, wanted: Any) -> str:
    """Without ruamel.yaml: edit only the plugin lines so comments and layout survive; verified by
    re-parsing, with a plain re-dump as the fallback."""
    import yaml as pyyaml

    lines = text.splitlines()
    top = next((i for i, line in enumerate(lines) if re.match(r"^plugins:\s*(#.*)?$", line)), None)
    if top is None:
        edited = [*lines, "plugins:", f"  enabled: [{PLUGIN_NAME}]"]
    else:
        end = next((i for i in range(top + 1, len(lines)) if lines[i] and not lines[i][0].isspace()
                    and not lines[i].lstrip().startswith("#")), len(lines))
        block = lines[top + 1:end]
        out: list[str] = []
        seen_enabled = False
        for line in block:
            m = _FLOW.match(line)
            if m:
                items = [x.strip() for x in m.group(3).split(",") if x.strip()]
                if m.group(2) == "enabled":
                    seen_enabled = True
                    items = items if PLUGIN_NAME in items else [*items, PLUGIN_NAME]
                else:
                    items = [x for x in items if x.strip("'\"") != PLUGIN_NAME]
                line = f"{m.group(1)}{m.group(2)}: [{', '.join(items)}]" + (f" {m.group(4)}" if m.group(4) else "")
            out.append(line)
        if not seen_enabled:
            out.insert(0, f"  enabled: [{PLUGIN_NAME}]")
        edited = [*lines[: top + 1], *out, *lines[end:]]
    candidate = "\n".join(edited) + "\n"
    try:
        if pyyaml.safe_load(candidate) == wanted:
            return candidate
    except pyyaml.YAMLError:
        pass
    return str(pyyaml.safe_dump(wanted, sort_keys=False))


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # A user's existing config keeps its mode; files we create are private.
    write_private(path, text, mode=path.stat().st_mode & 0o777 if path.exists() else 0o600)


def install_plugin(hermes_home: Path) -> dict[str, Any]:
    """Write ``$HERMES_HOME/plugins/replaykit/`` and enable it. Safe to run again."""
    home = Path(hermes_home).expanduser()
    if home.exists() and not home.is_dir():
        raise BadInput(f"{home} is not a directory")
    target = home / "plugins" / PLUGIN_NAME
    target.mkdir(parents=True, exist_ok=True)
    wrote = []
    for name, content in (("plugin.yaml", PLUGIN_YAML), ("__init__.py", PLUGIN_INIT)):
        path = target / name
        if not path.exists() or path.read_text(encoding="utf-8") != content:
            _atomic_write(path, content)
            wrote.append(str(path))
    changed = enable_in_config(home / "config.yaml")
    return {"hermes_home": str(home), "plugin_dir": str(target), "files_written": wrote, "config_changed": changed,
            "enabled": True}
