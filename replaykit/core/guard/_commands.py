"""Shell-command classification: walk the parsed script and judge each simple command.

Each rule returns findings `(rule_id, reason)`; an empty list means "changes nothing we know of".
Wrappers (sudo, env, timeout, xargs, nice, ...) are unwrapped and the wrapped command judged; shells
and `eval`/`ssh` re-enter the parser with the inner command text. Program-family rules (git, package
managers, containers, clouds, HTTP clients, databases) live in `_programs.py`.
"""

from __future__ import annotations

import posixpath

from ._common import Finding, ShellContext, is_harmless_target
from ._opts import scan_opts, show
from ._programs import classify_program
from ._shell import MAX_DEPTH, Script, ShellSyntaxError, SimpleCommand, parse_shell

__all__ = ["classify_argv", "classify_shell"]

_WRITE_OPS = frozenset({">", ">|", ">>", "&>", "&>>", "<>", ">&"})
_KEYWORDS = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}",
                       "time", "esac", "coproc"})
_HEADERS = frozenset({"for", "select", "case", "function", "in"})
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "busybox"})
LIMIT_CHARS = 1_000_000


def classify_shell(text: str, ctx: ShellContext, depth: int = 0) -> list[Finding]:
    """Every destructive finding in a shell command line (empty when it is harmless)."""
    if len(text) > LIMIT_CHARS:
        return [("shell.unparseable", f"command is {len(text)} characters long, too long to analyse")]
    try:
        script = parse_shell(text, depth)
    except ShellSyntaxError as exc:
        return [("shell.unparseable", f"cannot parse the shell command ({exc})")]
    except RecursionError:
        return [("shell.unparseable", "cannot parse the shell command (nested too deeply)")]
    return _Walker(ctx).script(script, depth)


def classify_argv(argv: list[str], ctx: ShellContext) -> list[Finding]:
    """Judge an argv given directly as a list (tools such as OpenAI's local_shell send one)."""
    if not argv or not all(isinstance(a, str) for a in argv):
        return [("shell.unparseable", "the command is not a list of strings")]
    return _Walker(ctx).argv(list(argv), None, False, 0)


class _Walker:
    def __init__(self, ctx: ShellContext) -> None:
        self.ctx = ctx

    def script(self, script: Script, depth: int) -> list[Finding]:
        found: list[Finding] = []
        for pipeline in script.pipelines:
            for idx, cmd in enumerate(pipeline):
                found.extend(self.command(cmd, piped=idx > 0, depth=depth))
        for sub in script.substitutions:
            found.extend(self.script(sub, depth + 1))
        return found

    def shell_text(self, text: str, depth: int, prefix: str = "") -> list[Finding]:
        if depth > MAX_DEPTH:
            return [("shell.unparseable", "command nesting is too deep")]
        found = classify_shell(text, self.ctx, depth)
        return [(r, prefix + why) for r, why in found] if prefix else found

    # -- one simple command --------------------------------------------------------------------
    def command(self, cmd: SimpleCommand, piped: bool, depth: int) -> list[Finding]:
        found: list[Finding] = []
        heredoc: str | None = None
        for r in cmd.redirects:
            if r.op in ("<<", "<<-") and r.heredoc is not None:
                heredoc = r.heredoc[0]
            elif r.op == "<<<":
                heredoc = r.target.text
            elif r.op in ("<", "<&"):
                if r.op == "<" and cmd.words:
                    heredoc = heredoc if heredoc is not None else ""
                continue
            elif r.op in _WRITE_OPS:
                target = r.target.text
                if r.op == ">&" and (target.isdigit() or target == "-"):
                    continue  # fd duplication such as 2>&1
                if is_harmless_target(target) and not r.target.dynamic:
                    continue
                if target.startswith("/dev/sd") or target.startswith("/dev/nvme") or target.startswith("/dev/disk"):
                    found.append(("disk", f"writes to the block device {target}"))
                elif r.op in (">>", "&>>"):
                    found.append(("shell.redirect", f"appends to the file {target} (redirection {r.op})"))
                else:
                    found.append(("shell.redirect", f"truncates and writes the file {target} (redirection {r.op})"))
        words = cmd.words
        while words and words[0].text in _KEYWORDS:
            words = words[1:]
        if not words or words[0].text in _HEADERS:
            return found
        if words[0].dynamic:
            found.append(("shell.dynamic", f"runs a command whose name comes from an expansion ({words[0].text})"))
            return found
        stdin = heredoc if heredoc is not None else ("" if piped else None)
        found.extend(self.argv([w.text for w in words], stdin, piped, depth))
        return found

    def argv(self, argv: list[str], stdin: str | None, piped: bool, depth: int) -> list[Finding]:
        """Judge one argv. `stdin` is a heredoc body, "" for unseen input (a pipe or `<`), None for none."""
        for _ in range(32):  # unwrap sudo env nice timeout ... (bounded)
            if not argv:
                return []
            if self.ctx.command_rule is not None:
                verdict = self.ctx.command_rule(argv)
                if verdict is not None:
                    destructive, rule, reason = verdict
                    return [(rule, reason)] if destructive else []
            name = posixpath.basename(argv[0])
            inner = _unwrap(name, argv)
            if inner is None:
                break
            argv = inner
        else:
            return [("shell.unparseable", "too many nested command wrappers")]
        args = argv[1:]
        if name in SHELLS:
            return self._shell(argv, stdin, piped, depth)
        if name in ("eval",):
            return self.shell_text(" ".join(args), depth + 1)
        if name == "xargs":
            return self._xargs(args, stdin, depth)
        if name == "find":
            return self._find(args, stdin, depth)
        if name == "watch":
            rest = scan_opts(args, "nd", ("--interval", "--differences"), stop_at_first_positional=True)
            return self.shell_text(" ".join(rest.positionals), depth + 1)
        if name == "ssh":
            return self._ssh(args, depth)
        if name in ("source", "."):
            if args and posixpath.basename(args[0]) in ("activate", "activate.sh", "activate.fish"):
                return []
            return [("shell.exec_code", f"runs a shell script the guard cannot see ({show(argv)})")]
        return classify_program(name, argv, stdin, piped, self, depth)

    # -- re-entrant program families -------------------------------------------------------------
    def _shell(self, argv: list[str], stdin: str | None, piped: bool, depth: int) -> list[Finding]:
        args = argv[1:]
        if posixpath.basename(argv[0]) == "busybox":
            return self.argv(args, stdin, piped, depth)
        i = 0
        command_string: str | None = None
        script_file: str | None = None
        while i < len(args):
            a = args[i]
            if a in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
                i += 2
                continue
            if a == "--":
                i += 1
                if i < len(args):
                    script_file = args[i]
                break
            if a.startswith("--") or a.startswith("+"):
                if a in ("--version", "--help"):
                    return []
                i += 1
                continue
            if a.startswith("-") and len(a) > 1:
                if "c" in a[1:]:
                    command_string = args[i + 1] if i + 1 < len(args) else ""
                    break
                i += 1
                continue
            script_file = a
            break
        if command_string is not None:
            return self.shell_text(command_string, depth + 1)
        if script_file is not None:
            return [("shell.exec_code", f"runs a shell script the guard cannot see ({show(argv)})")]
        if stdin:
            return self.shell_text(stdin, depth + 1)
        if piped:
            return [("shell.pipe_to_shell", f"pipes data into a shell ({show(argv)})")]
        return [("shell.exec_code", f"starts a shell whose input the guard cannot see ({show(argv)})")]

    def _xargs(self, args: list[str], stdin: str | None, depth: int) -> list[Finding]:
        opts = scan_opts(args, "IiLlnPsdEa", ("--replace", "--max-lines", "--max-args", "--max-procs",
                                              "--max-chars", "--delimiter", "--eof", "--arg-file",
                                              "--process-slot-var"), stop_at_first_positional=True)
        inner = opts.positionals or ["echo"]
        return self.argv(inner, None, False, depth + 1)

    def _find(self, args: list[str], stdin: str | None, depth: int) -> list[Finding]:
        found: list[Finding] = []
        i = 0
        while i < len(args):
            a = args[i]
            if a == "-delete":
                found.append(("shell.delete", "deletes files (find -delete)"))
            elif a in ("-exec", "-execdir", "-ok", "-okdir"):
                j = i + 1
                while j < len(args) and args[j] not in (";", "+"):
                    j += 1
                inner = args[i + 1 : j]
                sub = self.argv(inner, None, False, depth + 1)
                found.extend((r, f"{why} (via find {a})") for r, why in sub)
                i = j
            elif a in ("-fprint", "-fprint0", "-fprintf", "-fls"):
                target = args[i + 1] if i + 1 < len(args) else ""
                if not is_harmless_target(target):
                    found.append(("shell.write", f"writes the file {target} (find {a})"))
            i += 1
        return found

    def _ssh(self, args: list[str], depth: int) -> list[Finding]:
        opts = scan_opts(args, "bcDEeFIiJLlmOopQRSWwB", stop_at_first_positional=True)
        if opts.has("-V", "-G") or (opts.has("-O") and opts.values("-O") == ["check"]):
            return []
        if not opts.positionals:
            return [("remote.exec", "opens a remote ssh session")]
        host, remote = opts.positionals[0], opts.positionals[1:]
        if not remote:
            return [("remote.exec", f"opens a remote shell on {host}")]
        found = self.shell_text(" ".join(remote), depth + 1)
        return [(_remote_rule(r), f"on {host}: {why}") for r, why in found]


def _remote_rule(rule: str) -> str:
    return "remote.delete" if rule in ("shell.delete", "git.clean") else rule


_SUDO_VALUE_OPTS = "uUgpCDhrtT"
_ENV_VALUE_OPTS = "uCS"


def _unwrap(name: str, argv: list[str]) -> list[str] | None:
    """The command a wrapper runs, or None when `name` is not a wrapper."""
    args = argv[1:]
    if name in ("sudo", "doas", "run0"):
        opts = scan_opts(args, _SUDO_VALUE_OPTS, ("--user", "--group", "--prompt", "--chdir", "--close-from",
                                                  "--host", "--role", "--type", "--other-user"),
                         stop_at_first_positional=True)
        if not opts.positionals and opts.has("-s", "-i", "--shell", "--login"):
            return ["sh"]
        return opts.positionals
    if name == "env":
        out: list[str] = []
        opts = scan_opts(args, _ENV_VALUE_OPTS, ("--unset", "--chdir", "--split-string"),
                         stop_at_first_positional=True)
        split = opts.values("-S", "--split-string")
        rest = opts.positionals
        while rest and "=" in rest[0] and not rest[0].startswith("="):
            rest = rest[1:]
        if split:
            out = " ".join(split).split() + rest
        else:
            out = rest
        return out
    if name in ("nice", "ionice", "chrt", "taskset", "stdbuf", "nohup", "setsid", "unbuffer", "time",
                "caffeinate", "command", "builtin", "exec", "flock", "timeout", "gtimeout", "numactl",
                "firejail", "proxychains", "proxychains4", "torsocks", "catchsegv", "faketime"):
        if name == "command" and any(a in ("-v", "-V") for a in args[:1]):
            return []
        values = {"nice": "n", "ionice": "cnp", "stdbuf": "ioe", "exec": "a", "timeout": "sk",
                  "gtimeout": "sk", "time": "fo", "flock": "wEn", "chrt": "", "taskset": ""}.get(name, "")
        opts = scan_opts(args, values, ("--signal", "--kill-after", "--adjustment", "--format", "--output",
                                        "--timeout", "--conflict-exit-code"), stop_at_first_positional=True)
        rest = opts.positionals
        if name in ("timeout", "gtimeout", "taskset", "chrt", "flock", "faketime") and rest:
            rest = rest[1:]  # the duration / cpu mask / priority / lock file / fake time
        return rest
    return None
