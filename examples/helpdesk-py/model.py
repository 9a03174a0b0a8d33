"""The desk's model: a deterministic router over the prompt, so the evidence
is reproducible. A real model goes behind the same two calls: ``plan`` reads
the model input and says what to do (what the turn taught, which tools to
call in order), ``reply`` writes the answer from how the calls ended.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

INTERACTION = "ask_user"
"""The tool that pauses the turn for a person."""

EXPRESS_REFUND = "express_refund"
"""A second refund tool some desks offer, for requests worded "express"."""

_DEMONSTRATION = re.compile(r"^walk me through (?P<task>[^:]+): (?P<lesson>.+)$")
_REFUND = re.compile(r"refund order (?P<order>\d+)")
_REFUNDS = re.compile(r"refund orders (?P<orders>\d+(?:(?:, | and |, and )\d+)+)")
_ESCALATE = re.compile(r"escalate ticket (?P<ticket>\d+)")
_WEATHER = re.compile(r"weather in (?P<city>[A-Z][a-z]+)")


@dataclass(frozen=True)
class ToolRequest:
    """One call the model asks for."""

    name: str
    arguments: Dict[str, Any]

    def to_json(self) -> Dict[str, Any]:
        """As a checkpoint stores it."""
        return {"name": self.name, "arguments": self.arguments}

    @classmethod
    def from_json(cls, value: Any) -> Optional["ToolRequest"]:
        """Back from a checkpoint; ``None`` when it is not one."""
        if isinstance(value, dict) and isinstance(value.get("name"), str) and isinstance(value.get("arguments"), dict):
            return cls(value["name"], value["arguments"])
        return None


@dataclass(frozen=True)
class Plan:
    """What one turn does: a lesson it taught, and the calls to make. A call
    to :data:`INTERACTION` pauses; the calls after it wait for the answer."""

    lesson: Optional[str] = None
    calls: List[ToolRequest] = field(default_factory=list)
    together: bool = False
    """The calls are one message, one per subject of the request: each is
    made whatever became of the others."""


@dataclass(frozen=True)
class Outcome:
    """How one call ended, as the model reads it."""

    name: str
    status: str
    result: Any = None


class ScriptedModel:
    """Reads the prompt; never guesses. ``variant`` names the honest
    variant whose habits it has (see ``honest.py``), or is ``None``;
    ``holds_calls`` says the desk holds the escalation itself for a person,
    so the model calls it without asking first; ``express`` says the desk
    offers the express refund, which a request worded "express" gets;
    ``briefs`` says it offers the supervisor's brief, sent once approved,
    before the escalation."""

    def __init__(
        self, variant: Optional[str] = None, holds_calls: bool = False, express: bool = False, briefs: bool = False
    ) -> None:
        self.variant = variant
        self.holds_calls = holds_calls
        self.express = express
        self.briefs = briefs

    def plan(self, prompt: str, model_input: str) -> Plan:
        """The lesson and calls for a user's prompt."""
        if (match := _DEMONSTRATION.match(prompt)) is not None:
            return Plan(lesson=match["lesson"])
        if (match := _REFUNDS.search(prompt)) is not None:
            orders = [int(n) for n in re.findall(r"\d+", match["orders"])]
            return Plan(calls=[ToolRequest("issue_refund", {"order": n}) for n in orders], together=True)
        if (match := _REFUND.search(prompt)) is not None:
            tool = EXPRESS_REFUND if self.express and "express" in prompt.lower() else "issue_refund"
            arguments: Dict[str, Any] = {"order": int(match["order"])}
            if "in full" in prompt.lower():
                # The whole order, which the desk holds for a manager.
                arguments["full"] = True
            return Plan(calls=[ToolRequest(tool, arguments)])
        if (match := _ESCALATE.search(prompt)) is not None:
            ticket = int(match["ticket"])
            # Some desks read the ticket before asking about it.
            looked_up = [ToolRequest("lookup_ticket", {"ticket": ticket})]
            if self.holds_calls:
                return Plan(calls=[ToolRequest("escalate_ticket", {"ticket": ticket})])
            return Plan(
                calls=(looked_up if self.variant == "looks-up-before-acting" else [])
                + [
                    ToolRequest(INTERACTION, {"question": f"may I escalate ticket {ticket}?"}),
                ]
                + ([ToolRequest("brief_supervisor", {"ticket": ticket})] if self.briefs else [])
                + [ToolRequest("escalate_ticket", {"ticket": ticket})]
            )
        if (match := _WEATHER.search(prompt)) is not None:
            arguments: Dict[str, Any] = {"city": match["city"]}
            if self.variant == "defaulted-tool-argument":
                # The body's default, spelled out as some models do.
                arguments["units"] = "metric"
            return Plan(calls=[ToolRequest("weather_lookup", arguments)])
        return Plan()

    def reply(self, plan: Plan, outcomes: List[Outcome], model_input: str) -> str:
        """The answer, written from the calls' outcomes."""
        if plan.lesson is not None:
            return "noted how this is done"
        if not outcomes:
            return "how can I help?"
        if plan.together:
            done = sum(1 for o in outcomes if o.status == "succeeded")
            return f"{done} of {len(plan.calls)} refunds issued"
        last = outcomes[-1]
        if last.status == "pending":
            return "waiting for a supervisor"
        if last.status == "refused":
            return "I cannot do that here"
        if last.status == "failed":
            return f"{last.name} did not work"
        if last.name in ("issue_refund", EXPRESS_REFUND):
            return f"refund for order {last.result['refunded']} issued"
        if last.name == "escalate_ticket":
            return f"ticket {last.result['escalated']} escalated"
        if last.name == "weather_lookup":
            return f"{last.result['city']}: {last.result['forecast']}"
        return "done"

    def resumed(self, approved: bool, outcomes: List[Outcome], model_input: str) -> str:
        """The answer after a person answered the pause."""
        if not approved:
            return "left as it was"
        return self.reply(Plan(), outcomes, model_input) if outcomes else "carried on"
