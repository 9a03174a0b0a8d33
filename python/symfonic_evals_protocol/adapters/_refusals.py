"""The typed refusals every adapter answers a resume with, the kinds and
codes of the reference desk (``examples/helpdesk-py``), plus
``StalePauseToken`` / ``pause.stale`` for a token whose pause the framework
no longer holds, ``ApproverNotEntitled`` / ``approver.not_entitled`` for
an answer from someone a pause did not name, and the strict approve/deny
answer check. Messages name no turn content."""

from __future__ import annotations

from typing import Any

from .._records import TurnFailure

__all__ = [
    "foreign_token",
    "invalid_answer",
    "not_entitled",
    "question_mismatch",
    "replayed",
    "require_approval",
    "stale",
    "unknown_token",
]

# -- refusals ------------------------------------------------------------------


def unknown_token() -> TurnFailure:
    """No pause was issued with the token presented (a forgery, a typo)."""
    return TurnFailure("UnknownPauseToken", "no pause was issued with this token", code="pause.unknown")


def foreign_token() -> TurnFailure:
    """The token belongs to a pause of another conversation."""
    return TurnFailure("ForeignPauseToken", "this pause belongs to another conversation", code="pause.foreign")


def question_mismatch() -> TurnFailure:
    """The question id handed back is not the one the pause published."""
    return TurnFailure("QuestionMismatch", "the answer addresses another question", code="question.mismatch")


def replayed() -> TurnFailure:
    """The pause was already redeemed (or is being redeemed right now)."""
    return TurnFailure("PauseTokenReplayedError", "this pause was already redeemed", code="pause.replayed")


def stale() -> TurnFailure:
    """The framework no longer holds the pause the token was issued for: the
    conversation moved on (a new prompt) or the checkpoint is gone."""
    return TurnFailure("StalePauseToken", "the conversation no longer waits on this pause", code="pause.stale")


def invalid_answer(message: str = "the answer says only whether it is approved") -> TurnFailure:
    """The answer does not fit the question; the token stays redeemable."""
    return TurnFailure("InvalidAnswer", message, code="answer.invalid")


def not_entitled() -> TurnFailure:
    """The answer names a person the pause did not publish as entitled to
    answer it: treated like a denial that never arrived, so nothing runs
    and the token stays redeemable."""
    return TurnFailure("ApproverNotEntitled", "this person may not answer the pause", code="approver.not_entitled")


def require_approval(answer: Any) -> None:
    """The strict approval check: exactly ``{"approved": true|false}``, no
    look-alikes (``"true"``, ``1``, ``"yes"``). Raises :func:`invalid_answer`."""
    if not (isinstance(answer, dict) and set(answer) == {"approved"} and isinstance(answer["approved"], bool)):
        raise invalid_answer()
