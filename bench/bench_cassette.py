"""Cost of recording and serving model calls at the httpx layer (cassettes), against the same openai
client on a plain in-process transport, in the same process.

Workload (real size): one agent conversation of N model calls (default 500) with a 6 KB system prompt,
8 tools, tool results of 250-2,000 characters and all history kept, sent through the real ``openai``
client. The provider is an in-process ``httpx.MockTransport`` that returns a canned completion (a tool
call, or the final answer last), so the baseline is the client's own cost per call.

- record: the same loop inside ``Cassette(path, "all")`` (every request decoded, delta-encoded, written);
- serve: the same loop inside ``Cassette(path, "none")`` (matched by fingerprint, answered from the run);
- in-transport: the time spent inside replaykit's session (decode, match, record) per call, measured in
  the same recording run as the client's whole call, so machine load cancels out of the ratio;
- size: the trace file against the sum of the request bodies (linear vs quadratic).

    PYTHONPATH=$PWD python bench/bench_cassette.py [--calls 500] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SYSTEM = ("You are a careful assistant. " * 220)[:6000]
TOOLS = [{"type": "function", "function": {"name": f"tool_{i}", "description": f"Does thing {i}. " * 10,
                                           "parameters": {"type": "object",
                                                          "properties": {"x": {"type": "string"}}}}}
         for i in range(8)]


def _completion(step: int, final: bool) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": "All done." if final else None}
    if not final:
        message["tool_calls"] = [{"id": f"call_{step}", "type": "function",
                                  "function": {"name": f"tool_{step % 8}", "arguments": json.dumps({"x": f"v{step}"})}}]
    return {"id": f"cmpl-{step}", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop" if final else "tool_calls"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


def _client(calls: int) -> Any:
    import httpx
    import openai

    state = {"n": 0}

    def handler(request: httpx.Request) -> httpx.Response:
        step = state["n"]
        state["n"] += 1
        return httpx.Response(200, json=_completion(step, step == calls - 1))

    return openai.OpenAI(base_url="http://bench.invalid/v1", api_key="sk-bench", max_retries=0,
                         http_client=httpx.Client(transport=httpx.MockTransport(handler)))


def _conversation(calls: int) -> tuple[float, int]:
    """Run the agent loop; return (seconds, total request body bytes)."""
    rng = random.Random(7)
    client = _client(calls)
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Go."}]
    sent = 0
    start = time.perf_counter()
    for _ in range(calls):
        sent += len(json.dumps(messages)) + len(json.dumps(TOOLS))
        message = client.chat.completions.create(model="m", messages=messages, tools=TOOLS).choices[0].message
        if not message.tool_calls:
            break
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": "r" * rng.randint(250, 2000)})
    return time.perf_counter() - start, sent


def _timed(cls: Any, names: tuple[str, ...], spent: list[float]) -> None:
    """Wrap ``cls``'s methods so the time spent in them adds up in ``spent[0]``."""
    for name in names:
        original = getattr(cls, name)

        def timed(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return _original(*args, **kwargs)
            finally:
                spent[0] += time.perf_counter() - start

        setattr(cls, name, timed)


def bench(calls: int) -> list[dict[str, object]]:
    from replaykit.adapters.cassette import Cassette
    from replaykit.adapters.openai import Session

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.jsonl"
        _conversation(20)  # warm-up (imports, pydantic schemas)
        baseline, sent = _conversation(calls)
        spent = [0.0]
        _timed(Session, ("open", "finish"), spent)
        with Cassette(path, "all") as session:
            recorded, _ = _conversation(calls)
        assert session.counters.recorded == calls, session.counters
        in_record = spent[0]
        size = path.stat().st_size
        spent[0] = 0.0
        with Cassette(path, "none") as session:
            served, _ = _conversation(calls)
        assert session.counters.served == calls and not session.misses, session.counters
        in_serve = spent[0]
    per_call = 1e3 / calls
    return [
        {"bench": f"cassette record, ms/call ({calls} calls)", "replaykit": recorded * per_call,
         "baseline": baseline * per_call, "ratio": recorded / baseline},
        {"bench": f"cassette serve, ms/call ({calls} calls)", "replaykit": served * per_call,
         "baseline": baseline * per_call, "ratio": served / baseline},
        {"bench": "in-transport record, ms/call vs client", "replaykit": in_record * per_call,
         "baseline": (recorded - in_record) * per_call, "ratio": in_record / (recorded - in_record)},
        {"bench": "in-transport serve, ms/call vs client", "replaykit": in_serve * per_call,
         "baseline": (served - in_serve) * per_call, "ratio": in_serve / (served - in_serve)},
        {"bench": "cassette trace bytes vs request bytes", "replaykit": size, "baseline": sent,
         "ratio": size / sent},
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = bench(args.calls)
    for row in rows:
        print(f"{row['bench']:<44} replaykit {row['replaykit']:>12,.3f}  baseline {row['baseline']:>14,.3f}  "
              f"ratio {row['ratio']:.3f}")
    if args.json:
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
