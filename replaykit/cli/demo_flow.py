"""The flow behind ``replaykit demo``: the whole product on the bundled Hermes recording, offline.

Every step calls the public command line in-process (``replaykit.cli.main.main([..., "--json"])`` with
stdout captured), so the demo exercises the same contract a user or a script does. Everything goes
under one output directory with its own store; the user's default store is never touched.

A step whose extra is not installed is reported as
``skipped`` with the reason, never faked; any other failure is ``failed``. Steps that need an earlier
step's output are skipped with the reason when that step did not succeed.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from replaykit.core.errors import BadInput

Status = Literal["ok", "skipped", "failed"]
MARKER = ".replaykit-demo"
SCRIPTED_MODEL = "scripted-model"

#: export format -> file name under ``exports/`` (single-run formats) or ``training/``.
SINGLE_RUN_EXPORTS = {"python": "run.py", "langgraph": "graph.py", "pydantic-ai": "agent.py", "html": "report.html"}
TRAINING_EXPORTS = {"openai-jsonl": "openai.jsonl", "sharegpt": "sharegpt.jsonl", "trl": "trl.jsonl"}
#: Fields of a replay document that depend on the wall clock or on the file (not on the run).
_VOLATILE = frozenset({"replay_duration", "t_replay", "trace_bytes_changed"})


class StepFailed(Exception):
    """A step ran and its result is wrong (or the command failed for a reason other than a missing part)."""


class StepSkipped(Exception):
    """A step cannot run in this installation (extra missing, input missing)."""


@dataclass
class StepResult:
    name: str
    status: Status
    summary: str
    seconds: float = 0.0
    paths: dict[str, str] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "summary": self.summary,
                "seconds": round(self.seconds, 3), "paths": self.paths, "data": self.data}


@dataclass
class DemoOptions:
    out: Path
    base_url: str | None = None  # a real provider instead of the scripted server
    model: str | None = None
    api_key_env: str | None = None  # the NAME of the variable holding the key; never stored
    python: str = sys.executable  # interpreter that runs the exported script


@dataclass
class CliCall:
    """One in-process run of the command line."""

    argv: list[str]
    code: int
    stdout: str
    stderr: str

    @property
    def error(self) -> str:
        lines = [ln.removeprefix("replaykit: error: ") for ln in self.stderr.splitlines() if "error" in ln]
        return (lines[-1] if lines else self.stderr.strip()[-300:]) or f"exit {self.code}"

    def document(self) -> Any:
        try:
            return json.loads(self.stdout)
        except ValueError as exc:
            raise StepFailed(f"replaykit {self.argv[0]} --json printed no JSON document ({self.error})") from exc


def call_cli(argv: Sequence[str]) -> CliCall:
    """``replaykit ARGV`` in this process, stdout and stderr captured."""
    from replaykit.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse usage errors
            code = exc.code if isinstance(exc.code, int) else 2
    return CliCall(list(argv), code, out.getvalue(), err.getvalue())


def _not_available(call: CliCall) -> str | None:
    """The reason when a command failed because a part is missing from this installation."""
    text = call.error
    if call.code == 2 and "extra (" in text:
        return text
    return None


@dataclass
class DemoReport:
    out: Path
    store: Path
    steps: list[StepResult]
    run_id: str | None = None
    branch_run_id: str | None = None
    play_run_id: str | None = None
    live_target: str = "scripted"

    @property
    def ok(self) -> bool:
        return all(step.status != "failed" for step in self.steps)

    def to_json(self) -> dict[str, Any]:
        counts = {s: sum(1 for step in self.steps if step.status == s) for s in ("ok", "skipped", "failed")}
        return {"document": "replaykit.demo", "ok": self.ok, "run_id": self.run_id,
                "branch_run_id": self.branch_run_id, "play_run_id": self.play_run_id,
                "live_target": self.live_target, "out": str(self.out), "store": str(self.store),
                "counts": counts, "steps": [step.to_json() for step in self.steps]}


def prepare_out(out: Path) -> None:
    """Create ``out`` (or clear a previous demo there); refuse to write into any other non-empty dir."""
    if out.exists() and not out.is_dir():
        raise BadInput(f"--out {out} exists and is not a directory")
    if out.is_dir() and any(out.iterdir()):
        if not (out / MARKER).is_file():
            raise BadInput(f"--out {out} is not empty and was not made by replaykit demo; choose another directory")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True, mode=0o700)
    (out / MARKER).write_text("made by `replaykit demo`; the next demo run here replaces this directory\n")


class Demo:
    """Runs the steps in order, collecting a :class:`StepResult` for each."""

    def __init__(self, options: DemoOptions, on_step: Callable[[StepResult], None] | None = None) -> None:
        self.options = options
        self.out = options.out
        self.store = options.out / "store"
        self.on_step = on_step
        self.report = DemoReport(out=self.out, store=self.store, steps=[],
                                 live_target=options.base_url or "scripted")
        self.replay_document: dict[str, Any] | None = None
        self.branch_at: int | None = None
        self.edited: str | None = None

    # ------------------------------------------------------------------------------- plumbing

    def cli(self, *argv: str) -> CliCall:
        return call_cli([*argv, "--store", str(self.store), "--json"])

    def checked(self, *argv: str, expect: Sequence[int] = (0,)) -> Any:
        """Run a command; map a missing part to a skip, any other failure to a failed step."""
        call = self.cli(*argv)
        if call.code not in expect:
            reason = _not_available(call)
            if reason is not None:
                raise StepSkipped(reason)
            raise StepFailed(f"replaykit {argv[0]} exited {call.code}: {call.error}")
        return call.document()

    def step(self, name: str, action: Callable[[], tuple[str, dict[str, str], dict[str, Any]]],
             needs: Sequence[tuple[object, str]] = ()) -> StepResult:
        started = time.perf_counter()
        missing = [why for value, why in needs if value is None]
        if missing:
            result = StepResult(name, "skipped", f"needs {missing[0]}")
        else:
            try:
                summary, paths, data = action()
                result = StepResult(name, "ok", summary, paths=paths, data=data)
            except StepSkipped as exc:
                result = StepResult(name, "skipped", str(exc))
            except StepFailed as exc:
                result = StepResult(name, "failed", str(exc))
            except Exception as exc:  # a bug in a step must not hide the other steps' results
                result = StepResult(name, "failed", f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
        result.seconds = time.perf_counter() - started
        self.report.steps.append(result)
        if self.on_step is not None:
            self.on_step(result)
        return result

    # ---------------------------------------------------------------------------------- steps

    def run(self) -> DemoReport:
        prepare_out(self.out)
        r = self.report
        self.step("load", self.load)
        self.step("inspect", self.inspect, [(r.run_id, "the recording")])
        self.step("replay", self.replay, [(r.run_id, "the recording")])
        self.step("branch", self.branch, [(r.run_id, "the recording"), (self.branch_at, "a tool step to edit")])
        self.step("play", self.play, [(r.branch_run_id, "the branch")])
        self.step("diff", self.diff, [(r.run_id, "the recording")])
        self.step("cost", self.cost, [(r.run_id, "the recording")])
        for fmt, filename in SINGLE_RUN_EXPORTS.items():
            self.step(f"export {fmt}", functools.partial(self.export_single, fmt, filename),
                      [(r.run_id, "the recording")])
        for fmt, filename in TRAINING_EXPORTS.items():
            self.step(f"export {fmt}", functools.partial(self.export_training, fmt, filename),
                      [(r.run_id, "the recording")])
        self.step("redact", self.redact, [(r.run_id, "the recording")])
        script = self.out / "exports" / SINGLE_RUN_EXPORTS["python"]
        self.step("run script", self.run_script,
                  [(self.replay_document, "the replay"), (script if script.is_file() else None, "the python export")])
        return r

    def load(self) -> tuple[str, dict[str, str], dict[str, Any]]:
        from replaykit.core.trace.store import RunStore
        from replaykit.testing.demo_data import recording_path

        with recording_path() as source:
            check = self.checked("validate", str(source))
            if not check.get("valid"):
                raise StepFailed(f"the bundled recording does not validate: {check.get('errors')}")
            store = RunStore(self.store)
            target = store.path_for(str(check["run_id"]))
            store.ensure()
            shutil.copyfile(source, target)
            os.chmod(target, 0o600)
        self.report.run_id = str(check["run_id"])
        return (f"bundled Hermes recording {self.report.run_id} ({check['steps']} steps, {check['events']} events) "
                f"validated and copied into the demo store",
                {"recording": str(target), "store": str(self.store)},
                {"run_id": self.report.run_id, "steps": check["steps"]})

    def inspect(self) -> tuple[str, dict[str, str], dict[str, Any]]:
        from replaykit.core.trace.ir import ToolCallEvent
        from replaykit.core.trace.run import Run
        from replaykit.testing.demo_data import BRANCH_TOOL, edited_result

        assert self.report.run_id is not None
        doc = self.checked("inspect", self.report.run_id)
        run = Run.load(Path(self.store) / f"{self.report.run_id}.jsonl")
        for step in run.steps:
            if isinstance(step.event, ToolCallEvent) and step.event.name == BRANCH_TOOL:
                self.branch_at = step.index
                self.edited = edited_result(step.event.result)
                break
        kinds = [row["kind"] for row in doc["timeline"] if row.get("step") is not None]
        tools = [e.name for e in run.tool_calls()]
        where = f"; branching at step {self.branch_at} ({BRANCH_TOOL})" if self.branch_at is not None else ""
        return (f"{doc['steps']} steps ({kinds.count('llm_call')} LLM calls, tools {', '.join(tools)}), status "
                f"{doc['status']}, final answer {doc['final_answer']!r}{where}",
                {}, {"steps": doc["steps"], "status": doc["status"], "final_answer": doc["final_answer"],
                     "tools": tools, "branch_at": self.branch_at})

    def replay(self) -> tuple[str, dict[str, str], dict[str, Any]]:
        assert self.report.run_id is not None
        doc = self.checked("replay", self.report.run_id)
        counters = doc["counters"]
        if counters["provider_calls"] or counters["tool_executions"] or counters["trace_bytes_changed"]:
            raise StepFailed(f"replay was not pure: {counters}")
        self.replay_document = doc
        path = self.out / "replay.json"
        path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return (f"{doc['step_count']} steps served in {doc['replay_duration'] * 1000:.1f} ms: "
                f"{counters['provider_calls']} provider calls, {counters['tool_executions']} tool executions, "
                f"{counters['trace_bytes_changed']} bytes of the trace changed",
                {"replay document": str(path)}, {"counters": counters, "final_answer": doc["final_answer"]})

    def branch(self) -> tuple[str, dict[str, str], dict[str, Any]]:
        assert self.report.run_id is not None and self.edited is not None
        doc = self.checked("branch", self.report.run_id, "--at", str(self.branch_at), "--result", self.edited)
        self.report.branch_run_id = str(doc["run_id"])
        return (f"{self.report.branch_run_id}: step {self.branch_at}'s result edited to {self.edited}; "
                f"live from step {doc.get('live_from')}",
                {"branch": doc["path"]}, {"run_id": doc["run_id"], "edit": doc["edit"], "live_from": doc.get("live_from")})

    def play(self) -> tuple[str, dict[str, str], dict[str, Any]]:
        assert self.report.branch_run_id is not None
        if self.options.base_url:
            assert self.options.model is not None
            extra = ["--api-key-env", self.options.api_key_env] if self.options.api_key_env else []
            doc = self._play(self.options.base_url, self.options.model, extra)
            target = f"{self.options.model} at {self.options.base_url}"
        else:
            from replaykit.testing.demo_data import EDITED_ECHO, demo_policy
            from replaykit.testing.scripted_server import ScriptedServer

            with ScriptedServer(demo_policy, model=SCRIPTED_MODEL) as server:
                doc = self._play(server.base_url, SCRIPTED_MODEL, [])
                received = len(server.llm_requests)
            target = f"the scripted server on 127.0.0.1 ({received} requests received)"
            if received != doc["counters"]["provider_calls"]:
                raise StepFailed(f"the server received {received} requests, the play counted "
                                 f"{doc['counters']['provider_calls']}")
            if EDITED_ECHO not in (doc.get("final_answer") or ""):
                raise StepFailed(f"the live continuation did not react to the edit: {doc.get('final_answer')!r}")
        self.report.play_run_id = str(doc["run_id"])
        c = doc["counters"]
        return (f"{doc['run_id']} against {target}: served {c['served_llm_steps']} LLM + {c['served_tool_steps']} "
                f"tool steps, then {c['live_llm_steps']} live LLM calls; status {doc['status']}; "
                f"final answer {doc.get('final_answer')!r}",
                {"played run": str(self.store / f"{doc['run_id']}.jsonl")},
                {"run_id": doc["run_id"], "counters": c, "final_answer": doc.get("final_answer"),
                 "status": doc["status"]})

    def _play(self, base_url: str, model: str, extra: list[str]) -> Any:
        assert self.report.branch_run_id is not None
        doc = self.checked("play", self.report.branch_run_id, "--engine", "openai", "--base-url", base_url,
                           "--model", model, *extra)
        if doc.get("status") != "completed":
            raise StepFailed(f"play ended {doc.get('status')}: {doc.get('error')}")
        return doc

    def diff(self) -> tuple[str, dict[str, str], dict[str, Any]]:
        assert self.report.run_id is not None
        other = self.report.play_run_id or self.report.branch_run_id
        if other is None:
            raise StepSkipped("needs the branch")
        html = self.out / "diff.html"
        doc = self.checked("diff", self.report.run_id, other, "--html", str(html), expect=(1,))
        first = doc.get("first_divergence") if isinstance(doc, dict) else None
        if not isinstance(first, dict):
            raise StepFailed("the diff reports no first divergence")
        if first.get("step") != self.branch_at or first.get("cause") != "edit":
            raise StepFailed(f"the first divergence is not the edit at step {self.branch_at}: "
                             f"step {first.get('step')}, cause {first.get('cause')}")
        paths = {"diff report": str(html)} if html.is_file() else {}
        changed = f"{_short(first.get('a'))} -> {_short(first.get('b'))}"
        return (f"{self.report.run_id} vs {other}: first divergence at step {first['step']}, field "
                f"{first.get('field')}, cause {first['cause']} ({changed}); "
                f"{len(doc.get('differences') or [])} differences in all",
                paths, {"first": first, "equal": doc.get("equal")})

    def cost(self) -> tuple[str, dict[str, str], dict[str, Any]]:
        target = self.report.play_run_id or self.report.run_id
        assert target is not None
        doc = self.checked("cost", target)
        path = self.out / "cost.json"
        path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        paid, live, free = doc.get("paid") or {}, doc.get("live") or {}, doc.get("served_free") or {}

        def money(part: dict[str, Any]) -> str:
            # The ledger says null for an unknown cost: show "unknown", never 0.
            cost = part.get("cost")
            return "unknown" if cost is None else f"{doc.get('currency', 'USD')} {cost}"

        reasons = sorted({r for part in (paid, live, free) for r in part.get("unknown_reasons") or ()})
        why = f" ({reasons[0]})" if reasons else ""
        return (f"{target}: {free.get('steps', 0)} LLM steps served from the record for free, "
                f"{live.get('steps', 0)} live; this run paid {money(paid)}{why}",
                {"cost ledger": str(path)},
                {"paid": paid, "live": live, "served_free": free, "pricing_source": doc.get("pricing_source")})

    def export_single(self, fmt: str, filename: str) -> tuple[str, dict[str, str], dict[str, Any]]:
        assert self.report.run_id is not None
        path = self.out / "exports" / filename
        path.parent.mkdir(exist_ok=True)
        doc = self.checked("export", self.report.run_id, "--format", fmt, "-o", str(path))
        if not path.is_file() or path.stat().st_size == 0:
            raise StepFailed(f"export {fmt} reported success but wrote nothing at {path}")
        extra: dict[str, str] = {}
        if fmt == "html" and self.report.play_run_id:
            played = self.out / "exports" / "branch-report.html"
            self.checked("export", self.report.play_run_id, "--format", fmt, "-o", str(played))
            extra = {"branch report": str(played)}
        return (f"{path} ({path.stat().st_size:,} bytes)", {fmt: str(path), **extra},
                {k: v for k, v in doc.items() if k in ("bytes", "steps", "lines")})

    def export_training(self, fmt: str, filename: str) -> tuple[str, dict[str, str], dict[str, Any]]:
        from replaykit.exporters._training_validate import validate_record

        assert self.report.run_id is not None
        runs = [self.report.run_id] + ([self.report.play_run_id] if self.report.play_run_id else [])
        path = self.out / "training" / filename
        path.parent.mkdir(exist_ok=True)
        doc = self.checked("export", *runs, "--format", fmt, "-o", str(path), "--mode", "patterns")
        records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        problems = [p for record in records for p in validate_record(record, fmt)]
        if not records or problems:
            raise StepFailed(f"{path}: {len(records)} records, problems: {problems[:3]}")
        return (f"{path}: {len(records)} records from {len(runs)} runs, valid, redacted (patterns)",
                {fmt: str(path)}, {"records": len(records), "summary": doc})

    def redact(self) -> tuple[str, dict[str, str], dict[str, Any]]:
        assert self.report.run_id is not None
        path = self.out / "redacted" / f"{self.report.run_id}.redacted.jsonl"
        path.parent.mkdir(exist_ok=True)
        doc = self.checked("redact", self.report.run_id, "-o", str(path), "--mode", "patterns")
        check = self.checked("validate", str(path))
        if not check.get("valid"):
            raise StepFailed(f"the redacted trace does not validate: {check.get('errors')}")
        return (f"{path}: {doc.get('redactions', '?')} redactions (patterns mode), valid trace",
                {"redacted trace": str(path)}, {k: v for k, v in doc.items() if k != "path"})

    def run_script(self) -> tuple[str, dict[str, str], dict[str, Any]]:
        assert self.replay_document is not None
        script = self.out / "exports" / SINGLE_RUN_EXPORTS["python"]
        started = time.perf_counter()
        # The script is stdlib only: run it with an empty environment apart from what Python needs.
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "SYSTEMROOT")}
        proc = subprocess.run([self.options.python, str(script)], capture_output=True, text=True, env=env,
                              cwd=self.out, timeout=60, check=False)
        elapsed = time.perf_counter() - started
        if proc.returncode != 0:
            raise StepFailed(f"python {script.name} exited {proc.returncode}: {proc.stderr.strip()[-300:]}")
        try:
            produced = json.loads(proc.stdout)
        except ValueError as exc:
            raise StepFailed(f"python {script.name} printed no JSON replay document") from exc
        same = strip_volatile(produced) == strip_volatile(self.replay_document)
        if not same:
            raise StepFailed(f"python {script.name} does not reproduce `replaykit replay` "
                             f"(final answer {produced.get('final_answer')!r})")
        return (f"python {script.name} (stdlib only, {elapsed:.2f}s) reproduces the replay exactly: "
                f"{produced['step_count']} steps, final answer {produced['final_answer']!r}",
                {}, {"seconds": round(elapsed, 3), "matches_replay": same})


def strip_volatile(value: Any) -> Any:
    """A replay document without its wall-clock and file-dependent fields."""
    if isinstance(value, dict):
        return {k: strip_volatile(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [strip_volatile(v) for v in value]
    return value


def _short(value: Any, limit: int = 60) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def run_demo(options: DemoOptions, on_step: Callable[[StepResult], None] | None = None) -> DemoReport:
    """Run the whole demo; ``on_step`` sees each step's result as soon as it is known."""
    if (options.base_url is None) != (options.model is None):
        raise BadInput("--base-url and --model go together (a real provider needs both)")
    if options.api_key_env and not options.base_url:
        raise BadInput("--api-key-env only applies with --base-url and --model")
    if options.api_key_env and not os.environ.get(options.api_key_env):
        raise BadInput(f"--api-key-env {options.api_key_env}: that environment variable is not set")
    return Demo(options, on_step).run()
