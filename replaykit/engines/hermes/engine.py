"""``replaykit play RUN --engine hermes``: a fresh, real Hermes agent replays the run in its own process.

The parent (this module) writes a spec and starts ``python -m replaykit.engines.hermes.driver`` with
the user's environment (``$HERMES_HOME`` included; Hermes reads it at import time, so it must be a new
process). Inside, the driver registers ``llm_execution`` / ``tool_execution`` middleware in-process that
ask the core ``ReplayCursor``: served steps return the recorded ChatCompletion / tool result without
calling ``next_call`` (no request, no tool run); from the cut on ``next_call`` goes to ``--base-url`` and
Hermes's real tools run, destructive ones only with ``--allow-destructive`` (the core guard decides).
The new run is recorded by the cursor (lineage ``play``, engine ``hermes``); the replaykit recording
plugin is disabled in that process so the session is not recorded twice.

Hermes interpreter: ``options.extra["python"]``, else ``$REPLAYKIT_HERMES_PYTHON``, else this one.
``options.extra``: ``env`` (variables added to the agent's environment), ``cwd``, ``toolsets`` (when the
recording does not name them), ``timeout`` (seconds for the whole play, default 900).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from replaykit.core.errors import BadInput, MissingExtra, ReplaykitError
from replaykit.core.replay.cursor import Counters
from replaykit.core.replay.play import PlayOptions, PlayResult
from replaykit.core.trace.run import Run

ENGINE = "hermes"
REPO_ROOT = Path(__file__).resolve().parents[3]


def _python(options: PlayOptions) -> str:
    return str(options.extra.get("python") or os.environ.get("REPLAYKIT_HERMES_PYTHON") or sys.executable)


def _check_hermes(python: str) -> None:
    probe = subprocess.run([python, "-c", "import run_agent, hermes_cli"], capture_output=True, timeout=120,
                           env={**os.environ, "REPLAYKIT_DISABLE": "1", "HERMES_SAFE_MODE": "1"})
    if probe.returncode != 0:
        raise MissingExtra("hermes", "hermes-agent")


def _source_path(run: Run, options: PlayOptions, tmp: Path) -> Path:
    if run.report is not None and run.report.path.is_file():
        return run.report.path.resolve()
    # An in-memory run: hand it to the driver as a file.
    from replaykit.core.trace.store import write_run_file

    return write_run_file(tmp / "source.jsonl", run.header, list(run.events))


def build_spec(run: Run, options: PlayOptions, source: Path) -> dict[str, Any]:
    from replaykit.adapters.hermes.wire import API_OF_MODE

    meta = run.meta
    api_mode = str(meta.get("api_mode") or _mode_of_api(run))
    if options.api is not None and not options.serve_only:
        # --api picks Hermes's own api mode (Hermes's provider client speaks it, not replaykit's live model)
        modes = {api: mode for mode, api in API_OF_MODE.items()}
        if options.api not in modes:
            raise BadInput(f"--engine hermes speaks {', '.join(modes)} (its api modes {', '.join(API_OF_MODE)}); "
                           f"--api {options.api}: play it with --engine openai, pydantic-ai or langgraph")
        if not options.base_url:
            raise BadInput("--engine hermes needs --base-url (Hermes reads no provider default from replaykit)")
        api_mode = modes[options.api]
    if api_mode not in API_OF_MODE:
        raise BadInput(f"--engine hermes plays runs made in the api modes {', '.join(API_OF_MODE)}; "
                       f"run {run.run_id} used {api_mode!r}")
    # A run recorded outside Hermes names no toolsets: its tools become stand-ins (driver.register_stand_ins).
    toolsets = options.extra.get("toolsets") or meta.get("toolsets") or []
    return {
        "source": str(source),
        "store": str(Path(options.store.root).expanduser().resolve()),
        "run_id": options.run_id,
        "cut": options.cut,
        "serve_only": options.serve_only,
        "base_url": options.base_url,
        "model": options.model,
        "api_key_env": options.api_key_env,
        "allow_destructive": options.allow_destructive,
        "stale_timeout": options.stale_timeout,
        "max_iterations": options.max_iterations,
        "request_timeout": options.request_timeout,
        "stream_timing": options.stream_timing,
        "toolsets": list(toolsets),
        "platform": str(meta.get("platform") or "cli"),
        "api_mode": api_mode,
        # Hermes's settings for the play only (a temporary HERMES_HOME, driver.overlay_hermes_home):
        # Tool Search as the record had it (the driver turns it off where Hermes's bridge cannot take
        # the recorded calls, and answers them through stand-ins).
        "tool_search": tool_search_setting(run),
        "config_overlay": {},
    }


def tool_search_setting(run: Run) -> str:
    from replaykit.engines.hermes.driver import tool_search_setting as setting

    return setting(run)


def _mode_of_api(run: Run) -> str:
    """A run recorded outside Hermes: the Hermes api mode that speaks its provider API."""
    from replaykit.adapters.hermes.wire import API_OF_MODE

    calls = run.llm_calls()
    api = calls[0].request.api if calls else "openai-chat"
    api = "anthropic-messages" if api == "anthropic" else api
    return next((mode for mode, mode_api in API_OF_MODE.items() if mode_api == api), api)


def play(run: Run, options: PlayOptions) -> PlayResult:
    if options.serve_only and not options.model:
        options.model = run.header.model or "replaykit-offline"
    options.safe_base_url()
    options.api_key()  # fail early (one line) when the named variable is unset; the child reads it itself
    python = _python(options)
    _check_hermes(python)
    with tempfile.TemporaryDirectory(prefix="replaykit-hermes-play-") as tmp_dir:
        tmp = Path(tmp_dir)
        spec = build_spec(run, options, _source_path(run, options, tmp))
        spec["overlay_dir"] = str(tmp)
        spec_path, out_path = tmp / "spec.json", tmp / "out.json"
        spec_path.write_text(json.dumps(spec))
        env = dict(os.environ)
        env.update({str(k): str(v) for k, v in (options.extra.get("env") or {}).items()})
        env["REPLAYKIT_DISABLE"] = "1"  # the recording plugin must not record the play a second time
        env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), *[p for p in [env.get("PYTHONPATH")] if p]])
        if options.stale_timeout:
            env["HERMES_STREAM_STALE_TIMEOUT"] = f"{options.stale_timeout:g}"
            env["HERMES_API_CALL_STALE_TIMEOUT"] = f"{options.stale_timeout:g}"
        timeout = float(options.extra.get("timeout", 900))
        proc = subprocess.run([python, "-m", "replaykit.engines.hermes.driver", str(spec_path), str(out_path)],
                              env=env, capture_output=True, text=True, timeout=timeout,
                              cwd=options.extra.get("cwd") or os.getcwd(), stdin=subprocess.DEVNULL)
        if not out_path.is_file():
            tail = " ".join(proc.stderr.strip().splitlines()[-3:])[-400:]
            raise ReplaykitError(f"the Hermes play process failed (exit {proc.returncode}): {tail}")
        out = json.loads(out_path.read_text())
    if out.get("error_kind") == "bad_input":
        raise BadInput(out["error"])
    result = PlayResult(run_id=out["run_id"], parent_run_id=run.run_id, engine=ENGINE, status=out["status"],
                        cut=out["cut"], counters=Counters(**out["counters"]), final_answer=out.get("final_answer"),
                        error=out.get("error"), steps=out.get("steps", 0), model=options.model)
    if result.status == "failed" and out.get("error"):
        raise ReplaykitError(f"play {result.run_id}: {out['error']}")
    return result
