"""Delta encoding keeps traces linear and every request exact."""

from __future__ import annotations

import threading
from pathlib import Path

from replaykit.core.trace.ir import Message, TextPart
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import RunStore
from replaykit.testing.sample_runs import long_run, sample_header


def _size(tmp_path: Path, steps: int) -> int:
    store = RunStore(tmp_path / f"s{steps}")
    header = sample_header(f"long{steps}")
    with store.create(header) as writer:
        long_run(Recorder(header, writer), steps)
    return store.path_for(header.run_id).stat().st_size


def test_trace_size_is_linear_in_run_length(tmp_path: Path) -> None:
    small, large = _size(tmp_path, 250), _size(tmp_path, 1000)
    # Quadratic growth would give ~16x; linear ~4x.
    assert large / small < 4.6, (small, large)


def test_requests_reconstruct_exactly(tmp_path: Path) -> None:
    rec = Recorder(sample_header("mem"))
    long_run(rec, 40)
    run = Run(rec.header, rec.events)
    calls = run.llm_calls()
    # The n-th request holds system + user + 2 messages per earlier round trip.
    for n, call in enumerate(calls):
        messages = run.request_messages(call)
        assert len(messages) == 2 + 2 * n
        assert messages[0].text == "You are a bot."
    assert run.final_answer == "done"


def test_rewritten_context_starts_a_new_base() -> None:
    rec = Recorder(sample_header("compress"))
    from replaykit.core.trace.ir import LLMResponse

    m = [Message(role="user", parts=[TextPart(text=str(i))]) for i in range(5)]
    reply = LLMResponse(message=Message(role="assistant", parts=[TextPart(text="ok")]))
    rec.llm_call(m, reply)
    compressed = [Message(role="user", parts=[TextPart(text="summary")]), m[4]]
    event = rec.llm_call(compressed, reply)
    run = Run(rec.header, rec.events)
    assert run.request_messages(event) == compressed


def test_recorder_is_thread_safe() -> None:
    rec = Recorder(sample_header("threads"))

    def work(k: int) -> None:
        for i in range(200):
            rec.tool_call(f"c{k}-{i}", "t", {"i": i}, result="r")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seqs = [e.seq for e in rec.events]
    assert sorted(seqs) == list(range(800)) and len(set(e.id for e in rec.events)) == 800
