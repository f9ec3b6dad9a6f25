"""What every live engine shares: ``PlayOptions`` in, ``PlayResult`` out, and the set-up of a play.

Each engine (registered in ``replaykit.engines.ENGINES``: openai, hermes, pydantic-ai, langgraph)
exposes ``play(run: Run, options: PlayOptions) -> PlayResult``.
An engine builds its session with ``start_play(run, options, engine=...)``, which gives it the cursor
(``replaykit.core.replay.cursor.ReplayCursor``) wired to a recorder writing the new run (lineage ``play``),
then calls ``session.finish(...)`` to close the run and get the result.
"""

from __future__ import annotations

import os
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from replaykit.core.errors import BadInput, RunNotFound
from replaykit.core.replay.cursor import Counters, ReplayCursor, play_cut
from replaykit.core.trace.bridge_view import unbridged_calls
from replaykit.core.trace.ir import Lineage, Provenance, Source
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore, new_run_id, utc_now_iso


@dataclass
class PlayOptions:
    """Options of ``replaykit play`` (one field per flag) plus engine tuning."""

    base_url: str = ""  # empty offline (serve_only), or for a native provider chosen by ``api`` (its SDK's host)
    model: str = ""  # empty offline: the record's model. A ``provider:`` prefix sets ``api`` and is removed
    api: str | None = None  # ``--api``: the wire API of live calls (core/replay/wire_apis.py); None: openai-chat
    api_key_env: str | None = None  # the NAME of the env var holding the key; the key is never stored
    allow_destructive: bool = False
    stale_timeout: float | None = 60.0  # seconds without a byte on a stream before retrying
    store: RunStore = field(default_factory=RunStore)
    cut: int | None = None  # step where live execution starts; None: ``play_cut(run)``
    serve_only: bool = False  # offline: serve the whole record, synthetic answers past its end, never live
    max_iterations: int = 50  # LLM calls per user turn before the budget's grace call
    max_attempts: int = 4  # per LLM call (first try + retries)
    request_timeout: float = 120.0
    run_id: str | None = None  # id of the new run (default: generated)
    extra: dict[str, Any] = field(default_factory=dict)  # engine-specific knobs
    tags: tuple[str, ...] = ()  # added to the new run's tags (``eval`` marks its candidate plays)
    lineage_details: dict[str, Any] = field(default_factory=dict)  # added to the new run's lineage details
    stream_timing: str = "fast"  # served streams: every frame at once, or at the recorded pace (``--stream-timing``)

    def __post_init__(self) -> None:
        from replaykit.core.replay.wire_apis import split_model, wire_api

        if self.api is not None:
            self.api = wire_api(self.api).name  # unknown: a one-line error; "anthropic" -> anthropic-messages
        prefixed, name = split_model(self.model)
        if prefixed is not None:
            if self.api is not None and self.api != prefixed:
                raise BadInput(f"--model {self.model!r} names the {prefixed} API but --api is {self.api}")
            self.api, self.model = prefixed, name

    @property
    def live_capable(self) -> bool:
        """A live call can be made: an endpoint, or a native provider's API chosen (its SDK's host)."""
        return bool(self.base_url) or (self.api is not None and not self.serve_only)

    def wire(self) -> Any:
        """The live wire (``wire_apis.Wire``): API, model name, endpoint; one-line errors when incomplete."""
        from replaykit.core.replay.wire_apis import resolve_wire

        return resolve_wire(self.api, self.model, self.base_url or None)

    def live_credentials(self) -> tuple[str | None, dict[str, str]]:
        """(API key, other credentials) of the live wire, read now from the environment only: the key
        from the variable ``--api-key-env`` names; Bedrock's ``AWS_*`` variables. One-line errors for
        an unset variable, and for a native provider's host with no key variable named."""
        wire = self.wire()
        if wire.api.credentials == "aws-env":
            return None, self.aws_env()
        if wire.base_url is None and not self.api_key_env:
            raise BadInput(f"--api {wire.api.name} calls {wire.api.default_base_url}: name the environment "
                           "variable holding its key with --api-key-env")
        return self.api_key(), {}

    def aws_env(self) -> dict[str, str]:
        """AWS credentials and region for Bedrock, from the environment variables only (never
        ``~/.aws/credentials`` or ``~/.aws/config``); kept in memory, never written."""
        env = os.environ
        values = {"aws_access_key_id": env.get("AWS_ACCESS_KEY_ID", ""),
                  "aws_secret_access_key": env.get("AWS_SECRET_ACCESS_KEY", ""),
                  "aws_session_token": env.get("AWS_SESSION_TOKEN", ""),
                  "region_name": env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION", "")}
        missing = [name for name, key in (("AWS_ACCESS_KEY_ID", "aws_access_key_id"),
                                          ("AWS_SECRET_ACCESS_KEY", "aws_secret_access_key"),
                                          ("AWS_REGION", "region_name")) if not values[key]]
        if missing:
            raise BadInput(f"--api bedrock-converse reads AWS credentials from the environment only: "
                           f"{', '.join(missing)} not set")
        return {k: v for k, v in values.items() if v}

    @property
    def offline(self) -> bool:
        """``replaykit play --offline``: everything served, no endpoint: nothing is called or executed."""
        return self.serve_only and not self.base_url

    def api_key(self) -> str | None:
        """Read the key from the variable the user named (and only from there)."""
        if not self.api_key_env:
            return None
        value = os.environ.get(self.api_key_env)
        if not value:
            raise BadInput(f"--api-key-env {self.api_key_env}: that environment variable is not set")
        return value

    def safe_base_url(self) -> str | None:
        """The base URL without credentials or query (what may be written into a trace); None offline."""
        if not self.base_url and self.serve_only:
            return None
        if not self.base_url and self.api is not None:
            return self.wire().api.default_base_url  # the SDK's own host
        parts = urllib.parse.urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise BadInput(f"--base-url must be an http(s) URL, got {self.base_url[:80]!r}")
        host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
        netloc = f"{host}:{parts.port}" if parts.port else host
        return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


@dataclass
class PlayResult:
    """What an engine returns (``replaykit play --json`` prints ``to_json()``)."""

    run_id: str
    parent_run_id: str
    engine: str
    status: str  # completed | failed | interrupted
    cut: int
    counters: Counters
    final_answer: str | None = None
    error: str | None = None
    steps: int = 0
    model: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "parent_run_id": self.parent_run_id,
            "engine": self.engine,
            "status": self.status,
            "cut": self.cut,
            "model": self.model,
            "steps": self.steps,
            "final_answer": self.final_answer,
            "error": self.error,
            "counters": self.counters.to_json(),
        }


#: lineage relations whose parent is the same conversation (what ``lineage_chain`` follows)
SAME_CONVERSATION = frozenset({"branch", "play", "replay", "copy", "redaction"})


def lineage_chain(store: RunStore, run: Run, limit: int = 32) -> list[Run]:
    """The runs ``run`` descends from (parent first) that are present in ``store``: the same conversation
    before a branch, play, replay, copy or redaction. A subagent's parent and the run before an imported
    one in its session (``relation: import``) are other conversations: the chain stops there."""
    chain: list[Run] = []
    current = run
    seen = {run.run_id}
    while current.header.lineage is not None and current.header.lineage.relation in SAME_CONVERSATION \
            and len(chain) < limit:
        parent_id = current.header.lineage.parent_run_id
        if parent_id in seen:
            break
        seen.add(parent_id)
        try:
            current = store.load(parent_id)
        except (RunNotFound, BadInput):
            break
        chain.append(current)
    return chain


@dataclass
class PlaySession:
    """A play in progress: the source run, the cursor, the recorder of the new run."""

    run: Run
    options: PlayOptions
    engine: str
    cursor: ReplayCursor
    recorder: Recorder

    @property
    def run_id(self) -> str:
        return self.recorder.run_id

    def finish(self, final_answer: str | None, *, status: str = "completed", error: str | None = None) -> PlayResult:
        self.recorder.run_end(final_answer, status=status, reason=error,
                              provenance=Provenance.LIVE if self.cursor.live else Provenance.SERVED)
        self.recorder.close()
        steps = sum(1 for e in self.recorder.events if e.kind in ("llm_call", "tool_call"))
        return PlayResult(run_id=self.run_id, parent_run_id=self.run.run_id, engine=self.engine, status=status,
                          cut=self.cursor.cut, counters=self.cursor.counters, final_answer=final_answer,
                          error=error, steps=steps, model=self.options.model or self.run.header.model)


def _provider(options: PlayOptions, base_url: str) -> str:
    """The play's provider: the native provider's price id when its API was chosen and the host is its
    own, else ``openai-compatible`` (a gateway or a local server speaks the API for someone else)."""
    if options.api is None:
        return "openai-compatible"
    wire = options.wire().api
    native = wire.default_base_url is not None and base_url.rstrip("/") == wire.default_base_url.rstrip("/")
    return (wire.price_provider or "openai-compatible") if native else "openai-compatible"


def start_play(run: Run, options: PlayOptions, *, engine: str, framework_version: str | None = None,
               unbridge: bool = False) -> PlaySession:
    """Create the new run (lineage ``play`` of ``run``) and the cursor that serves its prefix.
    ``unbridge``: the engine cannot take a bridged tool call as made; each is served as its underlying
    call (``ReplayCursor``), and where the record holds one the new run's lineage says so
    (``details.unbridged``)."""
    cut = len(run.steps) if options.serve_only else play_cut(run) if options.cut is None else options.cut
    if not 0 <= cut <= len(run.steps):
        raise BadInput(f"cut {cut} out of range: run {run.run_id} has steps 0..{len(run.steps) - 1}")
    base_url = options.safe_base_url()
    model = options.model or run.model  # the header's, else the first recorded request's
    details: dict[str, Any] = {"live_from": cut, "model": model, "base_url": base_url}
    wire_api = None if options.serve_only else options.api
    if wire_api is not None:
        details["api"] = wire_api
    if options.serve_only:
        details["offline"] = True
    if unbridge and unbridged_calls(run):
        details["unbridged"] = True
    details.update(options.lineage_details)
    header = run.header.model_copy(update={
        "run_id": options.run_id or new_run_id(f"play-{engine}"),
        "created_at": utc_now_iso(),
        "model": model,
        "base_url": base_url,
        "provider": _provider(options, base_url) if base_url else run.header.provider,
        "title": f"play of {run.run_id} with {engine} ({model or 'offline'})",
        "source": Source(framework=engine, adapter=f"replaykit.play.{engine}", framework_version=framework_version),
        "tags": [*run.header.tags, *(t for t in options.tags if t not in run.header.tags)],
        "lineage": Lineage(relation="play", parent_run_id=run.run_id, parent_step=cut, engine=engine,
                           details=details),
    })
    writer = options.store.create(header)
    recorder = Recorder(header, writer)
    cursor = ReplayCursor(run, cut=None if options.serve_only else cut, recorder=recorder,
                          reference=lineage_chain(options.store, run), offline=options.offline,
                          stream_timing=options.stream_timing, unbridge=unbridge)
    return PlaySession(run=run, options=options, engine=engine, cursor=cursor, recorder=recorder)
