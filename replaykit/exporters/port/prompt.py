"""A system prompt as readable text, its volatile parts as template variables when runs differ there.

The volatile parts are the ones the request fingerprint already ignores (``core/trace/canonical.py``:
dates, times, weekday dates, uuids, long hex ids, home/tmp paths) plus the model name. Each prompt is
cut into literal text and volatile slots; when every run's prompt has the same literal text around the
same slots, a slot whose value differs between runs becomes a variable ``{{date}}``, ``{{path}}``,
``{{model}}`` (numbered when repeated: ``{{date_2}}``), and a slot with one value stays literal text.
Prompts that differ elsewhere, or that hold ``{{`` themselves, are kept literal (the first run's), with
no variables: the port then reproduces that run's prompt, and the suite reports the others.

``render(template, values)`` is the one substitution rule; every port's agent carries the same few
lines (``PROMPT_READER``, embedded verbatim by both frameworks' templates: ``str.replace`` of
``{{name}}``, never ``str.format``: a prompt is full of braces), with the values for a live run read from
``prompts/NAME.variables.json`` (``live_values``: today's date for a date, else the first recording's
value), so the agent's code holds no recorded value and is the same for one recording or many.
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import cache
from typing import Any

#: slot kinds, tried in this order at each position (the first match wins)
_KINDS: list[tuple[str, str]] = [
    ("datetime", r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"),
    ("date", r"\b(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day,?\s+(?:\w+\s+\d{1,2},?\s+\d{4}|\d{1,2}\s+\w+\s+\d{4})"),
    ("time", r"\b\d{1,2}:\d{2}(?::\d{2})?(?:\s*(?:AM|PM|am|pm))?\b"),
    ("uuid", r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"),
    ("id", r"\b[0-9a-f]{16,}\b"),
    ("path", r"(?<![\w.])(?:~|/(?:home|Users|root|tmp|var|private|opt|srv|mnt|run|work))(?:/[^\s'\"`,;:)]*[^\s'\"`,;:).])?"),
]


@cache
def _pattern(models: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = [f"(?P<{kind}>{regex})" for kind, regex in _KINDS]
    named = [re.escape(m) for m in sorted(models, key=len, reverse=True) if len(m) >= 3]
    if named:
        alternatives.append(f"(?P<model>{'|'.join(named)})")
    return re.compile("|".join(alternatives))


def _slots(prompt: str, models: tuple[str, ...]) -> tuple[list[str], list[tuple[str, str]]]:
    """The prompt cut into literal pieces and (kind, value) slots between them."""
    literals: list[str] = []
    slots: list[tuple[str, str]] = []
    last = 0
    for match in _pattern(models).finditer(prompt):
        literals.append(prompt[last:match.start()])
        kind = match.lastgroup or "value"
        slots.append(("date" if kind == "datetime" else kind, match.group(0)))
        last = match.end()
    literals.append(prompt[last:])
    return literals, slots


def prompt_template(prompts: list[str], models: list[str] | None = None) -> tuple[str, dict[str, list[str]]]:
    """The template of the prompts and each variable's value per prompt (see the module docstring)."""
    first = prompts[0] if prompts else ""
    if len(set(prompts)) <= 1 or "{{" in "".join(prompts):
        return first, {}
    key = tuple(sorted({m for m in models or [] if m}))
    cut = [_slots(p, key) for p in prompts]
    literals, slots0 = cut[0]
    if any(lits != literals or [k for k, _ in s] != [k for k, _ in slots0] for lits, s in cut[1:]):
        return first, {}
    out: list[str] = [literals[0]]
    variables: dict[str, list[str]] = {}
    counts: dict[str, int] = {}
    for n, (kind, value) in enumerate(slots0):
        values = [s[n][1] for _, s in cut]
        if len(set(values)) == 1:
            out.append(value)
        else:
            counts[kind] = counts.get(kind, 0) + 1
            name = kind if counts[kind] == 1 else f"{kind}_{counts[kind]}"
            variables[name] = values
            out.append("{{" + name + "}}")
        out.append(literals[n + 1])
    return "".join(out), variables


def render(template: str, values: dict[str, str]) -> str:
    """The prompt with each ``{{name}}`` of ``values`` replaced (the generated agent does the same)."""
    for name, value in values.items():
        template = template.replace("{{" + name + "}}", value)
    return template


#: strftime formats a recorded date may be written in (tried in order; the first that writes the value
#: back exactly wins): a live run then gets today's date in the same form
_DATE_FORMATS = ("%Y-%m-%d", "%A, %B %d, %Y", "%A %B %d, %Y", "%A, %d %B %Y", "%A %d %B %Y", "%a %b %d %Y")


def live_values(variables: dict[str, list[str]]) -> dict[str, Any]:
    """``prompts/NAME.variables.json``: each template variable's value for a live run of the port, read
    by ``PROMPT_READER``: ``{"today": FORMAT}`` for a date (today's date, in the recorded form), else the
    first recording's value (edit the file to change it)."""
    out: dict[str, Any] = {}
    for name, values in variables.items():
        first = values[0] if values else ""
        out[name] = first
        for fmt in _DATE_FORMATS:
            try:
                if datetime.strptime(first, fmt).strftime(fmt) == first:
                    out[name] = {"today": fmt}
                    break
            except ValueError:
                continue
    return out


#: the prompt reader of every port's agent.py, embedded verbatim by each framework's template (it
#: needs ``HERE``, ``json`` and ``date`` from ``datetime``): ``render``'s rule, and ``live_values``'s file
PROMPT_READER = '''

def prompt(name: str, variables: dict[str, str] | None = None) -> str:
    """The prompt prompts/NAME.md, its {{variables}} filled in (default: prompt_variables(NAME))."""
    text = (HERE / "prompts" / f"{name}.md").read_text(encoding="utf-8")
    values = prompt_variables(name) if variables is None else variables
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    return text


def prompt_variables(name: str) -> dict[str, str]:
    """The values of the {{variables}} of prompts/NAME.md for a live run, from
    prompts/NAME.variables.json (none without it; edit it to change them). A value
    {"today": FORMAT} is today's date in that strftime format."""
    path = HERE / "prompts" / f"{name}.variables.json"
    values = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    return {
        key: date.today().strftime(value["today"]) if isinstance(value, dict) else value
        for key, value in values.items()
    }
'''
