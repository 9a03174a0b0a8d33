"""How the LangGraph adapter holds and passes a pause on the thread's
checkpoints: whether the thread still waits on it (its interrupts, or the
static breakpoint it stopped at), the ``Command(resume=...)`` map of an
answer, a rejection at a breakpoint, a reviewer's edits as the
human-in-the-loop middleware recorded them, the checkpoint a pause is
bound to, and the approvers an interrupt's payload names. A mixin of :class:`~.langgraph.LangGraphDeployment`, which keeps
the graph (``_graph``), the token table (``_store``) and the run lease.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

from langchain_core.messages import ToolMessage
from langgraph.types import StateSnapshot

from ._common import PauseRow, json_safe, stale
from ._langgraph_review import HITL_EDITS, rejects, resume_map
from ._langgraph_thread import BREAKPOINT_REJECTED
from ._langgraph_thread import checkpoint_id as _checkpoint_id

__all__ = ["APPROVERS_KEY", "GraphPauses", "payload_approvers"]

APPROVERS_KEY = "approvers"
"""The key of an ``interrupt()`` payload naming who may answer it."""


def payload_approvers(interrupts: Sequence[Any]) -> Optional[List[str]]:
    """The people the interrupts' payloads name as entitled to answer
    (``interrupt({"question": ..., "approvers": ["duty-supervisor", owner]})``),
    or ``None`` when no payload names any. One answer resumes every
    interrupt of a pause, so with several that name approvers only those
    every one of them names may answer."""
    named: Optional[List[str]] = None
    for interrupt in interrupts:
        value = getattr(interrupt, "value", None)
        names = value.get(APPROVERS_KEY) if isinstance(value, Mapping) else None
        if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
            continue
        named = list(names) if named is None else [n for n in named if n in names]
    return named


class GraphPauses:
    """The pause bookkeeping on the graph's checkpoints (a mixin)."""

    _graph: Any

    def thread_config(self, conversation: str, **extra: Any) -> Dict[str, Any]:
        raise NotImplementedError  # the deployment's

    def _invoke(self, graph_input: Any, config: Dict[str, Any]) -> None:
        raise NotImplementedError  # the deployment's

    def admit(self, pause: PauseRow, snapshot: StateSnapshot) -> None:
        """Refuses a redemption that is a replay or stale, then claims the
        pause for this run (raising :func:`replayed` if another got it).

        A pause is stale when the thread no longer waits on it (on its
        interrupts, or at its breakpoint) and no earlier redemption of it
        died mid-continuation (then the thread went past the pause, and the
        retry carries on from the checkpoint). LangGraph itself accepts a
        second ``Command(resume=...)`` for an answered interrupt without
        complaint: this is the check."""
        self.check_spent(pause)  # type: ignore[attr-defined]
        if not self._waits_on(pause, snapshot) and pause.claimed_by is None:
            raise stale()
        self._claim(pause)  # type: ignore[attr-defined]

    def _waits_on(self, pause: PauseRow, snapshot: StateSnapshot) -> bool:
        """Whether the thread still waits on ``pause``."""
        if pause.handle.get("breakpoint"):
            return _checkpoint_id(snapshot) == pause.handle.get("checkpoint_id") and not snapshot.interrupts
        return pause.handle.get("interrupt_id") in {interrupt.id for interrupt in snapshot.interrupts}

    def _at_breakpoint(self, snapshot: StateSnapshot) -> bool:
        """Whether a finished run stopped at a static breakpoint
        (``interrupt_before`` / ``interrupt_after``): nodes are left to run,
        no interrupt waits and none of the next tasks failed."""
        if not snapshot.next or snapshot.interrupts or any(t.error for t in snapshot.tasks):
            return False
        before = getattr(self._graph, "interrupt_before_nodes", None) or ()
        after = getattr(self._graph, "interrupt_after_nodes", None) or ()
        return before == "*" or after == "*" or bool(set(snapshot.next) & set(before)) or bool(after)


    def resume_answers(self, pause: PauseRow, answer: Any) -> Dict[str, Any]:
        """The ``Command(resume=...)`` map: every interrupt the pause waits
        on, by id, with its share of ``answer``. An edit answer (one
        decision per held call) gives a human-in-the-loop middleware's
        batched request the decisions of the calls it reviews, in its
        order, a per-call request its call's decision, and as many plain
        interrupts as held calls each the decision at its place; an
        approval reaches the middleware as approve or reject decisions;
        anything else answers each interrupt as it is."""
        return resume_map(pause.handle.get("interrupts") or [], len(pause.calls), answer)

    def _pass_breakpoint(self, pause: PauseRow, snapshot: StateSnapshot, answer: Any, run: Dict[str, Any]) -> None:
        """Answers a static breakpoint: an approval (or an answer that is
        neither an approval nor decisions) runs on from it; a rejection
        answers every held call with a rejected ``ToolMessage`` in the
        place of the node that would have run them, and runs on from
        there, so the model hears of the rejection and nothing runs."""
        if not rejects(answer):
            self._invoke(None, run)
            return
        if not pause.calls or not snapshot.next:
            return
        answers = [
            ToolMessage(
                content="a person rejected this call at a breakpoint",
                tool_call_id=call["framework_id"],
                name=call["name"],
                status="error",
                additional_kwargs={BREAKPOINT_REJECTED: True},
            )
            for call in pause.calls
        ]
        config = self.thread_config(pause.conversation)
        self._graph.update_state(config, {"messages": answers}, as_node=snapshot.next[0])
        self._invoke(None, run)

    def _edited(self, conversation: str, since: Optional[str]) -> Dict[str, Any]:
        """The arguments a reviewer's edit gave each call, by the
        framework's call id, as the middleware recorded them in the
        checkpoints written since the checkpoint ``since``."""
        edited: Dict[str, Any] = {}
        for snapshot in self._graph.get_state_history(self.thread_config(conversation)):
            if _checkpoint_id(snapshot) == since:
                break
            values = snapshot.values if isinstance(snapshot.values, Mapping) else {}
            for call_id, action in (values.get(HITL_EDITS) or {}).items():
                if isinstance(action, Mapping):
                    edited.setdefault(call_id, json_safe(action.get("args")))
        return edited

    def _has_checkpoint(self, conversation: str, checkpoint_id: Optional[str]) -> bool:
        """Whether the checkpointer holds the thread's checkpoint ``checkpoint_id``.

        The thread is the one :meth:`thread_config` names, as every other
        look-up of the adapter's: a desk that maps conversations to thread
        ids of its own (a tenant prefix) must find its checkpoints here too,
        or every pause would be reported unresumable."""
        if not checkpoint_id or self._graph.checkpointer is None:
            return False
        configurable = dict(self.thread_config(conversation).get("configurable", {}))
        configurable.update(checkpoint_ns="", checkpoint_id=checkpoint_id)
        return self._graph.checkpointer.get_tuple({"configurable": configurable}) is not None

