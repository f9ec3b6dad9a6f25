"""Benchmark: a 1000-step session's prefix translated to each wire API, next to the same-API encode.

    PYTHONPATH=. python bench/bench_wire_translation.py [--tool-steps 500] [--repeat 5]

A tool-loop run recorded on OpenAI Chat Completions (``testing/long_runs.py``: 500 tool calls, 10 per
user turn, so 1,050 steps and the whole history in every request) is loaded once; its last request (the
longest prefix: every message of the session) is then encoded:

- baseline, in the same process: ``encode_request("openai-chat", ...)``, what a same-API play sends
  (the recorded body);
- ``translate_request(api, ...)`` for every other wire API with a codec (the history made legal for
  that API by ``codecs/conform.py``, the parameters moved, every loss listed), what a cross-API play
  does once per live step.

Reported per API: median seconds, the ratio to the baseline, the body's JSON size, and the number of
loss lines. With PydanticAI installed, one more row times the alternative kept out of the live model
(IR -> PydanticAI history -> AnthropicModel's own message mapping) on the same prefix.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from replaykit.core.trace.codecs import APIS, encode_request, translate_request
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.testing.long_runs import write_tool_loop_run


def _median(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def _pydantic_ai_row(messages: list[Any], tools: Any, repeat: int) -> tuple[float, int] | None:
    try:
        from pydantic_ai.models import ModelRequestParameters
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        from replaykit.engines.pydantic_ai.messages import to_pydantic_ai
    except ImportError:
        return None
    model = AnthropicModel("claude-sonnet-4-5", provider=AnthropicProvider(api_key="bench-no-key"))

    def once() -> Any:
        history = to_pydantic_ai(messages)
        return asyncio.run(model._map_message(history.messages, ModelRequestParameters(), {}))

    seconds, (system, mapped) = _median(once, repeat)
    size = len(json.dumps({"system": system, "messages": mapped}, default=str))
    return seconds, size


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool-steps", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore(Path(tmp))
        path = write_tool_loop_run(store, "long", args.tool_steps, per_turn=10)
        run = Run.load(path)
    last = run.llm_calls()[-1]
    messages = run.request_messages(last)
    tools = run.request_tools(last.request)
    params = {**last.request.params, "model": "m", "temperature": 0.2, "max_tokens": 1024}
    print(f"run: {len(run.steps)} steps; prefix: {len(messages)} messages; repeat {args.repeat}")
    base, body = _median(lambda: encode_request("openai-chat", messages, tools, params), args.repeat)
    base_bytes = len(json.dumps(body.body))
    print(f"{'target':<22} {'seconds':>9} {'x same-API':>10} {'body KB':>9} {'losses':>7}")
    print(f"{'openai-chat (same)':<22} {base:>9.4f} {1.0:>10.2f} {base_bytes / 1024:>9.1f} {len(body.losses):>7}")
    for api in [a for a in APIS if a not in ("anthropic", "openai-chat")]:
        seconds, encoded = _median(lambda a=api: translate_request(a, messages, tools, params, "openai-chat"),
                                   args.repeat)
        size = len(json.dumps(encoded.body))
        print(f"{api:<22} {seconds:>9.4f} {seconds / base:>10.2f} {size / 1024:>9.1f} {len(encoded.losses):>7}")
    row = _pydantic_ai_row(messages, tools, args.repeat)
    if row is not None:
        seconds, size = row
        print(f"{'pydantic-ai anthropic':<22} {seconds:>9.4f} {seconds / base:>10.2f} {size / 1024:>9.1f} "
              f"{'n/a':>7}   (alternative, not used: no loss list)")


if __name__ == "__main__":
    main()
