"""Cost of translating a long recorded prefix to each wire API, next to the same-API encode, in one process.

Workload (real size): the request of the last model call of a 1000-step tool-loop session
(``testing/long_runs.py``: a system prompt, 100 user turns, 1000 assistant tool calls and their results;
about 2100 messages), recorded on OpenAI Chat Completions.

- baseline: ``codecs.encode_request("openai-chat", ...)``: the same-API encode a Chat play does today;
- for each API X: ``codecs.translate_request(X, ...)`` (the history made legal for X by ``conform``, the
  parameters moved, X's encoder: what a live play on X does per request), and X's own same-API encode
  (``encode_request(X, decode_request(X, body))``: what a play of a run recorded on X does);
- bytes: the body as canonical JSON, per API.

    PYTHONPATH=$PWD python bench/bench_translate.py [--steps 1000] [--repeat 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from replaykit.core.trace import codecs
from replaykit.core.trace.canonical import canonical_json
from replaykit.core.trace.store import RunStore
from replaykit.testing.long_runs import write_tool_loop_run

APIS = ("openai-chat", "openai-responses", "anthropic-messages", "google-gemini", "bedrock-converse")
MODELS = {"openai-chat": "gpt-5", "openai-responses": "gpt-5", "anthropic-messages": "claude-sonnet-4-5",
          "google-gemini": "gemini-3-pro-preview", "bedrock-converse": "anthropic.claude-sonnet-4-5-v1:0"}


def _best(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(steps: int, repeat: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore(Path(tmp))
        write_tool_loop_run(store, "long", steps)
        run = store.load("long")
    last = run.llm_calls()[-1]
    messages, tools = run.request_messages(last), run.request_tools(last.request)
    params = {**last.request.params, "max_tokens": 1024, "temperature": 0.2}
    baseline = _best(lambda: codecs.encode_request("openai-chat", messages, tools, {**params, "model": "gpt-5"}),
                     repeat)
    rows: dict[str, Any] = {}
    for api in APIS:
        with_model = {**params, "model": MODELS[api]}
        translated = codecs.translate_request(api, messages, tools, with_model, "openai-chat")
        seconds = _best(lambda api=api, with_model=with_model: codecs.translate_request(  # type: ignore[misc]
            api, messages, tools, with_model, "openai-chat"), repeat)
        own = codecs.decode_request(api, translated.body)
        same = _best(lambda api=api, own=own: codecs.encode_request(api, own.messages, own.tools, own.params),
                     repeat)
        rows[api] = {"translate_s": round(seconds, 4), "same_api_encode_s": round(same, 4),
                     "translate_vs_chat_encode": round(seconds / baseline, 2),
                     "bytes": len(canonical_json(translated.body).encode()), "losses": len(translated.losses)}
    return {"steps": steps, "messages": len(messages), "baseline_chat_encode_s": round(baseline, 4),
            "chat_bytes": len(canonical_json(codecs.encode_request("openai-chat", messages, tools,
                                                                   {**params, "model": "gpt-5"}).body).encode()),
            "apis": rows, "repeat": repeat, "spread": "best of repeat"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = measure(args.steps, args.repeat)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"prefix: {result['messages']} messages ({args.steps} tool steps); same-API Chat encode "
          f"{result['baseline_chat_encode_s'] * 1000:.1f} ms, {result['chat_bytes']:,} bytes")
    print(f"{'api':<20}{'translate ms':>14}{'x chat':>8}{'same-API ms':>13}{'bytes':>12}{'losses':>8}")
    for api, row in result["apis"].items():
        print(f"{api:<20}{row['translate_s'] * 1000:>14.1f}{row['translate_vs_chat_encode']:>8.2f}"
              f"{row['same_api_encode_s'] * 1000:>13.1f}{row['bytes']:>12,}{row['losses']:>8}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
