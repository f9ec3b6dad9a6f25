"""A small POSIX-shell parser, just deep enough for the guard.

`shlex` splits words but knows nothing of `$(...)`, backticks, `2>&1`, heredocs or `&&`, so the guard
uses its own scanner. It produces a `Script`: pipelines of simple commands (words, redirections,
heredoc bodies) plus the scripts nested in command and process substitutions. Anything it cannot
parse (an unbalanced quote, a dangling redirection) raises `ShellSyntaxError`; the guard then treats
the command as destructive, because a shell that cannot be read cannot be vouched for.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Redirect", "Script", "ShellSyntaxError", "SimpleCommand", "Word", "parse_shell"]

MAX_DEPTH = 24  # nesting of $(...) / bash -c / ssh; deeper is reported as unparseable


class ShellSyntaxError(ValueError):
    """The text is not a shell command the guard can read."""


@dataclass(slots=True)
class Word:
    text: str  # quotes removed; substitutions kept as their raw source text
    dynamic: bool = False  # holds an unquoted-or-quoted expansion ($x, ${x}, $(...), `...`)


@dataclass(slots=True)
class Redirect:
    op: str  # > >> >| &> &>> < <> << <<- <<< >& <&
    fd: str | None
    target: Word
    heredoc: list[str] | None = None  # body of a heredoc (one-element holder filled at the newline)


@dataclass(slots=True)
class SimpleCommand:
    assigns: list[str] = field(default_factory=list)
    words: list[Word] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)

    @property
    def argv(self) -> list[str]:
        return [w.text for w in self.words]


@dataclass(slots=True)
class Script:
    pipelines: list[list[SimpleCommand]] = field(default_factory=list)
    substitutions: list[Script] = field(default_factory=list)


_OPERATORS = (  # longest first
    "&>>", "<<<", "<<-", "&&", "||", ";;", "|&", "&>", ">>", ">|", ">&", "<<", "<&", "<>",
    ";", "&", "|", ">", "<", "(", ")",
)
_REDIRECT_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<", "<>", "<<", "<<-", "<<<", ">&", "<&"})
_SEPARATORS = frozenset({";", ";;", "&", "&&", "||", "\n", "(", ")"})
_PIPES = frozenset({"|", "|&"})
_SPECIAL_PARAMS = frozenset("@*#?-$!0123456789")


@dataclass(slots=True)
class _Tok:
    kind: str  # "word" | "op"
    word: Word | None = None
    op: str = ""
    fd: str | None = None
    heredoc: list[str] | None = None


class _Lexer:
    def __init__(self, text: str, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise ShellSyntaxError("command nesting is too deep")
        self.s = text
        self.n = len(text)
        self.depth = depth
        self.subs: list[Script] = []
        self.pending_heredocs: list[tuple[str, bool, list[str]]] = []

    # -- words -------------------------------------------------------------------------------
    def lex(self, pos: int, in_paren: bool) -> tuple[list[_Tok], int]:
        """Tokens from `pos` to the end, or to the `)` closing a `$(`/`<(` when in_paren."""
        s, n = self.s, self.n
        toks: list[_Tok] = []
        buf: list[str] = []
        started = False
        dynamic = False
        paren_depth = 0
        i = pos

        def end_word() -> None:
            nonlocal buf, started, dynamic
            if started:
                toks.append(_Tok("word", Word("".join(buf), dynamic)))
            buf, started, dynamic = [], False, False

        while i < n:
            c = s[i]
            if c in " \t\r":
                end_word()
                i += 1
            elif c == "\n":
                end_word()
                toks.append(_Tok("op", op="\n"))
                i = self._read_heredocs(i + 1)
            elif c == "#" and not started:
                while i < n and s[i] != "\n":
                    i += 1
            elif c == "\\":
                if i + 1 < n and s[i + 1] == "\n":
                    i += 2
                    continue
                if i + 1 < n:
                    buf.append(s[i + 1])
                started = True
                i += 2
            elif c == "'":
                j = s.find("'", i + 1)
                if j < 0:
                    raise ShellSyntaxError("unterminated single quote")
                buf.append(s[i + 1 : j])
                started = True
                i = j + 1
            elif c == '"':
                i, dyn = self._double_quoted(i + 1, buf)
                dynamic = dynamic or dyn
                started = True
            elif c == "`":
                i = self._backtick(i + 1, buf)
                dynamic = started = True
            elif c == "$":
                i = self._dollar(i, buf)
                dynamic = started = True
            elif c in "<>" and not started and s.startswith("(", i + 1):
                # process substitution <(cmd) / >(cmd): a nested script, the word is its source
                inner, j = self._nested(i + 2)
                buf.append(s[i : j + 1])
                self.subs.append(inner)
                dynamic = started = True
                i = j + 1
            elif c in ";&|<>()":
                if c == ")" and in_paren and paren_depth == 0:
                    end_word()
                    return toks, i
                op = next(o for o in _OPERATORS if s.startswith(o, i))
                fd = None
                if op in _REDIRECT_OPS and started and not dynamic and buf and "".join(buf).isdigit():
                    fd = "".join(buf)
                    buf, started = [], False
                end_word()
                if op == "(":
                    paren_depth += 1
                elif op == ")":
                    paren_depth -= 1
                tok = _Tok("op", op=op, fd=fd)
                toks.append(tok)
                i += len(op)
                if op in ("<<", "<<-"):
                    i = self._heredoc_delimiter(i, op == "<<-", tok, toks)
            else:
                buf.append(c)
                started = True
                i += 1
        end_word()
        if in_paren:
            raise ShellSyntaxError("unterminated $( or ( ")
        return toks, i

    def _double_quoted(self, i: int, buf: list[str]) -> tuple[int, bool]:
        s, n = self.s, self.n
        dynamic = False
        while i < n:
            c = s[i]
            if c == '"':
                return i + 1, dynamic
            if c == "\\" and i + 1 < n and s[i + 1] in '$`"\\\n':
                if s[i + 1] != "\n":
                    buf.append(s[i + 1])
                i += 2
            elif c == "$":
                i = self._dollar(i, buf)
                dynamic = True
            elif c == "`":
                i = self._backtick(i + 1, buf)
                dynamic = True
            else:
                buf.append(c)
                i += 1
        raise ShellSyntaxError("unterminated double quote")

    def _dollar(self, i: int, buf: list[str]) -> int:
        s, n = self.s, self.n
        if s.startswith("$((", i):
            j = self._match_arith(i + 3)
            buf.append(s[i : j + 2])
            return j + 2
        if s.startswith("$(", i):
            inner, j = self._nested(i + 2)
            self.subs.append(inner)
            buf.append(s[i : j + 1])
            return j + 1
        if s.startswith("${", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if s[j] == "{":
                    depth += 1
                elif s[j] == "}":
                    depth -= 1
                j += 1
            if depth:
                raise ShellSyntaxError("unterminated ${")
            operand = s[i + 2 : j - 1]
            if "$(" in operand or "`" in operand:
                # ${x:-$(cmd)} runs cmd: lex the operand so its substitutions are judged too
                sub = _Lexer(operand, self.depth + 1)
                sub.lex(0, in_paren=False)
                self.subs.extend(sub.subs)
            buf.append(s[i:j])
            return j
        if s.startswith("$'", i):  # ANSI-C quoting: treat as a literal string
            j = i + 2
            while j < n and s[j] != "'":
                j += 2 if s[j] == "\\" else 1
            if j >= n:
                raise ShellSyntaxError("unterminated $' quote")
            buf.append(s[i + 2 : j])
            return j + 1
        j = i + 1
        if j < n and s[j] in _SPECIAL_PARAMS:
            j += 1
        else:
            while j < n and (s[j].isalnum() or s[j] == "_"):
                j += 1
        buf.append(s[i:j])
        return j

    def _match_arith(self, i: int) -> int:
        depth = 0
        while i < self.n - 1:
            c = self.s[i]
            if c == "(":
                depth += 1
            elif c == ")":
                if depth == 0 and self.s[i + 1] == ")":
                    return i
                depth -= 1
            i += 1
        raise ShellSyntaxError("unterminated $((")

    def _nested(self, i: int) -> tuple[Script, int]:
        sub = _Lexer(self.s, self.depth + 1)
        toks, end = sub.lex(i, in_paren=True)
        return _build(toks, sub.subs), end

    def _backtick(self, i: int, buf: list[str]) -> int:
        s, n = self.s, self.n
        inner: list[str] = []
        while i < n and s[i] != "`":
            if s[i] == "\\" and i + 1 < n and s[i + 1] in "`\\$":
                inner.append(s[i + 1])
                i += 2
            else:
                inner.append(s[i])
                i += 1
        if i >= n:
            raise ShellSyntaxError("unterminated backtick")
        text = "".join(inner)
        self.subs.append(parse_shell(text, self.depth + 1))
        buf.append("`" + text + "`")
        return i + 1

    # -- heredocs ----------------------------------------------------------------------------
    def _heredoc_delimiter(self, i: int, strip_tabs: bool, tok: _Tok, toks: list[_Tok]) -> int:
        s, n = self.s, self.n
        while i < n and s[i] in " \t":
            i += 1
        j = i
        while j < n and s[j] not in " \t\n;&|<>()":
            j += 1
        raw = s[i:j]
        if not raw:
            raise ShellSyntaxError("heredoc without a delimiter")
        delim = raw.replace("'", "").replace('"', "").replace("\\", "")
        holder: list[str] = [""]
        tok.heredoc = holder
        toks.append(_Tok("word", Word(delim)))
        self.pending_heredocs.append((delim, strip_tabs, holder))
        return j

    def _read_heredocs(self, i: int) -> int:
        s, n = self.s, self.n
        for delim, strip_tabs, holder in self.pending_heredocs:
            lines: list[str] = []
            while i < n:
                j = s.find("\n", i)
                j = n if j < 0 else j
                line = s[i:j]
                i = j + 1
                if (line.lstrip("\t") if strip_tabs else line) == delim:
                    break
                lines.append(line)
            holder[0] = "\n".join(lines)
        self.pending_heredocs = []
        return min(i, n)


def _build(toks: list[_Tok], subs: list[Script]) -> Script:
    script = Script(substitutions=subs)
    pipeline: list[SimpleCommand] = []
    cmd = SimpleCommand()
    i = 0

    def flush_cmd() -> None:
        nonlocal cmd
        if cmd.words or cmd.redirects or cmd.assigns:
            pipeline.append(cmd)
        cmd = SimpleCommand()

    def flush_pipeline() -> None:
        nonlocal pipeline
        flush_cmd()
        if pipeline:
            script.pipelines.append(pipeline)
        pipeline = []

    while i < len(toks):
        t = toks[i]
        if t.kind == "word":
            assert t.word is not None
            if not cmd.words and _is_assignment(t.word.text):
                cmd.assigns.append(t.word.text)
            else:
                cmd.words.append(t.word)
            i += 1
        elif t.op in _REDIRECT_OPS:
            if cmd.words and cmd.words[0].text == "[[" and t.op in ("<", ">"):
                cmd.words.append(Word(t.op))  # a comparison inside [[ ]], not a redirection
                i += 1
                continue
            if i + 1 >= len(toks) or toks[i + 1].kind != "word":
                raise ShellSyntaxError(f"redirection {t.op!r} without a target")
            target = toks[i + 1].word
            assert target is not None
            cmd.redirects.append(Redirect(t.op, t.fd, target, t.heredoc))
            i += 2
        elif t.op in _PIPES:
            flush_cmd()
            i += 1
        else:
            flush_pipeline()
            i += 1
    flush_pipeline()
    return script


def _is_assignment(text: str) -> bool:
    name, eq, _ = text.partition("=")
    return bool(eq) and bool(name) and (name[0].isalpha() or name[0] == "_") and all(
        ch.isalnum() or ch == "_" for ch in name.rstrip("+")
    )


def parse_shell(text: str, depth: int = 0) -> Script:
    """Parse `text` as a shell script. Raises ShellSyntaxError when it cannot be read."""
    lexer = _Lexer(text, depth)
    toks, _ = lexer.lex(0, in_paren=False)
    return _build(toks, lexer.subs)
