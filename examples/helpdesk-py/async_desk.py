"""The help desk as an asyncio deployment, written against the companion
package's asyncio API the way a team on an async agent framework writes one.

Turns are coroutines; tool bodies await their services, the harness's ledger
(``await turn.ledger_apply``) and their witness (``await turn.witness``). It
shares the store, the predicates, the review door and the scripted model with
the blocking desk (``helpdesk.py``) and passes the same packs. It imports the
companion package as installed (``pip install ./python``), never from the
checkout.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import sys
from typing import Any, Dict, List, Optional

from model import INTERACTION, Outcome, Plan, ScriptedModel, ToolRequest
from review import PRECONDITION_STAGE, asks_a_manager_first, judge, named_draft, parse_review, review_evidence
from store import PauseRow, Procedure, RunLease, Store
from symfonic_evals_protocol import (
    AsyncDeployment,
    AsyncTurn,
    Capabilities,
    Pause,
    PromptRequest,
    ResolvedCall,
    ResumeRequest,
    ToolCall,
    TurnFailure,
    TurnRecord,
    serve,
)

SYSTEM = "system: help desk agent"
FORECASTS = {"Lisbon": "sunny, 21 C", "Oslo": "snow, -4 C"}


class ToolError(Exception):
    """A tool body (or the service behind it) failed."""


async def forecast_service(city: str) -> str:
    """The forecast upstream; an async client's call in a real desk."""
    await asyncio.sleep(0)
    if city not in FORECASTS:
        raise ToolError("no forecast for that city")
    return FORECASTS[city]


class AsyncHelpDesk(AsyncDeployment):
    """Everything durable is in the SQLite store under the durable dir."""

    store: Store

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

    async def start(self) -> None:
        self.store = Store(self.durable_dir)
        # Names this process's redemptions, so a claim left by a process
        # that died mid-continuation is a client's retry and is honoured.
        self.run = RunLease(self.durable_dir)
        self.model = ScriptedModel()

    async def close(self) -> None:
        self.run.close()
        self.store.close()

    def _approved(self) -> List[Procedure]:
        return [p for p in self.store.procedures() if p.status == "approved"]

    def _evidence(self) -> Dict[str, Any]:
        return review_evidence(self.store.procedures(), Procedure.identity)

    def _transcript(self, last: str) -> List[str]:
        recall = "".join(f"\n- {p.text}" for p in self._approved())
        return [SYSTEM, f"recall:{recall}", last]

    # -- turns -----------------------------------------------------------------

    async def run_turn(self, request: PromptRequest, turn: AsyncTurn) -> TurnRecord:
        if request.is_operator:
            return self._review(request)
        transcript = self._transcript(f"user: {request.prompt}")
        plan: Plan = self.model.plan(request.prompt, "\n".join(transcript))
        record = TurnRecord()
        enforced: List[str] = []
        outcomes: List[Outcome] = []
        for index, call in enumerate(plan.calls):
            if call.name == INTERACTION:
                outcomes.append(self._ask(call, plan.calls[index + 1 :], request.conversation, record))
                break
            if asks_a_manager_first(call):
                # The call itself waits for a manager; the gate judges it
                # once approved, under the state it was asked in.
                held = {"held": call.to_json(), "state": request.state}
                outcomes.append(self._ask(call, [], request.conversation, record, held))
                break
            outcome = await self._execute(call, request.state, record, turn, transcript, enforced)
            outcomes.append(outcome)
            # The calls of one message are each made, whatever became of
            # the others.
            if outcome.status != "succeeded" and not plan.together:
                break
        record.answer = self.model.reply(plan, outcomes, "\n".join(transcript))
        record.model_input = "\n".join(transcript)
        promoted = 0
        if not request.is_rejected:
            # A turn a reviewer rejected is answered, never learned from.
            self.store.record_episode(request.conversation, plan.lesson)
            promoted = self.store.consolidate(request.conversation)
        record.attributes["procedural_promoted"] = promoted
        record.attributes["procedural_enforcement_ids"] = sorted(set(enforced))
        record.attributes.update(self._evidence())
        return record

    def _review(self, request: PromptRequest) -> TurnRecord:
        """The operator door: approves the one draft the review names."""
        review = parse_review(request.prompt)
        draft = None if review is None else named_draft(self.store.procedures(), review)
        if review is not None and draft is not None:
            self.store.approve(draft.id, review.tool, review.precondition)
        record = TurnRecord(answer="approved" if draft is not None else "nothing to approve")
        record.attributes.update(self._evidence())
        return record

    # -- calls -----------------------------------------------------------------

    async def _execute(
        self,
        call: ToolRequest,
        state: Any,
        record: TurnRecord,
        turn: AsyncTurn,
        transcript: List[str],
        enforced: List[str],
    ) -> Outcome:
        call_id = f"call-{self.store.next_call_number()}"
        governing = [p for p in self._approved() if p.action_tool == call.name]
        stage, admitted, ids = judge(governing, state, Procedure.identity)
        record.governance.append(stage)
        enforced.extend(ids)
        if not admitted:
            record.tool_calls.append(ToolCall.refused(call_id, call.name, call.arguments, PRECONDITION_STAGE))
            transcript.append(f"tool {call.name} refused by {PRECONDITION_STAGE}")
            return Outcome(call.name, "refused")
        try:
            result = await self._body(call.name, dict(call.arguments), turn)
        except ToolError as error:
            record.tool_calls.append(ToolCall.failed(call_id, call.name, call.arguments, str(error)))
            transcript.append(f"tool {call.name} failed: {error}")
            return Outcome(call.name, "failed")
        record.tool_calls.append(ToolCall.succeeded(call_id, call.name, call.arguments, result))
        transcript.append(f"tool {call.name} -> {json.dumps(result, ensure_ascii=False)}")
        return Outcome(call.name, "succeeded", result)

    async def _body(self, name: str, arguments: Dict[str, Any], turn: AsyncTurn) -> Any:
        """Runs a tool body and witnesses it from where it ran."""
        try:
            # The row is written whether the ledger applied the effect or
            # refused it as a duplicate (both writes are idempotent): a
            # duplicate may be the retry of a run that died between the
            # ledger and the row, and the store must not lag the world.
            if name == "issue_refund":
                order = int(arguments["order"])
                await turn.ledger_apply(f"refund:{order}", tool="issue_refund")
                self.store.record_refund(order)
                result: Any = {"refunded": order}
            elif name == "escalate_ticket":
                ticket = int(arguments["ticket"])
                await turn.ledger_apply(f"escalate:{ticket}", tool="escalate_ticket")
                self.store.record_escalation(ticket)
                result = {"escalated": ticket}
            elif name == "weather_lookup":
                city = str(arguments["city"])
                result = {"city": city, "forecast": await forecast_service(city)}
            else:
                raise ToolError("no such tool")
        except (KeyError, ValueError) as error:
            await turn.witness(name, arguments, error=f"bad arguments ({type(error).__name__})")
            raise ToolError("bad arguments") from error
        except ToolError as error:
            await turn.witness(name, arguments, error=str(error))
            raise
        await turn.witness(name, arguments, result=result)
        return result

    # -- pausing and resuming ----------------------------------------------------

    def _ask(
        self,
        call: ToolRequest,
        rest: List[ToolRequest],
        conversation: str,
        record: TurnRecord,
        held: Optional[Dict[str, Any]] = None,
    ) -> Outcome:
        """Parks ``call`` and pauses; the checkpoint holds the calls after
        the answer, and ``held`` (the call itself and its state) when the
        call is what waits."""
        call_id = f"call-{self.store.next_call_number()}"
        token, question_id = secrets.token_urlsafe(16), f"q-{secrets.token_hex(8)}"
        checkpoint: Dict[str, Any] = {"next": [later.to_json() for later in rest], **(held or {})}
        self.store.save_pause(token, conversation, call.name, call_id, question_id, checkpoint)
        record.tool_calls.append(ToolCall.pending(call_id, call.name, call.arguments))
        stored = self.store.pause(token)
        resumable = stored is not None and stored.checkpoint is not None
        record.pause = Pause(call.name, resumable, token, call.arguments, question_id)
        return Outcome(call.name, "pending")

    async def resume(self, request: ResumeRequest, turn: AsyncTurn) -> TurnRecord:
        pause = self.store.pause(request.token)
        if pause is None:
            raise TurnFailure("UnknownPauseToken", "no pause was issued with this token", code="pause.unknown")
        if pause.conversation != request.conversation:
            raise TurnFailure("ForeignPauseToken", "this pause belongs to another conversation", code="pause.foreign")
        if request.question_id != pause.question_id:
            raise TurnFailure("QuestionMismatch", "the answer addresses another question", code="question.mismatch")
        answer = request.answer
        replayed = TurnFailure("PauseTokenReplayedError", "this pause was already redeemed", code="pause.replayed")
        if pause.finished or pause.claimed_by == self.run.id:
            raise replayed
        # The person may amend the escalation's priority as they approve.
        fits = (
            isinstance(answer, dict)
            and set(answer) in ({"approved"}, {"approved", "priority"})
            and isinstance(answer["approved"], bool)
            and isinstance(answer.get("priority", ""), str)
        )
        if not fits:
            raise TurnFailure("InvalidAnswer", "the answer says only whether it is approved", code="answer.invalid")
        # Claimed, not spent: the token is spent for good only once the
        # continuation is done, so a crash inside it leaves a turn the
        # client's retry can finish (its effects deduplicated by key).
        if not self.store.claim(pause.token, self.run):
            raise replayed
        try:
            record = await self._continue(pause, answer, turn)
        except Exception:
            self.store.release(pause.token, self.run)
            raise
        self.store.finish(pause.token)
        return record

    async def _continue(self, pause: PauseRow, answer: Any, turn: AsyncTurn) -> TurnRecord:
        later: Optional[List[Any]] = None
        if isinstance(pause.checkpoint, dict) and isinstance(pause.checkpoint.get("next"), list):
            later = pause.checkpoint["next"]
        transcript = self._transcript(f"resume: {pause.interaction} answered {json.dumps(answer)}")
        record = TurnRecord(resolved=[ResolvedCall.succeeded(pause.call_id, answer)])
        outcomes: List[Outcome] = []
        enforced: List[str] = []
        checkpoint = pause.checkpoint if isinstance(pause.checkpoint, dict) else {}
        held = ToolRequest.from_json(checkpoint.get("held"))
        if held is not None:
            record.resolved = [await self._settle(pause.call_id, held, checkpoint.get("state"), answer, record, turn, enforced)]
        elif answer["approved"]:
            amendment = {"priority": answer["priority"]} if "priority" in answer else {}
            for call in filter(None, map(ToolRequest.from_json, later or [])):
                if call.name == "escalate_ticket" and amendment:
                    call = ToolRequest(call.name, {**call.arguments, **amendment})
                outcomes.append(await self._execute(call, None, record, turn, transcript, []))
        record.answer = self.model.resumed(answer["approved"], outcomes, "\n".join(transcript))
        record.model_input = "\n".join(transcript)
        record.attributes.update(
            resume_outcome="resumed",
            resume_name=pause.interaction,
            resume_checkpoint=pause.checkpoint is not None,
            resume_continued=later is not None,
        )
        record.attributes["procedural_enforcement_ids"] = sorted(set(enforced))
        record.attributes.update(self._evidence())
        return record

    async def _settle(
        self,
        call_id: str,
        held: ToolRequest,
        state: Any,
        answer: Any,
        record: TurnRecord,
        turn: AsyncTurn,
        enforced: List[str],
    ) -> ResolvedCall:
        """The call a manager approves before the gate, settled by the
        answer: refused by the person who said no, else judged by the gate
        now, under the paused turn's state, and run when it admits it."""
        if not answer["approved"]:
            return ResolvedCall.refused(call_id, "person")
        governing = [p for p in self._approved() if p.action_tool == held.name]
        stage, admitted, ids = judge(governing, state, Procedure.identity)
        record.governance.append(stage)
        enforced.extend(ids)
        if not admitted:
            return ResolvedCall.refused(call_id, PRECONDITION_STAGE)
        try:
            result = await self._body(held.name, dict(held.arguments), turn)
        except ToolError as error:
            return ResolvedCall.failed(call_id, str(error), held.arguments)
        return ResolvedCall.succeeded(call_id, result, held.arguments)


if __name__ == "__main__":
    sys.exit(serve(AsyncHelpDesk))
