"""User allow / deny rules from guard.toml, and config errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from replaykit.core.errors import ReplaykitError
from replaykit.core.guard import CONFIG_FILENAME, GuardConfigError, Policy, check, classify, load_policy

EXAMPLE = """
unknown_tools = "destructive"

[[allow]]
tool = "execute_code"
reason = "our code runs in a sandbox"

[[allow]]
tool = "terminal"
command = "make install"

[[allow]]
command = "npx prettier --check"

[[deny]]
tool = "terminal"
command = "git push"

[[deny]]
tool = "*"
argument = "path"
pattern = '(^|/)\\.env$'

[[deny]]
tool = "mcp_github_*"
reason = "never touch GitHub from a replay"
"""


@pytest.fixture
def policy(tmp_path: Path) -> Policy:
    (tmp_path / CONFIG_FILENAME).write_text(EXAMPLE, encoding="utf-8")
    return load_policy(store=tmp_path)


def test_allow_whole_tool(policy: Policy) -> None:
    decision = classify("execute_code", {"code": "import os"}, policy)
    assert not decision.destructive
    assert decision.rule == "config.allow[0]" and decision.reason == "our code runs in a sandbox"
    assert classify("execute_code", {"code": "x"}).destructive  # the default policy still blocks it


def test_allow_command_prefix_applies_per_simple_command(policy: Policy) -> None:
    assert not classify("terminal", {"command": "make install"}, policy).destructive
    assert not classify("terminal", {"command": "sudo make install PREFIX=/opt"}, policy).destructive
    # allowing `make install` does not allow what is chained after it
    chained = classify("terminal", {"command": "make install && rm -rf /"}, policy)
    assert chained.destructive and chained.rule == "shell.delete"
    # redirections are still judged
    assert classify("terminal", {"command": "make install > log.txt"}, policy).rule == "shell.redirect"
    # a rule with no tool applies to every tool
    assert not classify("bash", {"command": "npx prettier --check ."}, policy).destructive
    assert classify("bash", {"command": "npx prettier --write ."}, policy).destructive


def test_deny_command_prefix_blocks_even_harmless_defaults(policy: Policy) -> None:
    decision = classify("terminal", {"command": "ls && git push origin main"}, policy)
    assert decision.destructive and decision.rule == "config.deny[0]"
    assert classify("terminal", {"command": "git status"}, policy).destructive is False


def test_deny_argument_pattern(policy: Policy) -> None:
    assert classify("read_file", {"path": "app/.env"}, policy).rule == "config.deny[1]"
    assert not classify("read_file", {"path": "app/env.py"}, policy).destructive


def test_deny_wins_over_allow(tmp_path: Path) -> None:
    path = tmp_path / "g.toml"
    path.write_text('[[allow]]\ntool = "terminal"\n[[deny]]\ncommand = "git push"\n', encoding="utf-8")
    policy = load_policy(path)
    assert not classify("terminal", {"command": "rm -rf x"}, policy).destructive  # whole tool allowed
    assert classify("terminal", {"command": "git push"}, policy).rule == "config.deny[0]"


def test_deny_tool_glob(policy: Policy) -> None:
    decision = classify("mcp_github_get_issue", {"n": 1}, policy)
    assert decision.destructive and decision.reason == "never touch GitHub from a replay"


def test_unknown_tools_mode(policy: Policy) -> None:
    assert classify("frobnicate", {}, policy).rule == "tool.unknown"
    assert not classify("frobnicate", {}).destructive
    assert not classify("get_weather", {}, policy).destructive  # the name still says read-only


def test_unknown_commands_mode(tmp_path: Path) -> None:
    path = tmp_path / "g.toml"
    path.write_text('unknown_commands = "destructive"\n', encoding="utf-8")
    policy = load_policy(path)
    assert classify("terminal", {"command": "frobnicate --all"}, policy).rule == "shell.unknown"
    assert not classify("terminal", {"command": "frobnicate --all"}).destructive
    assert not classify("terminal", {"command": "ls"}, policy).destructive


def test_check_honours_policy(policy: Policy) -> None:
    assert check("execute_code", {"code": "1"}, allow_destructive=False, policy=policy).run
    verdict = check("terminal", {"command": "git push"}, allow_destructive=False, policy=policy)
    assert verdict.action == "dry_run" and "config.deny[0]" in (verdict.result_text or "")


def test_missing_store_config_is_the_default(tmp_path: Path) -> None:
    assert load_policy(store=tmp_path) == load_policy()


@pytest.mark.parametrize(("text", "message"), [
    ("unknown_tools = 'maybe'", "unknown_tools must be"),
    ("colour = 'red'", "unknown key(s) colour"),
    ("allow = 'x'", "allow must be an array"),
    ("[[allow]]\ntool = 'x'\nflavour = 'y'", "unknown key(s) flavour"),
    ("[[deny]]\npattern = '(unclosed'", "not a valid regex"),
    ("[[deny]]\ncommand = \"git 'push\"", "not valid shell words"),
    ("[[deny]]\nargument = 'path'", "'argument' needs a 'pattern'"),
    ("[[deny]]\nreason = 'x'", "needs at least one of"),
    ("[[deny]]\ntool = 3", "must be a non-empty string"),
    ("[[deny]]\ncommand = 'x'\npattern = 'y'", "either 'command' or 'pattern'"),
    ("this is = not toml [", "not valid TOML"),
])
def test_bad_configs_give_one_line_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "guard.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(GuardConfigError) as info:
        load_policy(path)
    assert isinstance(info.value, ReplaykitError) and info.value.exit_code == 2
    assert message in str(info.value) and "\n" not in str(info.value)
    assert str(path) in str(info.value)


def test_explicit_missing_config_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(GuardConfigError, match="guard config not found"):
        load_policy(tmp_path / "nope.toml")


def test_binary_config_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "guard.toml"
    path.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(GuardConfigError):
        load_policy(path)


def test_docs_example_loads() -> None:
    """The example in docs/guard.md is a valid config (keeps the docs honest)."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "guard.md").read_text(encoding="utf-8")
    block = doc.split("```toml", 1)[1].split("```", 1)[0]
    policy = Policy.from_dict(__import__("tomllib").loads(block), source="docs/guard.md")
    assert policy.allow and policy.deny
