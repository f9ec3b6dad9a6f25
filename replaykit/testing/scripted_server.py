"""A scripted LLM provider on 127.0.0.1 for offline tests: OpenAI Chat Completions, OpenAI Responses,
Anthropic Messages (JSON and SSE), Google Gemini (``/v1beta/models/M:generateContent`` and
``:streamGenerateContent?alt=sse``) and AWS Bedrock Converse (``/model/M/converse`` and ``/converse-stream``,
binary event-stream frames), with fault injection and a thread-safe log of every request. Every request
is checked against its API's rules (``testing/validate.py``): the broken rules are kept in
``RecordedRequest.violations`` and, with ``strict=True``, answered with the provider's 400.

Stdlib only, so it runs in any venv and in subprocesses::

    with ScriptedServer(sequence_policy([call("todo", {...})])) as srv:
        agent = AIAgent(base_url=srv.base_url, ...)      # srv.base_url == "http://127.0.0.1:PORT/v1"
        ...
        assert srv.requests[0].body["messages"][0]["role"] == "system"

or from a shell: ``python -m replaykit.testing.scripted_server [--port N] [--script replies.json] [--loop]``
(``--help`` describes the reply script).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from replaykit.testing import eventstream, wire, wire_bedrock, wire_gemini
from replaykit.testing.script import (
    Api,
    Policy,
    Reply,
    ReplyList,
    Script,
    ToolCall,
    as_policy,
    call,
    calls,
    fail_first,
    fault,
    hermes_default_policy,
    per_turn_policy,
    routed_policy,
    sequence_policy,
    summarize,
    text,
)
from replaykit.testing.validate import check_request

# Headers that carry credentials are never logged.
_SECRET_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "proxy-authorization", "cookie",
                             "x-goog-api-key", "x-amz-security-token"})
_ROUTES: dict[str, Api] = {"/v1/chat/completions": "chat", "/v1/responses": "responses", "/v1/messages": "anthropic"}
_GEMINI = re.compile(r"/v1(?:beta|alpha)?/models/([^/:]+):(generateContent|streamGenerateContent)")
_BEDROCK = re.compile(r"/model/([^/]+)/(converse|converse-stream)")


def native_route(path: str) -> tuple[Api, str, bool] | None:
    """(API, model, streamed) of a Gemini or Bedrock path; None for any other path."""
    match = _GEMINI.fullmatch(path)
    if match:
        return "gemini", urllib.parse.unquote(match.group(1)), match.group(2) == "streamGenerateContent"
    match = _BEDROCK.fullmatch(path)
    if match:
        return "bedrock", urllib.parse.unquote(match.group(1)), match.group(2) == "converse-stream"
    return None


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received. Also readable as a mapping (``r["body"]``)."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: Any  # parsed JSON, or None when the body was empty or not JSON
    api: Api | None  # which LLM API it addressed; None for models/probes
    index: int | None  # position among LLM requests; None for non-LLM requests
    reply: Reply | None = None
    received_at: float = field(default_factory=time.time)
    violations: tuple[str, ...] = ()  # the API's rules the body broke (``replaykit.testing.validate``)

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)


class ScriptedServer:
    """Serve scripted replies on 127.0.0.1 at an OS-picked port (or ``port``)."""

    def __init__(self, script: Script | None = None, *, model: str = "scripted-model", port: int = 0,
                 host: str = "127.0.0.1", strict: bool = False) -> None:
        self.policy: Policy = as_policy(script)
        # strict: a body that breaks its API's rules is answered 400, as the provider would; either way
        # the broken rules are on the request's record (``violations``)
        self.strict = strict
        self.model = model
        self._lock = threading.Lock()
        self._log: list[RecordedRequest] = []
        self._llm_count = 0
        self._in_flight = 0
        self._peak_in_flight = 0
        self._stop = threading.Event()
        self._ids = wire.Ids()
        self._httpd = ThreadingHTTPServer((host, port), _make_handler(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- lifecycle
    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def root_url(self) -> str:
        """The bare origin: what google-genai (``http_options.base_url``) and boto3 (``endpoint_url``) take."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ScriptedServer:
        if self._thread is None:
            self._thread = threading.Thread(target=self._httpd.serve_forever, name="scripted-server", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()  # wakes stalled streams so their threads end
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    # -- request log
    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far (a copy), in arrival order."""
        with self._lock:
            return list(self._log)

    @property
    def llm_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.api is not None]

    @property
    def peak_in_flight(self) -> int:
        """The most LLM requests this server was handling at once: each counts from its arrival until its
        handler returned (a stalled stream counts for its whole stall, whatever the client did)."""
        with self._lock:
            return self._peak_in_flight

    def _enter(self, change: int) -> None:
        with self._lock:
            self._in_flight += change
            self._peak_in_flight = max(self._peak_in_flight, self._in_flight)

    def clear(self) -> None:
        with self._lock:
            self._log.clear()

    @property
    def violations(self) -> list[tuple[int | None, str]]:
        """Every broken rule of every LLM request so far: (request index, rule)."""
        return [(r.index, v) for r in self.llm_requests for v in r.violations]

    def _record(self, method: str, path: str, headers: Mapping[str, str], body: Any, api: Api | None,
                violations: Sequence[str] = ()) -> tuple[int | None, RecordedRequest]:
        clean = {k.lower(): v for k, v in headers.items() if k.lower() not in _SECRET_HEADERS}
        with self._lock:
            index = None
            if api is not None:
                index = self._llm_count
                self._llm_count += 1
            rec = RecordedRequest(method, path, clean, body, api, index, violations=tuple(violations))
            self._log.append(rec)
            return index, rec

    def _set_reply(self, rec: RecordedRequest, reply: Reply) -> None:
        with self._lock:
            pos = next(i for i in range(len(self._log) - 1, -1, -1) if self._log[i] is rec)
            self._log[pos] = dataclasses.replace(rec, reply=reply)


def _make_handler(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "replaykit-scripted/1"

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            return

        # -- plumbing
        def _send_json(self, status: int, body: Any, extra: Mapping[str, str] | None = None) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def _read_body(self) -> tuple[Any, bool]:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if not raw:
                return None, True
            try:
                return json.loads(raw), True
            except ValueError:
                return None, False

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0].rstrip("/")
            server._record("GET", path, dict(self.headers), None, None)
            if path in ("/v1/models", "/models"):
                self._send_json(200, {"object": "list", "data": [
                    {"id": server.model, "object": "model", "created": 0, "owned_by": "replaykit",
                     "type": "model", "display_name": server.model, "created_at": "2025-01-01T00:00:00Z"}],
                    "has_more": False, "first_id": server.model, "last_id": server.model})
            elif path == "/health":
                self._send_json(200, {"status": "ok"})
            else:
                self._send_json(404, {"error": {"message": f"not found: {path}", "type": "not_found"}})

        def do_POST(self) -> None:
            routed = self.path.split("?", 1)[0].rstrip("/") in _ROUTES
            if routed:
                server._enter(+1)
            try:
                self._post()
            finally:
                if routed:
                    server._enter(-1)

        def _post(self) -> None:
            path = self.path.split("?", 1)[0].rstrip("/")
            body, ok = self._read_body()
            native = native_route(path)
            if native is not None:
                self._native(path, body, ok, *native)
                return
            api = _ROUTES.get(path)
            violations = check_request(api, body) if api is not None and ok and isinstance(body, dict) else []
            index, rec = server._record("POST", path, dict(self.headers), body, api, violations)
            if api is None or index is None:
                self._send_json(404, {"error": {"message": f"not found: {path}", "type": "not_found"}})
                return
            if not ok or not isinstance(body, dict):
                self._send_json(400, wire.error_body(api, 400, "request body is not a JSON object"))
                return
            if violations and server.strict:
                self._send_json(400, wire.error_body(api, 400, "; ".join(violations)[:2000]))
                return
            req = summarize(api, body, index)
            try:
                reply = server.policy(req)
            except Exception as exc:  # a broken script must show up as a 500, not a hung client
                self._send_json(500, wire.error_body(api, 500, f"script error: {exc!r}"))
                return
            server._set_reply(rec, reply)
            self._answer(api, req.stream, body, reply, req)

        # -- Gemini and Bedrock
        def _native(self, path: str, body: Any, ok: bool, api: Api, model: str, stream: bool) -> None:
            found = check_request(api, body, model) if ok else ["request body is not JSON"]
            index, rec = server._record("POST", path, dict(self.headers), body, api, found)
            if not ok or not isinstance(body, dict) or (found and server.strict):
                self._native_error(api, 400, "; ".join(found)[:2000])
                return
            assert index is not None
            req = dataclasses.replace(summarize(api, body, index), model=model, stream=stream)
            try:
                reply = server.policy(req)
            except Exception as exc:
                self._native_error(api, 500, f"script error: {exc!r}")
                return
            server._set_reply(rec, reply)
            if reply.fault in ("429", "500", "503", "529", "401") or (reply.fault == "stream_error" and not stream):
                # 529 is Anthropic's "overloaded": Gemini and Bedrock say it with a 503 (UNAVAILABLE,
                # ServiceUnavailableException)
                status = {"stream_error": 500, "529": 503}.get(str(reply.fault)) or int(reply.fault)  # type: ignore[arg-type]
                message = "scripted: the model is overloaded" if reply.fault == "529" else f"scripted HTTP {status}"
                self._native_error(api, status, message, reply.retry_after)
                return
            prefix = "tooluse_" if api == "bedrock" else "call_"
            answer = wire.resolve(reply, req, server._ids, api if api != "bedrock" else "anthropic")
            if api == "bedrock":
                answer = dataclasses.replace(answer, tool_calls=tuple(
                    (cid if cid.startswith(prefix) else server._ids.next(prefix), n, a) for cid, n, a in answer.tool_calls))
            rid = server._ids.next("resp-")
            if not stream:
                if reply.fault == "stall":
                    self._stall_plain(reply)
                elif reply.fault == "malformed":
                    self._send_raw(200, b'{"candidates": [', "application/json")
                else:
                    self._send_json(200, wire_gemini.gemini_json(answer, model, rid) if api == "gemini"
                                    else wire_bedrock.converse_json(answer))
                return
            if reply.fault == "stall":
                # the stream goes silent before its last frame, however short the answer
                total = sum(1 for _ in (wire_gemini.gemini_sse(answer, model, rid) if api == "gemini"
                                        else wire_bedrock.converse_events(answer)))
                reply = dataclasses.replace(reply, stall_after_chunks=min(reply.stall_after_chunks, total - 1))
            if api == "gemini":
                frames: Iterator[str | bytes] = wire_gemini.gemini_sse(answer, model, rid)
                if reply.fault == "stream_error":
                    frames = _then_error(frames, reply.stall_after_chunks, "data: " + json.dumps(
                        wire_gemini.error_body(503, "scripted in-stream error")) + "\r\n\r\n")
                if reply.fault == "malformed":
                    frames = _then_error(frames, 1, 'data: {"candidates": [{"content": \r\n\r\n')
                self._stream(frames, Reply() if reply.fault in ("malformed", "stream_error") else reply, api)
                return
            corrupt = 1 if reply.fault == "malformed" else None
            frames = wire_bedrock.converse_stream(answer, corrupt_at=corrupt)
            if reply.fault == "stream_error":
                frames = _then_error(frames, reply.stall_after_chunks, eventstream.exception(
                    "modelStreamErrorException", "scripted: the model stream failed; try again"))
            self._stream(frames, Reply() if reply.fault in ("malformed", "stream_error") else reply, api,
                         "application/vnd.amazon.eventstream")

        def _native_error(self, api: Api, status: int, message: str, retry_after: float | None = None) -> None:
            extra = {"Retry-After": f"{retry_after:g}"} if status == 429 and retry_after is not None else {}
            if api == "gemini":
                self._send_json(status, wire_gemini.error_body(status, message, retry_after), extra)
            else:
                self._send_json(status, wire_bedrock.error_body(message), {**extra, **wire_bedrock.error_headers(status)})

        # -- answering
        def _answer(self, api: Api, stream: bool, body: dict[str, Any], reply: Reply, req: Any) -> None:
            if reply.fault in ("429", "500", "503", "401", "529"):
                status = int(reply.fault)
                extra = {"Retry-After": f"{reply.retry_after:g}"} if status in (429, 529) else {}
                self._send_json(status, wire.error_body(api, status, f"scripted HTTP {status}"), extra)
                return
            model = str(body.get("model") or server.model)
            answer = wire.resolve(reply, req, server._ids, api)
            prefix = {"chat": "chatcmpl-", "responses": "resp_", "anthropic": "msg_"}[api]
            rid = server._ids.next(prefix)
            if not stream:
                if reply.fault == "malformed":
                    self._send_raw(200, b'{"id": "broken", "choices": [', "application/json")
                    return
                if reply.fault == "stall":
                    self._stall_plain(reply)
                    return
                if api == "chat":
                    out = wire.chat_json(answer, model, rid)
                elif api == "responses":
                    out = wire.responses_json(answer, model, rid, server._ids, body)
                else:
                    out = wire.anthropic_json(answer, model, rid)
                self._send_json(200, out)
                return
            if api == "chat":
                include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                frames: Iterator[str] = wire.chat_sse(answer, model, rid, include_usage)
            elif api == "responses":
                frames = wire.responses_sse(answer, model, rid, server._ids, body)
            else:
                frames = wire.anthropic_sse(answer, model, rid)
            self._stream(frames, reply, api)

        def _send_raw(self, status: int, data: bytes, ctype: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stall_plain(self, reply: Reply) -> None:
            # Headers promise a body that never fully arrives.
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.wfile.write(b'{"id": "stalled",')
            self.wfile.flush()
            server._stop.wait(reply.stall_seconds)
            self.close_connection = True

        def _stream(self, frames: Iterator[str] | Iterator[str | bytes], reply: Reply, api: Api,
                    content_type: str = "text/event-stream") -> None:
            # A stream without a length: the connection closes at the end of the stream. Bedrock's
            # event stream goes chunked, as AWS sends it (botocore reads it chunk by chunk).
            chunked = content_type == "application/vnd.amazon.eventstream"
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            if chunked:
                self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            try:
                for n, frame in enumerate(frames):
                    if reply.fault == "stream_error" and n >= reply.stall_after_chunks:
                        self.wfile.write(wire.stream_error_frame(api).encode())
                        self.wfile.flush()
                        return
                    if reply.fault == "stall" and n >= reply.stall_after_chunks:
                        self.wfile.flush()
                        server._stop.wait(reply.stall_seconds)
                        return  # close without finishing the stream
                    if reply.fault == "malformed" and n == 1:
                        self.wfile.write(b"data: {\"id\": \"broken\", \"choices\": [\n\n")
                        self.wfile.flush()
                        return
                    if reply.frame_gap > 0 and n > 0:
                        server._stop.wait(reply.frame_gap)
                    data = frame.encode() if isinstance(frame, str) else frame
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if chunked else data)
                    self.wfile.flush()
                if chunked:
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                return

    return Handler


def _then_error(frames: Iterator[Any], after: int, error: str | bytes) -> Iterator[Any]:
    """``after`` frames of the stream, then an error inside it (and nothing more)."""
    for n, frame in enumerate(frames):
        if n >= after:
            break
        yield frame
    yield error


SCRIPT_HELP = """\
The reply script (--script FILE) is a JSON list with one reply per model request, given in order:

  [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
    {"text": "Sunny, 21 C in Paris."}
  ]

A reply is an object with any of:
  text          the answer's text
  tool_calls    a list of {"name": ..., "arguments": {...} or a raw JSON string, "id": optional}
  reasoning     reasoning text (where the API carries it)
  usage         {"input_tokens": N, "output_tokens": N} (default: counted from the text)
  fault         instead of the answer: "429" (with retry_after seconds), "500", "503", "401", "529", "stall"
                (stall_after_chunks chunks, then stall_seconds of silence), "length" (cut answer),
                "malformed" (a body that is not JSON), "stream_error" (an error event after
                stall_after_chunks chunks)

The same script answers OpenAI Chat Completions (/v1/chat/completions), OpenAI Responses (/v1/responses),
Anthropic Messages (/v1/messages), Google Gemini (/v1beta/models/M:generateContent and
:streamGenerateContent) and AWS Bedrock Converse (/model/M/converse and /converse-stream), streamed or not. Each reply is given once; when the list is used
up the server says so on stderr and answers with --policy. --loop starts the list again instead, so the
same agent run can be made any number of times, one after the other. --per-turn picks each reply by its
place in the conversation instead (how many tool results follow the last user message): every user
turn of every agent, concurrent ones and live replays of a branch included, gets the script from the
top.

Without --script, --policy answers: "hermes" (a todo tool call, then a final text) or "echo" (repeats
the last user message). The first line on stdout is the base URL to point a client at
(http://127.0.0.1:PORT/v1); stop the server with Ctrl-C.
"""


def _fallback(policy: str) -> Policy:
    if policy == "echo":
        return lambda req: Reply(text=f"echo: {req.last_user_text}")
    return hermes_default_policy()


def _exhausted(count: int) -> None:
    print(f"scripted server: the script's {count} replies are used up; answering with --policy from now on "
          "(--loop replays the script instead)", file=sys.stderr, flush=True)


def _load_script(path: str | None, policy: str, loop: bool = False, per_turn: bool = False) -> Script:
    if path:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        if not isinstance(data, list):
            raise ValueError(f"{path} must hold a JSON list of replies (see --help)")
        if per_turn:
            return per_turn_policy([Reply.from_dict(d) for d in data], then=_fallback(policy))
        return ReplyList([Reply.from_dict(d) for d in data], then=_fallback(policy), loop=loop,
                         on_exhausted=_exhausted)
    return _fallback(policy)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m replaykit.testing.scripted_server",
                                     description="Scripted OpenAI/Anthropic-compatible LLM server on 127.0.0.1, "
                                                 "for trying replaykit and testing agents offline.",
                                     epilog=SCRIPT_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0, help="port (default: OS-picked)")
    parser.add_argument("--script", metavar="FILE", help="JSON file: a list of replies given in order (format below)")
    order = parser.add_mutually_exclusive_group()
    order.add_argument("--loop", action="store_true", help="after the script's last reply, start it again")
    order.add_argument("--per-turn", action="store_true",
                       help="pick each reply by its place in the user turn: every turn gets the script from the top")
    parser.add_argument("--policy", choices=["hermes", "echo"], default="hermes",
                        help="answers without --script, and after a script is used up (without --loop)")
    parser.add_argument("--log", help="append each received request as one JSON line to this file")
    parser.add_argument("--strict", action="store_true",
                        help="answer 400, as the provider would, to a request that breaks its API's rules "
                             "(replaykit.testing.validate); the log records the broken rules either way")
    args = parser.parse_args(argv)
    try:
        script = _load_script(args.script, args.policy, args.loop, args.per_turn)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"error: cannot load script: {exc}", file=sys.stderr)
        return 2
    srv = ScriptedServer(script, port=args.port, strict=args.strict).start()
    print(srv.base_url, flush=True)
    seen = 0
    try:
        while True:
            time.sleep(0.2)
            if args.log:
                reqs = srv.requests
                with open(args.log, "a", encoding="utf-8") as fh:
                    for r in reqs[seen:]:
                        fh.write(json.dumps({"method": r.method, "path": r.path, "api": r.api, "index": r.index,
                                             "headers": dict(r.headers), "body": r.body,
                                             "violations": list(r.violations)}) + "\n")
                seen = len(reqs)
    except KeyboardInterrupt:
        pass
    finally:
        srv.stop()
    return 0


__all__ = [
    "RecordedRequest", "Reply", "ReplyList", "ScriptedServer", "ToolCall", "call", "calls", "fail_first",
    "fault", "hermes_default_policy", "per_turn_policy", "routed_policy", "sequence_policy", "text",
]

if __name__ == "__main__":
    raise SystemExit(main())
