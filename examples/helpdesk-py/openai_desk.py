"""The desk's model over the official OpenAI Python SDK, unmodified: the
same seam as ``model.ScriptedModel`` (``plan``, ``reply``, ``resumed``),
decided by Chat Completions instead of a router.

``helpdesk.py --model openai`` uses it. The client is built with no
arguments but a timeout, so it reads ``OPENAI_BASE_URL`` and
``OPENAI_API_KEY`` from the environment exactly as in production; the
harness sets both to its model endpoint (and a placeholder key), which
replays the pack's cassette.

A user turn is the usual tool loop: ``plan`` sends the model input with the
desk's tools and reads the tool calls back as the plan (``record_lesson``
is how the model says what the turn taught); ``reply`` hands each call's
outcome back as a tool message and reads the *streamed* answer chunk by
chunk. A resume is one streamed call over the resume's model input and the
person's decision. Everything the packs judge (the review door, the gate,
the ledger, the pause tokens) is the desk's own code either way.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Tuple

import openai
from openai import OpenAI

from model import INTERACTION, Outcome, Plan, ToolRequest
from symfonic_evals_protocol import TurnFailure

MODEL = "helpdesk-py-scripted"

SYSTEM = "You are the help desk agent. Call the tools the request needs, in order, or answer."

LESSON = "record_lesson"
"""Not a desk tool: the model's way of saying what the turn taught."""


def _tool(name: str, description: str, properties: Dict[str, Any], optional: Tuple[str, ...] = ()) -> Dict[str, Any]:
    required = sorted(p for p in properties if p not in optional)
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


TOOLS: List[Dict[str, Any]] = [
    _tool(LESSON, "Remember how a task is done, when the user shows it.", {"lesson": {"type": "string"}}),
    _tool(
        "issue_refund",
        "Refund an order; `full` refunds the whole order, which a manager approves first.",
        {"order": {"type": "integer"}, "full": {"type": "boolean"}},
        optional=("full",),
    ),
    _tool(INTERACTION, "Ask a supervisor a question; the calls after it wait for the answer.", {"question": {"type": "string"}}),
    _tool("escalate_ticket", "Escalate a ticket to a supervisor.", {"ticket": {"type": "integer"}}),
    _tool("weather_lookup", "Look up the weather in a city.", {"city": {"type": "string"}}),
]


class OpenAIModel:
    """Plans and words the desk's turns by a model over the OpenAI API."""

    def __init__(self) -> None:
        self.client = OpenAI(timeout=30.0)
        # This turn's conversation with the model: what ``plan`` sent, the
        # tool calls (or the answer) it got back; ``reply`` continues it.
        self._messages: List[Dict[str, Any]] = []
        self._calls: List[Dict[str, Any]] = []
        self._answer = ""

    def _create(self, **request: Any) -> Any:
        try:
            return self.client.chat.completions.create(model=MODEL, temperature=0, **request)
        except openai.APIStatusError as error:
            # The body may quote the request's digest only; the harness names
            # the miss itself. Keep the kind and status.
            raise TurnFailure("ModelRequestFailed", f"HTTP {error.status_code}") from None
        except openai.APIConnectionError:
            raise TurnFailure("ModelUnreachable", "the model endpoint could not be reached") from None

    def _streamed(self, messages: List[Dict[str, Any]]) -> str:
        stream = self._create(messages=messages, stream=True)
        return "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)

    def plan(self, prompt: str, model_input: str) -> Plan:
        """The lesson and calls the model asks for, shown the model input."""
        self._messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": model_input}]
        message = self._create(messages=self._messages, tools=TOOLS).choices[0].message
        self._answer = message.content or ""
        self._calls = [
            {"id": call.id, "type": "function", "function": {"name": call.function.name, "arguments": call.function.arguments}}
            for call in message.tool_calls or []
        ]
        if self._calls:
            self._messages.append({"role": "assistant", "content": message.content, "tool_calls": self._calls})
        lesson: Optional[str] = None
        requests: List[ToolRequest] = []
        for call in self._calls:
            name, arguments = call["function"]["name"], json.loads(call["function"]["arguments"] or "{}")
            if name == LESSON:
                lesson = str(arguments.get("lesson", ""))
            else:
                requests.append(ToolRequest(name, arguments))
        # Calls of one message with no pause among them are made side by
        # side, each whatever became of the others.
        together = len(requests) > 1 and all(r.name != INTERACTION for r in requests)
        return Plan(lesson=lesson, calls=requests, together=together)

    def reply(self, plan: Plan, outcomes: List[Outcome], model_input: str) -> str:
        """The answer, worded by the model from each call's outcome."""
        if not self._calls:
            return self._answer
        # Every call the model asked for gets its tool message, in order: a
        # lesson is noted, a desk call ended as its outcome says, and one
        # after a pause or a failure never ran.
        ended = iter(outcomes)
        results: List[Dict[str, Any]] = []
        for call in self._calls:
            if call["function"]["name"] == LESSON:
                content: Dict[str, Any] = {"status": "noted"}
            else:
                outcome = next(ended, None)
                content = {"status": "not_run"} if outcome is None else {"status": outcome.status, "result": outcome.result}
            results.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(content)})
        return self._streamed(self._messages + results)

    def resumed(self, approved: bool, outcomes: List[Outcome], model_input: str) -> str:
        """The answer after a person answered the pause; the model input
        holds the answer and how the calls after it ended."""
        decision = "approved" if approved else "declined"
        messages = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"{model_input}\ndecision: {decision}"},
        ]
        return self._streamed(messages)
