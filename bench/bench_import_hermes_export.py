"""``replaykit import --format hermes-export`` of what ``hermes sessions export`` writes, against ``json.loads``.

Workloads, both shapes Hermes writes (jsonl: one session a line; trace: one Claude Code line a message):

- corpus: 100 sessions of 50 rounds (a Tool Search ``tool_call`` the model makes, its result), the session
  fields and message rows of a real Hermes 0.22 export (``tests/fixtures/hermes_export/0.22/tools.export.jsonl``)
  repeated with fresh ids, tool results of 250-2,000 characters: 10,000 tool steps and 5,100 LLM calls;
- long session: one session of 2,500 rounds (5,001 LLM calls), where every request is rebuilt from all the
  messages before it.

Baseline: ``json.loads`` of the same file in the same process (the least any importer must do). Figures:
steps (LLM and tool calls) per second.

    python bench/bench_import_hermes_export.py [--json]
"""

from __future__ import annotations

import copy
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from replaykit.adapters.hermes.import_export import import_export

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "tests" / "fixtures" / "hermes_export" / "0.22" / "tools.export.jsonl"


def session(index: int, rounds: int, rng: random.Random) -> dict[str, Any]:
    base = json.loads(TEMPLATE.read_text().splitlines()[0])
    sid = f"20261207_000000_{index:06x}"
    first = copy.deepcopy(base["messages"][0])
    ask, result, answer = (copy.deepcopy(base["messages"][k]) for k in (1, 2, -1))
    messages: list[dict[str, Any]] = [{**first, "id": 1, "session_id": sid, "timestamp": base["started_at"]}]
    for r in range(rounds):
        call_id = f"call_{index}_{r}"
        n = len(messages)
        calls = copy.deepcopy(ask["tool_calls"])
        calls[0]["id"] = calls[0]["call_id"] = call_id
        calls[0]["function"]["arguments"] = json.dumps({"calls": [{"name": "harness_echo", "arguments": {"text": f"r{r}"}}]})
        messages.append({**ask, "id": n + 1, "session_id": sid, "timestamp": base["started_at"] + 2 * r + 1,
                         "tool_calls": calls})
        messages.append({**result, "id": n + 2, "session_id": sid, "timestamp": base["started_at"] + 2 * r + 2,
                         "tool_call_id": call_id, "content": json.dumps({"echo": "x" * rng.randint(250, 2000)})})
    messages.append({**answer, "id": len(messages) + 1, "session_id": sid, "timestamp": base["started_at"] + 2 * rounds + 1})
    return {**base, "id": sid, "messages": messages, "message_count": len(messages)}


def as_trace(data: dict[str, Any]) -> str:
    """The session as ``hermes sessions export --format trace`` writes it (agent/trace_upload.py's shape)."""
    lines, parent = [], None
    for n, m in enumerate(data["messages"]):
        uuid = f"{data['id']}-{n}"
        if m["role"] == "assistant":
            blocks = [{"type": "text", "text": m["content"] or ""}] + [
                {"type": "tool_use", "id": c["id"], "name": c["function"]["name"], "input": json.loads(c["function"]["arguments"])}
                for c in m.get("tool_calls") or []]
            line_type, message = "assistant", {"role": "assistant", "model": data["model"], "content": blocks}
        elif m["role"] == "tool":
            line_type, message = "user", {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": m["content"]}]}
        else:
            line_type, message = "user", {"role": "user", "content": m["content"]}
        lines.append(json.dumps({"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/w",
                                 "sessionId": data["id"], "version": "hermes-agent", "gitBranch": "", "uuid": uuid,
                                 "timestamp": "2026-12-07T00:00:00.000Z", "type": line_type, "message": message}))
        parent = uuid
    return "\n".join(lines) + "\n"


def best(fn, repeat: int = 3) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def measure(label: str, path: Path) -> list[dict[str, object]]:
    runs = import_export(path)
    steps = sum(1 for r in runs for e in r.events if e.kind in ("llm_call", "tool_call"))
    text = path.read_text()
    loads = best(lambda: [json.loads(line) for line in text.splitlines()])
    imported = best(lambda: import_export(path), repeat=2)
    return [{"bench": f"hermes-export import, {label} (steps/s)", "replaykit": round(steps / imported),
             "baseline": round(steps / loads), "ratio": round(loads / imported, 3),
             "note": f"baseline: json.loads of the same {path.stat().st_size / 1e6:.1f} MB file; {steps} steps, "
                     f"{len(runs)} runs, {imported:.2f} s"}]


def bench() -> list[dict[str, object]]:
    rng = random.Random(7)
    corpus = [session(i, 50, rng) for i in range(100)]
    long = session(1000, 2500, rng)
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, sessions in (("100 sessions x 50 rounds", corpus), ("1 session x 2,500 rounds", [long])):
            jsonl = Path(tmp) / "sessions.jsonl"
            jsonl.write_text("".join(json.dumps(s) + "\n" for s in sessions))
            rows += measure(f"jsonl, {label}", jsonl)
            trace = Path(tmp) / "sessions.trace.jsonl"
            trace.write_text("".join(as_trace(s) for s in sessions))
            rows += measure(f"trace, {label}", trace)
    return rows


def main() -> int:
    rows = bench()
    if "--json" in sys.argv:
        print(json.dumps(rows))
    else:
        for row in rows:
            print(f"{row['bench']:<62} {row['replaykit']:>10} {row['baseline']:>10} x{row['ratio']}  {row['note']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
