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
nothing and :func:`refusal` only builds the message.
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Set

from langchain_core.messages import ToolMessage

from .._records import Stage

__all__ = ["GATE_REFUSED", "Trace", "admitted", "refusal", "refused_stage", "traced"]

GATE_REFUSED = "symfonic_evals_refused"
"""The ``additional_kwargs`` key of a refusal's ``ToolMessage``: the stage's
entry (``stage``, ``outcome``, ``counts``) and what it read (``read``)."""


@dataclass
class Trace:
    """The governance entries and read identities a turn's gates recorded,
    each entry with the framework id of the call it judged (if known)."""

    entries: List["tuple[Optional[str], Stage]"] = field(default_factory=list)
    read: Set[str] = field(default_factory=set)

    def governance(self, refusals: Iterable[ToolMessage]) -> List[Stage]:
        """The turn's entries: those recorded while it ran, then those of
        the refusals in its messages that were not (a node that finished
        in an earlier attempt of the turn, which died), whose read
        identities join the trace's."""
        seen = {call_id for call_id, _ in self.entries if call_id}
        stages = [stage for _, stage in self.entries]
        for message in refusals:
            mark = message.additional_kwargs.get(GATE_REFUSED) or {}
            self.read.update(mark.get("read") or [])
            if message.tool_call_id not in seen:
                stages.append(Stage(mark["stage"], mark.get("outcome", "rejected"), dict(mark.get("counts") or {})))
        return stages


_TRACE: "contextvars.ContextVar[Optional[Trace]]" = contextvars.ContextVar("symfonic_evals_trace", default=None)
_LATEST: List[Optional[Trace]] = [None]
"""The trace bound last: for a node run on a thread that did not inherit
the adapter's context (the harness runs one turn at a time)."""


@contextlib.contextmanager
def traced(trace: Trace) -> Iterator[Trace]:
    """Collects the gates' entries into ``trace`` while the block runs."""
    token = _TRACE.set(trace)
    previous, _LATEST[0] = _LATEST[0], trace
    try:
        yield trace
    finally:
        _TRACE.reset(token)
        _LATEST[0] = previous


def _current() -> Optional[Trace]:
    return _TRACE.get() or _LATEST[0]


def admitted(stage: Stage, read: Iterable[str] = ()) -> None:
    """Records ``stage``'s entry for a call the gate let through (``passed``
    or ``abstained``) in the running turn's governance trace."""
    trace = _current()
    if trace is not None:
        trace.entries.append((None, stage))
        trace.read.update(read)


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
    read = sorted(set(read))
    mark: Dict[str, Any] = {"stage": stage.stage, "outcome": stage.outcome, "counts": dict(stage.counts), "read": read}
    trace = _current()
    if trace is not None:
        trace.entries.append((call.get("id"), stage))
        trace.read.update(read)
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
