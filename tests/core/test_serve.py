"""core/replay/serve.py: the one serve decision and delta resolver (stdlib-only, embedded in generated code)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replaykit.core.replay import serve
from replaykit.core.trace import deltas
from replaykit.core.trace.run import Run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hermes"


def _plain(run: Run) -> list[dict]:
    return [e.model_dump(mode="json", exclude_none=True) for e in run.events]


@pytest.mark.parametrize("fixture", sorted(FIXTURES.glob("*.jsonl"))[:4], ids=lambda p: p.stem)
def test_both_resolvers_rebuild_every_request_as_the_run_does(fixture: Path) -> None:
    run = Run.load(fixture)
    events = _plain(run)
    requests = {e["id"]: e for e in events if e.get("kind") in ("llm_call", "error") and e.get("request")}
    by_id = {e["id"]: e for e in events}
    every = deltas.resolve_all_requests(events)
    for event, plain in zip(run.events, events, strict=True):
        if plain["id"] not in requests:
            continue
        expected = [m.model_dump(mode="json", exclude_none=True) for m in run.request_messages(event)]
        assert deltas.resolve_delta_chain(plain, by_id) == expected
        assert every[plain["id"]] == expected


def test_resolver_refuses_a_broken_chain() -> None:
    event = {"id": "b", "kind": "llm_call", "request": {"context": {"base": "missing", "keep": 0}}}
    with pytest.raises(ValueError, match="unknown request base"):
        deltas.resolve_delta_chain(event, {})
    with pytest.raises(ValueError, match="unknown request base"):
        deltas.resolve_all_requests([event])


def _state(cut: int | None = None) -> serve.ServeState:
    # step 0: LLM asking for a and b (parallel), steps 1-2 their results, step 3: the final answer
    steps = [(0, None, "llm0"), (1, "a", {"name": "t", "args": {"x": 1}}), (2, "b", {"name": "t", "args": {"x": 2}}),
             (3, None, "llm1")]
    return serve.ServeState(serve.rounds_of(steps), 4, cut)


def _name(event: dict) -> str:
    return str(event["name"])


def _args(event: dict) -> object:
    return event["args"]


def test_parallel_tools_in_any_order_then_the_synthetic_end() -> None:
    state = _state()
    fp = "f"
    assert state.llm(fp, lambda rnd: fp).action == "serve"
    second = state.tool("b", "t", {"x": 2}, _name, _args)
    first = state.tool("zz", "t", '{"x": 1}', _name, _args)  # a framework's own id: matched by parsed args
    assert (second.action, second.step, first.action, first.step) == ("serve", 2, "serve", 1)
    assert state.llm(fp, lambda rnd: fp).round.llm_step == 3
    assert state.llm(fp, lambda rnd: fp).action == "synthetic"  # pure replay past the end: never live


def test_desync_and_cut_go_live() -> None:
    state = _state()
    decision = state.llm("actual", lambda rnd: "recorded")
    assert (decision.action, decision.reason, decision.expected, decision.actual) == ("live", "desync", "recorded",
                                                                                     "actual")
    assert state.live and state.llm("recorded", lambda rnd: "recorded").reason == "live"
    tools = _state()
    tools.llm(None, lambda rnd: "never asked")  # None: trust the position
    unknown = tools.tool("c", "other", {}, _name, _args)
    assert (unknown.action, unknown.reason, unknown.step, unknown.expected) == ("live", "desync", 0, "a,b")
    cut = _state(cut=2)
    cut.llm("f", lambda rnd: "f")
    assert cut.tool("a", "t", {"x": 1}, _name, _args).action == "serve"
    assert cut.tool("b", "t", {"x": 2}, _name, _args).reason == "cut"
    assert cut.llm("f", lambda rnd: "f").reason == "cut"


def test_fingerprint_is_the_same_on_models_and_on_their_json() -> None:
    run = Run.load(sorted(FIXTURES.glob("*.jsonl"))[0])
    call = run.llm_calls()[-1]
    messages = run.request_messages(call)
    tools = run.request_tools(call.request)
    plain = [m.model_dump(mode="json", exclude_none=True) for m in messages]
    plain_tools = [t.model_dump(mode="json", exclude_none=True) for t in tools or []]
    assert serve.request_fingerprint(messages, tools) == serve.request_fingerprint(plain, plain_tools)
    changed = json.loads(json.dumps(plain))
    changed[-1]["parts"].append({"type": "text", "text": "one more word"})
    assert serve.request_fingerprint(changed, plain_tools) != serve.request_fingerprint(plain, plain_tools)


def test_tool_message_references_expand_to_the_recorded_messages() -> None:
    tool = {"seq": 0, "id": "t1", "kind": "tool_call", "call_id": "c1", "name": "t", "result": "r", "status": "ok"}
    user = {"role": "user", "parts": []}
    llm = {"seq": 1, "id": "l1", "kind": "llm_call", "request": {"context": {"append": [{"ref": "t1"}, user]}}}
    expected = [deltas.tool_message(tool), user]
    assert deltas.resolve_all_requests([tool, llm])["l1"] == expected
    assert deltas.resolve_delta_chain(llm, {"t1": tool, "l1": llm}) == expected
    assert expected[0]["parts"][0] == {"type": "tool_result", "tool_call_id": "c1", "name": "t", "content": "r",
                                       "is_error": False}
    for ref, problem in (("nope", "unknown tool call event"), ("l0", "not a tool call"),
                         ("t9", "not an earlier event")):
        bad = {"seq": 1, "id": "l1", "kind": "llm_call", "request": {"context": {"append": [{"ref": ref}]}}}
        earlier = {"seq": 0, "id": "l0", "kind": "llm_call", "request": {"context": {}}}
        later = {**tool, "seq": 5, "id": "t9"}
        with pytest.raises(ValueError, match=problem):
            deltas.resolve_delta_chain(bad, {"l0": earlier, "t9": later})
    with pytest.raises(ValueError, match="unknown tool call event"):  # one pass: a later event is unknown yet
        deltas.resolve_all_requests([{**llm, "request": {"context": {"append": [{"ref": "t1"}]}}}, tool])


def test_next_llm_index() -> None:
    next_index = serve.next_llm_index([{"llm_index": 3}, None, {"next_llm": 7}, {"llm_index": 5}])
    assert next_index == 7
