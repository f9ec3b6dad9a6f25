"""What happens to one model request while a recording or a cassette is active.

A ``Session`` is the meeting point of the HTTP transport (``_transport.py``) and the core: it decodes the
request body with the shared codecs, asks the cassette's ``RequestIndex`` (``core/replay/match.py``: the core
fingerprint) whether the record answers it, and records what went live through the ``Recorder``:

- an ``llm_call`` per successful request (exact body: messages, tools, every other field in ``params``;
  streamed responses assembled by the codecs), an ``error`` event per failed attempt (HTTP status or
  transport error, numbered ``attempt``), so retries are visible;
- a ``tool_call`` per tool result the next request carries for a call the model made (the result exactly
  as the framework sent it back; ``status`` error when the framework marked it so), unless a framework
  adapter already recorded that call itself (``record_tool``, e.g. LangGraph's tool node);
- ``turn_start`` when a request ends with a new user message, ``turn_end`` on an answer without tool
  calls, ``run_end`` when the recording closes.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from replaykit.core.errors import CodecError, ReplaykitError
from replaykit.core.replay.match import Miss, RequestIndex
from replaykit.core.trace import codecs, jsonsafe
from replaykit.core.trace.canonical import canonical_json
from replaykit.core.trace.codecs import DecodedRequest
from replaykit.core.trace.ir import Correlation, LLMResponse, Message, ToolCallPart
from replaykit.core.trace.recorder import Recorder

Action = Literal["serve", "live", "miss", "pass"]
_RETRYABLE = frozenset({408, 409, 429})


class CassetteMiss(ReplaykitError):
    """A model request that the cassette does not hold, in a mode that may not go live."""


_thread_token = threading.local()


class _ThreadToken:
    """Stands for one thread (thread idents are reused once a thread ends; this object is not)."""


def task_key() -> Hashable:
    """The live task a request belongs to: the running asyncio task, else the thread. The key object
    itself identifies it (kept referenced by the session), so a later task never inherits it."""
    try:
        task = asyncio.current_task()
    except RuntimeError:
        task = None
    if task is not None:
        return task
    token = getattr(_thread_token, "value", None)
    if token is None:
        token = _thread_token.value = _ThreadToken()
    return token


@dataclass
class Exchange:
    """One model request in flight."""

    api: str
    body: dict[str, Any]
    request: DecodedRequest | None
    task: Hashable
    action: Action
    started: float = field(default_factory=time.monotonic)
    response: LLMResponse | None = None  # served
    step: int | None = None  # served: the recorded step
    miss: str | None = None  # miss: the explanation
    extra: dict[str, Any] | None = None  # framework position (LangGraph node, checkpoint...) at request time

    @property
    def streamed(self) -> bool:
        return bool(self.body.get("stream"))


@dataclass
class Counters:
    served: int = 0
    recorded: int = 0
    errors: int = 0
    misses: int = 0
    provider_calls: int = 0

    def to_json(self) -> dict[str, int]:
        return dict(self.__dict__)


class LinkedRuns(Protocol):
    """Where calls made inside a subgraph go: one linked child run per subgraph invocation."""

    def recorder_for(self, key: str, name: str, extra: dict[str, Any]) -> Recorder: ...


class Session:
    """Routes model requests: serve from ``index``, record through ``recorder``, or refuse (a miss).

    ``repeat``: a recorded call may answer again (hybrid); ``label`` names the test or block in miss
    messages; ``where`` is the cassette file; ``hint`` tells how to fix a miss.
    """

    def __init__(self, *, recorder: Recorder | None, index: RequestIndex | None, repeat: bool = False,
                 label: str = "", where: str = "", hint: str = "") -> None:
        self.recorder = recorder
        self.index = index
        self.repeat = repeat
        self.label = label
        self.where = where
        self.hint = hint
        self.counters = Counters()
        self.misses: list[str] = []
        #: callables returning correlation extras for the current call (framework adapters add them)
        self.context_providers: list[Callable[[], dict[str, Any] | None]] = []
        #: set by a cassette that records subgraphs as linked runs (``corr.extra.subgraph``)
        self.linked: LinkedRuns | None = None
        self._lock = threading.RLock()
        # call id -> (the call, the llm_call event that asked for it, the recorder that wrote that event)
        self._pending: dict[str, tuple[ToolCallPart, str | None, Recorder | None]] = {}
        self._claimed: set[str] = set()
        self._labels: dict[Hashable, str] = {}
        self._chat_prefix: dict[Hashable, tuple[list[Any], list[Message]]] = {}  # task -> last raw + decoded
        self._attempts: dict[tuple[Hashable, int, int], int] = {}
        self._last_turn: str | None = None
        self._turns = 0
        self.final_answer: str | None = None

    # ------------------------------------------------------------------------------------ routing

    def open(self, api: str, raw: bytes) -> Exchange:
        """Decide what to do with a model request (``raw``: its body)."""
        task = task_key()
        try:
            body = json.loads(raw or b"{}")
            request = self._decode(api, body, task)
        except (ValueError, CodecError):
            # Not a body the codecs understand: let it through untouched (and say so in the record).
            if self.recorder is not None:
                self.recorder.opaque("replaykit.adapters.openai", "undecodable_request",
                                     {"api": api, "body": raw[:2000].decode("utf-8", "replace")})
                return Exchange(api, {}, None, task, "pass")
            text = self._miss_text(None, None)
            with self._lock:
                self.counters.misses += 1
                self.misses.append(text)
            return Exchange(api, {}, None, task, "miss", miss=text)
        with self._lock:
            if self.index is not None:
                hit = self.index.take(request.messages, task, repeat=self.repeat)
                if hit is not None:
                    step, event = hit
                    self.counters.served += 1
                    self._note_calls(event.response, None, None)  # served: its event is not in this session
                    return Exchange(api, body, request, task, "serve", response=event.response, step=step)
            if self.recorder is None:
                miss = self.index.explain(request.messages) if self.index is not None else Miss(None, None)
                text = self._miss_text(miss, request)
                self.counters.misses += 1
                self.misses.append(text)
                return Exchange(api, body, request, task, "miss", miss=text)
        return self.begin(request, api, body, task)

    def begin(self, request: DecodedRequest, api: str = "openai-chat", body: dict[str, Any] | None = None,
              task: Hashable | None = None) -> Exchange:
        """Start recording a live model request given already decoded (a framework-level recorder, e.g.
        a PydanticAI model wrapper, calls this; ``finish`` / ``fail`` end it)."""
        task = task_key() if task is None else task
        with self._lock:
            extra = self._extra()
            if self.recorder is not None:
                recorder = self._recorder(extra)
                self._record_tool_results(recorder, request.messages)
                self._maybe_turn_start(recorder, request.messages)
        return Exchange(api, body or {}, request, task, "live", extra=extra)

    def _decode(self, api: str, body: Any, task: Hashable) -> DecodedRequest:
        """Decode a request body. Chat requests of a task repeat the previous one's messages and add a
        few: the shared prefix reuses the already decoded messages (compared as raw JSON, in C), so each
        call decodes only its new messages and the Recorder's delta check is an identity check."""
        messages = body.get("messages") if isinstance(body, dict) else None
        if api != "openai-chat" or not isinstance(messages, list):
            return codecs.decode_request(api, body)
        with self._lock:
            prev_raw, prev_decoded = self._chat_prefix.get(task, ([], []))
        n, limit = 0, min(len(prev_raw), len(messages))
        while n < limit and prev_raw[n] == messages[n]:
            n += 1
        tail = codecs.decode_request(api, {**body, "messages": messages[n:]})
        decoded = DecodedRequest(messages=[*prev_decoded[:n], *tail.messages], tools=tail.tools, params=tail.params)
        with self._lock:
            self._chat_prefix[task] = (messages, decoded.messages)
            while len(self._chat_prefix) > 64:  # bounded: finished tasks fall out
                self._chat_prefix.pop(next(iter(self._chat_prefix)))
        return decoded

    def _miss_text(self, miss: Miss | None, request: DecodedRequest | None) -> str:
        where = f" {self.where}" if self.where else ""
        label = f" for {self.label}" if self.label else ""
        why = miss.describe() if miss is not None else "the request body is not an OpenAI request"
        hint = f"; {self.hint}" if self.hint else ""
        return f"replaykit: model request not in cassette{where}{label}: {why}{hint}"

    # ---------------------------------------------------------------------------------- recording

    def note_provider_call(self) -> None:
        with self._lock:
            self.counters.provider_calls += 1

    def _extra(self) -> dict[str, Any] | None:
        extra: dict[str, Any] = {}
        for provider in self.context_providers:
            try:
                extra.update(provider() or {})
            except Exception:  # noqa: S112  # a framework hook must never break the call
                continue
        return extra or None

    def _recorder(self, extra: dict[str, Any] | None) -> Recorder:
        """The parent run's recorder, or the linked run of the subgraph this call happens in."""
        assert self.recorder is not None
        if self.linked is None or not extra or not extra.get("subgraph"):
            return self.recorder
        ns = str(extra.get("checkpoint_ns", ""))
        key = ns.rsplit("|", 1)[0] if "|" in ns else str(extra["subgraph"])
        return self.linked.recorder_for(key, str(extra["subgraph"]), extra)

    def _corr(self, task: Hashable, extra: dict[str, Any] | None) -> Correlation:
        label = self._labels.setdefault(task, f"task-{len(self._labels)}")
        return Correlation(task_id=label, extra=extra)

    def _split(self, request: DecodedRequest) -> tuple[str | None, dict[str, Any]]:
        params = dict(request.params)
        model = params.pop("model", None)
        return (model if isinstance(model, str) else None), params

    @staticmethod
    def _attempt_key(ex: Exchange) -> tuple[Hashable, int, int]:
        # A retry re-sends the same body: its decoded messages are the previous attempt's objects (prefix
        # reuse), so task + length + the last message's identity name the request in O(1). (The request
        # fingerprint is not stored at record time: it is O(conversation) per call and replay recomputes
        # it from the messages anyway.)
        messages = ex.request.messages if ex.request is not None else []
        return ex.task, len(messages), id(messages[-1]) if messages else 0

    def finish(self, ex: Exchange, response: LLMResponse, *, incomplete: bool = False) -> None:
        """Record a live request that succeeded (``incomplete``: the client stopped reading a stream)."""
        if self.recorder is None or ex.request is None:
            return
        model, params = self._split(ex.request)
        details: dict[str, Any] = {}
        if ex.streamed:
            details["streamed"] = True
        if incomplete:
            details["stream_incomplete"] = True
        with self._lock:
            recorder = self._recorder(ex.extra)
            attempt = self._attempts.pop(self._attempt_key(ex), 0) + 1
            event = recorder.llm_call(
                ex.request.messages, response, api=ex.api, model=model, tools=ex.request.tools,
                params=params, duration=round(time.monotonic() - ex.started, 6), attempt=attempt,
                corr=self._corr(ex.task, ex.extra), provider_details=details or None,
            )
            self.counters.recorded += 1
            self._note_calls(response, event.id, recorder)
            if not response.message.tool_calls and response.finish_reason not in ("length", "error"):
                if recorder is self.recorder:
                    self.final_answer = response.message.text
                recorder.turn_end(response.message.text, sync=False)

    def fail(self, ex: Exchange, *, message: str, error_type: str, status_code: int | None = None) -> None:
        """Record a failed attempt (HTTP error status or transport error)."""
        if self.recorder is None or ex.request is None:
            return
        model, params = self._split(ex.request)
        retryable = status_code is None or status_code in _RETRYABLE or status_code >= 500
        with self._lock:
            key = self._attempt_key(ex)
            self._attempts[key] = self._attempts.get(key, 0) + 1
            self._recorder(ex.extra).llm_error(
                ex.request.messages, message=message[:2000], error_type=error_type, status_code=status_code,
                retryable=retryable, attempt=self._attempts[key], api=ex.api, model=model,
                tools=ex.request.tools, params=params, duration=round(time.monotonic() - ex.started, 6),
                corr=self._corr(ex.task, ex.extra),
            )
            self.counters.errors += 1

    def record_tool(self, call_id: str, name: str, arguments: Any = None, *, result: str | None,
                    status: str = "ok", error: str | None = None, duration: float | None = None,
                    corr_extra: dict[str, Any] | None = None) -> None:
        """A framework adapter saw a tool run itself (exact status and duration): record it, and do
        not infer it again from the next request."""
        if self.recorder is None:
            return
        with self._lock:
            self._claimed.add(call_id)
            call, llm_id, origin = self._pending.pop(call_id, (None, None, None))
            recorder = self._recorder(corr_extra)
            recorder.tool_call(
                call_id, name, arguments if arguments is not None else (call.arguments if call else None),
                raw_arguments=call.raw_arguments if call is not None else None, result=result,
                status=status, error=error, llm_call_id=llm_id if origin is recorder else None, duration=duration,
                corr=Correlation(tool_call_id=call_id, extra=corr_extra or None),
            )

    def _note_calls(self, response: LLMResponse, llm_id: str | None, recorder: Recorder | None) -> None:
        for call in response.message.tool_calls:
            if call.id not in self._claimed:
                self._pending[call.id] = (call, llm_id, recorder)

    def _record_tool_results(self, recorder: Recorder, messages: list[Message]) -> None:
        if not self._pending:
            return
        tail: list[Message] = []
        for message in reversed(messages):  # results answer the last assistant turn: scan only after it
            if message.role == "assistant":
                break
            tail.append(message)
        for message in reversed(tail):
            for part in message.tool_results:
                pending = self._pending.pop(part.tool_call_id, None)
                if pending is None:
                    continue
                call, llm_id, origin = pending
                recorder.tool_call(
                    call.id, call.name, call.arguments, raw_arguments=call.raw_arguments, result=part.content,
                    result_blocks=part.blocks, status="error" if part.is_error else "ok",
                    llm_call_id=llm_id if origin is recorder else None,
                    corr=Correlation(tool_call_id=call.id),
                    provider_details={"source": "the result the framework sent back to the model"},
                )

    def _maybe_turn_start(self, recorder: Recorder, messages: list[Message]) -> None:
        if not messages or messages[-1].role != "user":
            return
        key = canonical_json([jsonsafe.model_data(m, exclude_none=True) for m in messages])
        if key == self._last_turn:
            return  # a retry of the same request
        self._last_turn = key
        recorder.turn_start(messages[-1], turn=self._turns)
        self._turns += 1
