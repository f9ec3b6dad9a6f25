"""Rules for individual programs: coreutils, git, package managers, containers, clouds, HTTP, databases.

Each rule receives the full argv (argv[0] may be a path) and returns findings. Programs not listed here
are "unknown commands": harmless unless the policy says `unknown_commands = "destructive"`.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

from ._common import INTERPRETERS, Finding, Walker, is_harmless_target
from ._opts import scan_opts, show

__all__ = ["READ_ONLY_COMMANDS", "classify_program"]


READ_ONLY_COMMANDS = frozenset("""
ls ll la dir vdir cat tac head tail less more most bat grep egrep fgrep rg ag ack fd fdfind wc cut tr
diff cmp comm file stat du df pwd whoami id groups uname echo printf true false test [ [[ which type
whereis printenv ps pgrep pidof uptime free lsblk lscpu lsof lsusb lspci jq tree realpath readlink
basename dirname md5sum sha1sum sha256sum sha512sum b2sum cksum base64 base32 xxd od hexdump strings
column nl fold paste join expand unexpand seq sleep cd pushd popd dirs export set unset shopt alias
unalias read wait jobs ulimit umask locale tput clear tty man help history hash pytest py.test mypy
pyright flake8 pylint pyflakes pycodestyle bandit tox nox ping dig nslookup host traceroute tracepath
whois vmstat iostat mpstat nproc getconf arch env-parallel date cal bc dc expr awk-version yes look
rev shuf numfmt tsort factor sum mktemp tempfile netstat ss ip ifconfig route arp nvidia-smi lsmod
getent logname users who w last finger zcat zless zgrep bzcat xzcat zstdcat unzstd-l pstree top htop
btop atop iotop glances watchman-version locate mlocate plocate apropos whatis info pager view-only
sort uniq tee trap true : let local declare typeset readonly return exit break continue shift getopts
""".split())

_HTTP_SAFE = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})


def classify_program(name: str, argv: list[str], stdin: str | None, piped: bool, walker: Walker,
                     depth: int) -> list[Finding]:
    args = argv[1:]
    rule = _RULES.get(name)
    if rule is None:
        for prefix, fn in _PREFIX_RULES:
            if name.startswith(prefix):
                rule = fn
                break
    if rule is not None:
        return rule(argv, args, stdin, piped, walker, depth)
    if name in READ_ONLY_COMMANDS:
        return []
    if name in INTERPRETERS or re.fullmatch(r"(python|pypy|pip|node|ruby|perl|php)[0-9.]*", name):
        return _interpreter(argv, args, stdin, piped, walker, depth)
    if walker.ctx.unknown_commands_destructive:
        return [("shell.unknown", f"runs {name}, a command the guard does not know ({show(argv)})")]
    return []


Rule = Callable[[list[str], list[str], "str | None", bool, "Walker", int], list[Finding]]
_RULES: dict[str, Rule] = {}
_PREFIX_RULES: list[tuple[str, Rule]] = []


def _rule(*names: str) -> Callable[[Rule], Rule]:
    def deco(fn: Rule) -> Rule:
        for n in names:
            if n.endswith("*"):
                _PREFIX_RULES.append((n[:-1], fn))
            else:
                _RULES[n] = fn
        return fn

    return deco


def _fixed(rule: str, what: str) -> Rule:
    def fn(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker, d: int) -> list[Finding]:
        return [(rule, f"{what} ({show(argv)})")]

    return fn


# -- files ---------------------------------------------------------------------------------------
for _names, _rule_id, _what in (
    ("rm rmdir shred unlink srm trash trash-put gio-trash wipe del erase rd Remove-Item", "shell.delete",
     "deletes files"),
    ("mv rename", "shell.move", "moves or renames files"),
    ("cp install ln link touch mkdir rsync-local truncate fallocate split csplit mkfifo mknod patch ed ex "
     "vim vi nvim nano emacs pico micro kak hx code subl", "shell.write", "writes files"),
    ("chmod chown chgrp chattr setfacl chcon setfattr", "shell.permissions", "changes permissions or owners"),
    ("dd mkfs mke2fs fdisk sfdisk cfdisk gdisk sgdisk parted wipefs mount umount losetup mkswap swapon "
     "swapoff cryptsetup hdparm blkdiscard lvremove lvcreate lvextend lvresize vgremove vgcreate pvremove "
     "pvcreate zpool diskutil format", "disk", "uses a disk tool"),
    ("kill pkill killall skill xkill", "process.kill", "kills processes"),
    ("shutdown reboot halt poweroff init telinit suspend hibernate", "system.power",
     "shuts down or restarts the machine"),
    ("useradd userdel usermod passwd chpasswd groupadd groupdel adduser deluser visudo", "system.accounts",
     "changes user accounts"),
    ("mail mailx sendmail mutt msmtp swaks ssmtp", "message.send", "sends mail"),
    ("at batch", "system.schedule", "schedules a command"),
    ("scp sftp", "remote.write", "copies files to or from another host"),
    ("npx bunx pnpx", "shell.exec_code", "runs a package's code"),
):
    for _n in _names.split():
        _RULES[_n] = _fixed(_rule_id, _what)
_PREFIX_RULES.append(("mkfs.", _fixed("disk", "formats a file system")))


@_rule("kill")
def _kill(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker, d: int) -> list[Finding]:
    if not args or args[0] in ("-l", "-L", "--list") or (args[0] == "-0"):
        return []  # list signals / probe whether a process exists
    return [("process.kill", f"kills processes ({show(argv)})")]


@_rule("tee")
def _tee(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker, d: int) -> list[Finding]:
    opts = scan_opts(args, "", ("--output-error",))
    files = [f for f in opts.positionals if not is_harmless_target(f)]
    if not files:
        return []
    mode = "appends to" if opts.has("-a", "--append") else "truncates and writes"
    return [("shell.write", f"{mode} the file {files[0]} (tee)")]


@_rule("sed", "gsed")
def _sed(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker, d: int) -> list[Finding]:
    for a in args:
        if a == "--":
            break
        if a.startswith("--in-place"):
            return [("shell.inplace_edit", f"edits files in place ({show(argv)})")]
        if a.startswith("-") and not a.startswith("--"):
            for ch in a[1:]:
                if ch == "i":
                    return [("shell.inplace_edit", f"edits files in place ({show(argv)})")]
                if ch in "efl":
                    break
    return []


@_rule("awk", "gawk", "mawk", "nawk")
def _awk(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker, d: int) -> list[Finding]:
    opts = scan_opts(args, "fvFiE", ("--file", "--assign", "--field-separator", "--include"))
    if "inplace" in opts.values("-i", "--include"):
        return [("shell.inplace_edit", f"edits files in place ({show(argv)})")]
    if opts.has("-f", "--file"):
        return [("shell.exec_code", f"runs an awk program file the guard cannot see ({show(argv)})")]
    program = opts.positionals[0] if opts.positionals else ""
    # awk is a language of its own; these are the constructs through which it touches the world
    if re.search(r"\bsystem\s*\(|\|\s*(getline\b|\")|print[f]?\b[^;}]*>\s*\S", program):
        return [("shell.exec_code", f"awk program runs commands or writes files ({show(argv)})")]
    return []


@_rule("perl", "ruby")
def _perl(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker, d: int) -> list[Finding]:
    for a in args:
        if a.startswith(("-M", "-I", "-m", "-x", "-0", "-l")):
            continue
        if a.startswith("-") and not a.startswith("--") and "i" in a[1:].split("e")[0]:
            return [("shell.inplace_edit", f"edits files in place ({show(argv)})")]
        if a in ("-e", "-E") or not a.startswith("-"):
            break
    return _interpreter(argv, args, stdin, piped, w, d)


@_rule("sort")
def _sort(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker, d: int) -> list[Finding]:
    opts = scan_opts(args, "otkSTt", ("--output", "--key", "--buffer-size", "--temporary-directory",
                                      "--field-separator", "--parallel", "--files0-from"))
    outs = [o for o in opts.values("-o", "--output") if not is_harmless_target(o)]
    return [("shell.write", f"writes the file {outs[0]} (sort -o)")] if outs else []


@_rule("uniq")
def _uniq(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker, d: int) -> list[Finding]:
    opts = scan_opts(args, "fsw", ("--skip-fields", "--skip-chars", "--check-chars", "--group",
                                   "--all-repeated"))
    if len(opts.positionals) >= 2 and not is_harmless_target(opts.positionals[1]):
        return [("shell.write", f"writes the file {opts.positionals[1]} (uniq INPUT OUTPUT)")]
    return []


@_rule("date")
def _date(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker, d: int) -> list[Finding]:
    if any(a in ("-s",) or a.startswith("--set") for a in args):
        return [("system.config", "sets the system clock (date --set)")]
    return []


@_rule("hostname", "hostnamectl", "timedatectl", "hwclock", "sysctl", "modprobe", "rmmod", "insmod",
       "update-alternatives", "ldconfig")
def _system_cfg(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker,
                d: int) -> list[Finding]:
    name = posixpath.basename(argv[0])
    positional = [a for a in args if not a.startswith("-")]
    if name == "hostname" and not positional:
        return []
    if name in ("hostnamectl", "timedatectl") and (not positional or positional[0] in ("status", "show",
                                                                                       "list-timezones")):
        return []
    if name == "sysctl" and not any("=" in a for a in args) and "-w" not in args:
        return []
    if name == "hwclock" and not any(a in ("-w", "--systohc", "-s", "--hctosys", "--set") for a in args):
        return []
    return [("system.config", f"changes system configuration ({show(argv)})")]


@_rule("systemctl", "service", "launchctl", "rc-service", "sv")
def _services(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker,
              d: int) -> list[Finding]:
    positional = [a for a in args if not a.startswith("-")]
    read = {"status", "show", "list-units", "list-unit-files", "list-timers", "list-sockets", "is-active",
            "is-enabled", "is-failed", "cat", "list-dependencies", "help", "list", "print", "blame",
            "--status-all", "get-default"}
    name = posixpath.basename(argv[0])
    verb = positional[1] if name in ("service", "rc-service", "sv") and len(positional) > 1 else (
        positional[0] if positional else "status")
    if name == "service" and "--status-all" in args:
        return []
    if verb in read:
        return []
    if verb in ("poweroff", "reboot", "halt", "suspend", "hibernate", "kexec"):
        return [("system.power", f"shuts down or restarts the machine ({show(argv)})")]
    return [("system.service", f"changes a system service ({show(argv)})")]


@_rule("crontab")
def _crontab(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker,
             d: int) -> list[Finding]:
    opts = scan_opts(args, "u")
    if opts.has("-l") and not opts.has("-r", "-e", "-i") and not opts.positionals:
        return []
    return [("system.schedule", f"changes the crontab ({show(argv)})")]


@_rule("iptables", "ip6tables", "nft", "ufw", "firewall-cmd")
def _firewall(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker,
              d: int) -> list[Finding]:
    if any(a in ("-L", "-S", "--list", "--list-rules", "status", "list", "--list-all", "--state") for a in args):
        return []
    return [("system.config", f"changes firewall rules ({show(argv)})")]


@_rule("tar", "bsdtar", "gtar")
def _tar(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker, d: int) -> list[Finding]:
    first = args[0] if args else ""
    letters = first.lstrip("-") if first and not first.startswith("--") else ""
    flags = set(letters) | {a for a in args if a.startswith("--")}
    for a in args[1:]:
        if a.startswith("-") and not a.startswith("--"):
            flags |= set(a[1:])
    if "t" in flags or "--list" in flags:
        return []
    if "x" in flags or "--extract" in flags or "--get" in flags:
        return [("shell.write", f"extracts an archive, writing files ({show(argv)})")]
    if flags & {"c", "r", "u", "A", "--create", "--append", "--update", "--delete"}:
        opts = scan_opts(args[1:], "fCbTXg", ("--file", "--directory"))
        out = opts.values("-f", "--file") or ([] if "f" not in letters else args[1:2])
        if out and all(is_harmless_target(o) for o in out):
            return []
        return [("shell.write", f"writes an archive ({show(argv)})")]
    return []


@_rule("unzip", "7z", "7za", "unrar")
def _unzip(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker, d: int) -> list[Finding]:
    if any(a in ("-l", "-v", "-t", "-Z", "-p", "-c", "l", "t") for a in args):
        return []
    return [("shell.write", f"extracts an archive, writing files ({show(argv)})")]


@_rule("zip", "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4", "compress",
       "uncompress")
def _compress(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker,
              d: int) -> list[Finding]:
    name = posixpath.basename(argv[0])
    if name != "zip" and any(a in ("-c", "--stdout", "-l", "--list", "-t", "--test", "-h", "--help",
                                   "-V", "--version") for a in args):
        return []
    if name != "zip" and not [a for a in args if not a.startswith("-")]:
        return []  # filter mode: stdin to stdout
    return [("shell.write", f"compresses or decompresses files in place ({show(argv)})")]


@_rule("make", "gmake", "just", "task", "invoke", "rake")
def _make(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker, d: int) -> list[Finding]:
    if any(a in ("-n", "--dry-run", "--just-print", "--recon", "-q", "--question", "--list", "-l") for a in args):
        return []
    opts = scan_opts(args, "CfIjloWe", ("--directory", "--file", "--makefile", "--jobs"))
    bad = [t for t in opts.positionals if "=" not in t and _DANGEROUS_TARGET.search(t)]
    if bad:
        return [("shell.build_target", f"runs the build target {bad[0]!r} ({show(argv)})")]
    return []


_DANGEROUS_TARGET = re.compile(r"(^|[-_:.])(clean|distclean|mrproper|realclean|purge|install|uninstall|"
                               r"deploy|publish|release|upload|destroy|reset|wipe|drop|nuke|push)($|[-_:.])")


@_rule("ruff")
def _ruff(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker, d: int) -> list[Finding]:
    if args and args[0] == "format" and not any(a in ("--check", "--diff") for a in args):
        return [("shell.write", f"reformats files in place ({show(argv)})")]
    if any(a in ("--fix", "--unsafe-fixes", "--add-noqa") for a in args) and "--diff" not in args:
        return [("shell.write", f"rewrites files with fixes ({show(argv)})")]
    return []


@_rule("black", "isort", "autopep8", "yapf", "prettier", "eslint", "gofmt", "rustfmt", "clang-format",
       "shfmt", "autoflake", "pyupgrade", "stylua", "biome")
def _formatters(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker,
                d: int) -> list[Finding]:
    name = posixpath.basename(argv[0])
    writes_by_default = name in ("black", "isort", "autopep8-i", "pyupgrade", "autoflake-i", "rustfmt")
    writing_flags = ("--write", "-w", "--fix", "-i", "--in-place", "--apply")
    checking_flags = ("--check", "--diff", "-d", "-l", "--list-different", "--check-only", "--version")
    if any(a in checking_flags for a in args):
        return []
    if writes_by_default or any(a in writing_flags for a in args):
        return [("shell.write", f"reformats files in place ({show(argv)})")]
    return []


@_rule("yq")
def _yq(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker, d: int) -> list[Finding]:
    if any(a in ("-i", "--inplace", "--in-place") for a in args):
        return [("shell.inplace_edit", f"edits files in place ({show(argv)})")]
    return []


@_rule("tmux", "screen")
def _tmux(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker, d: int) -> list[Finding]:
    positional = [a for a in args if not a.startswith("-")]
    verb = positional[0] if positional else ""
    if verb.startswith(("list-", "ls", "show-", "display", "has-session", "capture-pane", "info")) or "-ls" in args:
        return []
    return [("process.control", f"controls terminal sessions ({show(argv)})")]


def _interpreter(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker,
                 d: int) -> list[Finding]:
    name = posixpath.basename(argv[0])
    if any(a in ("-V", "--version", "-h", "--help", "-v") for a in args[:1]):
        return []
    if name.startswith("pip"):
        return _pip(argv, args, stdin, piped, w, d)
    if name.startswith(("python", "pypy")):
        opts = scan_opts(args, "cmWXQ", (), stop_at_first_positional=True)
        module = opts.values("-m")
        if module:
            return _python_module(module[0], argv, opts.positionals, stdin, piped, w, d)
    if any(a.startswith("-") and ("c" in a[1:] or "e" in a[1:]) for a in args[:3]):
        return [("shell.exec_code", f"runs inline code the guard cannot inspect ({show(argv)})")]
    if [a for a in args if not a.startswith("-")]:
        return [("shell.exec_code", f"runs a script the guard cannot inspect ({show(argv)})")]
    if piped or stdin is not None:
        return [("shell.pipe_to_shell", f"pipes input into an interpreter ({show(argv)})")]
    return [("shell.exec_code", f"starts an interpreter whose input the guard cannot see ({show(argv)})")]


_SAFE_MODULES = frozenset({"pytest", "unittest", "mypy", "ruff-check", "pyflakes", "flake8", "pylint",
                           "json.tool", "http.server", "timeit", "doctest", "compileall", "py_compile",
                           "site", "platform", "this", "tokenize", "ast", "dis", "pydoc", "calendar",
                           "tabnanny", "sysconfig", "pstats", "trace-count", "pyright", "bandit",
                           "pycodestyle", "coverage-report", "zipfile-l", "tarfile-l", "base64", "uuid",
                           "webbrowser-no", "pickletools", "sqlite3-no", "test.support-no", "hypothesis"})


def _python_module(module: str, argv: list[str], rest: list[str], stdin: str | None, piped: bool, w: Walker,
                   d: int) -> list[Finding]:
    if module in ("pip", "pip3"):
        return _pip(argv, rest, stdin, piped, w, d)
    if module in ("ruff", "black", "isort"):
        return classify_program(module, [module, *rest], stdin, piped, w, d)
    if module == "venv" or module == "virtualenv":
        return [("shell.write", f"creates a virtual environment ({show(argv)})")]
    if module in _SAFE_MODULES:
        return []
    return [("shell.exec_code", f"runs the Python module {module}, code the guard cannot inspect ({show(argv)})")]


# -- package managers ----------------------------------------------------------------------------
_PKG_READ = frozenset({"list", "ls", "la", "ll", "show", "info", "search", "freeze", "check", "index",
                       "inspect", "debug", "help", "view", "v", "outdated", "audit", "why", "explain",
                       "policy", "depends", "rdepends", "madison", "doctor", "config", "home", "deps",
                       "leaves", "query", "version", "--version", "-v", "-V", "env", "test", "t", "tst",
                       "run", "run-script", "start", "build", "b", "clippy", "doc", "bench",
                       "tree", "metadata", "vet", "fund", "ping", "whoami", "pack", "cache-list", "desc",
                       "uses", "options", "cat", "fetch-no", "log", "exec-no", "get-no", "search-no",
                       "list-installed", "dump", "licenses", "shell-no", "lock-check", "repoquery",
                       "provides", "whatprovides", "history", "-h", "--help", "stat", "describe"})
_PKG_MANAGERS = ("apt apt-get apt-cache aptitude dpkg yum dnf zypper pacman apk brew port snap flatpak gem "
                 "conda mamba micromamba pipx poetry pdm hatch rye uv npm pnpm yarn bun cargo go composer "
                 "nix-env nix choco winget scoop cpan cpanm luarocks opam cabal stack mix dotnet nuget "
                 "bundle bundler gradle mvn sdk asdf mise rustup nvm pyenv").split()


@_rule(*_PKG_MANAGERS)
def _package_manager(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker,
                     d: int) -> list[Finding]:
    name = posixpath.basename(argv[0])
    positional = [a for a in args if not a.startswith("-")]
    if name == "pacman" or (name in ("dpkg", "rpm")):
        flag = next((a for a in args if a.startswith("-")), "")
        if flag.startswith(("-Q", "-l", "-L", "-s", "--list", "--status", "-q")) or re.fullmatch(r"-S[sigl]+", flag):
            return []
        return [("package.change", f"installs or removes packages ({show(argv)})")]
    if name == "apt-cache":
        return []
    if name == "yarn" and not positional:
        return [("package.change", f"installs packages ({show(argv)})")]
    if not positional:
        return []  # bare invocation / --version / --help
    verb = positional[0]
    if name in ("uv",) and verb == "pip" and len(positional) > 1:
        verb = positional[1]
    if name == "uv" and verb == "run":
        opts = scan_opts(args[args.index("run") + 1 :], "p", ("--with", "--python", "--project", "--directory",
                                                            "--group", "--extra", "--env-file", "--package"),
                         stop_at_first_positional=True)
        return w.argv(opts.positionals, stdin, piped, d + 1) if opts.positionals else []
    if name in ("poetry", "pdm", "hatch", "rye") and verb == "run" and len(positional) > 1:
        return w.argv(args[args.index("run") + 1 :], stdin, piped, d + 1)
    if name in ("npm", "pnpm", "yarn", "bun") and verb in ("run", "run-script") and len(positional) > 1:
        script = positional[1]
        if _DANGEROUS_TARGET.search(script):
            return [("shell.build_target", f"runs the package script {script!r} ({show(argv)})")]
        return []
    if name in ("npm", "pnpm", "yarn", "bun") and verb in ("exec", "x", "dlx"):
        return [("shell.exec_code", f"runs a package's code ({show(argv)})")]
    if name == "cargo" and verb == "fmt" and "--check" not in args:
        return [("shell.write", f"reformats files in place ({show(argv)})")]
    if (name == "go" and verb in ("fmt", "generate", "get", "install", "clean")) or (
            name == "go" and verb == "mod" and len(positional) > 1 and positional[1] != "graph"):
        return [("package.change", f"changes modules or files ({show(argv)})")]
    if name == "brew" and verb in ("services",) and len(positional) > 1 and positional[1] != "list":
        return [("system.service", f"changes a service ({show(argv)})")]
    if name == "conda" and verb == "env" and len(positional) > 1 and positional[1] == "list":
        return []
    if verb in _PKG_READ:
        return []
    return [("package.change", f"changes installed packages or project dependencies ({show(argv)})")]


def _pip(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker, d: int) -> list[Finding]:
    opts = scan_opts(args, "", ("--python", "--log", "--proxy", "--cache-dir", "--timeout", "--retries"),
                     stop_at_first_positional=True)
    if not opts.positionals:
        return []
    verb = opts.positionals[0]
    if verb == "cache" and len(opts.positionals) > 1 and opts.positionals[1] in ("purge", "remove"):
        return [("shell.delete", f"deletes pip's cache ({show(argv)})")]
    if verb in ("list", "show", "freeze", "check", "search", "index", "inspect", "debug", "help", "cache",
                "config", "hash", "completion"):
        return []
    if verb in ("download", "wheel"):
        return [("shell.write", f"downloads packages to files ({show(argv)})")]
    return [("package.change", f"installs or removes Python packages ({show(argv)})")]


# -- git -----------------------------------------------------------------------------------------
_GIT_READ = frozenset("""status diff log show blame grep ls-files ls-tree ls-remote rev-parse rev-list describe
shortlog cat-file for-each-ref name-rev show-ref show-branch whatchanged cherry help version count-objects
fsck verify-commit verify-tag check-ignore check-attr check-ref-format var diff-tree diff-files diff-index
merge-base range-diff fetch annotate get-tar-commit-id grep-no instaweb-no""".split())


@_rule("git")
def _git(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker, d: int) -> list[Finding]:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] in ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--super-prefix",
                       "--config-env") and "=" not in args[i]:
            i += 2
        else:
            if args[i] in ("--version", "--help", "-h"):
                return []
            i += 1
    if i >= len(args):
        return []
    sub, rest = args[i], args[i + 1 :]
    shown = show(argv)
    positional = [a for a in rest if not a.startswith("-")]
    if sub in _GIT_READ:
        if sub == "diff" and any(a.startswith("--output") for a in rest):
            return [("shell.write", f"writes a diff to a file ({shown})")]
        return []
    if sub == "push":
        force = any(a in ("-f", "--force", "--mirror", "--delete", "-d", "--prune") or a.startswith(
            ("--force-with-lease", "--force-if-includes")) for a in rest) or any(
            p.startswith(("+", ":")) for p in positional[1:])
        if force:
            return [("git.force_push", f"force-pushes or deletes remote history ({shown})")]
        return [("git.push", f"pushes commits to a remote ({shown})")]
    if sub == "reset":
        if any((a.startswith("--h") and "--hard".startswith(a)) or a in ("--merge", "--keep") for a in rest):
            return [("git.discard", f"discards uncommitted changes ({shown})")]
        return [("git.write", f"moves HEAD or unstages changes ({shown})")]
    if sub == "checkout":
        if "--" in rest or "." in positional or any(a in ("-f", "--force", "-p", "--patch") for a in rest):
            return [("git.discard", f"overwrites working-tree files, discarding changes ({shown})")]
        return [("git.write", f"switches branches, changing the working tree ({shown})")]
    if sub == "restore":
        if rest and all(a in ("--staged", "-S") or a == "--" or not a.startswith("-") for a in rest) and (
                "--staged" in rest or "-S" in rest) and "--worktree" not in rest and "-W" not in rest:
            return [("git.write", f"unstages changes ({shown})")]
        return [("git.discard", f"restores files, discarding working-tree changes ({shown})")]
    if sub == "clean":
        if any(a in ("-n", "--dry-run") or (a.startswith("-") and not a.startswith("--") and "n" in a)
               for a in rest):
            return []
        return [("git.clean", f"deletes untracked files ({shown})")]
    if sub == "stash":
        verb = positional[0] if positional else "push"
        if verb in ("list", "show"):
            return []
        if verb in ("drop", "clear"):
            return [("git.discard", f"deletes stashed changes ({shown})")]
        return [("git.write", f"stashes or applies changes ({shown})")]
    if sub == "branch":
        if any(a in ("-d", "-D", "--delete") for a in rest):
            return [("git.branch_delete", f"deletes a branch ({shown})")]
        if any(a in ("-m", "-M", "-c", "-C", "--move", "--copy", "--set-upstream-to", "-u", "--unset-upstream",
                     "--edit-description", "-f", "--force") for a in rest):
            return [("git.write", f"renames, copies or moves a branch ({shown})")]
        listing = ("--list", "-l", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at")
        if positional and not any(a in listing for a in rest):
            return [("git.write", f"creates a branch ({shown})")]
        return []
    if sub == "tag":
        if any(a in ("-d", "--delete") for a in rest):
            return [("git.write", f"deletes a tag ({shown})")]
        if not positional or any(a in ("-l", "--list", "-n", "--contains", "--points-at", "-v", "--verify")
                                 for a in rest):
            return []
        return [("git.write", f"creates a tag ({shown})")]
    if sub in ("remote", "worktree", "submodule", "notes", "sparse-checkout", "lfs", "bisect", "reflog",
               "config"):
        verb = positional[0] if positional else ""
        if sub == "config" and (any(a.startswith(("--get", "--list", "-l")) for a in rest)
                                or verb in ("get", "list") or (len(positional) == 1 and not rest[-1:] == ["--unset"]
                                                               and "--unset" not in rest and "--add" not in rest)):
            return []
        if sub != "config" and (not verb or verb in ("list", "show", "get-url", "status", "summary", "log",
                                                     "view", "ls-files", "visualize", "-v")):
            return []
        return [("git.write", f"changes repository state ({shown})")]
    if sub in ("rm",):
        return [("shell.delete", f"deletes tracked files ({shown})")] if "--cached" not in rest else [
            ("git.write", f"untracks files ({shown})")]
    if sub in ("mv",):
        return [("shell.move", f"moves tracked files ({shown})")]
    if sub in ("filter-branch", "filter-repo", "replace", "update-ref", "prune", "gc", "repack", "reflog"):
        return [("git.rewrite", f"rewrites or prunes repository history ({shown})")]
    if sub == "apply" and any(a in ("--check", "--stat", "--numstat", "--summary") for a in rest) and not any(
            a in ("--index", "--cached", "--apply") for a in rest):
        return []
    if sub == "archive" and not any(a.startswith(("-o", "--output")) for a in rest):
        return []
    return [("git.write", f"changes the repository (git {sub}) ({shown})")]


# -- containers and orchestration ----------------------------------------------------------------
_DOCKER_READ = frozenset("""ps images inspect logs version info stats top history search port diff events ls
df context manifest login-no config-no""".split())
_DOCKER_DELETE = frozenset({"rm", "rmi", "prune", "down", "remove"})
_DOCKER_STOP = frozenset({"kill", "stop", "restart", "pause", "unpause"})


@_rule("docker", "podman", "nerdctl", "docker-compose")
def _docker(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker, d: int) -> list[Finding]:
    opts = scan_opts(args, "HcfplO", ("--host", "--context", "--config", "--log-level", "--file", "--project-name",
                                      "--project-directory", "--profile", "--env-file", "--format", "--filter"))
    words = opts.positionals
    if posixpath.basename(argv[0]) == "docker-compose":
        words = ["compose", *words]
    if not words:
        return []
    group = words[0]
    verb = words[1] if group in ("compose", "container", "image", "volume", "network", "system", "builder",
                                 "buildx", "context", "plugin", "secret", "config", "node", "service",
                                 "stack") and len(words) > 1 else group
    shown = show(argv)
    if verb in _DOCKER_READ or (verb in ("config", "images") and group == "compose"):
        return []
    if verb in _DOCKER_DELETE:
        return [("container.delete", f"deletes containers, images, volumes or networks ({shown})")]
    if verb in _DOCKER_STOP:
        return [("process.kill", f"stops or kills containers ({shown})")]
    return [("container.change", f"runs or changes containers or images ({shown})")]


_KUBE_READ = frozenset("""get describe logs top explain version api-resources api-versions cluster-info
diff events wait auth config completion options plugin-list kustomize""".split())


@_rule("kubectl", "oc", "k", "kubectl.exe", "minikube", "kind", "k3d")
def _kubectl(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker, d: int) -> list[Finding]:
    opts = scan_opts(args, "nlocfs", ("--namespace", "--context", "--kubeconfig", "--selector", "--output",
                                      "--cluster", "--user", "--server", "--filename", "--container"))
    words = opts.positionals
    if not words:
        return []
    verb = words[0]
    shown = show(argv)
    if verb == "config" and len(words) > 1 and words[1] not in ("view", "get-contexts", "current-context",
                                                                "get-clusters", "get-users"):
        return [("remote.change", f"changes kubeconfig ({shown})")]
    if verb == "auth" and len(words) > 1 and words[1] not in ("can-i", "whoami"):
        return [("remote.change", f"changes cluster auth ({shown})")]
    if verb in _KUBE_READ or (verb in ("status", "profile", "ip") and posixpath.basename(argv[0]) != "kubectl"):
        return []
    if verb in ("delete", "drain", "uncordon-no"):
        return [("remote.delete", f"deletes cluster resources ({shown})")]
    return [("remote.change", f"changes cluster resources ({shown})")]


@_rule("helm")
def _helm(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker, d: int) -> list[Finding]:
    words = [a for a in args if not a.startswith("-")]
    verb = words[0] if words else ""
    if not verb or verb in ("list", "ls", "status", "get", "show", "inspect", "search", "history", "template",
                            "lint", "version", "env", "verify") or (verb in ("repo", "dependency", "plugin") and (
                                len(words) < 2 or words[1] in ("list", "ls"))):
        return []
    if verb in ("uninstall", "delete", "del", "un"):
        return [("remote.delete", f"uninstalls a release ({show(argv)})")]
    return [("remote.change", f"changes releases ({show(argv)})")]


@_rule("terraform", "tofu", "pulumi", "cdk", "serverless", "sls")
def _iac(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker, d: int) -> list[Finding]:
    words = [a for a in args if not a.startswith("-")]
    verb = words[0] if words else ""
    if not verb or verb in ("plan", "validate", "show", "output", "version", "providers", "graph", "preview",
                            "fmt-check", "console", "diff", "synth", "ls", "list", "info", "logs", "whoami",
                            "about", "stack-ls", "print") or (verb in ("state", "stack", "workspace", "config")
                                                              and len(words) > 1 and words[1] in ("list", "show",
                                                                                                  "ls", "get")):
        if verb == "fmt-check":
            return []
        return []
    if verb == "fmt" and ("-check" in args or "--check" in args):
        return []
    if verb in ("destroy", "remove", "rm"):
        return [("remote.delete", f"destroys infrastructure ({show(argv)})")]
    return [("remote.change", f"changes infrastructure ({show(argv)})")]


# -- clouds --------------------------------------------------------------------------------------
_CLOUD_READ_VERBS = re.compile(r"^(describe|list|get|head|wait|help|scan|query|lookup|search|check|validate|"
                               r"estimate|simulate|test|batch-get|generate-presigned|preview|show|ls|cat|du|"
                               r"stat|hash|version|info|read|print|logs|tail|whoami|status|account|view|diff|checks|browse|watch|"
                               r"get-[a-z-]+|list-[a-z-]+|describe-[a-z-]+)(-|$)")
_CLOUD_DELETE_VERBS = re.compile(r"^(delete|remove|terminate|deregister|purge|destroy|rm|rb|drop|"
                                 r"disassociate|detach|revoke|cancel|abort|empty)(-|$)")


@_rule("aws", "awslocal")
def _aws(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker, d: int) -> list[Finding]:
    opts = scan_opts(args, "", ("--region", "--profile", "--output", "--endpoint-url", "--query", "--color",
                                "--cli-read-timeout", "--cli-connect-timeout", "--ca-bundle"))
    words = opts.positionals
    if len(words) < 2:
        return []
    service, op = words[0], words[1]
    return _cloud_verdict(argv, op, service=service)


@_rule("gcloud", "gsutil", "az", "doctl", "heroku", "fly", "flyctl", "vercel", "netlify", "firebase",
       "wrangler", "railway", "render", "linode-cli", "hcloud", "oci", "ibmcloud", "s3cmd", "rclone", "mc",
       "gh", "glab", "stripe")
def _cloud(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker, d: int) -> list[Finding]:
    name = posixpath.basename(argv[0])
    words = [a for a in args if not a.startswith("-")]
    if not words or words[0] in ("help", "version", "--version", "auth-status-no"):
        return []
    if name in ("gh", "glab") and words[0] == "api":
        opts = scan_opts(args, "XfFHpqt", ("--method", "--field", "--raw-field", "--header", "--input"))
        method = (opts.values("-X", "--method") or [""])[-1].upper()
        if method and method not in _HTTP_SAFE:
            return [("http.write", f"sends an HTTP {method} to the API ({show(argv)})")]
        if not method and opts.has("-f", "-F", "--field", "--raw-field", "--input"):
            return [("http.write", f"sends an HTTP POST to the API ({show(argv)})")]
        return []
    if name in ("gh", "glab") and words[0] in ("status", "search", "browse", "auth") and (
            len(words) < 2 or words[1] in ("status", "token-no")):
        return []
    if name == "stripe" and words[0] in ("listen", "logs", "samples", "status", "open", "config", "login"):
        return []
    # the operation is the last command word (gcloud compute instances delete NAME: scan for a verb)
    for word in words:
        if _CLOUD_DELETE_VERBS.match(word):
            return [("remote.delete", f"deletes cloud resources ({show(argv)})")]
    for word in words:
        if _CLOUD_READ_VERBS.match(word):
            return []
    return [("remote.change", f"changes cloud resources or remote state ({show(argv)})")]


def _cloud_verdict(argv: list[str], op: str, service: str) -> list[Finding]:
    if service == "s3" and op in ("ls", "presign"):
        return []
    if _CLOUD_DELETE_VERBS.match(op):
        return [("remote.delete", f"deletes cloud resources ({show(argv)})")]
    if _CLOUD_READ_VERBS.match(op):
        return []
    return [("remote.change", f"changes cloud resources ({show(argv)})")]


@_rule("rsync")
def _rsync(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker, d: int) -> list[Finding]:
    if any(a in ("-n", "--dry-run", "--list-only") for a in args):
        return []
    if any(a.startswith(("--delete", "--remove-source-files")) for a in args):
        return [("shell.delete", f"deletes files while syncing ({show(argv)})")]
    return [("shell.write", f"copies files, overwriting the destination ({show(argv)})")]


# -- HTTP clients --------------------------------------------------------------------------------
@_rule("curl")
def _curl(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker, d: int) -> list[Finding]:
    opts = scan_opts(args, "oXdFTHuAebcDKmrwxECYyzUQ", (
        "--output", "--request", "--data", "--data-raw", "--data-binary", "--data-urlencode", "--data-ascii",
        "--form", "--form-string", "--upload-file", "--header", "--user", "--user-agent", "--referer",
        "--cookie", "--cookie-jar", "--dump-header", "--config", "--max-time", "--range", "--write-out",
        "--proxy", "--json", "--url", "--output-dir", "--connect-timeout", "--retry", "--resolve", "--cacert",
        "--cert", "--key", "--stderr", "--trace", "--trace-ascii", "--limit-rate", "--variable"))
    found: list[Finding] = []
    method = (opts.values("-X", "--request") or [""])[-1].upper()
    sends_body = opts.has("-d", "--data", "--data-raw", "--data-binary", "--data-urlencode", "--data-ascii",
                          "-F", "--form", "--form-string", "-T", "--upload-file", "--json")
    if opts.has("-G", "--get"):
        sends_body = False
    if opts.has("-I", "--head"):
        method = method or "HEAD"
    if not method:
        method = ("PUT" if opts.has("-T", "--upload-file") else "POST") if sends_body else "GET"
    if method not in _HTTP_SAFE:
        found.append(("http.write", f"sends an HTTP {method} request ({show(argv)})"))
    outputs = opts.values("-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar", "--trace",
                          "--trace-ascii", "--stderr")
    if [o for o in outputs if not is_harmless_target(o)] or opts.has("-O", "--remote-name", "--remote-name-all"):
        found.append(("shell.write", f"downloads to a file ({show(argv)})"))
    return found


@_rule("wget", "wget2")
def _wget(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker, d: int) -> list[Finding]:
    opts = scan_opts(args, "OoaePDtTUwAIXRl", (
        "--output-document", "--output-file", "--append-output", "--post-data", "--post-file", "--method",
        "--body-data", "--body-file", "--directory-prefix", "--header", "--user-agent", "--tries", "--timeout",
        "--user", "--password", "--execute"))
    found: list[Finding] = []
    method = (opts.values("--method") or [""])[-1].upper()
    if opts.has("--post-data", "--post-file") and not method:
        method = "POST"
    if method and method not in _HTTP_SAFE:
        found.append(("http.write", f"sends an HTTP {method} request ({show(argv)})"))
    outs = opts.values("-O", "--output-document")
    if opts.has("--spider"):
        return found
    if outs and all(o == "-" or is_harmless_target(o) for o in outs):
        return found
    found.append(("shell.write", f"downloads to a file ({show(argv)})"))
    return found


@_rule("http", "https", "xh", "xhs", "httpie")
def _httpie(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker, d: int) -> list[Finding]:
    words = [a for a in args if not a.startswith("-")]
    method = ""
    if words and words[0].isupper() and words[0].isalpha():
        method, words = words[0], words[1:]
    items = words[1:]
    if not method:
        has_data = any(re.match(r"^[^=:@]+(=|:=|@|=@|:=@)", it) and not re.match(r"^[^=:]+:[^=]", it)
                       for it in items)
        method = "POST" if has_data or piped else "GET"
    found: list[Finding] = []
    if method not in _HTTP_SAFE:
        found.append(("http.write", f"sends an HTTP {method} request ({show(argv)})"))
    if any(a in ("-d", "--download", "-o", "--output") for a in args):
        found.append(("shell.write", f"downloads to a file ({show(argv)})"))
    return found


# -- databases -----------------------------------------------------------------------------------
_SQL_READ = re.compile(r"^\s*(select|with\s+\w+\s+as\s*\((?:(?!\b(insert|update|delete)\b).)*\)\s*select|explain|"
                       r"show|describe|desc|pragma\s+[\w.]+\s*(\(\s*[\w.]+\s*\))?\s*$|values|table|\\d|\\l|\\dt|"
                       r"\.tables|\.schema|\.indexes|\.headers|\.mode|\.databases|\.show|\.help|\.dump)\b",
                       re.IGNORECASE | re.DOTALL)


def sql_is_read_only(sql: str) -> bool:
    statements = [s for s in re.split(r";\s*(?:\n|$)|;", sql) if s.strip()]
    return bool(statements) and all(_SQL_READ.match(s) for s in statements)


@_rule("sqlite3", "sqlite", "psql", "mysql", "mariadb", "duckdb", "clickhouse-client", "cqlsh", "mongosh",
       "mongo", "redis-cli", "sqlcmd")
def _database(argv: list[str], args: list[str], stdin: str | None, piped: bool, w: Walker,
              d: int) -> list[Finding]:
    name = posixpath.basename(argv[0])
    shown = show(argv)
    if any(a in ("--version", "-V", "--help") for a in args):
        return []
    if name == "redis-cli":
        opts = scan_opts(args, "hpanus", ("--user", "--pass"))
        if not opts.positionals:
            return [("database.write", f"opens a database shell whose input the guard cannot see ({shown})")]
        cmd = opts.positionals[0].upper()
        if cmd in _REDIS_READ:
            return []
        return [("database.write", f"changes a database ({shown})")]
    if name in ("psql", "mysql", "mariadb", "clickhouse-client", "sqlcmd", "cqlsh", "mongosh", "mongo"):
        opts = scan_opts(args, "cefhpUdPuHDsQiS", ("--command", "--execute", "--file", "--host", "--port",
                                                   "--username", "--dbname", "--user", "--database", "--query",
                                                   "--eval"))
        sql = opts.values("-c", "--command", "-e", "--execute", "--query", "-Q", "--eval")
        if opts.has("-f", "--file", "-i"):
            return [("database.write", f"runs a SQL file the guard cannot see ({shown})")]
    else:  # sqlite3 / duckdb: DB then SQL
        opts = scan_opts(args, "cmdsAS", ("-cmd", "-separator", "-newline", "-nullvalue"))
        sql = opts.positionals[1:2] + opts.values("-c")
    if not sql:
        sql = [stdin] if stdin else []
    if not sql:
        return [("database.write", f"opens a database shell whose input the guard cannot see ({shown})")]
    if all(sql_is_read_only(s) for s in sql):
        return []
    return [("database.write", f"runs SQL that changes a database ({shown})")]


_REDIS_READ = frozenset("""GET MGET KEYS SCAN TTL PTTL TYPE EXISTS HGET HGETALL HMGET HKEYS HVALS HLEN HEXISTS
HSCAN LRANGE LLEN LINDEX SMEMBERS SISMEMBER SCARD SSCAN ZRANGE ZRANGEBYSCORE ZREVRANGE ZCARD ZSCORE ZRANK ZSCAN
INFO PING DBSIZE STRLEN GETRANGE MEMORY OBJECT ECHO TIME LASTSAVE CLIENT-LIST XRANGE XLEN XREAD XINFO PFCOUNT
BITCOUNT GEOPOS GEODIST SRANDMEMBER RANDOMKEY DUMP --SCAN MONITOR SUBSCRIBE PSUBSCRIBE""".split())
