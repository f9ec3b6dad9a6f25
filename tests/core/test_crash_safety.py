"""SIGKILL a writer at random points, many times: every acknowledged event reads back."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from replaykit.core.trace.run import Run
from tests.conftest import subprocess_env

WRITER = r"""
import sys
from replaykit.core.trace.ir import LLMResponse, Message, TextPart, ToolCallPart
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.store import RunStore
from replaykit.testing.sample_runs import sample_header, WEATHER_TOOLS

store = RunStore(sys.argv[1])
header = sample_header("crash")
writer = store.create(header)
rec = Recorder(header, writer, keep_events=False)
messages = [Message(role="user", parts=[TextPart(text="go " * 50)])]
i = 0
while True:
    call = ToolCallPart(id=f"c{i}", name="get_weather", arguments={"city": "x" * (i % 700)})
    event = rec.llm_call(messages, LLMResponse(message=Message(role="assistant", parts=[call])),
                         tools=WEATHER_TOOLS)
    sys.stdout.write(f"{event.seq}\n"); sys.stdout.flush()
    tool = rec.tool_call(call.id, call.name, call.arguments, result="y" * (i * 37 % 5000), llm_call_id=event.id)
    sys.stdout.write(f"{tool.seq}\n"); sys.stdout.flush()
    messages = messages + [event.response.message]
    if i % 10 == 0:
        rec.sync()
    i += 1
"""


@pytest.mark.single_env  # files and signals: the same in every environment (run once, in hermes)
def test_sigkill_at_random_points_never_loses_acknowledged_events(tmp_path: Path) -> None:
    rng = random.Random(20261130)
    rounds = 25
    for round_no in range(rounds):
        store = tmp_path / f"s{round_no}"
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(store)],
            stdout=subprocess.PIPE, env=subprocess_env(), text=True,
        )
        assert proc.stdout is not None
        # Wait for the writer to be running, then kill it at a random moment.
        first = proc.stdout.readline()
        assert first.strip().isdigit()
        time.sleep(rng.uniform(0.0, 0.25))
        proc.send_signal(signal.SIGKILL)
        rest, _ = proc.communicate(timeout=30)
        acknowledged = {int(first)} | {int(x) for x in rest.split() if x.strip().isdigit()}
        run = Run.load(store / "crash.jsonl")  # must stay readable
        on_disk = {e.seq for e in run.events}
        assert acknowledged <= on_disk, f"round {round_no}: lost {sorted(acknowledged - on_disk)[:5]}"
        # Every request still reconstructs (delta bases intact).
        for call in run.llm_calls()[-3:]:
            run.request_messages(call)
