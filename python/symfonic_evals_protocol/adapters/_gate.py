"""A governance gate inside an adopter's app, as every adapter reports it.

A gate (a node, a hook before a tool, the first lines of a tool body) that
judges each call against the adopter's procedures tells the adapter what
it decided with two calls:

- :func:`refusal` records that the gate refused the call (by its framework
  id): the adapter reports the call ``refused`` by the stage (not
  ``failed``, whatever the tool answered) and adds the stage's governance
  entry. It returns the text the model should read in the place of the
  tool's result.
- :func:`admitted` records the entry of a stage that let a call through
  (or abstained).

Both take ``read``, the identities of the procedures the stage read; the
adapter publishes the turn's union of them (the procedural pack's
``procedural_enforcement_ids``) when the deployment has a review door or
an operator hook. Outside a turn the adapter runs, both record nothing.
The LangGraph adapter's gate node answers with a ``ToolMessage`` instead
(:mod:`._langgraph_gate`), on the same trace.
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Set, Tuple, Union

from .._records import Stage

__all__ = ["Trace", "admitted", "current", "mark_refusal", "refusal", "traced"]


@dataclass
class Trace:
    """The governance entries, read identities and refused calls (framework
    call id to stage) a turn's gates recorded, each entry with the
    framework id of the call it judged (if known)."""

    entries: List[Tuple[Optional[str], Stage]] = field(default_factory=list)
    read: Set[str] = field(default_factory=set)
    refused: Dict[str, str] = field(default_factory=dict)

    def governance(self, marks: Iterable[Tuple[str, Mapping[str, Any]]] = ()) -> List[Stage]:
        """The turn's entries: those recorded while it ran, then those of
        the refusal ``marks`` (call id, mark) kept in the framework's state
        that were not (a gate that finished in an earlier attempt of the
        turn, which died), whose read identities join the trace's."""
        seen = {call_id for call_id, _ in self.entries if call_id}
        stages = [stage for _, stage in self.entries]
        for call_id, mark in marks:
            self.read.update(mark.get("read") or [])
            if call_id not in seen:
                stages.append(Stage(mark["stage"], mark.get("outcome", "rejected"), dict(mark.get("counts") or {})))
        return stages


_TRACE: "contextvars.ContextVar[Optional[Trace]]" = contextvars.ContextVar("symfonic_evals_trace", default=None)
_LATEST: List[Optional[Trace]] = [None]
"""The trace bound last: for a gate run on a thread that did not inherit
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


def current() -> Optional[Trace]:
    """The running turn's trace, if a turn runs."""
    return _TRACE.get() or _LATEST[0]


def admitted(stage: Stage, read: Iterable[str] = ()) -> None:
    """Records ``stage``'s entry for a call the gate let through (``passed``
    or ``abstained``) in the running turn's governance trace."""
    trace = current()
    if trace is not None:
        trace.entries.append((None, stage))
        trace.read.update(read)


def mark_refusal(call_id: Optional[str], stage: Stage, read: Iterable[str] = ()) -> Dict[str, Any]:
    """Records the refusal of the call ``call_id`` by ``stage`` in the
    running turn's trace, and returns its mark (the stage's entry and what
    it read) for a framework that keeps it in its own state."""
    identities = sorted(set(read))
    mark: Dict[str, Any] = {
        "stage": stage.stage,
        "outcome": stage.outcome,
        "counts": dict(stage.counts),
        "read": identities,
    }
    trace = current()
    if trace is not None:
        trace.entries.append((call_id, stage))
        trace.read.update(identities)
        if call_id:
            trace.refused[call_id] = stage.stage
    return mark


def refusal(
    call: Union[str, Mapping[str, Any]],
    stage: Stage,
    read: Iterable[str] = (),
    content: str = "refused by governance",
) -> str:
    """Refuses ``call`` (its framework id, or a mapping with its ``id``):
    the adapter reports it ``refused`` by ``stage.stage`` with ``stage`` as
    its governance entry. Returns ``content``, what the model should read
    about it (the gate hands it back in the place of the tool's result)."""
    call_id = call if isinstance(call, str) else call.get("id")
    mark_refusal(call_id, stage, read)
    return content
