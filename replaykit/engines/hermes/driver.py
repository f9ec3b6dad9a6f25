"""The process side of ``--engine hermes`` (started by ``replaykit.engines.hermes.engine``; never imported by
a process that has not set ``HERMES_HOME``): a real ``AIAgent`` whose LLM and tool executions go through
replaykit middleware registered in-process.

``python -m replaykit.engines.hermes.driver SPEC.json OUT.json``
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

from replaykit.adapters.hermes import reissue, wire
from replaykit.adapters.hermes.response import response_to_ir
from replaykit.core.errors import BadInput, ReplaykitError
from replaykit.core.replay.cursor import ReplayCursor, with_input
from replaykit.core.replay.live_tools import LiveTools
from replaykit.core.replay.play import PlayOptions, PlaySession, start_play
from replaykit.core.replay.resilience import classify
from replaykit.core.replay.tool_ladder import unavailable_text
from replaykit.core.trace.bridge import BRIDGE_TOOL_NAME, BRIDGE_TOOL_NAMES, event_underlying
from replaykit.core.trace.bridge_view import recorded_underlying, unbridged_response
from replaykit.core.trace.codecs import decode_request, encode_request
from replaykit.core.trace.ir import LLMResponse, Message, Provenance, TextPart, ToolSpec
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.core.trace.wire_record import wire_details
from replaykit.engines.hermes.served import served_response
from replaykit.engines.hermes.stripped import restore_stripped

STAND_IN_TOOLSET = "replaykit_recorded"
#: where an offline play points Hermes: nothing listens there, and nothing is ever sent
OFFLINE_BASE_URL = "http://127.0.0.1:9/v1"

#: the system prompt's key in each api's request kwargs (chat keeps it as messages[0])
_SYSTEM_KEY = {"openai-responses": "instructions", "anthropic-messages": "system"}


def pin_system(api: str, request: dict[str, Any], recorded: str | None,
               recorded_wire: Any = None) -> dict[str, Any] | None:
    """``request`` with the recorded system prompt in place of Hermes's fresh one (``recorded`` None: the
    record sent none, so Hermes's own is dropped); None when the request already says the same.
    ``recorded_wire``: the record's system value as it went on the wire (Responses / Anthropic), e.g. an
    Anthropic block list with ``cache_control``: put back in that form (Hermes 0.22 sends a plain string)."""
    if api != "openai-chat" and recorded is not None and recorded_wire is not None:
        key = _SYSTEM_KEY[api]
        return None if request.get(key) == recorded_wire else {**request, key: recorded_wire}
    if api == "openai-chat":
        messages = request.get("messages")
        if not (isinstance(messages, list) and messages and isinstance(messages[0], dict)
                and messages[0].get("role") == "system" and messages[0].get("content") != recorded):
            return None
        if recorded is None:
            return {**request, "messages": messages[1:]}
        return {**request, "messages": [{**messages[0], "content": recorded}, *messages[1:]]}
    key = _SYSTEM_KEY[api]
    current = request.get(key)
    if recorded is None:
        return None if current is None else {k: v for k, v in request.items() if k != key}
    if isinstance(current, str):
        return None if current == recorded else {**request, key: recorded}
    if (isinstance(current, list) and len(current) == 1 and isinstance(current[0], dict)
            and current[0].get("type") == "text"):  # Anthropic's system as one text block
        return None if current[0].get("text") == recorded else {**request, key: [{**current[0], "text": recorded}]}
    return None


def mark_tool_errors(request: dict[str, Any], failed: set[str]) -> dict[str, Any] | None:
    """An Anthropic ``request`` whose ``tool_result`` blocks answering ``failed`` calls carry
    ``is_error: true``; None when nothing changes. Hermes keeps tool results as plain chat messages and
    never sets Anthropic's flag, but the record's error results (and the other engines') carry it."""
    messages = request.get("messages")
    if not failed or not isinstance(messages, list):
        return None
    changed = False
    out: list[Any] = []
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(_needs_error_flag(block, failed) for block in content):
            content = [{**block, "is_error": True} if _needs_error_flag(block, failed) else block
                       for block in content]
            message = {**message, "content": content}
            changed = True
        out.append(message)
    return {**request, "messages": out} if changed else None


def _needs_error_flag(block: Any, failed: set[str]) -> bool:
    return (isinstance(block, dict) and block.get("type") == "tool_result"
            and block.get("tool_use_id") in failed and block.get("is_error") is not True)


def user_content(message: Message) -> Any:
    """A user turn as Hermes takes it: its text, or (with media parts) the Chat content-part list Hermes
    accepts for multimodal turns and converts to each api mode, encoded by the shared codec."""
    if all(part.type == "text" for part in message.parts):
        return message.text
    encoded = encode_request("openai-chat", [Message(role="user", parts=message.parts)]).body
    return encoded["messages"][0]["content"]


class PlayMiddleware:
    """The two execution middlewares (and the system-prompt pin) around one cursor."""

    def __init__(self, session: PlaySession, recorded_system: str | None, api: str,
                 stand_ins: frozenset[str] = frozenset(), *, pin_system: bool = True) -> None:
        self.session = session
        self.api = api
        self.stand_ins = stand_ins
        self.tools = LiveTools(session.cursor, session.options)
        self.cursor: ReplayCursor = session.cursor
        self.recorder: Recorder = session.recorder
        self.options = session.options
        self.recorded_system = recorded_system
        self.recorded_wire: Any = None  # the record's system value in its wire form (pin_system)
        # False when the record has no request to take a system prompt from: Hermes's own stays.
        self.pin_system = pin_system
        self._failed: set[str] = set()  # tool calls answered as errors (Anthropic's is_error, see llm_request)
        self._asked: dict[str, tuple[str, Any]] = {}  # call id -> (name, arguments) as the model made the call
        self._agent: Any = None  # Hermes's AIAgent once looked for (reissue.py); False: not found
        self._active: set[str] = set()
        self._lock = threading.Lock()
        self._served = 0

    def llm_request(self, **kw: Any) -> Any:
        """Pin the recorded system prompt (Hermes rebuilds it with date, paths, memory, and adds its own
        where the record sent none: the replay must not), and flag failed tool results (Anthropic)."""
        request = kw.get("request")
        if not isinstance(request, dict):
            return None
        reasons: list[str] = []
        pinned = pin_system(self.api, request, self.recorded_system, self.recorded_wire) if self.pin_system else None
        if pinned is not None:
            request = pinned
            reasons.append("recorded system prompt")
        if self.api == "anthropic-messages":
            with self._lock:
                failed = set(self._failed)
            flagged = mark_tool_errors(request, failed)
            if flagged is not None:
                request = flagged
                reasons.append("failed tool results flagged")
        if not reasons:
            return None
        return {"request": request, "source": "replaykit", "reason": "; ".join(reasons)}

    def llm_execution(self, **kw: Any) -> Any:
        next_call = kw["next_call"]
        request = kw.get("request") or {}
        model, raw_tools, params, _sdk = wire.split_request(self.api, request)
        body: dict[str, Any] = {key: request[key] for key in wire.conversation_keys(self.api) if key in request}
        if isinstance(raw_tools, list) and raw_tools:
            body["tools"] = raw_tools
        decoded = decode_request(self.api, body)  # the shared codec, as the recorder uses
        tools = decoded.tools
        # At a served position nothing is sent: the record's whitespace (which Hermes strips from every
        # message), and input the application added inside the turn (Hermes's history never holds it,
        # so it is missing from each later request too), are put back as the record has them.
        messages = restore_stripped(decoded.messages, self.cursor.next_request())
        messages = with_input(messages, self.cursor.take_recorded_input(messages))
        decision = self.cursor.llm(messages, tools, model=model, params=params)
        if decision.response is not None:
            self._served += 1
            self._note_bridged(decision.response)
            return served_response(self.api, decision.response, model, self._served)
        if self.options.serve_only:
            # Offline: nothing is ever sent (Hermes would skip a middleware that raises and call the
            # provider itself). The cursor has recorded the desync; the turn ends with a synthetic answer.
            text = f"[replaykit] offline play: the record holds no answer to this request ({decision.reason})"
            response = LLMResponse(message=Message(role="assistant", parts=[TextPart(text=text)]),
                                   finish_reason="stop")
            self.cursor.live_llm(messages, response, tools, model=model, params=params,
                                 provenance=Provenance.SYNTHETIC, duration=0.0)
            return served_response(self.api, response, model, self._served)
        self.cursor.note_provider_call()
        started = time.perf_counter()
        if self._agent is None:
            self._agent = reissue.find_agent(next_call) or False
        before = reissue.mark(self._agent)
        try:
            result = next_call()
        except BaseException as exc:  # Hermes classifies and retries; we record the failed attempt
            self._note_reissue(before)
            error = classify(exc) if isinstance(exc, Exception) else None
            self.recorder.llm_error(None, message=error.describe() if error else type(exc).__name__,
                                    error_type=error.kind if error else type(exc).__name__,
                                    status_code=error.status_code if error else None,
                                    retryable=error.retryable if error else False, provenance=Provenance.LIVE)
            raise
        self._note_reissue(before)
        response = response_to_ir(self.api, result)
        self._note_bridged(response)
        # Hermes's own client sent it (its api mode: --api mapped by the engine); Hermes translated the
        # history itself, so no loss list of ours, but the step says which API it went on
        calls = self.session.run.llm_calls()
        recorded = calls[0].request.api if calls else None
        self.cursor.live_llm(messages, response, tools, model=model, params=params, api=self.api,
                             request_details=wire_details(self.api, recorded),
                             duration=round(time.perf_counter() - started, 6))
        return result

    def _note_reissue(self, before: Any) -> None:
        """Hermes 0.22 re-sent a failed streamed attempt without streaming (reissue.py): one provider
        call more, and its failure, recorded like any failed attempt (marked: never observed)."""
        if not reissue.reissued(self._agent, before):
            return
        self.cursor.note_provider_call()
        self.recorder.llm_error(None, message=reissue.REISSUED_MESSAGE, error_type="server", retryable=True,
                                provenance=Provenance.LIVE, provider_details={"observed": False})

    def _note_bridged(self, response: LLMResponse) -> None:
        """The model's tool calls, by id. Hermes runs, and its ``tool_execution`` middleware sees, another
        name for some of them: the underlying tool of a Tool Search ``tool_call`` (0.22), the new name of a
        renamed tool (``todo`` -> ``todo_list``). The ladder is asked for the call the model made (what the
        record holds), so such a call is served or run as the one call it is."""
        with self._lock:
            for call in response.message.tool_calls:
                self._asked[call.id] = (call.name, call.arguments)

    def tool_execution(self, **kw: Any) -> Any:
        next_call = kw["next_call"]
        name = str(kw.get("tool_name") or "")
        args = kw.get("args")
        call_id = str(kw.get("tool_call_id") or f"{name}@{threading.get_ident()}")
        with self._lock:
            nested = call_id in self._active  # Hermes's concurrent path enters the chain twice
            if not nested:
                self._active.add(call_id)
        if nested:
            return next_call()
        try:
            # The one ladder (core.live_tools): served, then the guard, then Hermes's real tool, then a
            # recorded stand-in, then "not available". Stand-ins registered for tools this Hermes lacks
            # have no real implementation.
            ran: list[Any] = []

            def hermes_tool(*_args: Any, **_kw: Any) -> Any:
                value = next_call()
                ran.append(value)
                return value

            implementation = None if name in self.stand_ins else hermes_tool
            with self._lock:
                asked = self._asked.pop(call_id, None)
            if asked is not None and asked[0] != name:
                name, args = asked  # the call as the model made it (Hermes runs the tool it stands for)
            answer = self.tools.answer(call_id, name, args, implementation=implementation)
            if answer.is_error:
                with self._lock:
                    self._failed.add(call_id)
            return ran[0] if answer.rung == "implementation" and ran else answer.content
        finally:
            with self._lock:
                self._active.discard(call_id)


def _recorded_system_wire(run: Run, api: str) -> Any:
    """The record's system prompt as its first request sent it (Responses ``instructions``, Anthropic
    ``system``: a string or a block list), or None (chat, or no request)."""
    calls = run.llm_calls()
    if api == "openai-chat" or not calls:
        return None
    from replaykit.core.trace.codecs import encode_llm_request

    try:
        body = encode_llm_request(calls[0].request, run.request_messages(calls[0]), run.request_tools(calls[0].request)).body
    except Exception:  # a record this codec cannot encode: pin the text alone
        return None
    return body.get(_SYSTEM_KEY[api])


def calls_api_matches(run: Run, api: str) -> bool:
    """Whether the record's requests were made in ``api`` (their wire form is then the one to send)."""
    calls = run.llm_calls()
    return bool(calls) and calls[0].request.api in (api, "anthropic" if api == "anthropic-messages" else api)


def _recorded_system(run: Run) -> tuple[bool, str | None]:
    """(whether the record holds a request, its system prompt: None when it sent none)."""
    calls = run.llm_calls()
    if not calls:
        return False, None
    first = run.request_messages(calls[0])
    return True, first[0].text if first and first[0].role == "system" else None


def _turns(run: Run, cursor: ReplayCursor) -> list[Message]:
    turns = cursor.user_turns()
    if turns:
        return turns
    calls = run.llm_calls()
    users = [m for m in run.request_messages(calls[0]) if m.role == "user"] if calls else []
    if not users:
        raise BadInput(f"run {run.run_id} has no user message to replay")
    return users[-1:]


def _sends_media(run: Run) -> bool:
    """Whether any recorded request carries a media part (an image the model was sent)."""
    return any(part.type == "media" for call in run.llm_calls() for message in run.request_messages(call)
               for part in message.parts)


def served_call_names(run: Run, unbridge: bool) -> list[str]:
    """The names of the tool calls a play of ``run`` hands Hermes, in first-call order: the calls as the
    model made them and, for bridged ones, the underlying tool (which a Hermes that bridges runs); with
    ``unbridge``, the calls as the cursor serves them (``unbridged_response``: each bridged call as its
    underlying call, a batch of several as made)."""
    if not unbridge:
        return list(dict.fromkeys(name for event in run.tool_calls()
                                  for name in (event.name, event_underlying(event)[0])))
    recorded = recorded_underlying(run)
    names = [call.name for event in run.llm_calls()
             for call in unbridged_response(event.response, recorded).message.tool_calls]
    return list(dict.fromkeys([*names, *(event_underlying(e)[0] for e in run.tool_calls())]))


def register_stand_ins(run: Run, native_bridge: bool = False, *, unbridge: bool = False) -> list[str]:
    """Register every tool the recording declared or called that this Hermes lacks (a harness's or another framework's
    tools) under ``STAND_IN_TOOLSET``, so Hermes offers it and routes its calls through the
    ``tool_execution`` middleware, where the ladder answers them with no real implementation (served, else
    a recorded stand-in, else "not available"). The handler itself is never reached through the middleware.
    ``unbridge``: the play serves bridged calls as their underlying calls, so the bridge tools get a stand-in
    only where a recorded call still names one (``tool_search``, ``tool_describe``, a batch of several)."""
    from tools.registry import registry

    calls = run.llm_calls()
    specs = list(run.request_tools(calls[0].request) or []) if calls else []
    # A tool the model called that no request declared (a log that kept no tool list): Hermes refuses
    # a call of a tool it does not know before any middleware sees it, so it gets a stand-in too.
    # A Tool Search record (Hermes 0.22) declares the bridges, not the deferred tools it called through
    # them: those (the underlying tools) need a stand-in too when this Hermes lacks them.
    called = served_call_names(run, unbridge)
    if unbridge:
        specs = [spec for spec in specs if spec.name not in BRIDGE_TOOL_NAMES or spec.name in called]
    declared = {spec.name for spec in specs}
    for name in dict.fromkeys(called):
        if name not in declared:
            specs.append(ToolSpec(name=name))
            declared.add(name)
    added: list[str] = []
    for spec in specs:
        if registry.get_entry(spec.name) is not None or (native_bridge and spec.name in BRIDGE_TOOL_NAMES):
            continue  # (Hermes's own Tool Search offers the bridges)

        def stand_in(_args: Any, _name: str = spec.name, **_kw: Any) -> str:
            return unavailable_text(_name)

        schema = {"name": spec.name, "description": spec.description or "",
                  "parameters": spec.parameters or {"type": "object", "properties": {}}}
        registry.register(spec.name, STAND_IN_TOOLSET, schema, stand_in, description=spec.description or "")
        added.append(spec.name)
    return added


def own_toolsets(run: Run, unbridge: bool = False) -> list[str]:
    """The toolsets of this Hermes's own tools that ``run`` declared or called, in first-use order."""
    from tools.registry import registry

    calls = run.llm_calls()
    names = [spec.name for spec in (run.request_tools(calls[0].request) or [])] if calls else []
    names += served_call_names(run, unbridge)
    found: dict[str, None] = {}
    for name in names:
        entry = registry.get_entry(name)
        if entry is not None and entry.toolset and entry.toolset != STAND_IN_TOOLSET:
            found[str(entry.toolset)] = None
    return list(found)


def tool_search_setting(run: Run) -> str:
    """Hermes's ``tools.tool_search.enabled`` for playing ``run``: on when the record's model was offered
    (or called) the Tool Search bridge, else off (a 0.19 record, or Tool Search off while recording): the
    replayed model must be offered the tools the way the recorded one was."""
    offered = any(spec.name in BRIDGE_TOOL_NAMES for tools in run.tool_sets.values() for spec in tools)
    called = any(event.name == BRIDGE_TOOL_NAME for event in run.tool_calls())
    return "on" if offered or called else "off"


def overlay_hermes_home(overlay: dict[str, Any], where: str) -> str:
    """A temporary ``HERMES_HOME`` (under ``where``) whose config.yaml is the user's with ``overlay``
    merged in: the play changes Hermes's settings for itself only, never the user's file. Must run before
    any Hermes import (Hermes resolves its paths at import time). Returns the new home."""
    import os
    from pathlib import Path

    import yaml  # PyYAML: a dependency of every Hermes release

    source = Path(os.environ.get("HERMES_HOME") or Path.home() / ".hermes")
    config: dict[str, Any] = {}
    try:
        loaded = yaml.safe_load((source / "config.yaml").read_text(encoding="utf-8"))
        config = loaded if isinstance(loaded, dict) else {}
    except (OSError, yaml.YAMLError):
        config = {}
    _merge(config, overlay)
    home = Path(where) / "hermes_home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    update_check = source / ".update_check"
    if update_check.is_file():
        (home / ".update_check").write_bytes(update_check.read_bytes())
    os.environ["HERMES_HOME"] = str(home)
    return str(home)


def _merge(into: dict[str, Any], overlay: dict[str, Any]) -> None:
    for key, value in overlay.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


#: the paths of model calls in each api mode (anything else Hermes sends the endpoint is a probe)
_MODEL_CALL_PATHS = ("/chat/completions", "/responses", "/messages")


def block_endpoint_probes(base_url: str | None) -> None:
    """Hermes probes the model endpoint at start-up and per turn (model lists, server type, context
    length, vision: ``GET /v1/models``, ``GET /api/v1/models``, ``POST /api/show``...). A play sends the
    scripted or candidate server model calls only: every other request to its host is answered 404 here,
    in the play's process, without reaching the network (Hermes treats 404 as "not that kind of server")."""
    import urllib.parse

    import httpx

    host = urllib.parse.urlsplit(base_url or "").netloc
    if not host or getattr(httpx.Client.send, "_replaykit_probe_guard", False):
        return

    def is_probe(request: httpx.Request) -> bool:
        return request.url.netloc.decode() == host and not (
            request.method == "POST" and request.url.path.rstrip("/").endswith(_MODEL_CALL_PATHS))

    sync_send, async_send = httpx.Client.send, httpx.AsyncClient.send

    def send(self: httpx.Client, request: httpx.Request, **kw: Any) -> httpx.Response:
        if is_probe(request):
            return httpx.Response(404, request=request, json={"error": "replaykit play: endpoint probes are not sent"})
        return sync_send(self, request, **kw)

    async def asend(self: httpx.AsyncClient, request: httpx.Request, **kw: Any) -> httpx.Response:
        if is_probe(request):
            return httpx.Response(404, request=request, json={"error": "replaykit play: endpoint probes are not sent"})
        return await async_send(self, request, **kw)

    send._replaykit_probe_guard = True  # type: ignore[attr-defined]
    httpx.Client.send = send  # type: ignore[method-assign]
    httpx.AsyncClient.send = asend  # type: ignore[method-assign]
    try:  # Hermes 0.19 probes with requests too
        import requests
    except ImportError:
        return
    requests_send = requests.Session.send

    def session_send(self: Any, request: Any, **kw: Any) -> Any:
        parts = urllib.parse.urlsplit(str(request.url))
        if parts.netloc == host and not (request.method == "POST" and parts.path.rstrip("/").endswith(_MODEL_CALL_PATHS)):
            response = requests.Response()
            response.status_code, response.url, response.request = 404, request.url, request
            response._content = b'{"error": "replaykit play: endpoint probes are not sent"}'
            return response
        return requests_send(self, request, **kw)

    requests.Session.send = session_send  # type: ignore[method-assign]


def speaks_recorded_bridge() -> bool:
    """Whether this Hermes's Tool Search bridge takes the batched ``{"calls": [...]}`` arguments Hermes 0.22
    records (0.19.0 has a bridge too, off by default, that takes only ``{"name", "arguments"}`` and answers
    a bridge call itself before any middleware). When it does not, a bridged record is played with Tool
    Search off and unbridged (``run``): each recorded bridged call is served as its underlying call, the
    tool that really ran, which this Hermes runs (or the ladder serves) like any direct call."""
    import importlib.util

    try:
        return importlib.util.find_spec("tools.tool_search_validation") is not None
    except (ImportError, ValueError):
        return False


def answer_bridge_names_through_middleware() -> None:
    """In this play's process only: a call named ``tool_search``, ``tool_describe`` or ``tool_call`` goes
    to the registry (the recorded stand-in) and so through the ``tool_execution`` middleware, where it is
    served as recorded, instead of to Hermes 0.19.0's own bridge, which answers it before any middleware
    (``model_tools.handle_function_call``). Only an unbridged play needs it (Tool Search is off there):
    the catalog reads and a batch of several calls, which have no one underlying call, stay as made."""
    try:
        from tools import tool_search
    except ImportError:
        return
    if callable(getattr(tool_search, "is_bridge_tool", None)):
        tool_search.is_bridge_tool = lambda _name: False


def run(spec: dict[str, Any]) -> dict[str, Any]:
    overlay = dict(spec.get("config_overlay") or {})
    bridged = spec.get("tool_search") == "on"
    native_bridge = bridged and speaks_recorded_bridge()
    # A Hermes whose bridge cannot take the recorded calls plays them unbridged (speaks_recorded_bridge).
    unbridge = bridged and not native_bridge
    overlay["tools"] = {"tool_search": {"enabled": "on" if native_bridge else "off"}}
    if spec.get("overlay_dir"):
        overlay_hermes_home(overlay, spec["overlay_dir"])
    block_endpoint_probes(spec.get("base_url"))
    import run_agent  # plugin discovery happens here (the recording plugin is disabled by env)
    from hermes_cli import __version__ as hermes_version
    from hermes_cli.plugins import PluginContext, PluginManifest, get_plugin_manager

    source = Run.load(spec["source"])
    options = PlayOptions(
        base_url=spec["base_url"], model=spec["model"], api_key_env=spec.get("api_key_env"),
        allow_destructive=bool(spec.get("allow_destructive")), stale_timeout=spec.get("stale_timeout"),
        store=RunStore(spec["store"]), cut=spec.get("cut"), serve_only=bool(spec.get("serve_only")),
        max_iterations=int(spec.get("max_iterations") or 50), run_id=spec.get("run_id"),
        stream_timing=str(spec.get("stream_timing") or "fast"),
    )
    session = start_play(source, options, engine="hermes", framework_version=hermes_version, unbridge=unbridge)
    cursor = session.cursor
    # What this play's Hermes ran with: the record's api mode (or --api's), Tool Search as set above.
    session.recorder.meta({"api_mode": spec["api_mode"], "tool_search": "on" if native_bridge else "off"})
    api = wire.API_OF_MODE[spec["api_mode"]]
    # A record that names no toolsets (an import of a Hermes export, another framework's run): the
    # toolsets of Hermes's own tools it declared or called, so Hermes offers them (delegate_task, ...).
    toolsets = list(spec["toolsets"]) or own_toolsets(source, unbridge)
    stand_ins = register_stand_ins(source, native_bridge, unbridge=unbridge)
    if unbridge:
        answer_bridge_names_through_middleware()
    if stand_ins:
        toolsets.append(STAND_IN_TOOLSET)
    has_request, system = _recorded_system(source)
    middleware = PlayMiddleware(session, system, api, frozenset(stand_ins), pin_system=has_request)
    if calls_api_matches(source, api):
        middleware.recorded_wire = _recorded_system_wire(source, api)
    ctx = PluginContext(PluginManifest(name="replaykit-play", source="inproc"), get_plugin_manager())
    ctx.register_middleware("llm_request", middleware.llm_request)
    ctx.register_middleware("llm_execution", middleware.llm_execution)
    ctx.register_middleware("tool_execution", middleware.tool_execution)
    agent = run_agent.AIAgent(
        base_url=options.base_url or OFFLINE_BASE_URL, api_key=options.api_key() or "replaykit-no-key", provider="custom",
        model=options.model, enabled_toolsets=toolsets, quiet_mode=True, skip_context_files=True,
        skip_memory=True, platform=spec.get("platform") or "cli", max_iterations=options.max_iterations,
        tool_delay=0.0, api_mode=spec["api_mode"],
    )
    if _sends_media(source):
        # The recorded model took the images natively (its requests carry them). Hermes decides that from
        # config.yaml / models.dev, which know nothing of a replayed model, and otherwise replaces each
        # image with an auxiliary vision description before the request (agent._model_supports_vision).
        agent._model_supports_vision = lambda: True
    history: list[dict[str, Any]] | None = None
    final: str | None = None
    status = "completed"
    error: str | None = None
    try:
        pending = _turns(source, cursor)
        while (message := cursor.next_turn(pending)) is not None:  # less those handed over inside a turn
            session.recorder.turn_start(message, provenance=Provenance.SERVED)
            result = agent.run_conversation(user_content(message), conversation_history=history)
            history = result.get("messages")
            final = result.get("final_response")
            turn_status = "failed" if result.get("failed") else "interrupted" if result.get("interrupted") else "completed"
            session.recorder.turn_end(final, status=turn_status,
                                      provenance=Provenance.LIVE if cursor.live else Provenance.SERVED)
            if turn_status != "completed":
                status, error = turn_status, str(result.get("error") or result.get("turn_exit_reason") or turn_status)
                break
    except Exception as exc:
        status, error = "failed", " ".join(f"{type(exc).__name__}: {exc}".split())[:400]
    played = session.finish(final, status=status, error=error)
    return played.to_json()


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m replaykit.engines.hermes.driver SPEC.json OUT.json", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as handle:
        spec = json.load(handle)
    try:
        out = run(spec)
    except ReplaykitError as exc:
        out = {"error": str(exc), "error_kind": "bad_input"}
    with open(argv[1], "w", encoding="utf-8") as handle:
        json.dump(out, handle, default=str)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
