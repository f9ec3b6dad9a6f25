"""Streamed responses kept chunk for chunk: the frames of a stream, stored compactly in the IR.

A *frame* is one server-sent event as the provider sent it: its ``event:`` name (``None`` when the
line is absent, as in Chat Completions) and its JSON ``data`` payload. A recorded stream is kept in
``LLMResponse.provider_details["stream"]`` (an optional key: a reader that does not know it keeps it
as opaque detail and serves the assembled response as before) as::

    {"v": 1, "api": "openai-chat", "frames": [...], "common": {...}, "names": "type",
     "seq": 0, "ms": [0, 12, 40, ...], "done": true}

- ``frames``: each payload, less what is stored once instead of per frame:
  ``common`` (keys with the same value in every frame: a Chat chunk's ``id``, ``object``, ``created``,
  ``model``...), ``by_type`` (the same, among the frames of one ``type``: a Responses delta's ``item_id``,
  ``output_index``, ``content_index``), ``seq`` (a ``sequence_number`` that counts up by one from ``seq``: Responses events),
  and a ``response`` object that repeats the last one (Responses' ``response.created`` /
  ``in_progress`` hold the final response but for a few keys): ``{"$patch": {"set": {...}, "drop": [...]}}``;
- ``names``: ``"type"`` when every frame's event name is its payload's ``type`` (Responses, Anthropic),
  else a list of names (``None``: no ``event:`` line); absent when no frame had one (Chat);
- ``ms``: when each frame arrived, in milliseconds from the first byte of the body (``--stream-timing
  recorded`` paces a served stream by it); absent when unknown;
- ``done``: the stream ended with ``data: [DONE]`` (Chat Completions);
- ``check``: a digest of the response the frames assembled to when recorded (``faithful``).

Pure functions over dicts; the transport (``replaykit.adapters.openai``) parses and renders the bytes.
A stream whose frames no longer assemble to the recorded response (a branch edited the answer, a
redaction rewrote it) is not served as recorded: ``faithful`` says so, and the caller falls back to a
stream synthesized from the response (``synthesize``), as for a run recorded without boundaries.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from replaykit.core.errors import BadInput, CodecError
from replaykit.core.trace.canonical import canonical_json
from replaykit.core.trace.ir import LLMResponse

_T = TypeVar("_T")
KEY = "stream"  # the key under LLMResponse.provider_details
VERSION = 1
_PATCH = "$patch"
_TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed"})


@dataclass
class Frames:
    """A stream as a list of frames (name, payload), with arrival offsets (seconds) when known."""

    api: str
    frames: list[tuple[str | None, dict[str, Any]]]
    offsets: list[float] | None = None
    done: bool = False  # ends with ``data: [DONE]``
    ends: list[int] = field(default_factory=list)  # parsed from bytes: offset just past each frame
    check: str | None = None  # digest of the response the frames assembled to when recorded

    @property
    def payloads(self) -> list[dict[str, Any]]:
        return [payload for _, payload in self.frames]


# ------------------------------------------------------------------------------------------ parse

def parse_sse(data: bytes) -> Frames:
    """The frames of an SSE body, in order (``[DONE]`` noted, comments and torn frames skipped), with the
    byte offset just past each frame in ``ends`` (to time them; empty for a CRLF body, whose offsets
    would not line up). ``api`` is left empty: the caller knows it."""
    timed = b"\r" not in data
    if not timed:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    out: list[tuple[str | None, dict[str, Any]]] = []
    ends: list[int] = []
    done = False
    pos = 0
    size = len(data)
    while pos < size:
        cut = data.find(b"\n\n", pos)
        stop = size if cut < 0 else cut + 2
        block = data[pos:stop]
        pos = stop
        name: str | None = None
        lines: list[bytes] = []
        for line in block.split(b"\n"):
            if line.startswith(b"data:"):
                lines.append(line[5:].removeprefix(b" "))
            elif line.startswith(b"event:"):
                name = line[6:].strip().decode("utf-8", "replace")
        if not lines:
            continue
        payload = b"\n".join(lines)
        if payload.strip() == b"[DONE]":
            done = True
            continue
        try:
            value = json.loads(payload)
        except ValueError:
            continue  # a torn last frame (client closed early): the rest is still assembled
        if isinstance(value, dict):
            out.append((name, value))
            ends.append(stop)
    return Frames("", out, None, done, ends if timed else [])


# ------------------------------------------------------------------------------------------- pack

def pack(stream: Frames) -> dict[str, Any]:
    """The compact JSON form of ``stream`` (see the module docstring)."""
    payloads = [dict(p) for p in stream.payloads]
    out: dict[str, Any] = {"v": VERSION, "api": stream.api}
    common = _common_keys(payloads)
    if common:
        out["common"] = common
        payloads = [{k: v for k, v in p.items() if k not in common} for p in payloads]
    by_type: dict[str, dict[str, Any]] = {}
    for kind in dict.fromkeys(p.get("type") for p in payloads):
        if isinstance(kind, str):
            shared = _common_keys([p for p in payloads if p.get("type") == kind])
            if shared:
                by_type[kind] = shared
    if by_type:  # what every delta of one kind repeats (item id, output and content index...)
        out["by_type"] = by_type
        payloads = [{k: v for k, v in p.items() if k not in by_type.get(p.get("type"), ())}  # type: ignore[arg-type]
                    for p in payloads]
    seqs = [p.get("sequence_number") for p in payloads]
    if payloads and all(isinstance(s, int) and not isinstance(s, bool) for s in seqs) and \
            all(s == seqs[0] + i for i, s in enumerate(seqs)):  # type: ignore[operator]
        out["seq"] = seqs[0]
        payloads = [{k: v for k, v in p.items() if k != "sequence_number"} for p in payloads]
    final = _final_response(payloads)
    if final is not None:
        payloads = [_patched(p, final) for p in payloads]
    out["frames"] = payloads
    names = [name for name, _ in stream.frames]
    if any(n is not None for n in names):
        typed = all(n == p.get("type") for n, p in zip(names, stream.payloads, strict=True))
        out["names"] = "type" if typed else names
    if stream.offsets is not None and len(stream.offsets) == len(payloads):
        out["ms"] = [round(t * 1000) for t in stream.offsets]
    if stream.done:
        out["done"] = True
    return out


def unpack(data: Any) -> Frames:
    """``pack``'s inverse (raises CodecError on a damaged record)."""
    if not isinstance(data, dict) or not isinstance(data.get("frames"), list) or data.get("v") != VERSION:
        raise CodecError("stream frames: not a version-1 frame record")
    common = data.get("common") or {}
    raw = data["frames"]
    if not all(isinstance(p, dict) for p in raw) or not isinstance(common, dict):
        raise CodecError("stream frames: a frame is not a JSON object")
    final = _final_response(raw)
    payloads: list[dict[str, Any]] = []
    seq = data.get("seq")
    by_type = data.get("by_type") or {}
    if not isinstance(by_type, dict) or not all(isinstance(v, dict) for v in by_type.values()):
        raise CodecError("stream frames: damaged per-type keys")
    for i, frame in enumerate(raw):
        kind = frame.get("type")
        payload = {**common, **(by_type.get(kind) or {} if isinstance(kind, str) else {}), **frame}
        if isinstance(seq, int):
            payload["sequence_number"] = seq + i
        response = payload.get("response")
        if isinstance(response, dict) and _PATCH in response:
            payload["response"] = _unpatched(response[_PATCH], final)
        payloads.append(payload)
    names = data.get("names")
    if names == "type":
        frames = [(p.get("type") if isinstance(p.get("type"), str) else None, p) for p in payloads]
    elif isinstance(names, list) and len(names) == len(payloads):
        frames = [(n if isinstance(n, str) else None, p) for n, p in zip(names, payloads, strict=True)]
    else:
        frames = [(None, p) for p in payloads]
    ms = data.get("ms")
    offsets = [float(t) / 1000 for t in ms] if isinstance(ms, list) and len(ms) == len(payloads) \
        and all(isinstance(t, int | float) for t in ms) else None
    check = data.get("check") if isinstance(data.get("check"), str) else None
    return Frames(str(data.get("api") or ""), frames, offsets, bool(data.get("done")), check=check)


def _common_keys(payloads: list[dict[str, Any]]) -> dict[str, Any]:
    if len(payloads) < 2:
        return {}
    first = payloads[0]
    common = {}
    for key, value in first.items():
        if key in ("type", "sequence_number", "response"):
            continue  # what tells frames apart, and what ``_patched`` stores
        if all(key in p and p[key] == value and type(p[key]) is type(value) for p in payloads[1:]):
            common[key] = value
    return common


def _final_response(payloads: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    for payload in reversed(payloads):
        if payload.get("type") in _TERMINAL and isinstance(payload.get("response"), dict):
            final: dict[str, Any] = payload["response"]
            return final
    return None


def _patched(payload: dict[str, Any], final: dict[str, Any]) -> dict[str, Any]:
    response = payload.get("response")
    if not isinstance(response, dict) or response is final or _PATCH in response:
        return payload
    patch = {"set": {k: v for k, v in response.items() if k not in final or final[k] != v},
             "drop": [k for k in final if k not in response]}
    return {**payload, "response": {_PATCH: patch}}


def _unpatched(patch: Any, final: dict[str, Any] | None) -> dict[str, Any]:
    if not isinstance(patch, dict) or final is None:
        raise CodecError("stream frames: a patched response without the final response")
    drop = set(patch.get("drop") or [])
    out = {k: v for k, v in final.items() if k not in drop}
    out.update(patch.get("set") or {})
    return out


# ----------------------------------------------------------------------------------------- serve

def recorded(response: LLMResponse) -> Frames | None:
    """The frames recorded with ``response`` (None: recorded without boundaries, or unreadable)."""
    data = (response.provider_details or {}).get(KEY)
    if data is None:
        return None
    try:
        return unpack(data)
    except CodecError:
        return None


def with_frames(response: LLMResponse, stream: Frames) -> LLMResponse:
    """``response`` (assembled from ``stream``) carrying ``stream``'s frames (a copy), with the digest of
    what they assemble to (``check``), so serving can tell they still match without assembling them."""
    merged = dict(response.provider_details or {})
    merged[KEY] = {**pack(stream), "check": _digest(response)}
    return response.model_copy(update={"provider_details": merged})


def _digest(response: LLMResponse) -> str:
    message = canonical_json(response.message.model_dump(mode="json", exclude_none=True))
    return hashlib.blake2b(f"{response.finish_reason}\n{message}".encode("utf-8", "surrogatepass"),
                           digest_size=12).hexdigest()


def without_frames(details: dict[str, Any] | None) -> dict[str, Any] | None:
    """``provider_details`` of a response with its frames removed (None when nothing else is left)."""
    if not details or KEY not in details:
        return details
    rest = {k: v for k, v in details.items() if k != KEY}
    return rest or None


def faithful(stream: Frames, response: LLMResponse) -> bool:
    """Do the frames still assemble to ``response`` (same message and finish reason)? Answered from the
    digest recorded with them when there is one (an edit of the answer changes it), else by assembling."""
    if stream.check is not None:
        return stream.check == _digest(response)
    from replaykit.core.trace import codecs  # the dispatch imports this module's package

    try:
        assembled = codecs.assemble_stream(stream.api, stream.payloads)
    except Exception:
        return False
    return assembled.finish_reason == response.finish_reason and \
        canonical_json(assembled.message.model_dump(mode="json", exclude_none=True)) == \
        canonical_json(response.message.model_dump(mode="json", exclude_none=True))


def for_serving(api: str, response: LLMResponse, request_body: dict[str, Any]) -> Frames:
    """The frames to serve for ``response``: as recorded when they are this API's and still assemble to
    it; else synthesized (the whole text in one delta per part: a run recorded without boundaries)."""
    stream = recorded(response)
    if stream is not None and stream.api == api and faithful(stream, response):
        return stream
    return synthesize(api, response, request_body)


def synthesize(api: str, response: LLMResponse, request_body: dict[str, Any]) -> Frames:
    """A stream built from a response (one delta per text / reasoning part / tool call's arguments)."""
    from replaykit.core.trace import codecs

    payloads: list[dict[str, Any]] = codecs.codec(api).synthesize_stream(response, request_body)
    named = api != "openai-chat"
    return Frames(api, [(p.get("type") if named else None, p) for p in payloads], None, done=not named)


def render(stream: Frames) -> list[bytes]:
    """Each frame as its SSE bytes (then ``data: [DONE]`` when the stream had it)."""
    out = []
    for name, payload in stream.frames:
        head = f"event: {name}\n" if name else ""
        out.append(f"{head}data: {json.dumps(payload, separators=(',', ':'), ensure_ascii=False)}\n\n".encode())
    if stream.done:
        out.append(b"data: [DONE]\n\n")
    return out


def delays(stream: Frames, timing: str) -> list[float]:
    """Seconds to wait before each rendered frame: all 0 for ``fast`` or unknown times; the recorded
    gaps for ``recorded`` (``[DONE]`` follows the last frame at once)."""
    count = len(stream.frames) + (1 if stream.done else 0)
    if timing != "recorded" or stream.offsets is None:
        return [0.0] * count
    out, last = [], 0.0
    for t in stream.offsets:
        out.append(max(0.0, t - last))
        last = max(last, t)
    return out + [0.0] * (count - len(out))


def paced(chunks: Iterable[_T], waits: Iterable[float],
          sleep: Callable[[float], Any] = time.sleep) -> Iterator[_T]:
    """Each chunk after its wait (``delays``): the one pacing loop of a served stream, whoever serves it
    (the HTTP transport, an engine's cursor, ``replaykit replay``). A zero wait never calls ``sleep``."""
    for chunk, wait in zip(chunks, waits, strict=True):
        if wait > 0:
            sleep(wait)
        yield chunk


def play(stream: Frames, timing: str, sleep: Callable[[float], Any] = time.sleep) -> Iterator[bytes]:
    """``stream`` as its SSE chunks (``render``), one per frame, paced by ``timing`` (``delays``)."""
    return paced(render(stream), delays(stream, timing), sleep)


def replayed(response: LLMResponse, timing: str, sleep: Callable[[float], Any] = time.sleep) -> list[bytes] | None:
    """Serve the frames recorded with ``response`` chunk for chunk at ``timing``'s pace (``play``) and
    return the chunks served, as a client reading the stream would have received them; None (nothing
    served, nothing waited) for a response recorded without boundaries or one whose frames no longer
    assemble to it (an edited answer: an in-process replay hands over the response as before)."""
    stream = recorded(response)
    if stream is None or not faithful(stream, response):
        return None
    return list(play(stream, timing, sleep))


STREAM_TIMINGS = ("fast", "recorded")


def check_timing(value: str) -> str:
    """``value`` if it names a pacing (``fast``, ``recorded``), else a one-line ``BadInput``."""
    if value not in STREAM_TIMINGS:
        raise BadInput(f"unknown stream timing {str(value)[:40]!r}: use fast or recorded")
    return value


def finished(stream: Frames) -> bool:
    """Did the provider finish the stream (its terminal frame arrived)? Clients stop reading at the end
    marker without draining the body, so a stream closed by the client may still be complete."""
    from replaykit.core.trace import codecs

    return bool(codecs.codec(stream.api).stream_complete(stream.payloads, stream.done))
