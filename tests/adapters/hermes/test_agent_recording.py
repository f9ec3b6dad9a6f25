"""Record real Hermes Agent runs (the installed Hermes: 0.19.0 in the hermes environment, 0.22.2 in
hermes-next; offline, in a subprocess) against the scripted server and check the recording against what
the server actually received. On 0.22 Hermes's defaults apply (Tool Search on: plugin tools and todo_list
are reached through the ``tool_call`` bridge; title generation is an auxiliary call)."""

from __future__ import annotations

import json
import os
import stat

import pytest

from replaykit.adapters.hermes.reconstruct import auxiliary_requests
from replaykit.core.trace.bridge import event_underlying
from replaykit.core.trace.ir import ErrorEvent, SubagentEvent
from replaykit.core.trace.run import Run
from replaykit.testing.hermes_harness import HermesSandbox, installed_hermes_version
from replaykit.testing.scripted_server import (
    ScriptedServer,
    ToolCall,
    fail_first,
    hermes_default_policy,
    routed_policy,
    sequence_policy,
)
from tests.adapters.hermes.helpers import (
    assert_requests_match,
    assert_tool_calls_match,
    hermes_release,
    is_title_request,
    only_run,
    runs_in,
    todo_name,
    tool_names,
)

TOOL_SEARCH_OFF = "tools:\n  tool_search:\n    enabled: \"off\"\n"

pytestmark = pytest.mark.hermes


def _run(tmp_path, policy, plugin="entrypoint", extra_config="", **spec):
    sandbox = HermesSandbox(tmp_path, plugin=plugin, extra_config=extra_config)
    with ScriptedServer(policy) as srv:
        out = sandbox.run_agent({"base_url": srv.base_url, **spec})
        reqs = srv.llm_requests
    return sandbox, out, reqs


TOOL_SEARCH = [pytest.param("", id="hermes-defaults"), pytest.param(TOOL_SEARCH_OFF, id="tool-search-off")]


@pytest.mark.parametrize("config", TOOL_SEARCH)
def test_tools_in_sequence_streaming(tmp_path, config):
    bridged = hermes_release() >= (0, 22) and not config  # 0.22's default: Tool Search on
    if config and hermes_release() < (0, 22):
        pytest.skip("Hermes before 0.22 has no Tool Search")
    sandbox, out, reqs = _run(tmp_path, hermes_default_policy(), extra_config=config, turns=["Please echo hello"])
    run = only_run(sandbox.store)
    assert run.header.session_id == out["session_id"]
    assert run.header.source.framework == "hermes"
    assert run.header.source.framework_version == installed_hermes_version() == out["hermes_version"]
    agent_reqs = [r for r in reqs if r.body.get("tools")]  # (a title request offers no tools)
    assert all(r.body.get("stream") is True for r in agent_reqs)
    assert_requests_match(run, [r.body for r in reqs])
    assert_tool_calls_match(run, [r.reply for r in agent_reqs])
    assert tool_names(run) == ["harness_echo", todo_name()]
    # The model's call as it made it: through the bridge with Tool Search on, the tool itself without.
    assert [e.name for e in run.tool_calls()] == (["tool_call"] * 2 if bridged else ["harness_echo", todo_name()])
    if bridged:
        first = run.tool_calls()[0]
        assert first.arguments == {"calls": [{"name": "harness_echo", "arguments": {"text": "hello replaykit"}}]}
        assert first.underlying.arguments == {"text": "hello replaykit"}
    assert run.tool_calls()[0].result == '{"echo": "HELLO REPLAYKIT"}'
    assert [s.kind for s in run.steps] == ["llm", "tool"] * 2 + ["llm"]
    if hermes_release() >= (0, 22):  # the session title: one auxiliary call, exact, never a step
        (title,) = auxiliary_requests(run)
        assert title.task == "title_generation" and title.outcome == "ok" and title.on_wire
        assert [r.body for r in reqs if is_title_request(r.body)] == [title.body]
    assert run.final_answer == out["results"][0]["final_response"]
    meta = run.meta
    assert meta["api_mode"] == "chat_completions" and meta["provider"] == "custom"
    assert meta["base_url"].startswith("http://127.0.0.1:") and meta["toolsets"] == ["harness", "todo"]
    assert "sk-harness-fake" not in sandbox.store.joinpath(f"{run.run_id}.jsonl").read_text()
    path = sandbox.store / f"{run.run_id}.jsonl"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    # Full tool schemas are declared once: the tools as offered (the bridges, with Tool Search on).
    offered = {t.name for t in next(iter(run.tool_sets.values()))}
    assert offered >= ({"tool_search", "tool_describe", "tool_call"} if bridged else {"harness_echo", todo_name()})


def test_two_turns_append_to_one_run_plain_json(tmp_path):
    # platform "cron" makes Hermes use its non-streaming path: plain JSON responses.
    sandbox, _out, reqs = _run(tmp_path, hermes_default_policy(), platform="cron",
                              turns=["first question", "second question"])
    run = only_run(sandbox.store)
    if hermes_release() < (0, 22):  # 0.22: platform "cron" no longer means non-streaming
        assert all("stream" not in r.body for r in reqs)
    assert_requests_match(run, [r.body for r in reqs])
    assert [t.message.text for t in run.user_turns()] == ["first question", "second question"]
    assert [e.kind for e in run.events if e.kind in ("turn_start", "turn_end")] == ["turn_start", "turn_end"] * 2
    assert len(run.llm_calls()) == 6


def test_parallel_tool_calls_sequential_path(tmp_path):
    policy = sequence_policy([[ToolCall("harness_echo", {"text": "one"}), ToolCall("harness_echo", {"text": "two"})]],
                             "both echoed")
    sandbox, _out, reqs = _run(tmp_path, policy, turns=["echo two things"])
    run = only_run(sandbox.store)
    assert_requests_match(run, [r.body for r in reqs])
    assert_tool_calls_match(run, [r.reply for r in reqs])
    assert [json.loads(e.result)["echo"] for e in run.tool_calls()] == ["ONE", "TWO"]


def test_parallel_tool_calls_thread_pool_path_deduplicated(tmp_path):
    sandbox = HermesSandbox(tmp_path)
    (sandbox.cwd / "a.txt").write_text("alpha file\n")
    (sandbox.cwd / "b.txt").write_text("beta file\n")
    policy = sequence_policy([[ToolCall("read_file", {"path": str(sandbox.cwd / "a.txt")}),
                               ToolCall("read_file", {"path": str(sandbox.cwd / "b.txt")})]], "read both")
    with ScriptedServer(policy) as srv:
        sandbox.run_agent({"base_url": srv.base_url, "toolsets": ["file"], "turns": ["read a and b"]})
        reqs = srv.llm_requests
    run = only_run(sandbox.store)
    assert_requests_match(run, [r.body for r in reqs])
    assert_tool_calls_match(run, [r.reply for r in reqs])
    calls = run.tool_calls()
    assert len(calls) == 2, "the nested tool_execution chain must be recorded once per call"
    by_path = {c.arguments["path"].rsplit("/", 1)[-1]: c.result for c in calls}
    assert "alpha file" in by_path["a.txt"] and "beta file" in by_path["b.txt"]


def test_http_500_then_retry(tmp_path):
    sandbox, out, reqs = _run(tmp_path, fail_first(1, hermes_default_policy()), turns=["Please echo hello"])
    run = only_run(sandbox.store)
    assert [r.reply.fault for r in reqs][:2] == ["500", None]
    assert_requests_match(run, [r.body for r in reqs])
    errors = [e for e in run.events if isinstance(e, ErrorEvent)]
    assert len(errors) == 1 and errors[0].retryable is True
    if hermes_release() >= (0, 22):
        # 0.22 re-sends a streamed 5xx non-streaming inside the same call, raising nothing: the failed
        # attempt is rebuilt with its exact request and marked not observed (its status was never seen).
        assert errors[0].status_code is None and errors[0].provider_details["observed"] is False
        assert reqs[0].body["stream"] is True and "stream" not in reqs[1].body
    else:
        assert errors[0].status_code == 500
    first_call = run.llm_calls()[0]
    assert errors[0].seq < first_call.seq
    assert errors[0].corr.api_request_id == first_call.corr.api_request_id
    assert (errors[0].attempt, first_call.attempt) == (1, 2)
    assert run.final_answer == out["results"][0]["final_response"]


def test_http_429_then_retry(tmp_path):
    """A rate limit with Retry-After, then success: every request the server saw is in the trace (the
    refused one as a retryable error of the same API request), on each Hermes version."""
    policy = fail_first(1, hermes_default_policy(), kind="429", retry_after=0.2)
    sandbox, out, reqs = _run(tmp_path, policy, turns=["Please echo hello"])
    run = only_run(sandbox.store)
    assert [r.reply.fault for r in reqs][:2] == ["429", None]
    assert_requests_match(run, [r.body for r in reqs])
    errors = [e for e in run.events if isinstance(e, ErrorEvent)]
    assert len(errors) == 1 and errors[0].retryable is True
    if errors[0].provider_details.get("observed") is not False:
        assert errors[0].status_code == 429
    first_call = run.llm_calls()[0]
    assert errors[0].seq < first_call.seq and errors[0].corr.api_request_id == first_call.corr.api_request_id
    assert run.final_answer == out["results"][0]["final_response"] and out["results"][0]["completed"]


def test_interrupted_turn_is_closed_cleanly(tmp_path):
    policy = sequence_policy([ToolCall("harness_interrupt", {}), ToolCall("harness_echo", {"text": "never"})], "x")
    sandbox, out, reqs = _run(tmp_path, policy, toolsets=["harness", "harness_stop"], turns=["stop please"])
    assert out["results"][0]["interrupted"] is True, out["results"]
    run = only_run(sandbox.store)
    assert run.status == "interrupted"
    assert tool_names(run) == ["harness_interrupt"]
    assert_requests_match(run, [r.body for r in reqs])


def test_subagent_is_its_own_linked_run(tmp_path):
    child = sequence_policy([ToolCall("todo", {"todos": [{"id": "c1", "content": "child work", "status": "completed"}]})],
                            "child finished")
    parent = sequence_policy([ToolCall("delegate_task", {"goal": "CHILD-TASK: write one todo"})], "parent finished")
    policy = routed_policy([("CHILD-TASK", child)], parent)
    sandbox, _out, reqs = _run(tmp_path, policy, toolsets=["harness", "todo", "delegation"],
                              turns=["delegate something"], wait_subagents=30)
    runs = {r.run_id: r for r in runs_in(sandbox.store)}
    assert len(runs) == 2
    parent_run = next(r for r in runs.values() if r.header.lineage is None)
    child_run = next(r for r in runs.values() if r.header.lineage is not None)
    lineage = child_run.header.lineage
    assert lineage.relation == "subagent" and lineage.parent_run_id == parent_run.run_id
    start = next(e for e in parent_run.events if isinstance(e, SubagentEvent) and e.phase == "start")
    assert start.child_run_id == child_run.run_id and lineage.parent_event_id == start.id
    delegate_call = next(c for c in parent_run.tool_calls() if event_underlying(c)[0] == "delegate_task")
    assert start.launched_by == delegate_call.call_id
    launching = parent_run.steps[lineage.parent_step].event
    assert delegate_call.call_id in [c.id for c in launching.response.message.tool_calls]
    assert "CHILD-TASK" in child_run.user_turns()[0].message.text
    assert tool_names(child_run) == [todo_name()]
    stop = next(e for e in parent_run.events if isinstance(e, SubagentEvent) and e.phase == "stop")
    assert stop.child_run_id == child_run.run_id
    if hermes_release() >= (0, 22):  # subagent_stop's new tool_call_history (metadata only) is kept
        history = stop.provider_details["tool_call_history"]
        assert len(history) == 1 and history[0]["tool_name"] in (todo_name(), "tool_call")
    # Every server request belongs to exactly one of the two runs, reconstructed exactly.
    from replaykit.adapters.hermes.reconstruct import attempt_bodies, auxiliary_bodies

    rebuilt = attempt_bodies(parent_run) + attempt_bodies(child_run)
    auxiliary = auxiliary_bodies(parent_run) + auxiliary_bodies(child_run)
    bodies = [r.body for r in reqs if r.body not in auxiliary]
    assert len(rebuilt) == len(bodies)
    for body in bodies:
        assert body in rebuilt


@pytest.mark.parametrize("api_mode", ["codex_responses", "anthropic_messages"])
def test_other_api_modes(tmp_path, api_mode):
    if api_mode == "anthropic_messages":
        pytest.importorskip("anthropic")
    sandbox, out, reqs = _run(tmp_path, hermes_default_policy(), api_mode=api_mode, turns=["Please echo hello"])
    run = only_run(sandbox.store)
    assert out["api_mode"] == api_mode and run.meta["api_mode"] == api_mode
    expected_path = "/v1/responses" if api_mode == "codex_responses" else "/v1/messages"
    assert {r.path for r in reqs} == {expected_path}
    assert_requests_match(run, [r.body for r in reqs])
    assert_tool_calls_match(run, [r.reply for r in reqs if r.body.get("tools")])
    assert run.final_answer == "All done: HELLO REPLAYKIT."


def test_directory_plugin_and_resume_appends(tmp_path):
    """The directory plugin (as `replaykit hermes install` writes it) records too."""
    sandbox, _out, reqs = _run(tmp_path, hermes_default_policy(), plugin="directory", turns=["hi"])
    run = only_run(sandbox.store)
    assert_requests_match(run, [r.body for r in reqs])
    assert isinstance(run, Run)


def test_redact_before_disk_with_replaykit_redact(tmp_path):
    """REPLAYKIT_REDACT=patterns: personal data and secrets never reach the trace file, and the redacted
    run still reconstructs every request with consistent placeholders."""
    sandbox = HermesSandbox(tmp_path, extra_env={"REPLAYKIT_REDACT": "patterns"})
    secret = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
    with ScriptedServer(hermes_default_policy()) as srv:
        out = sandbox.run_agent({"base_url": srv.base_url,
                                 "turns": [f"Mail jane.doe@example.com my key {secret} please"]})
    run = only_run(sandbox.store)
    text = (sandbox.store / f"{run.run_id}.jsonl").read_text()
    assert "jane.doe@example.com" not in text and secret not in text
    assert "<EMAIL_ADDRESS_1>" in text
    assert run.final_answer == out["results"][0]["final_response"]
    firsts = [run.request_messages(c)[1].text for c in run.llm_calls()]
    assert all("<EMAIL_ADDRESS_1>" in t for t in firsts)  # the same placeholder in every request
