"""The operator's review door and the precondition gate, as pure functions
over the store's procedures, shared by the blocking and the asyncio desk.

A review names the procedure by subject, the tool it governs and the state
predicates that must all hold, joined by ``and``: ``approve the refund
procedure: governs issue_refund when region neq EU and verified eq true``. A
value is JSON when it parses, so ``true`` is the boolean, never the text.
Only the draft that review names is approved; any other draft stays a draft,
out of the model's input and inert at the gate.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from symfonic_evals_protocol.predicates import Lookup, applies, contract_lookup
from model import ToolRequest
from store import Procedure
from symfonic_evals_protocol import Stage

PRECONDITION_STAGE = "procedural_precondition"

_REVIEW = re.compile(r"^approve the (?P<subject>\w+) procedure: governs (?P<tool>\w+) when (?P<conditions>.+)$")
_PREDICATE = re.compile(r"^(?P<path>\S+) (?P<op>eq|neq|in|exists)\s*(?P<value>.*)$")

Identity = Callable[[Procedure], str]


@dataclass(frozen=True)
class Review:
    """What an operator approved: which procedure, the tool it governs, and
    the precondition under which that tool may run."""

    subject: str
    tool: str
    precondition: List[Dict[str, Any]]


def _value(text: str) -> Any:
    """A reviewer's value: JSON when it parses (lists for ``in``), else text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_review(prompt: str) -> Optional[Review]:
    """The review an operator's words state, if they state one."""
    match = _REVIEW.match(prompt)
    if match is None:
        return None
    precondition: List[Dict[str, Any]] = []
    for condition in match["conditions"].split(" and "):
        words = _PREDICATE.match(condition.strip())
        if words is None:
            return None
        predicate: Dict[str, Any] = {"path": words["path"], "op": words["op"]}
        if words["op"] != "exists":
            predicate["value"] = _value(words["value"].strip())
        precondition.append({"state": predicate})
    return Review(match["subject"], match["tool"], precondition)


def named_draft(procedures: List[Procedure], review: Review) -> Optional[Procedure]:
    """The oldest draft whose text is about the review's subject."""
    return next(
        (p for p in procedures if p.status == "draft" and review.subject in p.text),
        None,
    )


def review_evidence(procedures: List[Procedure], identity: Identity) -> Dict[str, Any]:
    """What the review door shows, published on every turn: the sorted
    (status, governed tool) rows, the approved procedures as data, and their
    identity digests."""
    approved = [p for p in procedures if p.status == "approved"]
    return {
        "procedural_review": [list(row) for row in sorted((p.status, p.action_tool) for p in procedures)],
        "procedural_review_procedures": [p.published() for p in approved],
        "procedural_review_ids": sorted(identity(p) for p in approved),
    }


def asks_a_manager_first(call: ToolRequest) -> bool:
    """Whether a call waits for a manager's approval before the gate judges
    it: a refund of a whole order (``"full": true``). The approval comes
    first and the gate judges the approved call, so a manager's yes never
    overrides an approved procedure."""
    return call.name == "issue_refund" and call.arguments.get("full") is True


def as_is(value: Any) -> Any:
    """A value as the gate reads it: unchanged."""
    return value


def judge(
    governing: List[Procedure],
    state: Any,
    identity: Identity,
    lookup: Lookup = contract_lookup,
    evaluate: bool = True,
    read: Callable[[Any], Any] = as_is,
) -> Tuple[Stage, bool, List[str]]:
    """The precondition stage's answer for one call: its trace record,
    whether the call is admitted, and the identities of what it read
    (``read`` is applied to the state and to each precondition before they
    are compared)."""
    ids = sorted(identity(p) for p in governing)
    if not governing:
        return Stage(PRECONDITION_STAGE, "abstained", {"checked": 0}), True, ids
    refused = sum(0 if (not evaluate or applies(read(state), read(p.precondition), lookup)[0]) else 1 for p in governing)
    outcome = "rejected" if refused else "passed"
    return Stage(PRECONDITION_STAGE, outcome, {"checked": len(governing), "refused": refused}), refused == 0, ids
