"""Every string JSON can carry, for property tests of every path (store, replay, exports, engines).

``json_strings()`` is a hypothesis strategy (hypothesis is a test dependency, imported on use) mixing
arbitrary unicode (``st.text()``, which never yields surrogates) with lone UTF-16 surrogates made
the way real data makes them (``json.loads`` of a ``"\\udXXX"`` escape), NUL, U+2028/2029, the BOM,
quotes, backslashes and the empty string. ``strings_run(slots)`` records a small agent run (via the
real ``Recorder``) with one such string in every place a trace holds text: header title, system and
user messages, an empty user turn, assistant text, tool-call argument keys and values, the raw
argument string, the tool result and the final answer.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from replaykit.core.trace.ir import (
    LLMResponse,
    Message,
    RunHeader,
    Source,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.run import Run

SPECIAL = ("", "\x00", "\u2028", "\u2029", "\ufeff", "\ufeffstart", '"', "\\", "\\u0000", "\r\n", "\x7f",
           "\U0001f600", "e\u0301", "</pre><script>", "'''", "${x}")
#: the places ``strings_run`` puts a string (the order of ``slots``)
SLOTS = ("title", "system", "user", "thinking_text", "arg_key", "arg_value", "result", "answer", "user2")


def lone_surrogate(code: int) -> str:
    """U+D800..U+DFFF as JSON gives it: legal JSON text, not encodable as UTF-8."""
    return str(json.loads(f'"\\u{code:04x}"'))


def carried_by_json(text: str) -> bool:
    """Whether JSON can carry ``text`` exactly (a surrogate *pair* held as two code points cannot:
    in JSON it is the one astral character it encodes)."""
    return bool(json.loads(json.dumps(text)) == text)


def json_strings(max_pieces: int = 6) -> Any:
    from hypothesis import strategies as st

    piece = st.one_of(
        st.text(max_size=24),
        st.integers(0xD800, 0xDFFF).map(lone_surrogate),
        st.sampled_from(SPECIAL),
    )
    return st.lists(piece, max_size=max_pieces).map("".join).filter(carried_by_json)


def slot_strings() -> Any:
    """A dict slot name -> string, one per place in ``strings_run``."""
    from hypothesis import strategies as st

    return st.fixed_dictionaries({slot: json_strings() for slot in SLOTS})


SEARCH = ToolSpec(name="search", description="search", parameters={"type": "object"})


def strings_run(slots: dict[str, str], run_id: str = "strings-run") -> Run:
    """One turn: the model calls ``search`` (weird key and value), reads the result, answers; then a
    second user turn (``user2``, often empty) answered with the same text."""
    clock = itertools.count()
    rec = Recorder(RunHeader(run_id=run_id, created_at="2026-12-01T00:00:00Z", title=slots["title"],
                             model="m", source=Source(framework="test")), clock=lambda: float(next(clock)))
    messages = [Message(role="system", parts=[TextPart(text=slots["system"])]),
                Message(role="user", parts=[TextPart(text=slots["user"])])]
    rec.turn_start(messages[1])
    args = {slots["arg_key"]: slots["arg_value"], "k": [slots["arg_value"], {"n": slots["arg_key"]}]}
    call = ToolCallPart(id="call_0", name="search", arguments=args, raw_arguments=json.dumps(args))
    ask = LLMResponse(message=Message(role="assistant", parts=[TextPart(text=slots["thinking_text"]), call]),
                      finish_reason="tool_calls")
    event = rec.llm_call(messages, ask, tools=[SEARCH], model="m")
    rec.tool_call("call_0", "search", args, raw_arguments=call.raw_arguments, result=slots["result"],
                  llm_call_id=event.id)
    messages += [ask.message, Message(role="tool", parts=[ToolResultPart(tool_call_id="call_0", name="search",
                                                                          content=slots["result"])])]
    answer = LLMResponse(message=Message(role="assistant", parts=[TextPart(text=slots["answer"])]),
                         finish_reason="stop")
    rec.llm_call(messages, answer, tools=[SEARCH], model="m")
    user2 = Message(role="user", parts=[TextPart(text=slots["user2"])])
    rec.turn_start(user2, turn=1)
    messages += [answer.message, user2]
    rec.llm_call(messages, answer, tools=[SEARCH], model="m")
    rec.run_end(slots["answer"])
    return Run(rec.header, rec.events)


def texts_of(value: Any) -> list[str]:
    """Every string in a JSON-like value, keys included (to check that each slot survived)."""
    out: list[str] = []
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            out.append(str(k))
            out.extend(texts_of(v))
    elif isinstance(value, list | tuple):
        for v in value:
            out.extend(texts_of(v))
    return out
