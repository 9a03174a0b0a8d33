"""Who may answer a pause, as every adapter publishes and enforces it.

A deployment names the people entitled to answer its pauses: a fixed
list, or a function of the calls a pause holds (the ticket's owner beside
the duty supervisor), passed as ``approvers=`` to any adapter's
deployment; a LangGraph ``interrupt()`` may carry them in its payload
instead (``{"approvers": [...]}``, see :mod:`.langgraph`). The pause
publishes them (:class:`~symfonic_evals_protocol.Approvers`, under the
answer field ``approver_field``, ``"approver"`` by default) and keeps them
with its token, so a restarted desk checks the same names.

An answer then says who gives it in that field, beside what the question
asks (``{"approved": true, "approver": "duty-supervisor"}``). The adapter
checks the name before anything else happens to the pause: a name not on
the list is refused (``ApproverNotEntitled`` / ``approver.not_entitled``),
so the gated action never runs, the framework never hears the answer and
the token stays redeemable, as if the answer had not arrived. An entitled
name is taken out of the answer before it is read (``validate_answer``,
:meth:`read_answer`, the framework's resume), so the answer the framework
sees is the one its question asked for; a tool that records who approved
reads the raw answer from ``effects.request.answer``. An answer naming
nobody is the desk's own console speaking, as in the reference desks, and
is read as it is.

:meth:`ApproverCheck.entitled` is the seam a subclass overrides to decide
otherwise (a directory look-up, a delegation).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

from .._records import Approvers
from ._refusals import not_entitled
from ._store import PauseRow

__all__ = ["APPROVERS_HANDLE", "ApproverCheck", "ApproversOf", "DEFAULT_APPROVER_FIELD"]

DEFAULT_APPROVER_FIELD = "approver"
"""The answer's field naming who gives it, unless the deployment names another."""

APPROVERS_HANDLE = "approvers"
"""Where a pause's handle keeps the names it published."""

ApproversOf = Union[Sequence[str], Callable[[Sequence[Mapping[str, Any]]], Sequence[str]]]
"""The ``approvers=`` a deployment takes: the names, or a function of the
calls a pause holds (each with ``name`` and ``arguments``) returning them."""


class ApproverCheck:
    """Publishes a pause's approvers and refuses an answer from anyone else
    (a mixin of :class:`~._pausing.PausingDeployment`; see the module)."""

    _approvers: Optional[ApproversOf] = None
    _approver_field: str = DEFAULT_APPROVER_FIELD

    def _approver_seams(self, approvers: Optional[ApproversOf], approver_field: str) -> None:
        """Keeps the deployment's ``approvers`` and the answer field naming them."""
        if not approver_field:
            raise ValueError("the approver field needs a name")
        if isinstance(approvers, str):
            raise ValueError("approvers are a list of names, not one string")
        self._approvers = approvers
        self._approver_field = approver_field

    def approvers_of(self, parked: Sequence[Mapping[str, Any]]) -> List[str]:
        """The people entitled to answer a pause holding ``parked``: the
        deployment's ``approvers`` (called with ``parked`` when it is a
        function); empty when it names none."""
        chosen = self._approvers
        if chosen is None:
            return []
        names = chosen(parked) if callable(chosen) else chosen
        return [str(name) for name in names or ()]

    def _published(self, names: Sequence[str], handle: Dict[str, Any]) -> Optional[Approvers]:
        """What the pause publishes for ``names`` (``None`` for none), kept
        in the pause's ``handle`` so the check outlives a restart."""
        if not names:
            return None
        handle[APPROVERS_HANDLE] = list(names)
        return Approvers(self._approver_field, list(names))

    def entitled(self, pause: PauseRow, approver: Any) -> bool:
        """Whether ``approver`` (the answer's approver field, any JSON) may
        answer ``pause``: one of the names the pause published."""
        names = pause.handle.get(APPROVERS_HANDLE) if isinstance(pause.handle, Mapping) else None
        return isinstance(approver, str) and approver in (names or ())

    def _entitled_answer(self, pause: PauseRow, answer: Any) -> Any:
        """``answer`` as the framework reads it: without the approver field
        once the name there is :meth:`entitled`. Raises :func:`not_entitled`
        (before anything is claimed or run) for a name that is not; an
        answer naming nobody, or to a pause that published nobody, is
        returned as it is."""
        published = isinstance(pause.handle, Mapping) and pause.handle.get(APPROVERS_HANDLE)
        field = self._approver_field
        if not published or not isinstance(answer, dict) or field not in answer:
            return answer
        if not self.entitled(pause, answer[field]):
            raise not_entitled()
        return {key: value for key, value in answer.items() if key != field}
