"""The MCP server driven by the SDK's own client over stdio (``replaykit mcp`` as a subprocess): a whole
debugging session on a recorded failing run, every tool's output against its schema, a refused live
play, a bad run id, and no secret from the environment in anything the client receives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.mcp.support import FAILING_RUN, SECRET, check_schema, failing_store, stdio_params, wire_text

pytest.importorskip("mcp")

from mcp import Client


def test_debugging_session_over_stdio(tmp_path: Path) -> None:
    store = tmp_path / "store"
    failing_store(store)
    seen: list[str] = []  # every tool result's wire text, checked for the secret at the end

    async def session() -> None:
        async with Client(stdio_params(store), read_timeout_seconds=120) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) >= {"list_runs", "inspect_run", "get_step", "failing_step", "diff_runs",
                                  "branch_run", "replay_run", "play_run", "export_run", "run_cost",
                                  "run_health", "corpus_stats"}

            async def call(name: str, **args: Any) -> dict[str, Any]:
                result = await client.call_tool(name, args)
                seen.append(wire_text(result))
                assert not result.is_error, f"{name}: {result.content}"
                check_schema(tools[name], result)
                return dict(result.structured_content or {})

            # list: the failing run shows its failing step; a search by tool and by status finds it
            listed = await call("list_runs")
            assert [r["run_id"] for r in listed["runs"]] == [FAILING_RUN]
            assert listed["runs"][0]["failing_step"] == 4
            assert (await call("list_runs", tool="write_file", status="failing"))["total"] == 1
            assert (await call("list_runs", tool="no_such_tool"))["total"] == 0

            # inspect: the timeline marks step 4 as failing
            view = await call("inspect_run", run_id=FAILING_RUN)
            failing_rows = [row for row in view["timeline"] if row["failing"]]
            assert [row["step"] for row in failing_rows] == [4]

            # the failing step and why
            failing = await call("failing_step", run_id=FAILING_RUN)
            assert failing["failing_step"] == 4 and failing["tool"] == "write_file"
            assert "read-only" in failing["why"] and failing["requested_by_step"] == 3

            # the step whole
            step = await call("get_step", run_id=FAILING_RUN, step=4)
            assert step["detail"]["status"] == "error" and step["detail"]["arguments"]["path"] == "out.txt"
            llm = await call("get_step", run_id=FAILING_RUN, step=3)
            assert llm["detail"]["response"]["tool_calls"][0]["name"] == "write_file"

            # branch with one edit, play it offline, diff against the original
            made = await call("branch_run", run_id=FAILING_RUN, at=4, result="wrote out.txt (14 bytes)")
            assert made["parent_run_id"] == FAILING_RUN and made["edit"]["target"] == "result"
            played = await call("play_run", run_id=made["run_id"])
            assert played["live"] is False and played["status"] == "completed"
            assert played["counters"]["provider_calls"] == 0 and played["counters"]["tool_executions"] == 0
            diff = await call("diff_runs", run_a=FAILING_RUN, run_b=played["run_id"])
            assert diff["equal"] is False
            assert diff["first_divergence"]["step"] == 4 and diff["first_divergence"]["cause"] == "edit"

            # the other tools, each checked against its schema
            replayed = await call("replay_run", run_id=FAILING_RUN)
            assert replayed["counters"]["provider_calls"] == 0 and replayed["counters"]["trace_bytes_changed"] == 0
            exported = await call("export_run", run_id=FAILING_RUN, format="python")
            assert Path(exported["path"]).parent == (store / "exports").resolve()
            assert Path(exported["path"]).is_file()
            assert (await call("run_cost", run_id=played["run_id"]))["run_id"] == played["run_id"]
            assert (await call("run_health", run_id=FAILING_RUN))["score"] < 100
            stats = await call("corpus_stats")
            assert stats["report"]["runs"] == 3  # the run, its branch, the play

            # live play without --allow-live: a clear refusal, the server keeps serving
            refused = await client.call_tool("play_run", {"run_id": made["run_id"], "live": True})
            seen.append(wire_text(refused))
            assert refused.is_error and "--allow-live" in wire_text(refused)

            # a bad run id (unknown, and path-like): a clear tool error, then the server still answers
            for bad in ("no-such-run", "../../etc/passwd"):
                result = await client.call_tool("inspect_run", {"run_id": bad})
                seen.append(wire_text(result))
                assert result.is_error
                assert "no run" in wire_text(result) or "invalid run id" in wire_text(result)
            assert (await call("run_health", run_id=FAILING_RUN))["run_id"] == FAILING_RUN

            # the secret recorded in step 2's result is replaced before it leaves the server
            leaky = await call("get_step", run_id=FAILING_RUN, step=2, max_chars=0)
            assert "[redacted: secret from the environment]" in leaky["detail"]["result"]
            found = await call("list_runs", text="debug:")
            assert found["runs"][0]["matched_in"] == "record"

            # resources and the prompt
            whole = await client.read_resource(f"replaykit://run/{FAILING_RUN}/step/2")
            seen.append(whole.contents[0].text)  # type: ignore[union-attr]
            run_doc = await client.read_resource(f"replaykit://run/{FAILING_RUN}")
            assert '"failing_step": 4' in run_doc.contents[0].text  # type: ignore[union-attr]
            prompt = await client.get_prompt("debug_failing_run", {"run_id": FAILING_RUN})
            text = prompt.messages[0].content.text  # type: ignore[union-attr]
            assert "failing_step" in text and "branch_run" in text and "diff_runs" in text

    anyio.run(session)
    assert len(seen) > 20
    assert not [text for text in seen if SECRET in text], "the API key reached the client"


def test_json_edit_loop_with_the_sdk_client_session(tmp_path: Path) -> None:
    """list -> failing step -> branch with the tool result as a JSON object -> play offline -> diff, over
    the SDK's ``ClientSession`` on ``stdio_client``: every edit takes any JSON value, as on the command line."""
    from mcp import ClientSession, stdio_client

    store = tmp_path / "store"
    failing_store(store)
    new_result = {"ok": True, "path": "out.txt", "bytes": 14, "lines": ["milk", "Bob", "sunny"]}

    async def session() -> None:
        async with stdio_client(stdio_params(store)) as (read, write), \
                ClientSession(read, write, read_timeout_seconds=120) as client:
            await client.initialize()
            tools = {t.name: t for t in (await client.list_tools()).tools}
            for name in ("args", "result", "response"):  # the published schema takes any JSON value
                assert "type" not in tools["branch_run"].input_schema["properties"][name]

            async def call(name: str, **args: Any) -> dict[str, Any]:
                result = await client.call_tool(name, args)
                assert not result.is_error, f"{name}: {wire_text(result)}"
                check_schema(tools[name], result)
                return dict(result.structured_content or {})

            run_id = (await call("list_runs", status="failing"))["runs"][0]["run_id"]
            failing = await call("failing_step", run_id=run_id)
            at = failing["failing_step"]
            made = await call("branch_run", run_id=run_id, at=at, result=new_result)
            assert made["edit"] == {"target": "result", "step": at, "value": json.dumps(new_result),
                                    "tool_call_id": made["edit"]["tool_call_id"]}
            edited = await call("get_step", run_id=made["run_id"], step=at)
            assert json.loads(edited["detail"]["result"]) == new_result and edited["detail"]["status"] == "ok"
            played = await call("play_run", run_id=made["run_id"])
            assert played["status"] == "completed" and played["counters"]["provider_calls"] == 0
            after = await call("get_step", run_id=played["run_id"], step=at + 1, max_chars=0)
            tool_messages = [m for m in after["detail"]["request"]["messages"] if m["role"] == "tool"]
            assert json.loads(tool_messages[-1]["parts"][0]["content"]) == new_result  # what the model saw next
            diff = await call("diff_runs", run_a=run_id, run_b=played["run_id"])
            assert diff["equal"] is False
            assert diff["first_divergence"]["step"] == at and diff["first_divergence"]["cause"] == "edit"

            # a result sent as JSON text (the SDK reads it as the object it holds): the same value, stored as text
            as_text = await call("branch_run", run_id=run_id, at=at, result='{"ok":true,"bytes":14}')
            stored = (await call("get_step", run_id=as_text["run_id"], step=at))["detail"]["result"]
            assert json.loads(stored) == {"ok": True, "bytes": 14}

            # the other edits as JSON values too: arguments as an object or a list, an answer as tool calls
            assert (await call("branch_run", run_id=run_id, at=at, args={"path": "tmp/out.txt"}))["edit"]["value"] \
                == {"path": "tmp/out.txt"}
            assert (await call("branch_run", run_id=run_id, at=at, args=["out.txt"]))["edit"]["value"] == ["out.txt"]
            calls = [{"name": "write_file", "arguments": {"path": "tmp/out.txt", "content": "x"}}]
            answer = await call("branch_run", run_id=run_id, at=failing["requested_by_step"], response=calls)
            step = await call("get_step", run_id=answer["run_id"], step=failing["requested_by_step"])
            assert step["detail"]["response"]["tool_calls"][0]["arguments"] == calls[0]["arguments"]
            assert (await call("corpus_stats", run_ids=run_id))["report"]["runs"] == 1

            # a search text that reads as JSON (or is sent as a number) is searched as typed, not refused
            for text in ("true", "[1, 2]", 4242):
                assert (await call("list_runs", text=text))["query"]["text"] == json.dumps(text).strip('"')

            # a value that does not fit the step is still a tool error, and the session goes on
            wrong = await client.call_tool("branch_run", {"run_id": run_id, "at": failing["requested_by_step"],
                                                          "result": {"ok": True}})
            assert wrong.is_error and "LLM step" in wire_text(wrong)
            assert (await call("run_health", run_id=run_id))["run_id"] == run_id

    anyio.run(session)
