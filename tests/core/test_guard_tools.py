"""The guard on tool calls: Hermes 0.19.0's real tools, other agents' tools, heuristics, odd input."""

from __future__ import annotations

import json

import pytest

from replaykit.core.guard import BUILTIN_TOOLS, DRY_RUN_MARKER, DRY_RUN_STATUS, check, classify, dry_run_text

SAFE_CALLS = [
    ("read_file", {"path": "README.md"}),
    ("search_files", {"pattern": "TODO", "path": "."}),
    ("web_search", {"query": "python"}),
    ("web_extract", {"urls": ["https://example.com"]}),
    ("todo", {"todos": [{"id": "1", "content": "x", "status": "pending"}]}),
    ("clarify", {"question": "which?"}),
    ("session_search", {"query": "x"}),
    ("skill_view", {"name": "x"}),
    ("skills_list", {}),
    ("read_terminal", {"start_line": 0}),
    ("vision_analyze", {"image_url": "x.png", "question": "?"}),
    ("browser_navigate", {"url": "https://example.com"}),
    ("browser_snapshot", {}),
    ("browser_console", {}),
    ("browser_cdp", {"method": "Target.getTargets"}),
    ("delegate_task", {"goal": "summarise"}),
    ("process", {"action": "poll", "session_id": "s"}),
    ("send_message", {"action": "list"}),
    ("cronjob", {"action": "list"}),
    ("discord", {"action": "fetch_messages", "channel_id": "1"}),
    ("discord_admin", {"action": "list_roles", "guild_id": "1"}),
    ("computer_use", {"action": "capture"}),
    ("ha_get_state", {"entity_id": "light.kitchen"}),
    ("kanban_list", {}),
    ("terminal", {"command": "git status"}),
    ("str_replace_editor", {"command": "view", "path": "a.py"}),
    ("Read", {"file_path": "a.py"}),
    ("http_request", {"method": "GET", "url": "https://x"}),
    ("fetch", {"url": "https://x"}),
    ("local_shell", {"command": ["ls", "-la"]}),
    # unknown tools: name heuristics and the default
    ("get_weather", {"city": "Paris"}),
    ("list_invoices", {}),
    ("mcp_github_get_issue", {"number": 1}),
    ("lookup_order_status", {"id": 1}),
    ("multiply", {"a": 2, "b": 3}),
    ("files", {"action": "read", "path": "x"}),
]

DESTRUCTIVE_CALLS = [
    ("write_file", {"path": "a.py", "content": "x"}, "tool.write"),
    ("patch", {"path": "a.py", "old_string": "a", "new_string": "b"}, "tool.write"),
    ("execute_code", {"code": "print(1)"}, "tool.exec_code"),
    ("memory", {"action": "add", "target": "memory", "content": "x"}, "tool.memory"),
    ("skill_manage", {"action": "delete", "name": "x"}, "tool.write"),
    ("send_message", {"target": "telegram", "message": "hi"}, "message.send"),
    ("send_message", {"action": "send", "target": "slack:#x", "message": "hi"}, "message.send"),
    ("process", {"action": "kill", "session_id": "s"}, "process.control"),
    ("close_terminal", {"process_id": "p"}, "process.kill"),
    ("cronjob", {"action": "create", "schedule": "* * * * *", "prompt": "x"}, "system.schedule"),
    ("discord_admin", {"action": "delete_message", "message_id": "1"}, "message.admin"),
    ("browser_click", {"ref": "@e1"}, "browser.interact"),
    ("browser_type", {"ref": "@e1", "text": "x"}, "browser.interact"),
    ("browser_console", {"expression": "document.forms[0].submit()"}, "browser.interact"),
    ("browser_cdp", {"method": "Runtime.evaluate", "params": {}}, "browser.interact"),
    ("computer_use", {"action": "click", "coordinate": [1, 2]}, "browser.interact"),
    ("ha_call_service", {"domain": "lock", "service": "unlock"}, "device.control"),
    ("kanban_create", {"title": "x"}, "tool.write"),
    ("kanban_comment", {"task_id": "1", "body": "x"}, "tool.write"),
    ("yb_send_dm", {"message": "x"}, "message.send"),
    ("text_to_speech", {"text": "x"}, "tool.write"),
    ("terminal", {"command": "rm -rf build"}, "shell.delete"),
    ("terminal", {}, "shell.unparseable"),
    ("terminal", {"command": 42}, "shell.unparseable"),
    ("bash", {"command": "git push -f"}, "git.force_push"),
    ("local_shell", {"command": ["bash", "-lc", "rm -rf x"]}, "shell.delete"),
    ("str_replace_editor", {"command": "str_replace", "path": "a.py"}, "tool.write"),
    ("apply_patch", {"input": "*** Begin Patch"}, "tool.write"),
    ("Edit", {"file_path": "a.py"}, "tool.write"),
    ("http_request", {"method": "DELETE", "url": "https://x/1"}, "http.write"),
    ("fetch", {"url": "https://x", "method": "post"}, "http.write"),
    # unknown tools
    ("send_email", {"to": "a@b.c"}, "tool.name_heuristic"),
    ("delete_user", {"id": 1}, "tool.name_heuristic"),
    ("stripe_create_payment_intent", {"amount": 100}, "tool.name_heuristic"),
    ("pay_invoice", {"id": 1}, "tool.name_heuristic"),
    ("transferFunds", {"amount": 1}, "tool.name_heuristic"),
    ("mcp_slack_post_message", {"text": "hi"}, "tool.name_heuristic"),
    ("files", {"action": "delete", "path": "x"}, "tool.name_heuristic"),
    ("api_call", {"method": "PUT", "url": "https://x"}, "http.write"),
    ("run_shell_cmd", {"command": "shutdown now"}, "system.power"),
]


@pytest.mark.parametrize(("name", "args"), SAFE_CALLS)
def test_safe_tool_calls(name: str, args: dict) -> None:
    decision = classify(name, args)
    assert not decision.destructive, f"{name}({args}) blocked: {decision.rule} {decision.reason}"
    assert decision.reason


@pytest.mark.parametrize(("name", "args", "rule"), DESTRUCTIVE_CALLS)
def test_destructive_tool_calls(name: str, args: dict, rule: str) -> None:
    decision = classify(name, args)
    assert decision.destructive, f"{name}({args}) judged safe: {decision.reason}"
    assert decision.rule == rule, decision


@pytest.mark.hermes
def test_every_hermes_tool_has_a_builtin_rule() -> None:
    """The table must cover every tool the installed Hermes registers, 0.19.0 and 0.22 alike (checked
    against the real registry; the hermes-next environment runs this test too)."""
    registry_mod = pytest.importorskip("tools.registry")
    registry_mod.discover_builtin_tools()
    # Hermes's own tools only: another test in this worker process may have registered a harness tool or
    # a play's stand-ins in the same global registry.
    registry = registry_mod.registry
    names = {n for n in registry.get_all_tool_names()
             if getattr(registry.get_entry(n).handler, "__module__", "").split(".")[0] == "tools"}
    assert len(names) > 40
    missing = sorted(names - set(BUILTIN_TOOLS))
    assert not missing, f"Hermes tools with no built-in rule: {missing}"


@pytest.mark.parametrize("arguments", [None, 42, [1, 2], "not json", "[1,2]", b"\xff\xfe", 3.5, object()])
def test_non_dict_arguments_never_crash(arguments: object) -> None:
    assert not classify("read_file", arguments).destructive
    assert classify("terminal", arguments).destructive
    assert classify("write_file", arguments).destructive


def test_json_string_arguments_are_parsed() -> None:
    assert classify("terminal", json.dumps({"command": "rm -rf x"})).rule == "shell.delete"
    assert not classify("terminal", json.dumps({"command": "ls"})).destructive


@pytest.mark.parametrize("name", ["", None, 42])
def test_invalid_tool_names(name: object) -> None:
    decision = classify(name, {})  # type: ignore[arg-type]
    assert decision.destructive and decision.rule == "tool.invalid"


def test_huge_arguments() -> None:
    assert not classify("read_file", {"path": "x" * 5_000_000}).destructive
    assert classify("write_file", {"path": "x", "content": "y" * 5_000_000}).destructive
    assert classify("get_thing", {"action": "a" * 10_000}).destructive is False


def test_check_runs_safe_calls() -> None:
    verdict = check("read_file", {"path": "x"}, allow_destructive=False)
    assert verdict.run and verdict.action == "run" and verdict.result_text is None and verdict.status is None


def test_check_dry_runs_destructive_calls() -> None:
    verdict = check("terminal", {"command": "rm -rf build"}, allow_destructive=False)
    assert not verdict.run and verdict.action == "dry_run"
    assert verdict.status == DRY_RUN_STATUS == "dry_run"
    assert verdict.result_text is not None
    assert verdict.result_text.startswith(DRY_RUN_MARKER)
    assert "terminal" in verdict.result_text and "rm -rf build" in verdict.result_text
    assert "--allow-destructive" in verdict.result_text
    # deterministic: a replayed branch reproduces the same text
    again = check("terminal", {"command": "rm -rf build"}, allow_destructive=False)
    assert again.result_text == verdict.result_text


def test_check_with_allow_destructive_runs() -> None:
    verdict = check("terminal", {"command": "rm -rf build"}, allow_destructive=True)
    assert verdict.run and verdict.decision.destructive and verdict.result_text is None


def test_dry_run_text_is_one_bounded_line() -> None:
    verdict = check("terminal", {"command": "rm " + "x\n" * 10_000}, allow_destructive=False)
    assert verdict.result_text is not None
    assert "\n" not in verdict.result_text and len(verdict.result_text) < 700
    text = dry_run_text("t" * 1000, verdict.decision)
    assert len(text) < 800


def test_public_api_is_complete() -> None:
    import replaykit.core.guard as guard

    assert all(hasattr(guard, name) for name in guard.__all__)
    public = {n for n in vars(guard) if (not n.startswith("_") and n[0].isupper()) or n in ("check", "classify")}
    assert public - {"Any", "Mapping", "ShellContext"} <= set(guard.__all__)


def test_hermes_022_tools_by_their_actions() -> None:
    assert not classify("todo_list", {"todos": []}).destructive
    assert not classify("process_manage", {"action": "poll"}).destructive
    assert classify("process_manage", {"action": "kill"}).destructive
    assert not classify("cronjob_manage", {"action": "list"}).destructive
    assert classify("cronjob_manage", {"action": "create", "schedule": "0 * * * *"}).destructive
    assert not classify("drive_preview", {}).destructive  # "elements", its default
    assert classify("drive_preview", {"action": "click", "ref": "e1"}).destructive
    assert not classify("manage_connections", {}).destructive  # "status", its default
    assert classify("manage_connections", {"action": "authorize"}).destructive
    assert classify("mqtt_publish", {"topic": "home/door", "payload": "open"}).rule == "device.control"
    assert classify("browser_exec", {"code": "print(1)"}).destructive
