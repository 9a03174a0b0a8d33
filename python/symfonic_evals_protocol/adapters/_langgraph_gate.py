"""A governance gate inside a LangGraph graph, as the adapter reports it.

A gate node (a node between the model and the tool node that judges each
call against the adopter's procedures) tells the adapter what it decided
with two calls:

- :func:`refusal` builds the ``ToolMessage`` it answers a refused call
  with: an error message marked with the refusing stage, so the adapter
  reports the call ``refused`` by that stage (not ``failed``) and adds the
  stage's governance entry. The mark lives in the message, hence in the
  thread's checkpoint: a retry after a crash reports it the same.
- :func:`admitted` records the entry of a stage that let a call through
  (or abstained) in the running turn's governance trace.

Both take ``read``, the identities of the procedures the stage read; the
adapter publishes the turn's union of them (the procedural pack's
``procedural_enforcement_ids``) when the deployment has a review door or
an operator hook. Outside a turn the adapter runs, :func:`admitted` records
nothing and :func:`refusal` only builds the message. The trace is every
adapter's (:mod:`._gate`).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional

from langchain_core.messages import ToolMessage

from .._records import Stage
from ._gate import Trace, admitted, mark_refusal, traced

__all__ = ["GATE_REFUSED", "Trace", "admitted", "governance", "refusal", "refused_stage", "traced"]

GATE_REFUSED = "symfonic_evals_refused"
"""The ``additional_kwargs`` key of a refusal's ``ToolMessage``: the stage's
entry (``stage``, ``outcome``, ``counts``) and what it read (``read``)."""


def refusal(
    call: Mapping[str, Any],
    stage: Stage,
    read: Iterable[str] = (),
    content: str = "refused by governance",
) -> ToolMessage:
    """The ``ToolMessage`` a gate node answers the refused ``call`` (an
    entry of ``AIMessage.tool_calls``) with: the adapter reports the call
    ``refused`` by ``stage.stage`` and ``stage`` as its governance entry.
    ``content`` is what the model reads about it."""
    mark = mark_refusal(call.get("id"), stage, read)
    return ToolMessage(
        content=content,
        tool_call_id=call.get("id") or "",
        name=call.get("name"),
        status="error",
        additional_kwargs={GATE_REFUSED: mark},
    )


def refused_stage(message: ToolMessage) -> Optional[str]:
    """The stage that refused the call ``message`` answers, if a gate did."""
    mark = message.additional_kwargs.get(GATE_REFUSED)
    return mark.get("stage") if isinstance(mark, Mapping) else None


def governance(trace: Trace, refusals: Iterable[ToolMessage]) -> "list[Stage]":
    """The turn's entries: ``trace``'s, then those of the gate refusals in
    the turn's messages that the trace missed (a node that finished in an
    earlier attempt of the turn, which died)."""
    return trace.governance((m.tool_call_id, m.additional_kwargs.get(GATE_REFUSED) or {}) for m in refusals)
