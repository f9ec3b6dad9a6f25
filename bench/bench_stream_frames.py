"""Cost of keeping a stream chunk for chunk: what recording the frames adds to assembling the response
(what the recorder did before frames were kept), and how large the stored frames are next to the SSE
body they came from, for each API, in the same process.

Workload (real size): a streamed answer of ``--tokens`` text deltas (default 400, one token each, as
providers send them), a reasoning part of a quarter as many deltas, and two tool calls whose arguments
(about 600 characters each) arrive in 8-character fragments; Chat with the usage chunk at the end.

- baseline: parse the SSE body and assemble the response (``codecs.assemble_stream``);
- frames: the same, plus ``frames.pack`` and the frame timing map the transport builds;
- serve: ``frames.for_serving`` (unpack, check the digest) and ``frames.render``, against the least a
  client does with the same stream: decode every frame's JSON (``frames.parse_sse`` of the body);
- size: the packed frames (canonical JSON) against the SSE body.

    PYTHONPATH=$PWD python bench/bench_stream_frames.py [--tokens 400] [--repeat 20] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from replaykit.core.trace import codecs
from replaykit.core.trace.codecs import frames
from replaykit.testing import wire
from replaykit.testing.script import Reply, ScriptRequest, ToolCall

APIS = {"openai-chat": "chat", "openai-responses": "responses", "anthropic-messages": "anthropic"}


def _body(api: str, tokens: int) -> bytes:
    """An SSE body of real size, rendered by the scripted server's wire module with fine fragments."""
    text = " ".join(f"w{i}" for i in range(tokens))
    args = {"path": "/srv/app/" + "x" * 560, "mode": "read"}
    reply = Reply(text=text, reasoning=" ".join(f"r{i}" for i in range(tokens // 4)),
                  tool_calls=(ToolCall("read_file", args, "call_1"), ToolCall("read_file", args, "call_2")))
    req = ScriptRequest(api=APIS[api], body={}, index=0, model="m", stream=True, tool_names=("read_file",),  # type: ignore[arg-type]
                        user_texts=("go",), tool_results_since_user=0, tool_results_total=0, system_text="")
    answer = wire.resolve(reply, req, wire.Ids(), APIS[api])  # type: ignore[arg-type]
    original = wire.pieces

    def fine(s: str, n: int = 3) -> list[str]:  # one token per text delta, 8-char argument fragments
        if s.startswith("{"):
            return [s[i:i + 8] for i in range(0, len(s), 8)]
        return [w + " " for w in s.split(" ")] if s else []

    wire.pieces = fine  # type: ignore[assignment]
    try:
        if api == "openai-chat":
            out = "".join(wire.chat_sse(answer, "m", "chatcmpl-1", True))
        elif api == "openai-responses":
            out = "".join(wire.responses_sse(answer, "m", "resp_1", wire.Ids(), {}))
        else:
            out = "".join(wire.anthropic_sse(answer, "m", "msg_1"))
    finally:
        wire.pieces = original  # type: ignore[assignment]
    return out.encode()


def _best(fn: Any, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def measure(api: str, tokens: int, repeat: int) -> dict[str, Any]:
    body = _body(api, tokens)
    marks = [(i, 0.001 * n) for n, i in enumerate(range(256, len(body) + 256, 256))]

    def baseline() -> Any:
        return codecs.assemble_stream(api, frames.parse_sse(body).payloads)

    def with_frames() -> Any:
        stream = frames.parse_sse(body)
        stream.api = api
        m = 0
        offsets = []
        for end in stream.ends:
            while m < len(marks) - 1 and marks[m][0] < end:
                m += 1
            offsets.append(marks[m][1])
        stream.offsets = offsets
        return frames.with_frames(codecs.assemble_stream(api, stream.payloads), stream)

    response = with_frames()
    stored = len(json.dumps(response.provider_details["stream"], separators=(",", ":"), ensure_ascii=False))
    served = frames.for_serving(api, response, {"stream_options": {"include_usage": True}})
    assert served.offsets is not None and len(served.frames) == len(frames.parse_sse(body).frames)
    t_base, t_frames = _best(baseline, repeat), _best(with_frames, repeat)
    t_old = _best(lambda: frames.parse_sse(body), repeat)
    t_serve = _best(lambda: frames.render(frames.for_serving(api, response, {})), repeat)
    return {"api": api, "frames": len(served.frames), "sse_bytes": len(body), "stored_bytes": stored,
            "size_ratio": round(stored / len(body), 3),
            "record_baseline_ms": round(t_base * 1000, 3), "record_with_frames_ms": round(t_frames * 1000, 3),
            "record_ratio": round(t_frames / t_base, 2),
            "client_decode_ms": round(t_old * 1000, 3), "serve_frames_ms": round(t_serve * 1000, 3),
            "serve_ratio": round(t_serve / t_old, 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [measure(api, args.tokens, args.repeat) for api in APIS]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'api':<20}{'frames':>7}{'SSE KB':>8}{'stored KB':>10}{'size':>7}"
          f"{'record ms (base -> frames)':>29}{'ratio':>7}{'serve ms (client decode, serve)':>33}{'ratio':>7}")
    for r in rows:
        print(f"{r['api']:<20}{r['frames']:>7}{r['sse_bytes'] / 1024:>8.1f}{r['stored_bytes'] / 1024:>10.1f}"
              f"{r['size_ratio']:>7.2f}{r['record_baseline_ms']:>17.2f} -> {r['record_with_frames_ms']:<8.2f}"
              f"{r['record_ratio']:>7.2f}{r['client_decode_ms']:>21.2f}, {r['serve_frames_ms']:<8.2f}"
              f"{r['serve_ratio']:>7.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
