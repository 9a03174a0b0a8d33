"""A help desk agent in Python that earns all three symfonic-evals packs.

The model is a deterministic router over the prompt (``model.py``), so the
evidence is reproducible; everything around it is what a real deployment
does. Every user turn is kept as an episode and a consolidation cycle
promotes repeated lessons into draft procedures; an operator's review
(an operator turn, never a user's) approves the draft it names, with the
tool it governs and its state predicates; the precondition gate evaluates
them before every call the procedure governs. ``ask_user`` parks its
call and pauses with a single-use token, a question id and a checkpoint
holding the rest of the plan; the gated action runs only after an approving
answer. ``weather_lookup`` is a tool the ``extensions`` capability
contributes, whose body witnesses every execution. Effects apply through the
harness's ledger and are recorded in the desk's SQLite store, which the
harness's effect oracle counts.

``--twin NAME`` starts a deliberately broken variant (see ``TWINS``), which
the packs must catch; each switch sits on the line where its flaw lives
(search for ``self.has(``). ``--variant NAME`` starts an honest variant (see
``honest.py``), a correct configuration every pack must pass.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import secrets
import sys
import uuid
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

from honest import TONE, VARIANTS, JsonLinesOutbox, Signer, ulid  # noqa: E402
from model import EXPRESS_REFUND, INTERACTION, Outcome, ScriptedModel, ToolRequest  # noqa: E402
from symfonic_evals_protocol.predicates import ABSENT, Lookup, contract_lookup  # noqa: E402
from review import PRECONDITION_STAGE, as_is, asks_a_manager_first, judge, named_draft, parse_review, review_evidence  # noqa: E402
from store import PauseRow, Procedure, RunLease, Store  # noqa: E402
from symfonic_evals_protocol import (  # noqa: E402
    CONCURRENT_PAUSES,
    EDITABLE_CALLS,
    Approvers,
    Capabilities,
    Deployment,
    Pause,
    PromptRequest,
    ResolvedCall,
    ResumeRequest,
    ResetRequest,
    ReviewRequest,
    Role,
    ToolCall,
    Turn,
    TurnFailure,
    TurnRecord,
    edit_decisions,
    mcp_url,
    now,
    serve,
)

SYSTEM = "system: help desk agent"
HOME_CITY = "Lisbon"
"""Where a weather lookup without a city forecasts."""
FORECASTS = {"Lisbon": "sunny, 21 C", "Oslo": "snow, -4 C"}
CONTRIBUTED = ("weather_lookup",)
# Who may answer a pause. An answer may name its giver in ``approver``; one
# that names nobody is the desk's own console speaking.
APPROVERS = ("duty-manager", "account-owner")
# The calls a person's amendment applies to.
ESCALATIONS = ("escalate_ticket",)
"""Tools the ``extensions`` capability contributes, called through its bridge."""

TWINS = {
    # approval
    "checkpoint-in-memory": "the pause's checkpoint is kept in process memory, not in the store",
    "tokens-in-memory": "spent pause tokens are remembered only in process memory",
    "spent-marks-written-at-close": "spent pause tokens are kept in memory and written to the store when the desk closes",
    "token-unchecked": "a resume redeems the conversation's latest pause whatever token it presents",
    "any-conversation-redeems": "a token is redeemed from any conversation, not only its own",
    "one-pending-pause": "the desk holds one pending pause: a new pause drops every other",
    "pending-as-success": "the parked ask_user call is reported as a call that succeeded",
    "question-id-ignored": "a resume never compares the question id it is handed with the one published",
    "gated-before-answer": "the gated action runs when the turn pauses, before anyone answered",
    "denial-approves": "the answer is never read: a denial escalates like an approval",
    "approval-reused-in-conversation": "a conversation whose request was approved once has its later requests carried out without asking",
    "approval-grants-every-pending": "an approval is applied as a batch: every other pending request is carried out with the same answer, its token left redeemable",
    "approval-grants-conversation-queue": "an approval is applied to the conversation's queue: every other request pending in the same conversation is carried out with the same answer, its token left redeemable",
    "pauses-answered-last-first": "a conversation's pending pauses are a stack: any genuine token continues the latest pause not yet continued, so two requests answered first-to-last run last-first",
    "checkpoint-per-conversation": "the paused turn is checkpointed under its conversation, one slot each: a second pause in the same conversation overwrites the first's, and either token continues the later request",
    "brief-shares-escalation-key": "the supervisor's brief before an escalation goes under the escalation's own key, so the escalation is refused as applied before",
    "any-approver-accepted": "the approver an answer names is never checked: anyone's approval escalates",
    "amendment-ignored": "the continuation hears the approval's decision only: an amended priority escalates as first asked",
    "edited-call-ignored": "the escalation is held for a person as the call itself, which they may edit; an edit is heard as a plain approval, and the call runs as the model asked",
    "tokens-numbered-in-order": "pause tokens are numbered one after another from a durable counter",
    "notice-reposted-on-resume": "the step that asks posts a change notice keyed by its run, and runs again from its top on resume, posting it twice",
    "unfit-answer-accepted": "any answer with an `approved` field is accepted, whatever its type",
    "answer-coerced": "a look-alike answer (`\"true\"`, `\"yes\"`, `1`) is read as the boolean it resembles, as a lax validator would",
    "replay-wrong-kind": "a replayed token is refused as an unknown token, with no code",
    "spent-tokens-loaded-at-start": "spent tokens are a blocklist loaded when the desk opens; the store records claims but is never asked",
    "reset-keeps-pause": "a reset clears the conversation's transcript only: its pending pause stays, and the token still redeems",
    # exactly-once
    "key-per-process": "escalations are keyed by ticket and the desk process's run id, so a restarted desk keys afresh",
    "resume-not-retriable": "the token is spent for good before the continuation runs",
    "key-from-clock-hour": "escalations are keyed by ticket and the current hour, so a retry an hour after the crash keys afresh",
    "row-only-when-applied": "the escalation row is written only when the ledger applies it, never on a duplicate",
    "notice-shares-escalation-key": "the escalation tells the requester under the escalation's own key, as the same tool's effect with no arguments, so the notice is refused as applied before",
    # procedural
    "review-in-memory": "approvals are kept in process memory, never written to the store",
    "gate-ignores-state": "the tool gate reads procedures but never evaluates their predicates",
    "draft-in-recall": "unreviewed drafts are shown to the model as if approved",
    "policy-cached-at-start": "the gate reads approved procedures loaded once at start-up",
    "approval-per-conversation": "the review door approves only drafts its own conversation learned",
    "reviews-user-turns": "a user's turn that reads like a review is reviewed as if an operator spoke",
    "operator-rights-by-conversation-name": "any turn in a conversation whose name says operator is heard as the operator's",
    "identity-labels": "procedures are named by constant labels, not by digests of their content",
    "gate-folds-case": "the gate matches state keys in any casing, not UPPER then lower",
    "gate-missing-is-null": "the gate reads a missing state key as null",
    "gate-urgent-fast-lane": "the gate waves an urgent request (priority urgent in the turn state) through without judging its procedures",
    "gate-compares-as-strings": "the gate compares values by their str() text, as a form layer hands them over: the text True passes a rule asking for the boolean",
    "approves-every-draft": "a review approves every draft on file, not the one it names",
    "promoted-counts-episodes": "the promoted count, published only when the cycle promoted something, is the number of episodes kept",
    "refusal-hits-store": "a call the gate refused still writes its effect to the store, outside the ledger",
    "ledger-without-effect": "a refund is applied on the ledger but never written to the store",
    "review-door-drops-conjunct": "the admin review door stores only the first predicate of the rule it is given",
    "gate-caches-rules-by-row": "the gate compiles each approved procedure's rule once, by row, so an amendment waits for a restart",
    "revoked-still-governs": "revocation marks the row, but the gate reads revoked procedures too",
    "gate-judges-first-procedure-only": "the gate judges only the first approved procedure governing a tool",
    "gate-judges-first-call-only": "the gate judges the first call of a model message; the others it carries run unjudged",
    "promotion-counts-turns-since-first-seen": "a lesson's support is counted over every turn since it was first seen, not over the turns that showed it",
    "relearn-redrafts-approved": "a lesson taught again sets its approved procedure back to a draft",
    "revoked-in-recall": "the model is shown every procedure that was ever approved, revoked ones included",
    "revocation-written-at-shutdown": "revocations are kept in memory, honoured at once, and written to the store when the desk closes",
    "relearn-restores-revoked": "approvals are remembered by their text: a lesson taught again after a revoke comes back approved",
    "policy-cache-per-instance": "each instance caches the approved procedures at start-up and after its own reviews",
    "rejected-demonstrations-learned": "a demonstration a reviewer marked rejected is remembered and consolidated like any other",
    "rejected-episodes-kept": "a demonstration marked rejected runs no consolidation of its own but is kept as an episode, so the next turn's cycle learns from it",
    "rejected-draft-approvable": "the admin review door approves a rejected draft found by its text as it approves a draft",
    "rejected-draft-redrafted": "a draft rejected at the review door is deleted, so the lesson on file drafts it again",
    "review-binds-last-tool": "an operator's review binds the approved procedure to the tool the desk ran last, as if the review were about the latest call",
    "alias-tool": "the desk offers an express refund reaching the refund's effect, and the gate judges calls by tool name, so no procedure governs it",
    "approved-call-skips-gate": "a whole order's refund a manager approved runs as soon as it is approved: the approval leads straight to the tool, around the procedure gate",
    "gate-overrides-denial": "after the manager answers, a whole order's refund the gate admits runs whatever the manager said: the gate's verdict alone routes the call",
    # extension
    "extension-unbound": "weather_lookup is declared but no implementation is bound",
    "call-ids-per-turn": "call ids restart at call-1 every turn",
    "bridge-drops-arguments": "the tool bridge hands the body no arguments",
    "upstream-error-as-success": "the forecast service is down and the bridge serves a stale forecast as a success",
    "result-hidden-from-model": "tool results are reported but never shown to the model",
    "previous-result-shown": "the model is shown the tool's previous result in this process in place of this one",
    "result-served-from-cache": "the bridge answers a call it saw before, by its arguments, from a cache without running the tool",
}

MCP_TWINS = {
    # Twins of a desk that binds the forecast service's MCP server (the
    # ``mcp`` package installed, the harness's fixture in the context):
    # without both they bind nothing, so only the tests that install the
    # package run them.
    "built-in-declared-as-extension": "weather_lookup runs on the desk's own forecasts while the desk declares the forecast server's tool",
    "server-bound-on-first-start-only": "the forecast server is bound on the desk's first start only; a restarted desk forecasts on its own",
}


def forecast_server() -> Optional[str]:
    """The forecast service's MCP server: the harness's fixture under the
    extension pack, when the ``mcp`` package is installed to reach it."""
    url = mcp_url()
    if url is None:
        return None
    try:
        import mcp  # noqa: F401
    except ImportError:
        return None
    return url


class ToolError(Exception):
    """A tool body (or the service behind it) failed; the text is the error."""


def _folded_lookup(mapping: Dict[str, Any], segment: str) -> Any:
    for key, value in mapping.items():
        if key.lower() == segment.lower():
            return value
    return ABSENT


def _null_lookup(mapping: Dict[str, Any], segment: str) -> Any:
    found = contract_lookup(mapping, segment)
    return None if found is ABSENT else found


def _as_text(value: Any) -> Any:
    """Every leaf as its ``str()``, as a form field carries it (``True`` is ``"True"``)."""
    if isinstance(value, dict):
        return {key: _as_text(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_as_text(item) for item in value]
    return str(value)


class HelpDesk(Deployment):
    """The deployment; ``twin`` names a broken variant or is ``None``."""

    def __init__(
        self,
        durable_dir: str,
        twin: Optional[str] = None,
        model: Optional[ScriptedModel] = None,
        variant: Optional[str] = None,
    ) -> None:
        super().__init__(durable_dir)
        self.store = Store(durable_dir)
        self.twin = twin
        self.variant = variant
        self.model = model or ScriptedModel(
            variant, holds_calls=self._holds(), express=self._offers_express(), briefs=self._briefs()
        )
        self._signer = Signer(durable_dir) if self.is_variant("jwt-pause-tokens") else None
        self._outbox = JsonLinesOutbox(durable_dir) if self.is_variant("outbox-as-json-lines") else None
        self._spent_in_memory: Set[str] = set()
        # This start of the desk, alive while it is: claims name it.
        self._run = RunLease(durable_dir)
        self._approved_in_memory: Dict[int, Procedure] = {}
        # Procedures revoked by name, waiting for the store until the desk
        # closes: the revocation-written-at-shutdown twin's write-behind cache.
        self._revoked_in_memory: Set[str] = set()
        self._checkpoints_in_memory: Dict[str, Any] = {}
        # The last-first twin's stack: which pause each presented token
        # continues, and the pauses continued already.
        self._answering: Dict[str, str] = {}
        self._continued: Set[str] = set()
        # Each tool's last result, and results by call: two twins' memory.
        self._previous_results: Dict[str, Any] = {}
        self._cached_results: Dict[str, Any] = {}
        self._policy_at_start = self._approved() if self.has("policy-cached-at-start") else []
        self._compiled: Dict[int, Procedure] = {}
        self._blocklist = self.store.finished_tokens() if self.has("spent-tokens-loaded-at-start") else set()
        self._instance_policy = self._approved()
        self._calls_this_turn = 0
        # The tool this process ran last: only the review-binds-last-tool
        # twin reads it.
        self._last_tool: Optional[str] = None
        # Requests (conversation, prompt) a person approved and the desk
        # carried out, in this process only: the asks-again-after-restart
        # variant answers them again as done, and forgets them on a restart.
        self._carried_out: Set[Tuple[str, str]] = set()
        self._bodies: Dict[str, Callable[[Dict[str, Any], Turn], Any]] = {
            "issue_refund": self._issue_refund,
            "escalate_ticket": self._escalate_ticket,
        }
        if self._offers_express():
            self._bodies[EXPRESS_REFUND] = self._express_refund
        if self._briefs():
            self._bodies["brief_supervisor"] = self._brief_supervisor
        # The forecast runs on the service's MCP server when there is one.
        self._server = forecast_server()
        self._declares_server = self._server is not None
        if self.has("built-in-declared-as-extension"):
            self._server = None
        if self.has("server-bound-on-first-start-only"):
            marker = os.path.join(durable_dir, "forecast-server-bound")
            if os.path.exists(marker):
                self._server = None
            open(marker, "w").close()
        if not self.has("extension-unbound"):
            remote = self._server is not None
            self._bodies["weather_lookup"] = self._weather_remote if remote else self._weather_lookup
        if self.is_variant("looks-up-before-acting"):
            self._bodies["lookup_ticket"] = self._lookup_ticket

    def has(self, twin: str) -> bool:
        """Whether this desk is the named broken twin."""
        return self.twin == twin

    def is_variant(self, variant: str) -> bool:
        """Whether this desk runs in the named honest configuration."""
        return self.variant == variant

    def _offers_express(self) -> bool:
        """Whether the desk offers the express refund beside the refund."""
        return self.is_variant("gated-alias-tool") or self.has("alias-tool")

    def _governed_as(self, tool: str) -> str:
        """The tool a call is judged as at the gate: the express refund
        reaches the refund's effect, so it is judged under the refund's
        procedures; the alias-tool twin judges it by its own name, which
        no procedure governs."""
        if tool == EXPRESS_REFUND and self.is_variant("gated-alias-tool"):
            return "issue_refund"
        return tool

    def _system(self) -> List[str]:
        """The system messages the model input opens with."""
        return [SYSTEM, TONE] if self.is_variant("extra-system-message") else [SYSTEM]

    def _holds(self) -> bool:
        """Whether the escalation is held for a person as the call itself
        (approval on the call), which they may approve, amend, edit or
        reject, rather than asked about through ``ask_user``."""
        return self.is_variant("approval-on-the-call") or self.has("edited-call-ignored")

    def capabilities(self) -> Capabilities:
        if self._holds():
            # A person may edit the escalation the desk holds for them.
            return self._capabilities().with_trait(EDITABLE_CALLS)
        return self._capabilities()

    def _capabilities(self) -> Capabilities:
        capabilities = (
            Capabilities()
            .capability("tools")
            .capability("human")
            .with_trait("procedural-precondition")
            .with_trait("procedural-review")
            .with_trait("idempotent-effects")
            .operation("resume")
            .operation("review")
            .operation("reset")
            .with_trait("replicas")
            .with_trait("context-clock")
            # Each pause has its own token and checkpoint, so a conversation
            # may hold several, each answered on its own.
            .with_trait(CONCURRENT_PAUSES)
            .contributes("extensions", CONTRIBUTED[0])
        )
        return capabilities.with_trait("mcp-fixture") if self._declares_server else capabilities

    def close(self) -> None:
        if self.has("spent-marks-written-at-close"):
            # A write-behind cache, flushed on the way out: an orderly
            # shutdown keeps the marks, a crash loses them.
            for token in self._spent_in_memory:
                self.store.finish(token)
        # Revocations the revocation-written-at-shutdown twin took in memory
        # are written the same way (no other desk takes any).
        for name in sorted(self._revoked_in_memory):
            self.store.revoke(name)
        self.store.close()
        self._run.close()

    def reset(self, request: ResetRequest, turn: Turn) -> TurnRecord:
        """A user starting the conversation over: the pauses it had pending
        are forgotten in the store, so their tokens are refused after it; a
        resume already under way keeps its claim and may finish. The twin
        clears the transcript only, which this desk keeps per turn anyway."""
        conversation = request.conversation
        if self.is_variant("reset-is-new-session"):
            # A new session: the old one's pauses stay, out of reach.
            self.store.next_number(f"session:{conversation}")
        elif not self.has("reset-keeps-pause"):
            self.store.forget_pending(conversation)
        return TurnRecord(answer="conversation reset")

    def _filed_under(self, conversation: str) -> str:
        """What pauses of ``conversation`` are filed under: the conversation
        itself, or in the ``reset-is-new-session`` variant its current
        session, so a token redeems only in the session it was issued in."""
        if not self.is_variant("reset-is-new-session"):
            return conversation
        return f"{conversation}#session-{self.store.counter(f'session:{conversation}')}"

    # -- what the review door and the gate read --------------------------------

    def _procedures(self) -> List[Procedure]:
        procedures = [self._approved_in_memory.get(p.id, p) for p in self.store.procedures()]
        return [
            dataclasses.replace(p, status="revoked") if p.status == "approved" and p.name in self._revoked_in_memory else p
            for p in procedures
        ]

    def _approved(self) -> List[Procedure]:
        return [p for p in self._procedures() if p.status == "approved"]

    def _policy(self) -> List[Procedure]:
        """The approved procedures the gate enforces, read at each call."""
        if self.has("policy-cached-at-start"):
            return self._policy_at_start
        if self.has("revoked-still-governs"):
            return [p for p in self._procedures() if p.status in ("approved", "revoked")]
        if self.has("policy-cache-per-instance"):
            return self._instance_policy
        if self.has("gate-caches-rules-by-row"):
            return [self._compiled.setdefault(p.id, p) for p in self._approved()]
        return self._approved()

    def _recall(self) -> List[str]:
        if self.has("draft-in-recall"):
            return [p.text for p in self._procedures()]
        if self.has("revoked-in-recall"):
            return [p.text for p in self._procedures() if p.status in ("approved", "revoked")]
        return [p.text for p in self._approved()]

    def _identity(self, procedure: Procedure) -> str:
        if self.has("identity-labels"):
            return f"procedure-{procedure.id}"
        return procedure.identity()

    def _lookup(self) -> Lookup:
        if self.has("gate-folds-case"):
            return _folded_lookup
        if self.has("gate-missing-is-null"):
            return _null_lookup
        return contract_lookup

    def _evidence(self) -> Dict[str, Any]:
        return review_evidence(self._procedures(), self._identity)

    def _call_id(self) -> str:
        if self.has("call-ids-per-turn"):
            self._calls_this_turn += 1
            return f"call-{self._calls_this_turn}"
        if self.is_variant("random-call-ids"):
            return f"call_{uuid.uuid4()}"
        return f"call-{self.store.next_call_number()}"

    # -- turns ---------------------------------------------------------------

    def run_turn(self, request: PromptRequest, turn: Turn) -> TurnRecord:
        self._calls_this_turn = 0
        if request.role == Role.OPERATOR:
            return self._operator_turn(request)
        if self.has("reviews-user-turns") and parse_review(request.prompt) is not None:
            return self._operator_turn(request)
        if self.has("operator-rights-by-conversation-name") and "operator" in request.conversation:
            # Rights by channel: whoever writes here is heard as the operator.
            return self._operator_turn(request)
        return self._user_turn(request, turn)

    def review_procedure(self, request: ReviewRequest, turn: Turn) -> TurnRecord:
        """The structured review door: an admin API the harness drives as
        the operator, by procedure name."""
        predicates = [{"state": p} for p in request.precondition or []]
        if self.has("review-door-drops-conjunct"):
            predicates = predicates[:1]
        if request.action in ("approve", "reject"):
            open_to = ("draft", "rejected") if request.action == "approve" and self.has("rejected-draft-approvable") else ("draft",)
            drafts = [p for p in self.store.procedures() if p.status in open_to and (request.draft or "") in p.text]
            if len(drafts) != 1:
                raise TurnFailure("NoSuchDraft", f"{len(drafts)} drafts match; exactly one is needed")
            if request.action == "reject":
                self.store.reject(drafts[0].id, forget=self.has("rejected-draft-redrafted"))
            else:
                self.store.approve(drafts[0].id, request.tool or "", predicates, request.procedure)
        elif request.action == "amend":
            if not self.store.amend(request.procedure, predicates):
                raise TurnFailure("NoSuchProcedure", "no approved procedure has that name")
        elif self.has("revocation-written-at-shutdown"):
            # Taken at once, written when the desk closes.
            if not any(p.name == request.procedure and p.name for p in self._approved()):
                raise TurnFailure("NoSuchProcedure", "no approved procedure has that name")
            self._revoked_in_memory.add(request.procedure)
        elif not self.store.revoke(request.procedure):
            raise TurnFailure("NoSuchProcedure", "no approved procedure has that name")
        self._instance_policy = self._approved()
        record = TurnRecord(answer=f"{request.action} done")
        record.attributes.update(self._evidence())
        return record

    def _operator_turn(self, request: PromptRequest) -> TurnRecord:
        """The operator door: a review, never seen by the model."""
        review = parse_review(request.prompt)
        record = TurnRecord(answer="not a review this desk understands")
        if review is not None:
            procedures = self._procedures()
            if self.has("approves-every-draft"):
                chosen = [p for p in procedures if p.status == "draft"]
            elif self.has("approval-per-conversation"):
                draft = named_draft([p for p in procedures if p.conversation == request.conversation], review)
                chosen = [] if draft is None else [draft]
            else:
                draft = named_draft(procedures, review)
                chosen = [] if draft is None else [draft]
            tool = review.tool
            if self.has("review-binds-last-tool") and self._last_tool is not None:
                # The review is heard as being about the latest call.
                tool = self._last_tool
            for draft in chosen:
                if self.has("review-in-memory"):
                    self._approved_in_memory[draft.id] = Procedure(
                        draft.id, draft.text, "approved", tool, review.precondition, draft.conversation
                    )
                else:
                    self.store.approve(draft.id, tool, review.precondition)
            record.answer = f"{len(chosen)} procedure(s) approved" if chosen else "nothing to approve"
        self._instance_policy = self._approved()
        record.attributes.update(self._evidence())
        return record

    def _user_turn(self, request: PromptRequest, turn: Turn) -> TurnRecord:
        recall = "".join(f"\n- {text}" for text in self._recall())
        transcript = [*self._system(), f"recall:{recall}", f"user: {request.prompt}"]
        if (request.conversation, request.prompt) in self._carried_out:
            # Done in this conversation already: said so, nobody asked,
            # nothing run again.
            record = TurnRecord(answer="already done in this conversation", model_input="\n".join(transcript))
            record.attributes["procedural_enforcement_ids"] = []
            record.attributes.update(self._evidence())
            return record
        plan = self.model.plan(request.prompt, "\n".join(transcript))
        record = TurnRecord()
        outcomes: List[Outcome] = []
        enforced: Set[str] = set()
        for index, call in enumerate(plan.calls):
            if call.name == INTERACTION and self.has("approval-reused-in-conversation"):
                if self.store.answered_in(request.conversation):
                    # Somebody said yes here before: taken for this request too.
                    record.tool_calls.append(ToolCall.succeeded(self._call_id(), call.name, call.arguments, {"approved": True}))
                    continue
            if call.name == INTERACTION or (self._holds() and call.name in ESCALATIONS) or asks_a_manager_first(call):
                outcomes.append(self._ask(call, plan.calls[index + 1 :], request, record, turn, transcript))
                break
            unjudged = plan.together and index > 0 and self.has("gate-judges-first-call-only")
            outcome = self._execute(call, request.state, record, turn, transcript, enforced, unjudged)
            outcomes.append(outcome)
            if outcome.status != "succeeded" and not plan.together:
                break
        record.answer = self.model.reply(plan, outcomes, "\n".join(transcript))
        record.model_input = "\n".join(transcript)
        # The consolidation cycle runs after every user turn; what it
        # promoted is its own count, not anything the turn claims.
        promoted: Optional[int] = 0
        if not request.is_rejected or self.has("rejected-demonstrations-learned"):
            # A turn a reviewer rejected is answered, never learned from.
            self.store.record_episode(request.conversation, plan.lesson)
            if self.has("relearn-redrafts-approved") and plan.lesson is not None:
                self.store.redraft(plan.lesson)
            if self.is_variant("running-totals"):
                promoted = self.store.consolidate_total(request.conversation, plan.lesson)
            else:
                promoted = self.store.consolidate(
                    request.conversation,
                    since_first_seen=self.has("promotion-counts-turns-since-first-seen"),
                )
            if self.has("relearn-restores-revoked") and plan.lesson is not None:
                self.store.restore_revoked(plan.lesson)
        elif self.has("rejected-episodes-kept"):
            # No cycle now; the next turn's cycle reads it.
            self.store.record_episode(request.conversation, plan.lesson)
        elif self.is_variant("rejected-as-guardrail") and plan.lesson is not None:
            self.store.record_guardrail(plan.lesson)
        if self.has("promoted-counts-episodes"):
            # Published only when the cycle promoted something.
            promoted = self.store.episode_count() if promoted else None
        if promoted is not None:
            record.attributes["procedural_promoted"] = promoted
        record.attributes["procedural_enforcement_ids"] = sorted(enforced)
        record.attributes.update(self._evidence())
        return record

    # -- calls ---------------------------------------------------------------

    def _execute(
        self,
        call: ToolRequest,
        state: Any,
        record: TurnRecord,
        turn: Turn,
        transcript: List[str],
        enforced: Set[str],
        unjudged: bool = False,
    ) -> Outcome:
        """One call through the gate (unless ``unjudged``: the twin's gate
        read only its message's first call), the bridge and the tool body."""
        call_id = self._call_id()
        admitted = unjudged or self._admits(call, state, record, enforced)
        if not admitted:
            record.tool_calls.append(ToolCall.refused(call_id, call.name, call.arguments, PRECONDITION_STAGE))
            transcript.append(f"tool {call.name} refused by {PRECONDITION_STAGE}")
            if self.has("refusal-hits-store") and call.name == "issue_refund":
                self.store.record_refund(call.arguments["order"])
            if self.is_variant("logs-refund-requests") and call.name == "issue_refund":
                # The request is kept on file, refused or not, under a key of
                # its own next to the refund's.
                order = call.arguments.get("order")
                self._notice(turn, "log_refund_request", f"refund:{order}:requested", {"requested": order})
            return Outcome(call.name, "refused")
        status, detail = self._bridge(call, turn)
        if status == "failed":
            record.tool_calls.append(ToolCall.failed(call_id, call.name, call.arguments, detail))
            transcript.append(f"tool {call.name} failed: {detail}")
            return Outcome(call.name, "failed")
        record.tool_calls.append(ToolCall.succeeded(call_id, call.name, call.arguments, detail))
        self._last_tool = call.name
        if not self.has("result-hidden-from-model"):
            shown = detail
            if self.has("previous-result-shown"):
                shown = self._previous_results.get(call.name, detail)
                self._previous_results[call.name] = detail
            # json.dumps's default escapes every character outside ASCII.
            ascii_only = self.is_variant("ascii-escaped-results")
            transcript.append(f"tool {call.name} -> {json.dumps(shown, ensure_ascii=ascii_only)}")
        return Outcome(call.name, "succeeded", detail)

    def _admits(self, call: ToolRequest, state: Any, record: TurnRecord, enforced: Set[str]) -> bool:
        """The precondition gate's verdict on ``call`` under ``state``: its
        stage traced in ``record``, the procedures it read in ``enforced``."""
        governed = self._governed_as(call.name)
        governing = [p for p in self._policy() if p.action_tool == governed]
        if self.has("gate-judges-first-procedure-only"):
            governing = governing[:1]
        # The fast lane: an urgent request is read but not judged.
        fast_lane = self.has("gate-urgent-fast-lane") and isinstance(state, dict) and state.get("priority") == "urgent"
        stage, admitted, ids = judge(
            governing,
            state,
            self._identity,
            self._lookup(),
            evaluate=not (self.has("gate-ignores-state") or fast_lane),
            # The form layer's text of each value, the rule's and the state's.
            read=_as_text if self.has("gate-compares-as-strings") else as_is,
        )
        record.governance.append(stage)
        enforced.update(ids)
        return admitted

    def _bridge(self, call: ToolRequest, turn: Turn) -> Tuple[str, Any]:
        """Hands the model's call to the bound body: ``(status, result or error)``."""
        body = self._bodies.get(call.name)
        if body is None:
            return "failed", "no implementation is bound"
        contributed = call.name in CONTRIBUTED
        arguments = {} if self.has("bridge-drops-arguments") and contributed else dict(call.arguments)
        asked = f"{call.name} {json.dumps(arguments, sort_keys=True)}"
        if self.has("result-served-from-cache") and asked in self._cached_results:
            return "succeeded", self._cached_results[asked]
        try:
            result = body(arguments, turn)
        except ToolError as error:
            if self.has("upstream-error-as-success") and contributed:
                city = arguments.get("city", HOME_CITY)
                return "succeeded", {"city": city, "forecast": FORECASTS.get(city, "unknown")}
            return "failed", str(error)
        if self.has("result-served-from-cache"):
            self._cached_results[asked] = result
        return "succeeded", result

    def _witnessed(self, name: str, arguments: Dict[str, Any], turn: Turn, run: Callable[[], Any]) -> Any:
        """Runs a body and tells the harness what it received and how it
        ended, from where it ran."""
        try:
            result = run()
        except ToolError as error:
            turn.witness(name, arguments, error=str(error))
            raise
        turn.witness(name, arguments, result=result)
        return result

    def _issue_refund(self, arguments: Dict[str, Any], turn: Turn) -> Any:
        def run() -> Any:
            order = arguments.get("order")
            if not isinstance(order, int):
                raise ToolError("a refund needs an order number")
            applied = self._ledger_apply(turn, "issue_refund", f"refund:{order}", {"order": order})
            if self._keeps_row(applied) and not self.has("ledger-without-effect"):
                if self._outbox is not None:
                    self._outbox.record(f"refund:{order}", {"refunded": order})
                else:
                    self.store.record_refund(order)
            return {"refunded": order}

        return self._witnessed("issue_refund", arguments, turn, run)

    def _express_refund(self, arguments: Dict[str, Any], turn: Turn) -> Any:
        """The express refund: the refund's effect, under the refund's key."""

        def run() -> Any:
            order = arguments.get("order")
            if not isinstance(order, int):
                raise ToolError("a refund needs an order number")
            applied = self._ledger_apply(turn, EXPRESS_REFUND, f"refund:{order}", {"order": order})
            if self._keeps_row(applied):
                self.store.record_refund(order)
            return {"refunded": order}

        return self._witnessed(EXPRESS_REFUND, arguments, turn, run)

    def _ledger_apply(self, turn: Turn, tool: str, key: str, arguments: Any) -> bool:
        """Applies an effect of ``tool`` under ``key`` in the harness's
        ledger, naming the tool so the gated action's effects can be told
        from the desk's other ones, and the arguments it is applied with, so
        a repeat of it under another key can be told from a new one."""
        applied = turn.ledger_apply(key, tool=tool, arguments=arguments)
        if self.is_variant("same-key-retries"):
            # The acknowledgement was lost in transit: the delivery layer
            # sends the effect again under its key, and the ledger refuses it.
            turn.ledger_apply(key, tool=tool, arguments=arguments)
        return applied

    def _notice(self, turn: Turn, tool: str, key: str, about: Any) -> None:
        """A notice of the desk's own about ``about``, applied as an effect
        of ``tool``."""
        if self._keeps_row(self._ledger_apply(turn, tool, key, {"notice": tool, "about": about})):
            if self._outbox is not None:
                self._outbox.record(key, {"notice": tool})
            else:
                self.store.record_notice(key)

    def _keeps_row(self, applied: bool) -> bool:
        """Whether the store row of an effect is written: when the ledger
        applied it, and on a duplicate too (a no-op when the row exists),
        since a run that died after the ledger applied it never wrote it."""
        return applied or not self.has("row-only-when-applied")

    def _escalate_ticket(self, arguments: Dict[str, Any], turn: Turn) -> Any:
        def run() -> Any:
            ticket = arguments.get("ticket")
            if not isinstance(ticket, int):
                raise ToolError("an escalation needs a ticket number")
            key = f"escalate:{ticket}"
            if self.has("key-per-process"):
                key = f"{key}@{self._run.id}"
            if self.has("key-from-clock-hour"):
                # One escalation per ticket per hour, on the trial's clock.
                key = f"{key}@{int(now() // 3600)}"
            if self._keeps_row(self._ledger_apply(turn, "escalate_ticket", key, {"ticket": ticket})):
                if self._outbox is not None:
                    self._outbox.record(f"escalate:{ticket}", {"escalated": ticket})
                else:
                    self.store.record_escalation(ticket)
            if self.has("notice-shares-escalation-key"):
                # The requester is told under the escalation's own key, as
                # this tool's effect with no arguments (the message is
                # fixed): the ledger refuses it as applied before, and the
                # requester never hears.
                if turn.ledger_apply(key, tool="escalate_ticket"):
                    self.store.record_notice(key)
            if self.is_variant("notice-on-governed-calls"):
                # The governed call ran: the channel hears that too.
                self._notice(turn, "post_notice", f"governed:ran:{ticket}", f"ran: ticket {ticket}")
            return {"escalated": ticket}

        return self._witnessed("escalate_ticket", arguments, turn, run)

    def _briefs(self) -> bool:
        """Whether the approved escalation briefs the supervisor first: two
        effects in one turn (the ``invoice-before-cancelling`` shape)."""
        return self.is_variant("invoice-before-cancelling") or self.has("brief-shares-escalation-key")

    def _brief_supervisor(self, arguments: Dict[str, Any], turn: Turn) -> Any:
        """Sends the supervisor the ticket's brief, an effect of its own
        under a key of its own. The twin files it under the escalation's
        key, so the escalation is refused as applied before."""

        def run() -> Any:
            ticket = arguments.get("ticket")
            if not isinstance(ticket, int):
                raise ToolError("a brief needs a ticket number")
            key = f"escalate:{ticket}" if self.has("brief-shares-escalation-key") else f"brief:{ticket}"
            self._notice(turn, "brief_supervisor", key, ticket)
            return {"briefed": ticket}

        return self._witnessed("brief_supervisor", arguments, turn, run)

    def _lookup_ticket(self, arguments: Dict[str, Any], turn: Turn) -> Any:
        """Reads a ticket; no side effect."""
        ticket = arguments.get("ticket")
        if not isinstance(ticket, int):
            raise ToolError("a lookup needs a ticket number")
        return {"ticket": ticket, "status": "open"}

    def _weather_lookup(self, arguments: Dict[str, Any], turn: Turn) -> Any:
        def run() -> Any:
            if arguments.get("units", "metric") not in ("metric", "imperial"):
                raise ToolError("units are metric or imperial")
            city = arguments.get("city", HOME_CITY)
            if self.has("upstream-error-as-success"):
                raise ToolError("forecast service unavailable (503)")
            if city not in FORECASTS:
                raise ToolError("no forecast for that city")
            forecast = FORECASTS[city]
            if self.is_variant("ascii-escaped-results"):
                # This service writes its unit with the degree sign.
                forecast = forecast.replace(" C", " \u00b0C")
            return {"city": city, "forecast": forecast}

        return self._witnessed("weather_lookup", arguments, turn, run)

    def _weather_remote(self, arguments: Dict[str, Any], turn: Turn) -> Any:
        """The forecast, asked of the service's MCP server with the official
        SDK's client (the server witnesses its own executions)."""
        import asyncio

        from mcp import Client

        async def call() -> Any:
            async with Client(self._server) as client:
                await client.list_tools()
                return await client.call_tool("weather_lookup", arguments)

        try:
            result = asyncio.run(call())
        except Exception as error:  # the service unreachable
            raise ToolError(f"forecast service unreachable: {type(error).__name__}") from None
        text = "".join(getattr(block, "text", "") or "" for block in result.content)
        if getattr(result, "is_error", None) or getattr(result, "isError", None):
            raise ToolError(text or "forecast service failed")
        structured = getattr(result, "structured_content", None)
        if structured is None:
            structured = getattr(result, "structuredContent", None)
        return structured if structured is not None else json.loads(text)

    # -- pausing for a person ----------------------------------------------------

    def _ask(
        self,
        call: ToolRequest,
        rest: List[ToolRequest],
        request: PromptRequest,
        record: TurnRecord,
        turn: Turn,
        transcript: List[str],
    ) -> Outcome:
        """Parks the interaction's call and pauses; the checkpoint holds the
        calls the plan makes after the answer."""
        call_id = self._call_id()
        question_id = f"q-{secrets.token_hex(8)}"
        if self._signer is not None:
            claims = {"sub": request.conversation, "qid": question_id, "jti": secrets.token_hex(16)}
            token = self._signer.issue(claims)
        elif self.has("tokens-numbered-in-order"):
            # Unique, durable and looked up: and the next is this one plus one.
            token = f"pt_{self.store.next_number('pause-tokens'):08}"
        elif self.is_variant("time-ordered-pause-tokens"):
            token = ulid()
        else:
            token = secrets.token_urlsafe(16)
        if self.has("pending-as-success"):
            record.tool_calls.append(ToolCall.succeeded(call_id, call.name, call.arguments, {"asked": True}))
        else:
            record.tool_calls.append(ToolCall.pending(call_id, call.name, call.arguments))
        transcript.append(f"tool {call.name} waits for a person")
        if self.has("gated-before-answer"):
            for early in rest:
                self._execute(early, request.state, record, turn, transcript, set())
            rest = []
        checkpoint: Dict[str, Any] = {"next": [later.to_json() for later in rest], "prompt": request.prompt}
        held = call.name != INTERACTION
        manager = asks_a_manager_first(call)
        if held:
            # The call itself waits: the person may approve, amend, edit or
            # reject it.
            checkpoint["held"] = call.to_json()
        if manager:
            # The gate judges the approved call under the state it was
            # asked in.
            checkpoint["state"] = request.state
        if self.has("one-pending-pause"):
            self.store.forget_pauses()
        conversation = request.conversation
        filed = self._filed_under(conversation)
        if self.has("checkpoint-in-memory"):
            self._checkpoints_in_memory[token] = checkpoint
            self.store.save_pause(token, filed, call.name, call_id, question_id, None)
        else:
            self.store.save_pause(token, filed, call.name, call_id, question_id, checkpoint)
        # Measured, not assumed: resumable when the pause kept a checkpoint.
        resumable = self._checkpoint(token) is not None
        if self.is_variant("notice-at-pause") or self.has("notice-reposted-on-resume"):
            # The change is announced before anyone decides on it; a retried
            # pause announces the same question once.
            self._pause_notice(turn, conversation, call.name, call.arguments)
        if self.is_variant("notice-on-governed-calls"):
            # The governed call is held for a person: the channel hears it,
            # under a key a retried pause repeats.
            asked = json.dumps(call.arguments, sort_keys=True)
            self._notice(turn, "post_notice", f"governed:held:{conversation}:{asked}", f"held: {asked}")
        question = {"tool": call.name, "arguments": call.arguments} if held else call.arguments
        # A whole order's refund is approved or not; only an escalation the
        # desk holds may be edited.
        editable = [call_id] if held and not manager else []
        record.pause = Pause(
            call.name,
            resumable,
            token,
            question,
            question_id,
            editable=editable,
            approvers=Approvers("approver", list(APPROVERS)),
        )
        return Outcome(call.name, "pending")

    def _pause_notice(self, turn: Turn, conversation: str, interaction: str, question: Any) -> None:
        """Posts the change notice for the question ``interaction`` waits
        on. The twin keys it by the step's run, as a node keyed by its
        execution would, so the run on resume posts it again."""
        key = f"notice:{conversation}:{json.dumps(question, sort_keys=True)}"
        if self.has("notice-reposted-on-resume"):
            key = f"notice:{conversation}:{uuid.uuid4().hex}"
        self._notice(turn, "post_notice", key, {"pending": interaction})

    def _checkpoint(self, token: str) -> Any:
        token = self._answering.get(token, token)
        if self.has("checkpoint-in-memory"):
            return self._checkpoints_in_memory.get(token)
        stored = self.store.pause(token)
        if stored is not None and self.has("checkpoint-per-conversation"):
            stored = self.store.latest_pause(stored.conversation)
        return None if stored is None else stored.checkpoint

    def _spent(self, pause: PauseRow) -> bool:
        """Whether a redemption of ``pause`` now is a replay: its
        continuation finished, or this run already claimed it. A claim left
        by a run that died is a client's retry, and is honoured."""
        if self.has("tokens-in-memory"):
            return pause.token in self._spent_in_memory
        if self.has("spent-marks-written-at-close"):
            return pause.finished or pause.token in self._spent_in_memory
        if self.has("spent-tokens-loaded-at-start"):
            return pause.token in self._blocklist
        if self.has("resume-not-retriable"):
            return pause.consumed
        return pause.finished or pause.claimed_by == self._run.id

    def _spend(self, token: str) -> bool:
        if self.has("tokens-in-memory") or self.has("spent-marks-written-at-close"):
            self._spent_in_memory.add(token)
            return True
        if self.has("spent-tokens-loaded-at-start"):
            self.store.record_claim(token, self._run)
            return True
        if self.has("resume-not-retriable"):
            return self.store.consume(token)
        return self.store.claim(token, self._run)

    def _finish(self, token: str) -> None:
        """Spends the token for good, once its continuation is done."""
        if not self.has("tokens-in-memory") and not self.has("spent-marks-written-at-close"):
            self.store.finish(token)
        self._blocklist.add(token)

    def _approval(self, answer: Any) -> bool:
        """Whether the answer approves; :class:`TurnFailure` when it is unfit
        or given by someone not entitled to answer (checked first)."""
        if isinstance(answer, dict) and "approver" in answer:
            approver = answer["approver"]
            if not self.has("any-approver-accepted") and approver not in APPROVERS:
                raise TurnFailure("ApproverNotEntitled", "this person may not answer the pause", code="approver.not_entitled")
            answer = {key: value for key, value in answer.items() if key != "approver"}
        if self.has("answer-coerced") and isinstance(answer, dict):
            look_alikes = {"true": True, "yes": True, "false": False, "no": False}
            value = answer.get("approved")
            if isinstance(value, str) and value in look_alikes:
                answer = {**answer, "approved": look_alikes[value]}
            elif type(value) is int and value in (0, 1):
                answer = {**answer, "approved": bool(value)}
        if self.has("unfit-answer-accepted"):
            fits = isinstance(answer, dict) and "approved" in answer
        else:
            # The person may amend the escalation's priority as they approve.
            fits = (
                isinstance(answer, dict)
                and set(answer) in ({"approved"}, {"approved", "priority"})
                and isinstance(answer["approved"], bool)
                and isinstance(answer.get("priority", ""), str)
            )
        if not fits:
            raise TurnFailure("InvalidAnswer", "the answer says only whether it is approved", code="answer.invalid")
        return True if self.has("denial-approves") else bool(answer["approved"])

    def resume(self, request: ResumeRequest, turn: Turn) -> TurnRecord:
        self._calls_this_turn = 0
        if self._signer is not None and self._signer.verify(request.token) is None:
            # A signed token is verified before anything is looked up by it.
            raise TurnFailure("UnknownPauseToken", "no pause was issued with this token", code="pause.unknown")
        if self.has("token-unchecked"):
            pause = self.store.latest_pause(request.conversation)
        else:
            pause = self.store.pause(request.token)
        if pause is None:
            raise TurnFailure("UnknownPauseToken", "no pause was issued with this token", code="pause.unknown")
        if pause.conversation != self._filed_under(request.conversation) and not self.has("any-conversation-redeems"):
            raise TurnFailure("ForeignPauseToken", "this pause belongs to another conversation", code="pause.foreign")
        if request.question_id != pause.question_id and not self.has("question-id-ignored"):
            raise TurnFailure("QuestionMismatch", "the answer addresses another question", code="question.mismatch")
        if self._spent(pause):
            self._replayed()
        if self.has("pauses-answered-last-first"):
            stacked = self.store.tokens_of(pause.conversation)
            top = next((token for token in stacked if token not in self._continued), pause.token)
            self._continued.add(top)
            self._answering[pause.token] = top
        # Validated before the token is spent: an unfit answer leaves the
        # pause redeemable by a fitting one.
        held = self._held_call(pause)
        decisions = edit_decisions(request.answer) if held is not None else None
        if decisions is not None:
            approved = self._decided(held, decisions)
        else:
            approved = self._approval(request.answer)
        if not self._spend(pause.token):
            self._replayed()
        try:
            return self._continue(request, turn, pause, approved)
        except Exception:
            # A continuation that fails with an error gives the token back,
            # so the client's retry carries the turn on.
            if not self.has("tokens-in-memory") and not self.has("resume-not-retriable") and not self.has("spent-marks-written-at-close"):
                self.store.release(pause.token, self._run)
            raise

    def _held_call(self, pause: PauseRow) -> Optional[ToolRequest]:
        """The call the pause holds itself, when it holds one."""
        checkpoint = self._checkpoint(pause.token)
        return ToolRequest.from_json(checkpoint.get("held")) if isinstance(checkpoint, dict) else None

    def _decided(self, held: ToolRequest, decisions: List[Dict[str, Any]]) -> bool:
        """Whether the edit answer's one decision lets the held call run;
        ``InvalidAnswer`` for anything but one decision on the held tool."""
        edit = decisions[0].get("edited_action") if len(decisions) == 1 else None
        fits = len(decisions) == 1 and (
            edit is None
            or (edit["name"] == held.name and isinstance(edit["args"], dict) and set(edit["args"]) == set(held.arguments))
        )
        if not fits:
            raise TurnFailure("InvalidAnswer", "the answer decides the one held call, on its own tool", code="answer.invalid")
        return decisions[0]["type"] != "reject"

    def _run_held(self, held: ToolRequest, answer: Any, turn: Turn, call_id: str) -> Tuple[ResolvedCall, Outcome]:
        """Runs the held call as the answer decides it: as asked, with the
        person's amendment, or as they edited it. The twin hears an edit as
        a plain approval."""
        arguments = {**held.arguments, **self._amendment(answer)}
        decisions = edit_decisions(answer)
        edited = decisions[0].get("edited_action") if decisions else None
        if edited is not None and not self.has("edited-call-ignored"):
            arguments = dict(edited["args"])
        status, detail = self._bridge(ToolRequest(held.name, arguments), turn)
        made = ResolvedCall.succeeded if status == "succeeded" else ResolvedCall.failed
        return made(call_id, detail, arguments), Outcome(held.name, status, detail if status == "succeeded" else None)

    def _judged_after_approval(self, held: ToolRequest, checkpoint: Any, record: TurnRecord, enforced: Set[str]) -> bool:
        """Whether the approved held call may run. A call a manager approves
        before the gate (see ``asks_a_manager_first``) is judged by the gate
        now, under the paused turn's state; an escalation the desk holds was
        the person's alone to decide. The twin runs an approved call
        straight away."""
        if not asks_a_manager_first(held) or self.has("approved-call-skips-gate"):
            return True
        state = checkpoint.get("state") if isinstance(checkpoint, dict) else None
        return self._admits(held, state, record, enforced)

    def _continue(self, request: ResumeRequest, turn: Turn, pause: PauseRow, approved: bool) -> TurnRecord:
        checkpoint = self._checkpoint(pause.token)
        later = checkpoint.get("next") if isinstance(checkpoint, dict) else None
        continued = isinstance(later, list)
        recall = "".join(f"\n- {text}" for text in self._recall())
        answered = f"resume: {pause.interaction} answered {json.dumps(request.answer)}"
        transcript = [*self._system(), f"recall:{recall}", answered]
        record = TurnRecord(resolved=[ResolvedCall.succeeded(pause.call_id, request.answer)])
        outcomes: List[Outcome] = []
        enforced: Set[str] = set()
        held = self._held_call(pause)
        if held is not None:
            # The held call is settled by the answer: run, refused by the
            # person who said no, or refused by the gate that judges a
            # manager's approved call now.
            overruled = self.has("gate-overrides-denial") and asks_a_manager_first(held)
            if not approved and not overruled:
                resolved = ResolvedCall.refused(pause.call_id, "person")
            elif self._judged_after_approval(held, checkpoint, record, enforced):
                resolved, outcome = self._run_held(held, request.answer, turn, pause.call_id)
                outcomes.append(outcome)
                if outcome.status == "succeeded":
                    transcript.append(f"tool {held.name} -> {json.dumps(outcome.result)}")
            else:
                resolved = ResolvedCall.refused(pause.call_id, PRECONDITION_STAGE)
                transcript.append(f"tool {held.name} refused by {PRECONDITION_STAGE}")
                outcomes.append(Outcome(held.name, "refused"))
            record.resolved = [resolved]
        if self.has("notice-reposted-on-resume"):
            # The step that asked runs again from its top before it reads
            # the answer, and posts its notice again.
            self._pause_notice(turn, request.conversation, pause.interaction, None)
        if continued and approved:
            amendment = self._amendment(request.answer)
            for value in later or []:
                call = ToolRequest.from_json(value)
                if call is None:
                    continue
                if call.name in ESCALATIONS and amendment:
                    call = ToolRequest(call.name, {**call.arguments, **amendment})
                outcome = self._execute(call, None, record, turn, transcript, set())
                outcomes.append(outcome)
                if outcome.status != "succeeded":
                    break
        if approved and (
            self.has("approval-grants-every-pending") or self.has("approval-grants-conversation-queue")
        ):
            # The queue is drained by whoever approves next (the desk's, or
            # only the conversation's); each drained request's own resume
            # later runs it again under the same keys.
            for token in self.store.pending_tokens():
                queued_pause = self.store.pause(token)
                if self.has("approval-grants-conversation-queue") and (
                    queued_pause is None or queued_pause.conversation != pause.conversation
                ):
                    continue
                queued = self._checkpoint(token)
                for value in (queued.get("next") if isinstance(queued, dict) else None) or []:
                    call = ToolRequest.from_json(value)
                    if call is not None:
                        self._execute(call, None, TurnRecord(), turn, [], set())
        prompt = checkpoint.get("prompt") if isinstance(checkpoint, dict) else None
        if self.is_variant("asks-again-after-restart") and isinstance(prompt, str):
            if approved and any(o.status == "succeeded" for o in outcomes):
                self._carried_out.add((request.conversation, prompt))
        if not approved and self.is_variant("notify-on-denial"):
            # The requester hears that a person said no.
            self._notice(turn, "notify_requester", f"denied:{request.conversation}", {"declined": pause.interaction})
        record.answer = self.model.resumed(approved, outcomes, "\n".join(transcript))
        record.model_input = "\n".join(transcript)
        record.attributes.update(
            resume_outcome="resumed",
            resume_name=pause.interaction,
            resume_checkpoint=checkpoint is not None,
            resume_continued=continued,
        )
        record.attributes["procedural_enforcement_ids"] = sorted(enforced)
        record.attributes.update(self._evidence())
        # Only now is the token spent for good: a crash before leaves it
        # claimed by a dead run, and the client's retry finishes the turn.
        self._finish(pause.token)
        return record

    def _amendment(self, answer: Any) -> Dict[str, Any]:
        """What the person changed as they approved: the escalation's
        priority. The ``amendment-ignored`` twin hears the decision only."""
        if self.has("amendment-ignored") or not isinstance(answer, dict) or "priority" not in answer:
            return {}
        return {"priority": answer["priority"]}

    def _replayed(self) -> None:
        if self.has("replay-wrong-kind"):
            raise TurnFailure("UnknownPauseToken", "no such pause")
        raise TurnFailure("PauseTokenReplayedError", "this pause was already redeemed", code="pause.replayed")


def main(argv: Optional[List[str]] = None) -> int:
    """Serves the protocol; ``--twin`` picks a broken variant, ``--list-twins``
    prints their names."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--twin", choices=sorted({**TWINS, **MCP_TWINS}))
    parser.add_argument("--variant", choices=sorted(VARIANTS))
    parser.add_argument("--list-variants", action="store_true")
    # ``--model openai``: plans and replies by a model through the official
    # OpenAI SDK (openai_desk.py), pointed at the harness's model endpoint.
    parser.add_argument("--model", choices=["scripted", "openai"], default="scripted")
    parser.add_argument("--list-twins", action="store_true")
    known, _ = parser.parse_known_args(argv)
    if known.list_twins:
        print("\n".join(sorted(TWINS)))
        return 0
    if known.list_variants:
        print("\n".join(sorted(VARIANTS)))
        return 0
    if known.model == "openai":
        from openai_desk import OpenAIModel

        return serve(lambda durable_dir: HelpDesk(durable_dir, known.twin, model=OpenAIModel()), argv=argv)
    return serve(lambda durable_dir: HelpDesk(durable_dir, known.twin, variant=known.variant), argv=argv)


if __name__ == "__main__":
    sys.exit(main())
