"""A help desk agent in Python that earns all three symfonic-evals packs.

The "model" is a deterministic router over the prompt, so the evidence is
reproducible; everything else is what a real deployment does: procedures are
learned from demonstrations, reviewed, persisted in SQLite and enforced by a
tool gate that evaluates their state predicates; ``ask_user`` pauses with a
single-use token persisted in SQLite; ``weather_lookup`` is a tool the
``extensions`` capability contributes. Refunds apply through the harness's
side-effect ledger.

``--twin NAME`` starts a deliberately broken variant (see ``TWINS``), which
the packs must catch.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import sys
from typing import Any, Dict, List, Optional

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

from predicates import applies  # noqa: E402
from store import Procedure, Store  # noqa: E402
from symfonic_evals_protocol import (  # noqa: E402
    Capabilities,
    Deployment,
    Pause,
    PromptRequest,
    ResumeRequest,
    Stage,
    ToolCall,
    Turn,
    TurnFailure,
    TurnRecord,
    serve,
)

PRECONDITION_STAGE = "procedural_precondition"
WEATHER = {"Lisbon": "sunny, 21 C", "Oslo": "snow, -4 C"}

TWINS = {
    "tokens-in-memory": "spent pause tokens are remembered only in process memory",
    "review-in-memory": "approvals are kept in process memory, never written to the store",
    "gate-ignores-state": "the tool gate reads procedures but never evaluates their predicates",
    "extension-unbound": "weather_lookup is declared but no implementation is bound",
    "draft-in-recall": "unreviewed drafts are shown to the model as if approved",
}

_DEMONSTRATION = re.compile(r"^walk me through refunding order \d+: (?P<lesson>.+)$")
_REVIEW = re.compile(r"governs (?P<tool>\w+) when (?P<path>\S+) (?P<op>eq|neq|in|exists)\s*(?P<value>.*)$")
_REFUND = re.compile(r"refund order (?P<order>\d+)")
_ESCALATE = re.compile(r"escalate ticket (?P<ticket>\d+)")
_WEATHER = re.compile(r"weather in (?P<city>[A-Z][a-z]+)")


def _parse_value(text: str) -> Any:
    """A reviewer's value: JSON when it parses (lists for ``in``), else text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


class HelpDesk(Deployment):
    """The deployment; ``twin`` names a broken variant or is ``None``."""

    def __init__(self, durable_dir: str, twin: Optional[str] = None) -> None:
        super().__init__(durable_dir)
        self.store = Store(durable_dir)
        self.twin = twin
        self._spent_in_memory: set[str] = set()
        self._approved_in_memory: Dict[int, Procedure] = {}
        self._calls = 0

    def capabilities(self) -> Capabilities:
        return (
            Capabilities()
            .capability("tools")
            .capability("human")
            .with_trait("procedural-precondition")
            .with_trait("procedural-review")
            .operation("resume")
            .contributes("extensions", "weather_lookup")
        )

    def close(self) -> None:
        self.store.close()

    # -- the review door ---------------------------------------------------

    def _procedures(self) -> List[Procedure]:
        stored = self.store.procedures()
        return [self._approved_in_memory.get(p.id, p) for p in stored]

    def _approved(self) -> List[Procedure]:
        if self.twin == "draft-in-recall":
            return self._procedures()
        return [p for p in self._procedures() if p.status == "approved"]

    def _review_evidence(self) -> Dict[str, Any]:
        rows = sorted(
            (p.status, "" if p.status == "draft" else p.action_tool) for p in self._procedures()
        )
        return {
            "procedural_review": [list(row) for row in rows],
            "procedural_review_ids": sorted(
                p.identity() for p in self._procedures() if p.status == "approved"
            ),
        }

    # -- turns ---------------------------------------------------------------

    def run_turn(self, request: PromptRequest, turn: Turn) -> TurnRecord:
        self._calls = 0
        prompt = request.prompt
        recall = "".join(f"\n- {p.text}" for p in self._approved())
        record = TurnRecord(model_input=f"system: help desk agent\nrecall:{recall}\nuser: {prompt}")
        record.attributes["procedural_enforcement_ids"] = []
        if (match := _DEMONSTRATION.match(prompt)) is not None:
            self.store.record_episode(match["lesson"])
            record.attributes["procedural_promoted"] = self.store.consolidate()
            record.answer = "noted how this is done"
        elif prompt.startswith("approve") and (match := _REVIEW.search(prompt)) is not None:
            record.answer = self._review(match)
        elif (match := _REFUND.search(prompt)) is not None:
            self._refund(int(match["order"]), request.state or {}, record, turn)
        elif (match := _ESCALATE.search(prompt)) is not None:
            self._ask_user(request.conversation, int(match["ticket"]), record)
        elif (match := _WEATHER.search(prompt)) is not None:
            self._weather(match["city"], record)
        else:
            record.answer = "how can I help?"
        record.attributes.update(self._review_evidence())
        return record

    def _call_id(self) -> str:
        self._calls += 1
        return f"call-{self._calls}"

    def _review(self, match: "re.Match[str]") -> str:
        drafts = [p for p in self._procedures() if p.status == "draft"]
        if not drafts:
            return "nothing to review"
        draft = drafts[0]
        predicate: Dict[str, Any] = {"path": match["path"], "op": match["op"]}
        if match["op"] != "exists":
            predicate["value"] = _parse_value(match["value"].strip())
        precondition = [{"state": predicate}]
        if self.twin == "review-in-memory":
            self._approved_in_memory[draft.id] = Procedure(
                draft.id, draft.text, "approved", match["tool"], precondition
            )
        else:
            self.store.approve(draft.id, match["tool"], precondition)
        return "procedure approved"

    def _refund(self, order: int, state: Dict[str, Any], record: TurnRecord, turn: Turn) -> None:
        arguments = {"order": order}
        governing = [p for p in self._approved() if p.action_tool == "issue_refund"]
        record.attributes["procedural_enforcement_ids"] = sorted(p.identity() for p in governing)
        if governing:
            refused = 0
            for procedure in governing:
                holds = True if self.twin == "gate-ignores-state" else applies(state, procedure.precondition)[0]
                refused += 0 if holds else 1
            outcome = "rejected" if refused else "passed"
            counts = {"checked": len(governing), "refused": refused}
            record.governance.append(Stage(PRECONDITION_STAGE, outcome, counts))
            if refused:
                record.tool_calls.append(ToolCall.refused(self._call_id(), "issue_refund", arguments, PRECONDITION_STAGE))
                record.answer = "I cannot issue that refund here"
                return
        else:
            record.governance.append(Stage(PRECONDITION_STAGE, "abstained", {"checked": 0}))
        if turn.ledger_apply(f"refund:{order}"):
            self.store.record_refund(order)
        record.tool_calls.append(ToolCall.succeeded(self._call_id(), "issue_refund", arguments, {"refunded": order}))
        record.answer = f"refund for order {order} issued"

    def _ask_user(self, conversation: str, ticket: int, record: TurnRecord) -> None:
        token = secrets.token_urlsafe(16)
        checkpoint = {"ticket": ticket, "next": "escalate_ticket"}
        self.store.save_pause(token, conversation, "ask_user", checkpoint)
        question = {"question": f"may I escalate ticket {ticket}?"}
        record.tool_calls.append(ToolCall.succeeded(self._call_id(), "ask_user", question, {"paused": True}))
        # Measured, not assumed: resumable when the stored pause carries the
        # checkpoint its redemption continues from.
        stored = self.store.pause(token)
        record.pause = Pause("ask_user", stored is not None and stored.checkpoint is not None, token)
        record.answer = "waiting for a supervisor"

    def _weather(self, city: str, record: TurnRecord) -> None:
        arguments = {"city": city}
        if self.twin == "extension-unbound" or city not in WEATHER:
            record.tool_calls.append(ToolCall.failed(self._call_id(), "weather_lookup", arguments, "no forecast"))
            record.answer = "I could not look that up"
            return
        forecast = WEATHER[city]
        record.tool_calls.append(ToolCall.succeeded(self._call_id(), "weather_lookup", arguments, forecast))
        record.answer = f"{city}: {forecast}"

    # -- redemption ----------------------------------------------------------

    def resume(self, request: ResumeRequest, turn: Turn) -> TurnRecord:
        self._calls = 0
        pause = self.store.pause(request.token)
        if pause is None or pause.conversation != request.conversation:
            raise TurnFailure("UnknownPauseToken", "no pause was issued with this token here")
        answer = request.answer
        if not isinstance(answer, dict) or not isinstance(answer.get("approved"), bool):
            raise TurnFailure("InvalidAnswer", "the answer must say whether it is approved")
        if self.twin == "tokens-in-memory":
            spent = request.token in self._spent_in_memory
            self._spent_in_memory.add(request.token)
        else:
            spent = not self.store.consume(request.token)
        if spent:
            raise TurnFailure("PauseTokenReplayedError", "this pause was already redeemed")
        checkpoint = pause.checkpoint
        record = TurnRecord(model_input=f"system: help desk agent\nresume: {pause.interaction}")
        continued = isinstance(checkpoint, dict) and checkpoint.get("next") == "escalate_ticket"
        if continued and answer["approved"]:
            ticket = checkpoint["ticket"]
            record.tool_calls.append(
                ToolCall.succeeded(self._call_id(), "escalate_ticket", {"ticket": ticket}, {"escalated": ticket})
            )
            record.answer = f"ticket {ticket} escalated"
        else:
            record.answer = "left as it was"
        record.attributes.update(
            resume_outcome="resumed",
            resume_name=pause.interaction,
            resume_checkpoint=isinstance(checkpoint, dict),
            resume_continued=continued,
        )
        return record


def main(argv: Optional[List[str]] = None) -> int:
    """Serves the protocol; ``--twin`` picks a broken variant."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--twin", choices=sorted(TWINS))
    # ``--model openai``: decisions by a model through the official OpenAI SDK
    # (openai_desk.py), pointed at the harness's model endpoint.
    parser.add_argument("--model", choices=["scripted", "openai"], default="scripted")
    known, _ = parser.parse_known_args(argv)
    desk = HelpDesk
    if known.model == "openai":
        from openai_desk import ModelHelpDesk as desk
    return serve(lambda durable_dir: desk(durable_dir, known.twin), argv=argv)


if __name__ == "__main__":
    sys.exit(main())
