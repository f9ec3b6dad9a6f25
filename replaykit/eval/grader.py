"""The ``judge`` scorer: a model grades the candidate's answer against the recorded one and the task.

The grader calls its model through the core's one live model (``core.replay.live_model.LiveModel``:
retries, Retry-After, the stale-stream guard, continuation, and the endpoint limiter of ``DIR``), never
through a client of its own. Its API travels in ``PlayOptions`` (``judge_play_options``, the one place),
so every provider API the live model speaks is a judge API too.

A grade is one JSON object, ``{"score": <0..1>, "reason": "<one paragraph>"}``; anything else is a
``GradeError`` (that run is scorer-failed, the eval goes on). Every answer the judge model gave is kept in
``DIR/.judge-cache/`` under a key of everything the request holds, so a resumed eval never asks again.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replaykit.core.errors import BadInput, ReplaykitError
from replaykit.core.files import write_private
from replaykit.core.replay.play import PlayOptions
from replaykit.core.trace.ir import Message, TextPart, TurnStartEvent
from replaykit.core.trace.run import Run

CACHE = ".judge-cache"
LIMITER = ".limiter-judge"
#: The API the live model speaks today; more arrive with ``PlayOptions.api`` (then every one it names).
DEFAULT_API = "openai-chat"
REASON_CHARS = 1200
#: Tries per grade (first included): more than a play's 4, so a judge's 429 storm is ridden out (each
#: Retry-After honoured, and by every worker: the limiter's pause) rather than failing the grades.
JUDGE_ATTEMPTS = 6

DEFAULT_RUBRIC = """\
You grade an AI agent's final answer to a task. You are given the task (the user's messages), a reference
answer that was accepted when the task was recorded, and the candidate answer to grade.

Score how well the candidate answer does the task, using the reference as the standard:
- 1.0: it gives the same facts and outcome as the reference (wording, order and style do not matter);
- 0.7: it does the task with small omissions or extra detail that changes nothing important;
- 0.4: it is partly right: an important fact is missing, vague or wrong;
- 0.0: it is wrong, contradicts the reference, refuses, or does not answer the task.
Use any value between. Judge the content, never the length or the tone.
"""

OUTPUT_CONTRACT = """
Reply with exactly one JSON object and nothing else:
{"score": <a number from 0 to 1>, "reason": "<one paragraph: why this score>"}
"""


class GradeError(ReplaykitError):
    """The judge could not grade one answer: its output is not a grade, or (``unreachable``) its endpoint
    failed for good (retries spent)."""

    def __init__(self, message: str, *, unreachable: bool = False) -> None:
        super().__init__(message)
        self.unreachable = unreachable


@dataclass(frozen=True)
class Grade:
    score: float
    reason: str
    cached: bool = False


def read_rubric(path: str | None) -> str:
    """``--rubric FILE`` (or the built-in one); a file that cannot be read, or is empty, is bad input."""
    if path is None:
        return DEFAULT_RUBRIC
    try:
        text = Path(path).expanduser().read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"--rubric {path}: cannot read it ({type(exc).__name__}: {getattr(exc, 'strerror', None) or exc})") from None
    if not text.strip():
        raise BadInput(f"--rubric {path} is empty")
    return text


def judge_play_options(config: dict[str, Any]) -> PlayOptions:
    """The judge's live-model options: the ONE place its API, endpoint and key name reach ``PlayOptions``."""
    extra: dict[str, Any] = dict(config.get("extra") or {})
    if config.get("limiter"):
        extra["endpoint_limiter"] = config["limiter"]
    fields: dict[str, Any] = {
        "base_url": config["base_url"], "model": config["model"], "api_key_env": config.get("api_key_env"),
        "stale_timeout": config.get("stale_timeout"), "extra": extra, "max_attempts": JUDGE_ATTEMPTS,
    }
    fields["api"] = config.get("api") or None  # the live model picks and checks it
    return PlayOptions(**fields)


def check_config(config: dict[str, Any]) -> None:
    """A judge that cannot work is bad input now, before any candidate call: an unreadable base URL, an
    unset key variable, an API the live model does not speak, a missing extra."""
    from replaykit.core.replay.live_model import LiveModel

    options = judge_play_options(config)
    if not options.model:
        raise BadInput("--scorer judge needs --judge-model NAME (the model that grades)")
    config["safe_base_url"] = safe_url(options)
    LiveModel(options)  # builds the client, reads the key: what fails here would fail every grade


def safe_url(options: PlayOptions) -> str | None:
    """The judge's endpoint as it may be written down; None: the API's default host (no --judge-base-url)."""
    if not options.base_url:
        return None
    try:
        return options.safe_base_url()
    except BadInput as exc:
        raise BadInput(f"--judge-base-url: {exc}".replace("--base-url ", "")) from None


def task_text(run: Run, turn: int | None) -> str:
    """The user's turns (up to ``turn`` when the candidate played one turn), one paragraph each."""
    starts = [e for e in run.events if isinstance(e, TurnStartEvent)]
    if turn is not None:
        starts = starts[: turn + 1]
    texts = [e.message.text for e in starts if e.message.text]
    if not texts:  # a recording without turn events: the first request's user messages
        calls = run.llm_calls()
        if calls:
            texts = [m.text for m in run.request_messages(calls[0]) if m.role == "user" and m.text]
    return "\n\n".join(f"[user turn {i + 1}]\n{t}" for i, t in enumerate(texts)) or "(no user message recorded)"


def grading_messages(rubric: str, task: str, reference: str | None, candidate: str | None) -> list[Message]:
    user = (f"TASK\n{task}\n\nREFERENCE ANSWER (recorded)\n{reference if reference is not None else '(none)'}"
            f"\n\nCANDIDATE ANSWER\n{candidate if candidate is not None else '(the candidate gave no answer)'}")
    return [Message(role="system", parts=[TextPart(text=rubric.rstrip() + "\n" + OUTPUT_CONTRACT)]),
            Message(role="user", parts=[TextPart(text=user)])]


def parse_grade(text: str) -> Grade:
    """The judge's answer -> a grade, or ``GradeError`` saying what is wrong with it."""
    start = text.find("{")
    if start < 0:
        raise GradeError(f"the judge's answer is not a JSON grade: {' '.join(text.split())[:120]!r}")
    try:
        value, _ = json.JSONDecoder().raw_decode(text[start:])
    except ValueError:
        raise GradeError(f"the judge's answer is not valid JSON: {' '.join(text.split())[:120]!r}") from None
    if not isinstance(value, dict):
        raise GradeError("the judge's answer is not a JSON object")
    score, reason = value.get("score"), value.get("reason")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0.0 <= float(score) <= 1.0:
        raise GradeError(f"the judge's score is not a number in [0, 1]: {json.dumps(score)[:60]}")
    if not isinstance(reason, str) or not reason.strip():
        raise GradeError("the judge gave no reason")
    return Grade(round(float(score), 6), " ".join(reason.split())[:REASON_CHARS])


def _cache_key(config: dict[str, Any], messages: list[Message]) -> str:
    material = [config["model"], config.get("api") or DEFAULT_API, config.get("safe_base_url"),
                [m.model_dump(mode="json") for m in messages]]
    return hashlib.sha256(json.dumps(material, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:40]


def grade(config: dict[str, Any], task: str, reference: str | None, candidate: str | None) -> Grade:
    """Grade one answer: from the cache when this exact request was answered before, else one call."""
    from replaykit.core.analysis.cost import price_usage
    from replaykit.core.replay.live_model import LiveModel
    from replaykit.core.replay.resilience import EndpointLimiter

    messages = grading_messages(config["rubric"], task, reference, candidate)
    cache = Path(config["cache"]) / f"{_cache_key(config, messages)}.json"
    try:
        answered = json.loads(cache.read_text(encoding="utf-8"))["text"]
        found = parse_grade(str(answered))
        return Grade(found.score, found.reason, cached=True)
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:
        response = LiveModel(judge_play_options(config)).complete(messages, None, {"temperature": 0})
    except ReplaykitError as exc:
        raise GradeError(f"the judge's endpoint failed: {' '.join(str(exc).split())[:240]}",
                         unreachable=True) from None
    text = response.message.text or ""
    os.makedirs(cache.parent, mode=0o700, exist_ok=True)
    write_private(cache, json.dumps({"text": text, "model": config["model"]}))  # malformed too: never asked again
    if config.get("limiter") and response.usage is not None:
        price = price_usage(config["model"], response.usage, base_url=config.get("safe_base_url"))
        if price.total is not None:
            EndpointLimiter(config["limiter"]).note_cost(float(price.total))
    return parse_grade(text)
