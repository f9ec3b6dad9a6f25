"""Cross-API translation rules (``codecs/conform.py``): each rule on a small history, then every recorded
request of every Hermes fixture and real-world provider log translated to every API and checked against
that API's rules (``replaykit.testing.validate``: what the provider refuses)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replaykit.core.trace.codecs import encode_request, translate_request
from replaykit.core.trace.codecs.conform import (
    NO_RESULT,
    OPENING_USER,
    RULES,
    conform,
    fit_id,
    translate_params,
)
from replaykit.core.trace.ir import (
    MediaPart,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)
from replaykit.core.trace.run import Run
from replaykit.testing.validate import check_request

ROOT = Path(__file__).resolve().parents[3]
APIS = ["openai-chat", "openai-responses", "anthropic-messages"]


def user(text: str) -> Message:
    return Message(role="user", parts=[TextPart(text=text)])


def calls(*ids: str, text: str = "") -> Message:
    parts = [TextPart(text=text)] if text else []
    return Message(role="assistant", parts=[*parts, *(ToolCallPart(id=i, name="echo", arguments={"x": i}) for i in ids)])


def result(call_id: str, content: str = "ok") -> Message:
    return Message(role="tool", parts=[ToolResultPart(tool_call_id=call_id, content=content)])


# ------------------------------------------------------------------------------------------ ids

def test_valid_ids_are_kept_and_others_fitted_consistently() -> None:
    chat, anthropic = RULES["openai-chat"], RULES["anthropic-messages"]
    assert fit_id("call_abc", chat) == "call_abc" and fit_id("toolu_01", anthropic) == "toolu_01"
    long = "fc_" + "x" * 60
    fitted = fit_id(long, chat)
    assert len(fitted) <= 40 and fitted == fit_id(long, chat)  # deterministic
    assert fit_id(long + "1", chat) != fit_id(long + "2", chat)  # never two ids onto one
    odd = fit_id("functions.Bash:0", anthropic)
    assert odd != "functions.Bash:0" and anthropic.id_pattern and __import__("re").fullmatch(anthropic.id_pattern, odd)
    bedrock = RULES["bedrock-converse"]
    assert len(fit_id("call_" + "y" * 100, bedrock)) <= 64


def test_a_call_and_its_result_get_the_same_new_id() -> None:
    history = [user("go"), calls("functions.Bash:0"), result("functions.Bash:0"), user("next")]
    out = conform(history, None, "anthropic-messages")
    call = out.messages[1].tool_calls[0]
    answer = next(p for p in out.messages[2].parts if isinstance(p, ToolResultPart))
    assert call.id == answer.tool_call_id == out.id_map["functions.Bash:0"]
    assert any("re-mapped" in loss for loss in out.losses)


def test_calls_without_ids_get_one_by_position() -> None:
    history = [user("go"), calls("", ""), result(""), result("")]
    out = conform(history, None, "openai-chat")
    ids = [c.id for c in out.messages[1].tool_calls]
    assert ids == ["call_rk1", "call_rk2"]
    assert [p.tool_call_id for m in out.messages[2:] for p in m.parts] == ids


# ---------------------------------------------------------------------------------- turn structure

def test_anthropic_turns_system_first_results_in_one_user_turn_alternating() -> None:
    history = [Message(role="system", parts=[TextPart(text="be brief")]), user("hi"), calls("a", "b"),
               result("a"), result("b"), user("and then?"), Message(role="system", parts=[TextPart(text="late")]),
               user("again")]
    out = conform(history, None, "anthropic-messages")
    roles = [m.role for m in out.messages]
    assert roles == ["system", "system", "user", "assistant", "user"]
    last = out.messages[-1]
    assert [p.type for p in last.parts] == ["tool_result", "tool_result", "text", "text"]  # results first
    assert any("moved into the top-level system prompt" in loss for loss in out.losses)
    body = encode_request("anthropic-messages", out.messages, None, {"max_tokens": 10, "model": "m"}).body
    assert check_request("anthropic-messages", body) == []


def test_orphans_dropped_and_unanswered_calls_answered() -> None:
    history = [user("hi"), calls("a", "b"), result("a"), result("zzz"), user("go on")]
    out = conform(history, None, "openai-chat")
    results = [p for m in out.messages for p in m.parts if isinstance(p, ToolResultPart)]
    assert [(r.tool_call_id, r.content) for r in results] == [("a", "ok"), ("b", NO_RESULT)]
    assert any("'zzz' dropped" in loss for loss in out.losses)
    assert any("placeholder" in loss for loss in out.losses)


def test_a_history_starting_with_the_assistant_gets_a_user_turn_first() -> None:
    out = conform([calls("a"), result("a")], None, "anthropic-messages")
    assert out.messages[0].role == "user" and out.messages[0].text == OPENING_USER
    assert any("put first" in loss for loss in out.losses)


def test_what_cannot_cross_is_dropped_with_a_line_each() -> None:
    thinking = ReasoningPart(text="hmm", signature="sig", provider="anthropic")
    encrypted = ReasoningPart(text="", encrypted="enc", id="rs_1", provider="openai-responses")
    cached = TextPart(text="hi", provider_details={"anthropic": {"extra": {"cache_control": {"type": "ephemeral"}}}})
    history = [Message(role="user", parts=[cached]),
               Message(role="assistant", parts=[thinking, encrypted, TextPart(text="yes")])]
    hosted = ToolSpec(name="web_search", provider_details={"anthropic": {"raw": {"type": "web_search_20250305"}}})
    out = conform(history, [hosted, ToolSpec(name="echo", parameters={"type": "object"})], "openai-chat")
    text = " | ".join(out.losses)
    assert "thinking signature dropped" in text and "encrypted reasoning dropped" in text
    assert "cache_control" in text and "provider-hosted tool 'web_search'" in text
    assert [t.name for t in out.tools or []] == ["echo"]
    assert [p.type for p in out.messages[1].parts] == ["text"]
    # the same reasoning stays on its own API
    own = conform(history, None, "anthropic-messages")
    assert any(isinstance(p, ReasoningPart) and p.signature == "sig" for p in own.messages[1].parts)


def test_media_by_url_cannot_go_where_only_bytes_travel() -> None:
    history = [Message(role="user", parts=[MediaPart(media_type="image/png", url="https://x/y.png"), TextPart(text="?")])]
    out = conform(history, None, "bedrock-converse")
    assert [p.type for p in out.messages[0].parts] == ["text"]
    assert any("by URL dropped" in loss for loss in out.losses)
    kept = conform(history, None, "anthropic-messages")
    assert [p.type for p in kept.messages[0].parts] == ["media", "text"]


# ------------------------------------------------------------------------------------------- params

def test_params_cross_through_the_neutral_set() -> None:
    out, losses = translate_params("openai-chat", "anthropic-messages",
                                   {"max_completion_tokens": 300, "temperature": 0.2, "stop": "END",
                                    "tool_choice": "required", "logit_bias": {"1": 2}})
    assert out == {"max_tokens": 300, "temperature": 0.2, "stop_sequences": ["END"], "tool_choice": {"type": "any"}}
    assert losses == ["parameter 'logit_bias' dropped (no Anthropic Messages equivalent)"]
    out, losses = translate_params("openai-responses", "openai-chat",
                                   {"reasoning": {"effort": "low", "summary": "auto"}, "max_output_tokens": 9})
    assert out == {"reasoning_effort": "low", "max_tokens": 9}
    assert losses == ["parameter 'reasoning.summary' dropped (no OpenAI Chat Completions equivalent)"]
    out, losses = translate_params("anthropic-messages", "google-gemini",
                                   {"max_tokens": 5, "tool_choice": {"type": "tool", "name": "echo"}})
    assert out == {"generationConfig": {"maxOutputTokens": 5},
                   "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["echo"]}}}
    out, losses = translate_params("openai-chat", "anthropic-messages", {})
    assert out == {"max_tokens": 4096} and "requires it" in losses[0]


# ---------------------------------------------------------------- every recorded request, every API

def _recorded_runs() -> list[tuple[str, Run]]:
    runs = [(p.stem, Run.load(p)) for p in sorted((ROOT / "tests" / "fixtures" / "hermes").glob("*.jsonl"))]
    data = next((d / "shared" / "realworld" / "data" for d in ROOT.parents
                 if (d / "shared" / "realworld" / "data" / "MANIFEST.json").is_file()), None)
    if data is not None:
        from replaykit.adapters import import_file

        manifest = json.loads((data / "MANIFEST.json").read_text(encoding="utf-8"))["files"]
        for entry in manifest:
            if entry["expect"] == "import" and entry["kind"] in ("openai-chat", "openai-responses", "anthropic"):
                for n, imported in enumerate(import_file(data / entry["path"], entry["format"])):
                    runs.append((f"{Path(entry['path']).stem}#{n}", Run(imported.header, imported.events)))
    return runs


RUNS = _recorded_runs()


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(("name", "run"), RUNS, ids=[name for name, _ in RUNS])
def test_every_recorded_request_translates_into_a_body_the_api_accepts(name: str, run: Run, api: str) -> None:
    for event in run.llm_calls():
        messages = run.request_messages(event)
        if not any(m.role not in ("system", "developer") for m in messages):
            continue  # nothing but a system prompt: the live model refuses it with a one-line error
        source = "anthropic-messages" if event.request.api == "anthropic" else event.request.api
        params = {k: v for k, v in event.request.params.items() if k not in ("stream", "stream_options", "n")}
        encoded = translate_request(api, messages, run.request_tools(event.request), {**params, "model": "m"},
                                    source)
        assert check_request(api, encoded.body) == [], (name, event.id)
        assert all(isinstance(loss, str) and loss for loss in encoded.losses)


HOSTILE = {
    # Kimi / LiteLLM-style ids Anthropic rejects (litellm #21114)
    "dotted ids": [user("go"), calls("functions.Bash:0"), result("functions.Bash:0"), user("more")],
    # Codex-style "call_...|fc_..." ids longer than Chat's 40 characters (agno #5382)
    "long ids": [user("go"), calls("call_" + "a" * 24 + "|fc_" + "b" * 40), result("call_" + "a" * 24 + "|fc_" + "b" * 40)],
    # an answer cut short: a call never answered, then the user goes on (Phoenix PR #13505)
    "unanswered call": [user("go"), calls("c1"), user("never mind")],
    # a result whose call was compacted away
    "orphan result": [user("go"), Message(role="assistant", parts=[TextPart(text="ok")]), result("gone"), user("?")],
    # an empty assistant turn and two user turns in a row
    "empty and doubled": [user("a"), Message(role="assistant", parts=[TextPart(text="")]), user("b"), user("c")],
    # a conversation that starts with the assistant
    "assistant first": [Message(role="assistant", parts=[TextPart(text="hello")]), user("hi")],
}


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_histories_break_the_api_rules_unless_conformed(case: str, api: str) -> None:
    history = HOSTILE[case]
    params = {"model": "m", "max_tokens": 64}
    naive = encode_request(api, history, None, params).body
    fitted = translate_request(api, history, None, params, "openai-chat")
    assert check_request(api, fitted.body) == [], fitted.body
    if api == "anthropic-messages":
        assert check_request(api, naive), case  # each case breaks an Anthropic rule when sent as it is
    if check_request(api, naive):  # the rule bites on this API: the translation must say what it changed
        assert fitted.losses, case


@pytest.mark.parametrize("api", APIS)
def test_a_user_turn_holding_some_results_and_text_answers_the_rest_first(api: str) -> None:
    mixed = Message(role="user", parts=[ToolResultPart(tool_call_id="a", content="A"), TextPart(text="and now?")])
    history = [user("go"), calls("a", "b"), mixed]
    fitted = translate_request(api, history, None, {"model": "m", "max_tokens": 9}, "anthropic-messages")
    assert check_request(api, fitted.body) == []
    results = [p for m in conform(history, None, api).messages for p in m.parts if isinstance(p, ToolResultPart)]
    assert [(r.tool_call_id, r.content) for r in results] == [("a", "A"), ("b", NO_RESULT)]
