"""What every framework adapter's deployment does the same way, whatever
the framework: the durable token table and run lease, the spent-mark
seams a subclass may override, the person's answer read as approvals or
decisions (once its giver is found entitled, :mod:`._approvers`), the pause
minted with its question and approvers, the declared evidence, and
the procedural seams (operator turns, the review door, the adopter's
attributes and the gates' trace) without subclassing.

:class:`PausingDeployment` is a mixin: an adapter's deployment derives
from it and from :class:`~symfonic_evals_protocol.Deployment` (LangGraph)
or :class:`~symfonic_evals_protocol.AsyncDeployment` (the others, through
:class:`AsyncPausingDeployment`), and calls :meth:`PausingDeployment._pausing`
in its constructor.
"""

from __future__ import annotations

import secrets
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence

from .._async import AsyncDeployment, AsyncTurn
from .._staged import StagedFactory
from .._records import (
    Capabilities,
    Pause,
    PromptRequest,
    ReviewRequest,
    TurnFailure,
    TurnRecord,
    edit_decisions,
)
from ._approvers import DEFAULT_APPROVER_FIELD, ApproverCheck, ApproversOf
from ._gate import Trace
from ._lease import RunLease
from ._refusals import invalid_answer, replayed, require_approval
from ._store import ADAPTER_STORE_FILE, AdapterStore, PauseRow

__all__ = ["ENFORCEMENT_ATTRIBUTE", "AsyncPausingDeployment", "PausingDeployment"]

ENFORCEMENT_ATTRIBUTE = "procedural_enforcement_ids"
"""Where a deployment with a review door or an operator hook publishes the
identities of the procedures its gates read in a turn (the procedural
pack's default name)."""

APPROVE = {"type": "approve"}


class PausingDeployment(StagedFactory, ApproverCheck):
    """The bookkeeping a pausing adapter shares (a mixin; see the module).

    ``approvers`` names who may answer a pause (a list of names, or a
    function of the held calls returning them): each pause publishes them,
    and an answer whose ``approver_field`` (``"approver"``) names anyone
    else is refused ``approver.not_entitled`` before anything runs, its
    token left redeemable (:mod:`._approvers`; override :meth:`entitled`
    to decide otherwise).

    The seams a subclass may override: :meth:`read_answer` (the person's
    answer as approve/deny), :meth:`check_spent`, :meth:`spend` and
    :meth:`finish` (the token's spent mark), :meth:`approvers_of` and
    :meth:`entitled` (who may answer a pause)."""

    _store: AdapterStore
    _lease: RunLease

    def _pausing(
        self,
        durable_dir: str,
        *,
        store_file: str = ADAPTER_STORE_FILE,
        token_codec: Any = None,
        capabilities: Optional[Capabilities] = None,
        traits: Iterable[str] = (),
        extension_tools: Iterable[str] = (),
        operator: Optional[Callable[[PromptRequest], str]] = None,
        review: Optional[Callable[[ReviewRequest], None]] = None,
        attributes_of: Optional[Callable[[Any], Mapping[str, Any]]] = None,
        approvers: Optional[ApproversOf] = None,
        approver_field: str = DEFAULT_APPROVER_FIELD,
    ) -> None:
        """Opens the durable table and lease and keeps the declarations,
        the procedural hooks and the approvers, each in a private name."""
        self._store = AdapterStore(durable_dir, store_file, codec=token_codec)
        self._lease = RunLease(durable_dir)
        self._capabilities = capabilities
        self._traits = tuple(traits)
        self._extension_tools = tuple(extension_tools)
        self._operator = operator
        self._review = review
        self._attributes_of = attributes_of
        self._approver_seams(approvers, approver_field)

    def _close_pausing(self) -> None:
        self._store.close()
        self._lease.close()

    def _declared(self, capabilities: Capabilities) -> Capabilities:
        """``capabilities`` (what the framework shows) with each extension
        tool contributed by ``extensions``, the declared traits, and the
        ``review`` operation when the deployment has a review door."""
        for name in self._extension_tools:
            capabilities = capabilities.contributes("extensions", name)
        for trait in self._traits:
            capabilities = capabilities.with_trait(trait)
        if self._review is not None:
            capabilities = capabilities.operation("review")
        return capabilities

    # -- the spent mark --------------------------------------------------------

    def check_spent(self, pause: PauseRow) -> None:
        """Refuses a replay: the token's continuation finished, or a live
        run holds it (a dead run's claim is a client's retry)."""
        self._store.pauses.refuse_replay(pause, self._lease)

    def spend(self, pause: PauseRow) -> bool:
        """Claims the token for this run's continuation (atomic across
        processes); ``False`` when another redemption won."""
        return self._store.pauses.claim(pause.token, self._lease)

    def finish(self, pause: PauseRow) -> None:
        """Spends the token for good, once its continuation finished."""
        self._store.pauses.finish(pause.token)

    def _claim(self, pause: PauseRow) -> None:
        """Claims the token, or refuses the redemption as a replay."""
        if not self.spend(pause):
            raise replayed()

    # -- the person's answer ---------------------------------------------------

    def read_answer(self, answer: Any) -> bool:
        """Whether the person approved: exactly ``{"approved": true|false}``,
        else ``InvalidAnswer`` (the token stays redeemable)."""
        require_approval(answer)
        return bool(answer["approved"])

    def _decisions(self, pause: PauseRow, answer: Any, *, edits: bool) -> List[Dict[str, Any]]:
        """The person's decision on each held call, in the order the pause
        reported them: one approval (:meth:`read_answer`) answers every call
        alike; an edit answer (``{"decisions": [...]}``) answers each. An
        ``edit`` of another tool, or any edit when ``edits`` is off (the
        framework's approval carries no arguments), is ``InvalidAnswer``."""
        decisions = edit_decisions(answer)
        if decisions is None:
            approved = self.read_answer(answer)
            return [dict(APPROVE) if approved else {"type": "reject"} for _ in pause.calls]
        if len(decisions) != len(pause.calls):
            raise invalid_answer("the answer carries one decision per held call")
        for call, decision in zip(pause.calls, decisions):
            if decision["type"] != "edit":
                continue
            if not edits:
                raise invalid_answer("an approval here carries no arguments: approve or reject")
            action = decision["edited_action"]
            if action["name"] != call["name"] or not isinstance(action["args"], dict):
                raise invalid_answer("an edit changes a call's arguments, never its tool")
        return decisions

    # -- the pause ---------------------------------------------------------------

    @staticmethod
    def _question(parked: Sequence[Mapping[str, Any]]) -> Any:
        """The question a pause on ``parked`` asks: the call's tool and
        arguments, or each call's when several wait."""
        asked = [{"tool": call["name"], "arguments": call["arguments"]} for call in parked]
        return asked[0] if len(asked) == 1 else {"calls": asked}

    def _mint(
        self,
        conversation: str,
        parked: List[Dict[str, Any]],
        handle: Dict[str, Any],
        *,
        editable: bool = False,
    ) -> Pause:
        """Mints the pause on ``parked`` (each with ``id``, ``name``,
        ``arguments``) in the durable table: a random question id, the
        first call's tool as the interaction, ``handle`` kept beside it
        (with the approvers it publishes, :meth:`approvers_of`)."""
        question_id = f"q-{secrets.token_hex(8)}"
        interaction = str(parked[0]["name"])
        approvers = self._published(self.approvers_of(parked), handle)
        token = self._store.pauses.mint(conversation, question_id, interaction, parked, handle)
        may_edit = [str(call["id"]) for call in parked] if editable else []
        return Pause(
            interaction,
            True,
            token,
            question=self._question(parked),
            question_id=question_id,
            editable=may_edit,
            approvers=approvers,
        )

    @staticmethod
    def _resumed(record: TurnRecord, pause: PauseRow) -> TurnRecord:
        """``record`` with the resume attributes the approval pack reads,
        for a framework whose continuation is its own kept state."""
        record.attributes.update(
            resume_outcome="resumed",
            resume_name=pause.interaction,
            resume_checkpoint=True,
            resume_continued=True,
        )
        return record

    # -- the procedural seams ----------------------------------------------------

    def _operator_record(self, request: PromptRequest) -> TurnRecord:
        """An operator's turn, answered by the ``operator`` hook (the agent
        never sees it), or refused (``operator.unsupported``) without one."""
        if self._operator is None:
            raise TurnFailure("OperatorTurnUnsupported", "this app has no operator door", code="operator.unsupported")
        return self._annotated(request, TurnRecord(answer=self._operator(request)))

    def _review_record(self, request: ReviewRequest) -> Optional[TurnRecord]:
        """The structured review door carried out by the ``review`` hook,
        or ``None`` without one (the protocol's default refusal)."""
        if self._review is None:
            return None
        self._review(request)
        return self._annotated(request, TurnRecord(answer=f"{request.action} done"))

    def _annotated(self, request: Any, record: TurnRecord, trace: Optional[Trace] = None) -> TurnRecord:
        """``record`` with the adopter's attributes and, on a turn that ran
        the agent (``trace``) of a deployment with procedures, the
        identities its gates read."""
        if trace is not None and (self._operator is not None or self._review is not None):
            record.attributes[ENFORCEMENT_ATTRIBUTE] = sorted(trace.read)
        if self._attributes_of is not None:
            record.attributes.update(self._attributes_of(request))
        return record


class AsyncPausingDeployment(PausingDeployment, AsyncDeployment):
    """:class:`PausingDeployment` served asynchronously: the review door
    and the release of the durable table on close."""

    async def review_procedure(self, request: ReviewRequest, turn: AsyncTurn) -> TurnRecord:
        """The structured review door: the adopter's ``review`` hook carries
        the decision out; the record carries ``attributes_of``."""
        record = self._review_record(request)
        if record is None:
            return await super().review_procedure(request, turn)
        return record

    async def close(self) -> None:
        self._close_pausing()
