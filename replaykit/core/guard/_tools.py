"""Tool-level rules: the built-in table (Hermes 0.19.0 tools and common tools of other agents) and the
heuristics used for tools nobody listed (shell-like names, an HTTP `method`, an `action` verb, the name).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from ._commands import classify_argv, classify_shell
from ._common import Finding, ShellContext

__all__ = ["BUILTIN_TOOLS", "classify_tool"]

Handler = Callable[[Mapping[str, Any], ShellContext], list[Finding]]

HTTP_SAFE = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
HTTP_METHODS = HTTP_SAFE | {"POST", "PUT", "PATCH", "DELETE", "CONNECT"}

# Words that, as the verb of a tool name or of an `action` argument, mean "changes something".
DESTRUCTIVE_VERBS = frozenset("""
delete del remove rm destroy drop truncate purge wipe erase unlink write overwrite save put post patch
update upsert edit modify change create insert append set replace rename move mv copy cp upload send
tweet publish reply comment notify pay charge refund transfer purchase buy order checkout invoice
subscribe unsubscribe withdraw deposit kill terminate stop restart shutdown reboot deploy install
uninstall exec execute run eval shell bash commit push merge approve reject cancel revoke grant invite
ban kick archive close submit book schedule sign apply enable disable reset format clear flush mutate
trigger launch start assign unassign lock unlock block unblock mute unmute follow unfollow like star
fork sell trade swap mint burn stake transact dispatch enqueue invoke react unreact pin unpin attach
complete link heartbeat
""".split())
# Words that mean "only looks".
READ_VERBS = frozenset("""
get read list search find fetch query view show describe lookup look inspect count check status info
stat head ls cat browse summarize summarise analyze analyse extract calculate compute convert translate
think plan recall retrieve weather time now lookup validate verify preview diff explain poll log wait
snapshot capture screenshot navigate scroll back forward open watch peek resolve estimate quote
""".split())
SHELL_NAME_WORDS = frozenset({"shell", "bash", "terminal", "sh", "zsh", "cmd", "powershell", "console"})
_COMMAND_KEYS = ("command", "cmd", "script", "commands", "shell_command", "bash_command")
_ACTION_KEYS = ("action", "operation", "op", "command", "verb")


def _split_words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


def _first_verb(text: str) -> str | None:
    for word in _split_words(text):
        if word in DESTRUCTIVE_VERBS or word in READ_VERBS:
            return word
    return None


# -- handlers ---------------------------------------------------------------------------------------
def _safe(why: str) -> Handler:
    def fn(args: Mapping[str, Any], ctx: ShellContext) -> list[Finding]:
        return []

    fn.__doc__ = why
    return fn


def _destructive(rule: str, why: str) -> Handler:
    def fn(args: Mapping[str, Any], ctx: ShellContext) -> list[Finding]:
        return [(rule, why)]

    fn.__doc__ = why
    return fn


def _by_action(key: str, safe: set[str], rule: str, why: str, default: str | None = None) -> Handler:
    """Destructive unless `args[key]` is one of the read-only actions."""

    def fn(args: Mapping[str, Any], ctx: ShellContext) -> list[Finding]:
        action = args.get(key, default)
        if isinstance(action, str) and action.strip().lower() in safe:
            return []
        return [(rule, f"{why} ({key}={_short(action)})")]

    fn.__doc__ = f"{why}; read-only when {key} is one of {', '.join(sorted(safe))}"
    return fn


def shell_tool(args: Mapping[str, Any], ctx: ShellContext) -> list[Finding]:
    """Runs a shell command: the command is parsed and each part judged."""
    for key in _COMMAND_KEYS:
        if key in args:
            value = args[key]
            if isinstance(value, str):
                return classify_shell(value, ctx)
            if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
                if key == "commands":
                    found: list[Finding] = []
                    for v in value:
                        found.extend(classify_shell(v, ctx))
                    return found
                return classify_argv(value, ctx)
            return [("shell.unparseable", f"the {key!r} argument is not a string")]
    return [("shell.unparseable", "no command argument found")]


def http_tool(args: Mapping[str, Any], ctx: ShellContext) -> list[Finding]:
    """Makes an HTTP request: destructive when the method changes state (POST, PUT, PATCH, DELETE)."""
    method = args.get("method", "GET")
    if not isinstance(method, str):
        return [("http.write", f"HTTP method is not a string ({_short(method)})")]
    if method.strip().upper() in HTTP_SAFE:
        return []
    return [("http.write", f"sends an HTTP {method.strip().upper()[:20]} request")]


def _editor_tool(args: Mapping[str, Any], ctx: ShellContext) -> list[Finding]:
    """Anthropic's text editor tool: `view` reads, every other command writes."""
    if args.get("command") == "view":
        return []
    return [("tool.write", f"edits a file (command={_short(args.get('command'))})")]


def _browser_console(args: Mapping[str, Any], ctx: ShellContext) -> list[Finding]:
    """Reads the browser console; evaluating an expression runs JavaScript in the page."""
    if args.get("expression"):
        return [("browser.interact", "evaluates JavaScript in the page")]
    return []


_CDP_READ = re.compile(r"^(Target\.getTargets|[A-Za-z]+\.(get|describe|query|capture|search|request(?!Node))"
                       r"[A-Za-z]*|Page\.captureScreenshot|Page\.getLayoutMetrics)$")


def _browser_cdp(args: Mapping[str, Any], ctx: ShellContext) -> list[Finding]:
    """Raw Chrome DevTools Protocol: getters are read-only; anything else can act on the page."""
    method = args.get("method")
    if isinstance(method, str) and _CDP_READ.match(method):
        return []
    return [("browser.interact", f"sends the CDP command {_short(method)}")]


def _short(value: object, limit: int = 60) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


_W = ("tool.write", "writes or edits files")
BUILTIN_TOOLS: dict[str, Handler] = {
    # Hermes 0.19.0 (tools/*.py registry names; agent-loop tools included)
    "terminal": shell_tool,
    "process": _by_action("action", {"list", "poll", "log", "wait"}, "process.control",
                          "controls a background process (kill / write / submit / close)"),
    "close_terminal": _destructive("process.kill", "closes a terminal session, killing its process"),
    "read_terminal": _safe("reads terminal output"),
    "read_file": _safe("reads a file"),
    "search_files": _safe("searches files"),
    "write_file": _destructive(*_W),
    "patch": _destructive("tool.write", "patches files"),
    "execute_code": _destructive("tool.exec_code", "runs arbitrary code"),
    "memory": _destructive("tool.memory", "changes the agent's persistent memory"),
    "todo": _safe("updates the agent's in-session todo list"),
    "clarify": _safe("asks the user a question"),
    "session_search": _safe("searches past sessions"),
    "delegate_task": _safe("launches a subagent; its own tool calls are guarded one by one"),
    "skill_view": _safe("reads a skill"),
    "skills_list": _safe("lists skills"),
    "skill_manage": _by_action("action", set(), "tool.write", "creates, edits or deletes skills"),
    "web_search": _safe("searches the web"),
    "web_extract": _safe("fetches web pages"),
    "x_search": _safe("searches X"),
    "vision_analyze": _safe("describes an image"),
    "video_analyze": _safe("describes a video"),
    "image_generate": _safe("generates an image (a paid API call, no state change)"),
    "video_generate": _safe("generates a video (a paid API call, no state change)"),
    "xai_video_edit": _safe("generates an edited video"),
    "xai_video_extend": _safe("generates an extended video"),
    "text_to_speech": _destructive("tool.write", "writes an audio file"),
    "send_message": _by_action("action", {"list"}, "message.send", "sends or reacts to a message",
                               default="send"),
    "cronjob": _by_action("action", {"list"}, "system.schedule", "creates, changes or runs a scheduled job"),
    "discord": _by_action("action", {"search_members", "fetch_messages"}, "message.send",
                          "creates a Discord thread"),
    "discord_admin": _by_action("action", {"list_guilds", "server_info", "list_channels", "channel_info",
                                           "list_roles", "member_info", "list_pins"}, "message.admin",
                                "changes a Discord server (pins, deletes messages, roles)"),
    "computer_use": _by_action("action", {"capture", "list_apps", "list_windows", "wait", "scroll"},
                               "browser.interact", "clicks, types or drives the desktop"),
    "browser_navigate": _safe("loads a URL (GET)"),
    "browser_snapshot": _safe("reads the page"),
    "browser_scroll": _safe("scrolls the page"),
    "browser_back": _safe("goes back in history"),
    "browser_get_images": _safe("lists the page's images"),
    "browser_vision": _safe("describes a screenshot"),
    "browser_click": _destructive("browser.interact", "clicks in a page, which can submit a form or trigger an action"),
    "browser_type": _destructive("browser.interact", "types into a page"),
    "browser_press": _destructive("browser.interact", "presses a key in a page, which can submit a form"),
    "browser_dialog": _destructive("browser.interact", "answers a page dialog"),
    "browser_console": _browser_console,
    "browser_cdp": _browser_cdp,
    "ha_get_state": _safe("reads a Home Assistant entity"),
    "ha_list_entities": _safe("lists Home Assistant entities"),
    "ha_list_services": _safe("lists Home Assistant services"),
    "ha_call_service": _destructive("device.control", "calls a Home Assistant service (controls a device)"),
    "kanban_list": _safe("lists kanban tasks"),
    "kanban_show": _safe("shows a kanban task"),
    "kanban_attachments": _safe("lists a task's attachments"),
    **{f"kanban_{verb}": _destructive("tool.write", f"changes a kanban board ({verb})")
       for verb in ("create", "complete", "block", "unblock", "comment", "link", "heartbeat", "attach",
                    "attach_url")},
    "project_list": _safe("lists projects"),
    "project_create": _destructive("tool.write", "creates a project"),
    "project_switch": _destructive("tool.write", "switches the active project"),
    "feishu_doc_read": _safe("reads a Feishu document"),
    "feishu_drive_list_comments": _safe("lists comments"),
    "feishu_drive_list_comment_replies": _safe("lists comment replies"),
    "feishu_drive_add_comment": _destructive("message.send", "posts a comment"),
    "feishu_drive_reply_comment": _destructive("message.send", "posts a reply"),
    "yb_query_group_info": _safe("reads group info"),
    "yb_query_group_members": _safe("lists group members"),
    "yb_search_sticker": _safe("searches stickers"),
    "yb_send_dm": _destructive("message.send", "sends a direct message"),
    "yb_send_sticker": _destructive("message.send", "sends a sticker"),
    # Hermes 0.22 (new registry names; `todo` is `todo_list`, `process` and `cronjob` gained `_manage`)
    "todo_list": _safe("updates the agent's in-session todo list"),
    "process_manage": _by_action("action", {"list", "poll", "log", "wait"}, "process.control",
                                 "controls a background process (kill / write / submit / close / handoff)"),
    "cronjob_manage": _by_action("action", {"list"}, "system.schedule", "creates, changes or runs a scheduled job"),
    "browser_exec": _destructive("tool.exec_code", "runs Python that drives a real browser"),
    "browser_vault": _by_action("action", {"list"}, "browser.interact",
                                "fills saved credentials into a page, saves a login or unlocks the vault"),
    "drive_preview": _by_action("action", {"elements", "hover", "scroll", "strobe", "back", "forward"},
                                "browser.interact", "clicks, types or reloads in the preview page", default="elements"),
    "desktop_preview": _safe("opens (a GET), reads or closes the preview pane"),
    "annotate_preview": _safe("marks elements on the preview page (display only)"),
    "gui_tour": _safe("shows a guided tour of the desktop app (display only)"),
    "show_tip": _safe("points at the desktop app (display only)"),
    "focus_pane": _safe("reveals a pane of the desktop app"),
    "read_window_below": _safe("reads which window is behind the desktop app"),
    "set_theme": _destructive("tool.write", "changes the desktop app's saved appearance"),
    "setup_beat": _destructive("tool.write", "runs onboarding, which saves the user's answers to the settings"),
    "react_to_message": _destructive("message.send", "reacts to a message"),
    "desktop_project": _by_action("action", {"list"}, "tool.write", "creates or switches a desktop project"),
    **{f"kanban_{verb}": _destructive("tool.write", f"changes a kanban board ({verb})")
       for verb in ("request_changes", "request_review", "schedule")},
    "manage_catalog": _by_action("action", {"search"}, "package.change", "installs catalog plugins or hub skills"),
    "manage_connections": _by_action("action", {"display", "status"}, "system.config",
                                     "connects, installs, enables or authorizes an app connection",
                                     default="status"),
    "mqtt_subscribe_recent": _safe("listens briefly to an MQTT topic (reads sensor messages)"),
    "mqtt_publish": _destructive("device.control", "publishes to an MQTT topic (can drive a device)"),
    "mqtt_device_command": _destructive("device.control", "sends an MQTT device command"),
    # other agents' common tools
    "bash": shell_tool, "shell": shell_tool, "Bash": shell_tool, "local_shell": shell_tool,
    "run_shell_command": shell_tool, "shell_exec": shell_tool, "exec_command": shell_tool,
    "execute_command": shell_tool, "run_command": shell_tool, "run_terminal_cmd": shell_tool,
    "execute_bash": shell_tool,
    "str_replace_editor": _editor_tool, "str_replace_based_edit_tool": _editor_tool,
    "apply_patch": _destructive("tool.write", "applies a patch"),
    "Write": _destructive(*_W), "Edit": _destructive(*_W), "MultiEdit": _destructive(*_W),
    "NotebookEdit": _destructive(*_W), "edit": _destructive(*_W), "edit_file": _destructive(*_W),
    "create_file": _destructive(*_W), "delete_file": _destructive("tool.delete", "deletes a file"),
    "Read": _safe("reads a file"), "Glob": _safe("lists files"), "Grep": _safe("searches files"),
    "LS": _safe("lists files"), "WebFetch": _safe("fetches a web page"), "WebSearch": _safe("searches the web"),
    "TodoWrite": _safe("updates the agent's todo list"), "Task": _safe("launches a subagent"),
    "http_request": http_tool, "http": http_tool, "request": http_tool, "fetch": http_tool,
    "api_request": http_tool, "make_request": http_tool, "requests": http_tool, "web_request": http_tool,
}


def classify_tool(name: str, args: Mapping[str, Any], ctx: ShellContext,
                  unknown_destructive: bool) -> tuple[list[Finding], str]:
    """Findings for a tool call, and the rule family that judged it (for the safe-side `rule`)."""
    handler = BUILTIN_TOOLS.get(name)
    if handler is not None:
        return handler(args, ctx), f"tool.builtin:{name}"
    words = set(_split_words(name))
    if words & SHELL_NAME_WORDS and any(k in args for k in _COMMAND_KEYS):
        return shell_tool(args, ctx), "tool.shell"
    method = args.get("method")
    if isinstance(method, str) and method.strip().upper() in HTTP_METHODS:
        return http_tool(args, ctx), "tool.http"
    for key in _ACTION_KEYS:
        value = args.get(key)
        if isinstance(value, str) and len(value) <= 64:
            verb = _first_verb(value)
            if verb in DESTRUCTIVE_VERBS:
                return [("tool.name_heuristic", f"its {key} argument is {value!r}")], "tool.heuristic"
            if verb in READ_VERBS:
                return [], "tool.heuristic"
    verb = _first_verb(name)
    if verb in DESTRUCTIVE_VERBS:
        return [("tool.name_heuristic", f"its name says it changes state ({verb!r} in {name!r})")], "tool.heuristic"
    if verb in READ_VERBS:
        return [], "tool.heuristic"
    if unknown_destructive:
        return [("tool.unknown", f"{name!r} is an unknown tool and the policy treats unknown tools as "
                                 "destructive")], "tool.unknown"
    return [], "tool.unknown"
