"""The scorers of an eval: built-in ones by name, the user's as ``MODULE:FUNCTION``.

- ``exact``: 1 when the final answers are equal, else 0.
- ``normalized`` (the default): 1 when they are equal with whitespace collapsed and case folded.
- ``tools``: tool-call agreement from the cut on, order-aware: the longest common subsequence of the
  recorded and the candidate's (name, arguments) calls gives precision (of the candidate's calls) and
  recall (of the recorded ones); the score is their F1 (1 when neither made a call).
- ``judge``: a model grades the answer (``grader``); its reason is kept beside the score.
- ``MODULE:FUNCTION``: ``FUNCTION(original_run, candidate_run) -> float in [0, 1]``.

Several may be given; one gates the verdict (the first, or ``--gate-scorer``). ``resolve`` checks them
all in the driver, before any candidate call: an unknown name or a function that cannot be imported is
bad input (exit 2).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from replaykit.core.analysis.timeline import parsed_arguments
from replaykit.core.errors import BadInput
from replaykit.core.trace.ir import ToolCallEvent
from replaykit.core.trace.run import Run

from . import compare, grader

BUILTIN = ("exact", "normalized", "tools", "judge")
ALIASES = {"normalised": "normalized", "default": "normalized"}


def canonical(spec: str) -> str:
    return ALIASES.get(spec, spec)


def resolve(specs: list[str] | None) -> list[str]:
    """The scorer names, checked (user functions imported once here); default ``["normalized"]``."""
    names: list[str] = []
    for raw in specs or ["normalized"]:
        spec = canonical(str(raw).strip())
        if spec not in BUILTIN and ":" in spec:
            if spec.count(":") != 1 or not all(spec.split(":")):
                raise BadInput(f"--scorer must be a built-in ({', '.join(BUILTIN)}) or MODULE:FUNCTION, not {raw!r}")
            load_user(spec, bad_input=True)
        elif spec not in BUILTIN:
            raise BadInput(f"--scorer {raw!r}: unknown scorer; use one of {', '.join(BUILTIN)} or MODULE:FUNCTION")
        if spec in names:
            raise BadInput(f"--scorer {spec} is given twice")
        names.append(spec)
    return names


def load_user(spec: str, *, bad_input: bool = False) -> Callable[[Run, Run], Any]:
    module, _, name = spec.partition(":")
    try:
        function = getattr(importlib.import_module(module), name)
        if not callable(function):
            raise TypeError(f"{spec} is not a function")
    except Exception as exc:  # the user's module: anything it raises on import is its problem, named
        if not bad_input:
            raise
        detail = " ".join(str(exc).split())[:200]
        raise BadInput(f"--scorer {spec}: cannot import it ({type(exc).__name__}: {detail})") from None
    return function  # type: ignore[no-any-return]


def _calls(run: Run, cut: int) -> list[tuple[str, Any]]:
    return [(s.event.name, parsed_arguments(s.event.arguments, s.event.raw_arguments))
            for s in run.steps if s.index >= cut and isinstance(s.event, ToolCallEvent)]


def tool_score(original: Run, candidate: Run, cut: int) -> dict[str, float]:
    """Precision, recall and F1 of the candidate's tool calls against the record's, in order (LCS)."""
    recorded, played = _calls(original, cut), _calls(candidate, cut)
    if not recorded and not played:
        return {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    row = [0] * (len(played) + 1)
    for a in recorded:
        previous = 0
        for j, b in enumerate(played, start=1):
            keep = row[j]
            row[j] = previous + 1 if a == b else max(row[j], row[j - 1])
            previous = keep
    common = row[-1]
    precision = common / len(played) if played else 0.0
    recall = common / len(recorded) if recorded else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 6), "recall": round(recall, 6), "f1": round(f1, 6)}


class ScorerFailed(Exception):
    """One scorer could not score one play: the play is scorer-failed, the eval goes on.
    ``unreachable``: the judge's endpoint failed (the driver stops an eval whose judge is down)."""

    def __init__(self, message: str, *, unreachable: bool = False) -> None:
        super().__init__(message)
        self.unreachable = unreachable


def score(name: str, original: Run, candidate: Run, cut: int, turn: int | None,
          judge_config: dict[str, Any] | None) -> tuple[float, str | None]:
    """(score in [0, 1], reason or None) of one scorer on one play; ``ScorerFailed`` when it cannot."""
    reference, answer = compare.turn_answer(original, turn), compare.turn_answer(candidate, turn)
    if name == "exact":
        return (1.0 if reference == answer else 0.0), None
    if name == "normalized":
        return (1.0 if compare.normalise(reference) == compare.normalise(answer) else 0.0), None
    if name == "tools":
        return tool_score(original, candidate, cut)["f1"], None
    if name == "judge":
        if judge_config is None:
            raise ScorerFailed("judge: no judge configured")
        try:
            found = grader.grade(judge_config, grader.task_text(original, turn), reference, answer)
        except grader.GradeError as exc:
            raise ScorerFailed(f"judge: {exc}", unreachable=exc.unreachable) from None
        return found.score, found.reason
    try:
        value = float(load_user(name)(original, candidate))
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"returned {value}, not a number in [0, 1]")
    except Exception as exc:  # the user's code: any failure is that run's, never the eval's
        text = " ".join(str(exc).split())[:300]
        raise ScorerFailed(f"{name}: {type(exc).__name__}: {text}") from None
    return value, None
