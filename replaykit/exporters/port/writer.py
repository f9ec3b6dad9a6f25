"""``replaykit export RUN... --format pydantic-ai|langgraph -o DIR [--redact] [--force]``: the port project.

``write_port(sources, fmt, out)`` reads the runs (trace files), finds their subagents (child runs among
the given ones, beside the parent's file, or in the store), builds the ``AgentSpec`` and writes DIR:

    agent.py              the framework's agent (the plug-in's ``render_agent``): no replaykit, no recorded data
    agent_tools.py        one typed function per tool, stubs to port (``tools_module``); TOOLS by recorded name
    hermes_tools.py       the opt-in binding to Hermes's own tools (only when some tool is a Hermes built-in)
    prompts/system.md     the system prompt ({{variables}} where the runs differ); subagent.md; example_user.md
    prompts/*.variables.json  the template variables' values for a live run (today's date for a date)
    tool_schemas.json     the tools as the recorded agent declared them (name -> description, parameters)
    recordings/*.jsonl    copies of the traces (redacted copies with ``redact``)
    test_conformance.py   the suite (``pytest DIR``), conftest.py, pytest.ini
    README.md, port.json  how to use it; the marker and manifest of the port

DIR that exists and is not a previous port (no ``port.json``) is refused unless ``force``. Re-exporting
into a previous port rewrites the files it generated, except a file edited since (its hash differs
from the one ``port.json`` recorded): that one is kept and the new version written beside it as
``NAME.new`` (``force``: overwritten).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replaykit.core.errors import BadInput
from replaykit.core.trace.run import Run
from replaykit.exporters.port import source as src
from replaykit.exporters.port.conformance import MARKER
from replaykit.exporters.port.prompt import live_values, render
from replaykit.exporters.port.spec import DELEGATE_TOOLS, AgentSpec, child_run_ids, system_prompt_of
from replaykit.exporters.port.tools_module import HERMES_TOOLS, render_tools_module

PLUGINS = {"pydantic-ai": "replaykit.exporters.port.pydantic_ai",
           "langgraph": "replaykit.exporters.port.langgraph"}
PORT_VERSION = 1


@dataclass
class Recording:
    run: Run
    source: Path | None
    agent: str  # "agent" or "subagent"


def _plugin(fmt: str) -> Any:
    import importlib

    name = PLUGINS.get(fmt)
    if name is None:
        raise BadInput(f"--format {fmt} has no port; choose one of {', '.join(PLUGINS)}")
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name == name:
            raise BadInput(f"the {fmt} port is not available in this replaykit") from exc
        raise


def collect(sources: list[Path], load_child: Any = None) -> tuple[list[Recording], list[Recording]]:
    """The given runs (the agent's) and their subagents' runs: a child is one of the given runs, a trace
    beside its parent's file (by run id, or any file whose lineage names the parent) or, through
    ``load_child(run_id)``, a run of the store."""
    loaded: list[tuple[Run, Path]] = []
    for path in dict.fromkeys(Path(p).resolve() for p in sources):
        run = Run.load(path)
        if all(run.run_id != other.run_id for other, _ in loaded):  # one copy per run id (recordings/<id>.jsonl)
            loaded.append((run, path))
    by_id: dict[str, tuple[Run, Path | None]] = {run.run_id: (run, path) for run, path in loaded}
    children: dict[str, Recording] = {}
    for run, path in loaded:
        for child_id in child_run_ids(run):
            if child_id in children:
                continue
            found: tuple[Run, Path | None] | None = by_id.get(child_id)
            if found is None:
                found = _beside(path, child_id, run.run_id)
            if found is None and load_child is not None:
                try:
                    found = (load_child(child_id), None)
                except BadInput:
                    found = None
            if found is not None:
                children[child_id] = Recording(found[0], found[1], "subagent")
    parents = [Recording(run, path, "agent") for run, path in loaded if run.run_id not in children]
    return parents, list(children.values())


def _beside(path: Path, child_id: str, parent_id: str) -> tuple[Run, Path] | None:
    direct = path.parent / f"{child_id}.jsonl"
    if direct.is_file():
        return Run.load(direct), direct
    for candidate in sorted(path.parent.glob("*.jsonl")):
        if candidate == path:
            continue
        try:
            with open(candidate, encoding="utf-8") as handle:
                head = json.loads(handle.readline() or "{}")
        except (OSError, ValueError):
            continue
        if isinstance(head, dict) and head.get("run_id") == child_id:
            return Run.load(candidate), candidate
    return None


def _redacted(recordings: list[Recording], mode: str) -> list[Recording]:
    from replaykit.core.redaction import Redactor, redact_run

    redactor = Redactor(mode="ner" if mode == "ner" else "patterns")  # one mapping: the same value gets the same placeholder everywhere
    return [Recording(redact_run(r.run, mode, redactor=redactor, run_id=r.run.run_id), None, r.agent)
            for r in recordings]


def _check_destination(out: Path, force: bool) -> dict[str, Any] | None:
    """The previous port's manifest (None: a new directory); refuses what must not be overwritten."""
    if out.exists() and not out.is_dir():
        raise BadInput(f"{out} exists and is not a directory; a port is written to a directory")
    if not out.exists():
        return None
    marker = out / MARKER
    if marker.is_file():
        try:
            manifest = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise BadInput(f"{marker} is unreadable ({exc}); pass --force to overwrite the port") from exc
        return manifest if isinstance(manifest, dict) else {}
    if any(out.iterdir()) and not force:
        raise BadInput(f"{out} exists and is not a replaykit port; pass --force to write the port into it")
    return None


def _utf8(value: list[Any]) -> bool:
    """Whether the value's text encodes as UTF-8 (no lone surrogate)."""
    try:
        json.dumps([tool.model_dump() for tool in value], ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _sha(text: str | bytes) -> str:
    data = text.encode("utf-8", "backslashreplace") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


def write_port(sources: list[Path], fmt: str, out: str | Path, *, redact: bool = False, redact_mode: str = "patterns",
               force: bool = False, load_child: Any = None) -> dict[str, Any]:
    """Write the port project (module docstring); a summary of what was written."""
    import time

    started = time.perf_counter()
    plugin = _plugin(fmt)
    out = Path(out).expanduser()
    previous = _check_destination(out, force)
    parents, children = collect(sources, load_child)
    if not parents:
        raise BadInput("every run given is a subagent of another: give the parent run")
    if redact:
        parents, children = _redacted(parents, redact_mode), _redacted(children, redact_mode)
    spec = AgentSpec.from_runs([r.run for r in parents], [r.run for r in children] or None)
    hermes = any(r.run.header.source.framework == "hermes" for r in parents)
    all_tools = list(spec.tools) + [t for t in (spec.subagent.tools if spec.subagent else [])
                                    if t.name not in {x.name for x in spec.tools}]
    if spec.subagent is not None:
        _check_same_schemas(spec, spec.subagent)
    undeclared = {name: dict(args) for name, args in spec.undeclared.items()}
    for name, args in (spec.subagent.undeclared if spec.subagent else {}).items():
        undeclared[name] = {**args, **undeclared.get(name, {})}
    tools_text, signatures = render_tools_module(all_tools, hermes, undeclared)
    files: dict[str, str] = {"agent_tools.py": tools_text, **plugin.render_agent(spec, signatures)}
    if "hermes_tool(" in tools_text:
        files["hermes_tools.py"] = HERMES_TOOLS
    files["prompts/system.md"] = spec.system_prompt
    files["prompts/example_user.md"] = spec.first_prompt
    if spec.subagent is not None:
        files["prompts/subagent.md"] = spec.subagent.system_prompt
    for name, agent_spec in (("system", spec), ("subagent", spec.subagent)):
        if agent_spec is not None and agent_spec.variables:  # a live run's values, read by agent.py's prompt()
            files[f"prompts/{name}.variables.json"] = json.dumps(
                live_values(agent_spec.variables), indent=2, ensure_ascii=False) + "\n"
    files["tool_schemas.json"] = json.dumps(
        {t.name: {"description": t.description or "", "parameters": t.parameters or {"type": "object", "properties": {}}}
         for t in all_tools}, indent=2, ensure_ascii=not _utf8(all_tools)) + "\n"
    recordings = _manifest_entries(spec, parents, children)
    files["test_conformance.py"] = _SUITE.format(plugin=PLUGINS[fmt])
    files["conftest.py"] = _CONFTEST
    files["pytest.ini"] = "[pytest]\naddopts = -p no:cacheprovider\n"
    files["README.md"] = readme(spec, fmt, signatures, hermes and "hermes_tools.py" in files, redact)
    for name, text in files.items():
        if name.endswith(".py"):
            src.check_compiles(text, name)
    out.mkdir(mode=0o700, parents=True, exist_ok=True)
    kept = _write_files(out, files, previous, force)
    data_bytes = _write_recordings(out, parents + children, previous)
    manifest = {"replaykit_port": PORT_VERSION, "format": fmt, "model": spec.model, "api": spec.api,
                "redacted": redact, "recordings": recordings,
                "files": {name: _sha(text) for name, text in files.items()}}
    from replaykit.core.files import write_private

    write_private(out / MARKER, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    code_bytes = sum(len(files[n].encode("utf-8")) for n in files if n.endswith(".py"))
    return {"path": str(out), "format": fmt, "runs": [r.run.run_id for r in parents],
            "subagent_runs": [r.run.run_id for r in children], "tools": [t.name for t in all_tools],
            "variables": sorted(spec.variables), "kept": kept, "code_bytes": code_bytes, "data_bytes": data_bytes,
            "seconds": round(time.perf_counter() - started, 3)}


def _check_same_schemas(parent: AgentSpec, child: AgentSpec) -> None:
    from replaykit.core.trace.canonical import canonical_json

    mine = {t.name: canonical_json(t.parameters or {}) for t in parent.tools}
    for tool in child.tools:
        if tool.name in mine and mine[tool.name] != canonical_json(tool.parameters or {}):
            raise BadInput(f"tool {tool.name!r} has different parameter schemas in the agent and its subagent")


def _manifest_entries(spec: AgentSpec, parents: list[Recording], children: list[Recording]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for group, agent_spec in ((parents, spec), (children, spec.subagent)):
        if agent_spec is None:
            continue
        playable = [r for r in group if r.run.llm_calls()]
        for n, recording in enumerate(playable):
            values = {k: v[n] for k, v in agent_spec.variables.items()} if agent_spec.variables else {}
            check = render(agent_spec.system_prompt, values) == system_prompt_of(recording.run)
            out.append({"file": f"recordings/{recording.run.run_id}.jsonl", "agent": recording.agent,
                        "variables": values, "check_prompt": check, "delegate_tools": sorted(DELEGATE_TOOLS)})
    return out


def _write_files(out: Path, files: dict[str, str], previous: dict[str, Any] | None, force: bool) -> list[str]:
    from replaykit.core.files import write_private

    hashes: dict[str, str] = (previous or {}).get("files") or {}
    kept: list[str] = []
    for name, text in files.items():
        target = out / name
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if target.is_file() and not force and previous is not None:
            current = _sha(target.read_bytes())
            if current != hashes.get(name) and current != _sha(text):  # edited since the last export
                write_private(target.with_name(target.name + ".new"), text.encode("utf-8", "backslashreplace"))
                kept.append(name)
                continue
        # a lone surrogate (legal in JSON traces) has no UTF-8 form: written as its escape
        write_private(target, text.encode("utf-8", "backslashreplace"))
    for name, digest in hashes.items():  # what the previous export wrote and this one does not (unedited)
        old = out / name
        if name not in files and old.is_file() and old.resolve().is_relative_to(out.resolve()) \
                and _sha(old.read_bytes()) == digest:
            old.unlink()
    return kept


def _write_recordings(out: Path, recordings: list[Recording], previous: dict[str, Any] | None) -> int:
    from replaykit.core.trace.store import RunWriter

    folder = out / "recordings"
    folder.mkdir(mode=0o700, exist_ok=True)
    for entry in (previous or {}).get("recordings") or []:  # the previous export's copies
        old = out / str(entry.get("file", ""))
        if old.parent == folder and old.suffix == ".jsonl":
            old.unlink(missing_ok=True)
    total = 0
    for recording in recordings:
        target = folder / f"{recording.run.run_id}.jsonl"
        if recording.source is not None:
            shutil.copyfile(recording.source, target)
            target.chmod(0o600)
        else:
            target.unlink(missing_ok=True)
            with RunWriter(target, recording.run.header) as writer:
                for event in recording.run.events:
                    writer.append(event)
        total += target.stat().st_size
    return total


_SUITE = '''"""Conformance: every recording in recordings/ replayed against this port, one test per recording and
user turn (`pytest` in this directory; see README.md). The model is answered from the recording; a tool
still raising NotImplementedError is answered from the recording too (reported as not ported yet); a
tool with a real body runs for real and its result must equal the recorded one.
"""

from pathlib import Path

import pytest
import {plugin} as framework
from replaykit.exporters.port import conformance

HERE = Path(__file__).resolve().parent

# Tools whose output is volatile (times, ids, sizes): tool name -> function(text) -> text, applied to the
# recorded and to the actual result before they are compared. For example:
#     NORMALIZERS = {{"terminal": lambda text: re.sub(r"\\d+\\.\\d+s", "<duration>", text)}}
NORMALIZERS: dict = {{}}


@pytest.mark.parametrize("case", conformance.cases(HERE), ids=str)
def test_recording(case: conformance.Case) -> None:
    conformance.check(case, HERE, framework, NORMALIZERS)
'''

_CONFTEST = '''"""The suite's closing lines: each tool, and whether it ran for real or is not ported yet."""


def pytest_terminal_summary(terminalreporter):
    from replaykit.exporters.port.conformance import summary_lines

    lines = summary_lines()
    if lines:
        terminalreporter.section("port: tools")
        for line in lines:
            terminalreporter.write_line(line)
'''


def readme(spec: AgentSpec, fmt: str, signatures: list[Any], hermes: bool, redacted: bool = False) -> str:
    framework = {"pydantic-ai": "PydanticAI", "langgraph": "LangGraph"}.get(fmt, fmt)
    example_model = {"langgraph": "openai:gpt-4o-mini"}.get(fmt, "openai-chat:gpt-4o-mini")  # the framework's model string
    first = spec.run_ids[0]
    tools = "\n".join(f"- `{s.func}` (tool `{src.comment(s.tool_name, 60)}`)"
                      + ("" if s.tool_name in spec.called else ": no recording calls it") for s in signatures)
    variables = ", ".join(f"`{{{{{v}}}}}`" for v in spec.variables) or "none (the recordings share one prompt)"
    values_row = ("| `prompts/system.variables.json` | their values for a live run (today's date for a date); edit "
                  "it to change them |\n" if spec.variables else "")
    hermes_text = ("\nHermes's built-in tools can run through Hermes's own code while you port them: install\n"
                   "hermes-agent beside the port and set `PORT_HERMES_TOOLS=1` (see `hermes_tools.py`).\n"
                   if hermes else "")
    return f"""# The recorded agent, ported to {framework}

Generated by `replaykit export --format {fmt}` from {len(spec.run_ids)} recording(s)
({', '.join(f'`{r}`' for r in spec.run_ids)}). The code is yours: edit it.

| file | what it is |
|---|---|
| `agent.py` | the agent ({framework}); imports no replaykit and holds no recorded data |
| `agent_tools.py` | one typed function per tool (keyword arguments); `TOOLS` maps recorded names to them |
| `prompts/system.md` | the system prompt; template variables: {variables} |
{values_row}| `tool_schemas.json` | the tools as the recorded agent declared them to the model |
| `recordings/` | the recordings{' (redacted copies)' if redacted else ''}: the conformance suite replays them |
| `test_conformance.py` | the suite: one test per recording and user turn |

## Run it live

    export OPENAI_API_KEY=...            # or ANTHROPIC_API_KEY, ...; OPENAI_BASE_URL for a compatible server
    python agent.py "your prompt"        # default prompt: prompts/example_user.md (the first recorded turn)
    python agent.py --model {example_model} "..."   # or PORT_MODEL=...

A live run that reaches a tool not ported yet stops there, naming the tool (exit 1).
{hermes_text}
## Port a tool

Tools (stubs until you write them):

{tools}

Replace a body in `agent_tools.py`, keep the signature (the model calls it with the recorded JSON
arguments as keyword arguments; nested objects arrive as dicts), return a str or a JSON-able value.
The same module serves `replaykit play RUN --tools-module agent_tools.py`.

## Run the suite

    pip install 'replaykit[{fmt}]' pytest
    pytest            # in this directory

Every recording and user turn is replayed against `agent.py`: the model is answered from the recording;
a tool still raising `NotImplementedError` is answered from the recording (the summary lists it as not
ported yet); a ported tool runs for real and its result must equal the recorded one. Tool names,
arguments, order and the final answers must match. A tool with volatile output (times, ids) gets a
normaliser in `NORMALIZERS` in `test_conformance.py`.

## Compare a live run with the Hermes recording

    python - <<'EOF'
    import runpy, replaykit
    with replaykit.record("port-live"):      # the port's model calls, recorded as a run in the store
        runpy.run_path("agent.py", run_name="__main__")
    EOF
    replaykit diff recordings/{first}.jsonl port-live

`replaykit.record` records the port's model calls as a run in the store; `replaykit diff` compares
its tool calls, arguments, results and answers with the Hermes recording.
"""
