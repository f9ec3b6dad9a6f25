"""Plays started from the viewer: one background thread per play, polled by the job page.

A play from the page is the same call as ``replaykit play``: ``PlayOptions`` built from the form, the
same engine module's ``play(run, options)``, the same destructive-tool guard inside the engine
(``allow_destructive`` only when the box was ticked). The form names the environment variable that
holds the API key; only that name is kept, the key is read by ``PlayOptions.api_key()`` inside the
engine and is never stored, logged or sent to the page. Progress is the new run's file, which the
engine writes event by event.
"""

from __future__ import annotations

import re
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from replaykit.core.errors import BadInput, ReplaykitError
from replaykit.core.replay.play import PlayOptions
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore, new_run_id

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
#: The base URL recorded for an offline play (nothing is ever sent there: every step is served).
OFFLINE_BASE_URL = "http://127.0.0.1:9/offline"


def wire_api_names() -> list[str]:
    """The wire APIs a live play can speak (``--api``), for the form's choice."""
    from replaykit.core.replay.wire_apis import WIRE_APIS

    return list(WIRE_APIS)


def engine_names() -> list[str]:
    """Engines ``replaykit play`` knows (the engine registry)."""
    from replaykit.engines import ENGINES

    return sorted(ENGINES)


def load_engine(name: str) -> Any:
    """The engine's module, as ``replaykit play`` loads it (MissingExtra when its framework is absent)."""
    from replaykit.engines import load_engine as registry_load

    return registry_load(name)


@dataclass
class PlayForm:
    """The play form, validated. Never holds a key: only the variable's name."""

    engine: str
    base_url: str
    model: str
    api_key_env: str | None
    allow_destructive: bool
    offline: bool
    at: int | None
    api: str | None = None  # ``--api``: None lets a ``provider:model`` string choose, else OpenAI Chat

    @classmethod
    def parse(cls, form: dict[str, str], run: Run) -> PlayForm:
        engine = form.get("engine", "")
        if engine not in engine_names():
            raise BadInput(f"unknown engine {engine!r}")
        offline = form.get("offline") == "on"
        base_url = form.get("base_url", "").strip()
        model = form.get("model", "").strip()
        api = form.get("api", "").strip() or None
        if api is not None and api not in wire_api_names():
            raise BadInput(f"unknown API {api[:40]!r} (known: {', '.join(wire_api_names())})")
        if offline:
            if base_url:
                raise BadInput("an offline play serves every step from the record: leave the endpoint empty")
            base_url, model, api = OFFLINE_BASE_URL, model or run.model or "offline", None
        elif not model:
            raise BadInput("give the model (and the endpoint, unless a native API is chosen), or tick offline")
        else:
            from replaykit.core.replay.wire_apis import resolve_wire

            resolve_wire(api, model, base_url or None)  # a native API may leave the endpoint empty
        key_env = form.get("api_key_env", "").strip() or None
        if key_env is not None and not ENV_NAME.fullmatch(key_env):
            raise BadInput("the API key field takes the NAME of an environment variable (letters, digits, _), "
                           "never the key itself")
        at_text = form.get("at", "").strip()
        at: int | None = None
        if at_text:
            try:
                at = int(at_text)
            except ValueError as exc:
                raise BadInput(f"go live at step: {at_text[:20]!r} is not a step number") from exc
        return cls(engine, base_url, model, key_env, form.get("allow_destructive") == "on", offline, at, api)

    def options(self, store: RunStore, run_id: str) -> PlayOptions:
        options = PlayOptions(base_url=self.base_url, model=self.model, api=self.api, api_key_env=self.api_key_env,
                              allow_destructive=self.allow_destructive, store=store, cut=self.at,
                              serve_only=self.offline, run_id=run_id)
        options.safe_base_url()  # a bad URL is refused before a thread starts
        if not self.offline:
            options.live_credentials()  # a named but unset variable too, or a native API without a key
        return options


@dataclass
class Job:
    id: str
    source_run_id: str
    run_id: str
    engine: str
    offline: bool
    compare_to: str  # the run the result is diffed against: a branch's original, else the played run
    started: float = field(default_factory=time.time)
    finished: float | None = None
    status: str = "running"  # running | completed | failed | interrupted
    error: str | None = None
    result: dict[str, Any] | None = None

    @property
    def done(self) -> bool:
        return self.status != "running"


class Jobs:
    def __init__(self, store: RunStore) -> None:
        self.store = store
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def start(self, run: Run, form: PlayForm) -> Job:
        run_id = new_run_id(f"play-{form.engine}")
        options = form.options(self.store, run_id)
        engine = load_engine(form.engine)  # a missing extra is reported now, on the form's page
        lineage = run.header.lineage
        original = lineage.parent_run_id if lineage is not None and lineage.relation == "branch" else run.run_id
        job = Job(id=secrets.token_hex(8), source_run_id=run.run_id, run_id=run_id, engine=form.engine,
                  offline=form.offline, compare_to=original)
        with self._lock:
            self._jobs[job.id] = job
        thread = threading.Thread(target=self._run, args=(job, engine, run, options), daemon=True,
                                  name=f"replaykit-play-{job.id}")
        thread.start()
        return job

    @staticmethod
    def _run(job: Job, engine: Any, run: Run, options: PlayOptions) -> None:
        try:
            result = engine.play(run, options)
            job.result = result.to_json()
            job.status = result.status
            job.error = result.error
        except ReplaykitError as exc:
            job.status, job.error = "failed", str(exc)
        except Exception as exc:  # the page must say what happened; the viewer keeps running
            job.status, job.error = "failed", f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
        finally:
            job.finished = time.time()

    def progress(self, job: Job) -> dict[str, int]:
        """Steps recorded so far in the new run (its file is written event by event)."""
        try:
            path = self.store.path_for(job.run_id)
            text = path.read_bytes() if path.is_file() else b""
        except (OSError, ReplaykitError):
            text = b""
        llm = text.count(b'"kind":"llm_call"')
        tools = text.count(b'"kind":"tool_call"')
        return {"llm": llm, "tools": tools, "steps": llm + tools}
