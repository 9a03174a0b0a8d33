"""The evidence a deployment reports and the requests it is sent, in the
harness's wire shapes (``protocol/v1.schema.json``).

Every constructor checks what the schema constrains, so a malformed record
fails in the deployment's own code, with a Python traceback, rather than as
a protocol violation on the harness's side.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Set

__all__ = [
    "Role",
    "Capabilities",
    "Pause",
    "ToolCall",
    "ResolvedCall",
    "Stage",
    "TurnRecord",
    "TurnFailure",
    "PromptRequest",
    "ResumeRequest",
    "ReviewRequest",
    "ProtocolError",
]

_PLAIN_NAME = re.compile(r"^[A-Za-z0-9_:.\-]{1,64}$")
_STAGE_OUTCOMES = ("passed", "rejected", "abstained", "broken", "downgraded")
_QUESTION_ID_MAX = 256


class ProtocolError(Exception):
    """The harness sent something this package cannot answer; it ends the
    session."""


class Role:
    """Who speaks in a prompt turn.

    An operator turn is an action on the deployment (a review, an approval),
    not chat: route it to the operator door on this role, never on the
    prompt's words, so a user cannot review by asking.
    """

    USER = "user"
    OPERATOR = "operator"


class TurnFailure(Exception):
    """Raise from a turn to report a typed error the pack may expect.

    ``kind`` is compared exactly with a step's expected error (for example
    ``PauseTokenReplayedError``); ``code`` is an optional machine code a
    framework attaches (for example ``gone``), which a step may match
    instead; ``message`` is for people and is digested in reports.
    """

    def __init__(self, kind: str, message: str = "", code: Optional[str] = None) -> None:
        if not kind:
            raise ValueError("an error kind must not be empty")
        if code is not None and not _PLAIN_NAME.match(code):
            raise ValueError(
                "an error code is 1 to 64 letters, digits or _ : . - "
                "(it is printed in reports as it is)"
            )
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.code = code

    def to_json(self) -> Dict[str, Any]:
        """The wire form of the error."""
        error: Dict[str, Any] = {"kind": self.kind, "message": self.message}
        if self.code is not None:
            error["code"] = self.code
        return error


class Capabilities:
    """What the deployment declares it can do (the handshake's evidence)."""

    def __init__(self) -> None:
        self.capabilities: Set[str] = set()
        self.traits: Set[str] = set()
        self.operations: Set[str] = set()
        self.contributed_tools: Dict[str, Set[str]] = {}

    def capability(self, name: str) -> "Capabilities":
        """Declare a capability such as ``tools``, ``human`` or ``extensions``."""
        self.capabilities.add(name)
        return self

    def with_trait(self, name: str) -> "Capabilities":
        """Declare a trait such as ``procedural-precondition``."""
        self.traits.add(name)
        return self

    def operation(self, name: str) -> "Capabilities":
        """Declare an operation beyond a prompt, such as ``resume``."""
        self.operations.add(name)
        return self

    def contributes(self, capability: str, tool: str) -> "Capabilities":
        """Declare that ``capability`` contributes ``tool`` (and the capability)."""
        self.capabilities.add(capability)
        self.contributed_tools.setdefault(capability, set()).add(tool)
        return self

    def to_json(self) -> Dict[str, Any]:
        """The wire form: sorted lists, like the Rust evidence model."""
        return {
            "capabilities": sorted(self.capabilities),
            "traits": sorted(self.traits),
            "operations": sorted(self.operations),
            "contributed_tools": {
                name: sorted(tools) for name, tools in sorted(self.contributed_tools.items())
            },
        }


@dataclass(frozen=True)
class Pause:
    """A turn that stopped for a person, redeemable with ``token``.

    ``question`` (any JSON) and ``question_id`` publish what was asked; the
    harness keeps the id with the token and hands it back on the resume as
    :attr:`ResumeRequest.question_id`, so the redemption can check that the
    answer addresses this question.

    ``editable`` names the calls the pause holds pending (ids reported in
    the record's tool calls) that the person answering may edit before they
    run, as a human-in-the-loop middleware's ``edit`` decision does. A
    deployment that names them declares the :data:`EDITABLE_CALLS` trait and
    takes the edit answer (see :func:`edit_decisions`).

    ``approvers`` publishes who may answer (see :class:`Approvers`): the
    approval pack then derives an answer from someone not entitled.
    """

    interaction: str
    resumable: bool
    token: str
    question: Any = None
    question_id: Optional[str] = None
    editable: List[str] = field(default_factory=list)
    approvers: Optional["Approvers"] = None

    def __post_init__(self) -> None:
        if self.question_id is not None and not 0 < len(self.question_id) <= _QUESTION_ID_MAX:
            raise ValueError(f"a question id is 1 to {_QUESTION_ID_MAX} characters")

    def to_json(self) -> Dict[str, Any]:
        """The wire form: a paused terminal event."""
        terminal: Dict[str, Any] = {
            "kind": "paused",
            "interaction": self.interaction,
            "resumable": self.resumable,
            "token": self.token,
        }
        if self.question is not None:
            terminal["question"] = self.question
        if self.question_id is not None:
            terminal["question_id"] = self.question_id
        if self.editable:
            terminal["editable"] = list(self.editable)
        if self.approvers is not None:
            terminal["approvers"] = self.approvers.to_json()
        return terminal


@dataclass(frozen=True)
class Approvers:
    """Who may answer a pause, as the answer schema names them: ``field``,
    the answer's top-level field saying who gives it (``"approver"``), and
    ``names``, everyone entitled to stand there (several people may be).
    An answer naming anyone else must carry nothing out."""

    field: str
    names: List[str]

    def __post_init__(self) -> None:
        if not self.field or not self.names:
            raise ValueError("approvers name the answer's field and at least one person")

    def to_json(self) -> Dict[str, Any]:
        """The wire form: ``{"field": ..., "names": [...]}``."""
        return {"field": self.field, "names": list(self.names)}


def _outcome(status: str, detail: Any) -> Dict[str, Any]:
    if status == "pending":
        return {"status": "pending"}
    key = {"succeeded": "result", "failed": "error", "refused": "stage"}.get(status)
    if key is None:
        raise ValueError(f"unknown tool outcome {status!r}")
    if key != "result" and not isinstance(detail, str):
        raise ValueError(f"a {status} outcome carries its {key} as text")
    return {"status": status, key: detail}


@dataclass(frozen=True)
class ToolCall:
    """One tool call and how it ended: ``succeeded``, ``failed``, ``refused``
    or ``pending`` (parked by the pause that ended the turn)."""

    id: str
    name: str
    arguments: Any
    status: str
    detail: Any = None

    def __post_init__(self) -> None:
        _outcome(self.status, self.detail)

    @classmethod
    def succeeded(cls, id: str, name: str, arguments: Any, result: Any) -> "ToolCall":
        """A call that ran and returned ``result``."""
        return cls(id, name, arguments, "succeeded", result)

    @classmethod
    def failed(cls, id: str, name: str, arguments: Any, error: str) -> "ToolCall":
        """A call that ran and raised ``error``."""
        return cls(id, name, arguments, "failed", error)

    @classmethod
    def refused(cls, id: str, name: str, arguments: Any, stage: str) -> "ToolCall":
        """A call that governance ``stage`` refused before it ran."""
        return cls(id, name, arguments, "refused", stage)

    @classmethod
    def pending(cls, id: str, name: str, arguments: Any) -> "ToolCall":
        """A call the turn's pause parked: it has no outcome until a resume
        settles it (see :class:`ResolvedCall`)."""
        return cls(id, name, arguments, "pending")

    @property
    def is_pending(self) -> bool:
        """Whether the call waits for a resume."""
        return self.status == "pending"

    def to_json(self) -> Dict[str, Any]:
        """The wire form of the call."""
        return {
            "id": self.id,
            "name": self.name,
            "arguments": self.arguments,
            "outcome": _outcome(self.status, self.detail),
        }


@dataclass(frozen=True)
class ResolvedCall:
    """A call an earlier pause left pending, as the resume that settled it
    reports it: ``id`` is the pending call's id. ``arguments``, when the
    resume ran the held call, are the arguments it ran with: a person's edit
    or amendment shows there, where the pending call still carries what the
    model asked for (``None``: not run, or not said)."""

    id: str
    status: str
    detail: Any = None
    arguments: Any = None

    def __post_init__(self) -> None:
        if self.status == "pending":
            raise ValueError("a resolved call has an outcome; pending is not one")
        _outcome(self.status, self.detail)

    @classmethod
    def succeeded(cls, id: str, result: Any, arguments: Any = None) -> "ResolvedCall":
        """The parked call returned ``result`` (for an interaction: the
        answer); a held action the resume ran says the ``arguments`` it ran
        with."""
        return cls(id, "succeeded", result, arguments)

    @classmethod
    def failed(cls, id: str, error: str, arguments: Any = None) -> "ResolvedCall":
        """The parked call ended in ``error`` (having run with ``arguments``,
        when it ran)."""
        return cls(id, "failed", error, arguments)

    @classmethod
    def refused(cls, id: str, stage: str) -> "ResolvedCall":
        """Governance ``stage`` refused the parked call when it was settled."""
        return cls(id, "refused", stage)

    def to_json(self) -> Dict[str, Any]:
        """The wire form of the resolution."""
        resolved: Dict[str, Any] = {"id": self.id, "outcome": _outcome(self.status, self.detail)}
        if self.arguments is not None:
            resolved["arguments"] = self.arguments
        return resolved


CONCURRENT_PAUSES = "concurrent-pauses"
"""The trait a deployment declares when one conversation may hold more than
one pending pause at once, each with its own token and answered on its own:
the approval pack's ``approval/one-of-two`` then also pauses two requests in
one conversation."""

EDITABLE_CALLS = "editable-calls"
"""The trait a deployment declares when a person answering a pause may edit
the call it holds: its pauses name the editable calls (``Pause.editable``)
and its resume takes the edit answer (:func:`edit_decisions`)."""


def edit_decisions(answer: Any) -> Optional[List[Dict[str, Any]]]:
    """The decisions an edit answer carries, one per held call in the order
    the pause reported them, or ``None`` when ``answer`` is not one.

    The edit answer is LangChain's human-in-the-loop response:
    ``{"decisions": [{"type": "approve"} | {"type": "edit", "edited_action":
    {"name": tool, "args": {...}}} | {"type": "reject", "message": ...}]}``.
    A rejection is a denial: report the call refused, not failed."""
    if not isinstance(answer, dict) or set(answer) != {"decisions"}:
        return None
    decisions = answer["decisions"]
    if not isinstance(decisions, list):
        return None
    for decision in decisions:
        kind = decision.get("type") if isinstance(decision, dict) else None
        if kind == "edit":
            action = decision.get("edited_action")
            if not (isinstance(action, dict) and isinstance(action.get("name"), str) and "args" in action):
                return None
        elif kind == "reject":
            if not isinstance(decision.get("message", ""), str):
                return None
        elif kind != "approve":
            return None
    return decisions


@dataclass
class Stage:
    """One governance stage's answer: ``passed``, ``rejected``, ``abstained``,
    ``broken`` or ``downgraded``, with named counts such as ``checked``."""

    stage: str
    outcome: str
    counts: Dict[str, int] = field(default_factory=dict)

    def to_json(self) -> Dict[str, Any]:
        """The wire form of the stage answer."""
        if self.outcome not in _STAGE_OUTCOMES:
            raise ValueError(f"a stage outcome is one of {', '.join(_STAGE_OUTCOMES)}")
        for name, count in self.counts.items():
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise ValueError(f"stage count {name!r} must be a non-negative integer")
        return {"stage": self.stage, "outcome": self.outcome, "counts": dict(self.counts)}


@dataclass
class TurnRecord:
    """The evidence one turn left behind, in the harness's evidence shape.

    ``attributes`` hold values the deployment read back out of its own store;
    pause facts come from ``pause``, never from an attribute. ``resolved``
    lists the calls an earlier pause parked that this turn (a resume) settled.
    """

    answer: str = ""
    model_input: str = ""
    pause: Optional[Pause] = None
    tool_calls: List[ToolCall] = field(default_factory=list)
    resolved: List[ResolvedCall] = field(default_factory=list)
    governance: List[Stage] = field(default_factory=list)
    attributes: Dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> Dict[str, Any]:
        """The wire form of the record."""
        if self.pause is None and any(call.is_pending for call in self.tool_calls):
            raise ValueError("only a paused turn may report a pending call")
        record: Dict[str, Any] = {
            "answer": self.answer,
            "terminal": {"kind": "completed"} if self.pause is None else self.pause.to_json(),
            "tool_calls": [call.to_json() for call in self.tool_calls],
            "model_input": self.model_input,
            "governance": [stage.to_json() for stage in self.governance],
            "attributes": dict(self.attributes),
        }
        if self.resolved:
            record["resolved"] = [call.to_json() for call in self.resolved]
        return record


class Feedback:
    """A reviewer's verdict a prompt turn may carry (``PromptRequest.feedback``)."""

    REJECTED = "rejected"
    """The demonstration was marked wrong: answer it, learn nothing from it."""


@dataclass(frozen=True)
class PromptRequest:
    """A prompt turn: conversation, prompt text, explicit state if any, who
    speaks (:attr:`Role.USER` unless the harness says otherwise), and a
    reviewer's verdict on it when it carries one (``feedback``,
    :attr:`Feedback.REJECTED` or ``None``)."""

    conversation: str
    prompt: str
    state: Optional[Dict[str, Any]] = None
    role: str = Role.USER
    feedback: Optional[str] = None

    @property
    def is_operator(self) -> bool:
        """Whether an operator speaks: the turn belongs at the operator door."""
        return self.role == Role.OPERATOR

    @property
    def is_rejected(self) -> bool:
        """Whether a reviewer rejected this demonstration: nothing may be
        learned from it (no draft promoted or reinforced)."""
        return self.feedback == Feedback.REJECTED


@dataclass(frozen=True)
class ResumeRequest:
    """A redemption of a conversation's latest pause with a person's answer.

    ``question_id`` is the id the pause published, handed back by the
    harness (``None`` when the pause published none).
    """

    conversation: str
    token: str
    answer: Any
    question_id: Optional[str] = None


@dataclass(frozen=True)
class ResetRequest:
    """A reset (or cancel) of one conversation (the ``reset`` operation):
    the user starts over, so whatever the conversation had pending, its
    pauses included, must not outlive it; a token issued before the reset
    is refused after it."""

    conversation: str


@dataclass(frozen=True)
class ReviewRequest:
    """An operator's decision through the structured review door (the
    ``review`` operation): the harness acts as the operator.

    ``action`` is ``"approve"`` (the one draft whose text contains ``draft``,
    named ``procedure``, governing ``tool`` when every predicate of
    ``precondition`` holds), ``"amend"`` (replace the predicates of the
    approved procedure ``procedure``), ``"revoke"`` (withdraw it) or
    ``"reject"`` (reject the one draft whose text contains ``draft``: it
    never governs, cannot be approved, and does not come back when the
    lesson is taught again; ``procedure`` is then ``""``).
    ``precondition`` is a list of bare state predicates
    (``{"path", "op", "value"}``); the published procedure's state
    predicates must be exactly these.
    """

    conversation: str
    action: str
    procedure: str
    draft: Optional[str] = None
    tool: Optional[str] = None
    precondition: Optional[List[Dict[str, Any]]] = None
