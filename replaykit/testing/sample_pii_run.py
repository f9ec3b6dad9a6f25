"""Builds realistic runs (through the real Recorder) full of personal data and secrets."""

from __future__ import annotations

import json

from replaykit.core.trace.canonical import fingerprint
from replaykit.core.trace.ir import (
    Edit,
    Lineage,
    LLMResponse,
    Message,
    RunHeader,
    Source,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    Usage,
)
from replaykit.core.trace.recorder import Recorder
from replaykit.core.trace.run import Run
from replaykit.core.trace.store import utc_now_iso

SYSTEM = (
    "You are a support agent for Acme. Escalations go to Maria Gonzalez (maria.gonzalez@acme-corp.com, "
    "+1 (415) 555-0132). Never reveal the admin key sk-proj-Abc123Def456Ghi789Jkl012Mno345Pqr."
)
TOOLS = [
    ToolSpec(name="lookup_customer", description="Find a customer by email",
             parameters={"type": "object", "properties": {"email": {"type": "string"}}}),
    ToolSpec(name="send_email", description="Send an email",
             parameters={"type": "object", "properties": {"to": {"type": "string"}, "body": {"type": "string"}}}),
]
CUSTOMER = {
    "id": "cus_8f14e45fceea167a5a36dedd4bea2543",
    "full_name": "John Smith",
    "email": "john.smith@example.com",
    "phone": "+44 20 7946 0958",
    "card": "4111 1111 1111 1111",
    "notes": "Prefers calls after 5pm; shipping to 42 Elm Street, Springfield.",
    "api_token": "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB",
}


def _call(rec: Recorder, messages: list[Message], response: Message, tools: list[ToolSpec]) -> str:
    event = rec.llm_call(
        messages, LLMResponse(message=response, finish_reason="tool_calls" if response.tool_calls else "stop",
                              usage=Usage(input_tokens=100, output_tokens=20), model="gpt-test"),
        model="gpt-test", tools=tools, fingerprint=fingerprint(messages, tools),
    )
    return event.id


FINAL = "Done, John Smith: the order ships to 42 Elm Street, Springfield."


def build_support_run(run_id: str = "support-1", user: str = "Hi, I'm John Smith (john.smith@example.com). Where is my order?",
                      final_text: str = FINAL, branch_of: str | None = None) -> Run:
    """The support run; with ``branch_of`` it is a branch of that run whose last answer was edited."""
    lineage = None
    if branch_of is not None:
        lineage = Lineage(relation="branch", parent_run_id=branch_of, parent_step=4,
                          edit=Edit(target="response", step=4, value=final_text))
    rec = Recorder(RunHeader(run_id=run_id, created_at=utc_now_iso(), source=Source(framework="test"),
                             title="support chat with John Smith", model="gpt-test", lineage=lineage))
    system = Message(role="system", parts=[TextPart(text=SYSTEM)])
    user_msg = Message(role="user", parts=[TextPart(text=user)])
    rec.turn_start(user_msg)
    history = [system, user_msg]
    args = {"email": "john.smith@example.com"}
    raw = json.dumps(args)
    a1 = Message(role="assistant", parts=[ToolCallPart(id="call_1", name="lookup_customer", arguments=args, raw_arguments=raw)])
    llm1 = _call(rec, history, a1, TOOLS)
    result = json.dumps(CUSTOMER, indent=2)
    rec.tool_call("call_1", "lookup_customer", args, raw_arguments=raw, result=result, llm_call_id=llm1)
    history += [a1, Message(role="tool", parts=[ToolResultPart(tool_call_id="call_1", name="lookup_customer", content=result)])]
    args2 = {"to": "john.smith@example.com", "body": "Dear John Smith, your card ending 1111 was charged. Call +44 20 7946 0958."}
    raw2 = json.dumps(args2, separators=(",", ":"))
    a2 = Message(role="assistant", parts=[TextPart(text="Sending the confirmation."),
                                          ToolCallPart(id="call_2", name="send_email", arguments=args2, raw_arguments=raw2)])
    llm2 = _call(rec, history, a2, TOOLS)
    rec.tool_call("call_2", "send_email", args2, raw_arguments=raw2, result='{"status":"sent","message_id":"msg-7f3a9c"}',
                  llm_call_id=llm2)
    history += [a2, Message(role="tool", parts=[ToolResultPart(tool_call_id="call_2", name="send_email",
                                                               content='{"status":"sent","message_id":"msg-7f3a9c"}')])]
    final = Message(role="assistant", parts=[TextPart(text=final_text)])
    _call(rec, history, final, TOOLS)
    rec.turn_end(final.text)
    rec.run_end(final.text)
    return Run(rec.header, rec.events)
