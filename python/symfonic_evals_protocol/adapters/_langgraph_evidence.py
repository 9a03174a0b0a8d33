"""The evidence of a LangGraph turn, read off the thread after it ran: the
tool calls of the messages it added (with their answers), the calls a
waiting interrupt or a static breakpoint holds, the calls a resume
settled, the gates' governance entries, and the pause minted on what the
thread waits on. A mixin of :class:`~.langgraph.LangGraphDeployment`.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Set

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.types import StateSnapshot

from .._records import Pause, ResolvedCall, ToolCall, TurnRecord
from ._common import json_safe
from ._langgraph_gate import Trace, governance, refused_stage
from ._langgraph_pauses import payload_approvers
from ._langgraph_review import describe, editable, without_edit_notice
from ._langgraph_thread import NOT_RUN_STAGE, ModelInputRecorder
from ._langgraph_thread import baseline as _baseline
from ._langgraph_thread import checkpoint_id as _checkpoint_id
from ._langgraph_thread import messages_of as _messages
from ._langgraph_thread import outcome as _outcome
from ._langgraph_thread import text_of as _text
from ._langgraph_thread import unanswered as _unanswered

__all__ = ["GraphEvidence"]


class GraphEvidence:
    """The turn's record from the thread's state (a mixin)."""

    _graph: Any
    _answer_of: Any

    def answer_of(self, values: Any, new: List[BaseMessage]) -> str:
        """The turn's answer: the text of its last model message with text."""
        if self._answer_of is not None:
            return self._answer_of(values, new)
        for message in reversed(new):
            if isinstance(message, AIMessage) and _text(message.content):
                return _text(message.content)
        return ""

    def _record(
        self,
        conversation: str,
        baseline: Dict[str, Any],
        recorder: ModelInputRecorder,
        parked: Sequence[Dict[str, Any]] = (),
        edited: Optional[Mapping[str, Any]] = None,
        trace: Optional[Trace] = None,
    ) -> TurnRecord:
        snapshot = self._graph.get_state(self.thread_config(conversation))
        messages = _messages(snapshot)
        before: Set[str] = set(baseline.get("messages") or [])
        new = [m for m in messages if m.id not in before]
        results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
        parked_ids = {call["framework_id"] for call in parked}
        waiting = list(snapshot.interrupts)
        halted = not waiting and self._at_breakpoint(snapshot)
        pending = self._pending(conversation, messages) if waiting else _unanswered(messages) if halted else []
        pending_ids = {entry["call"].get("id") for entry in pending}

        record = TurnRecord(model_input=recorder.text(), answer=self.answer_of(snapshot.values, new))
        reported: Set[str] = set()

        def report(message_id: str, call: Dict[str, Any]) -> None:
            framework_id = call.get("id") or ""
            call_id = self._store.calls.report_id(conversation, message_id, framework_id)
            if call_id in reported:
                return
            reported.add(call_id)
            name, arguments = call["name"], json_safe(call.get("args", {}))
            if framework_id in results:
                status, detail = _outcome(results[framework_id])
                made = {"succeeded": ToolCall.succeeded, "failed": ToolCall.failed, "refused": ToolCall.refused}[status]
                record.tool_calls.append(made(call_id, name, arguments, detail))
            elif framework_id in pending_ids:
                record.tool_calls.append(ToolCall.pending(call_id, name, arguments))
            else:
                record.tool_calls.append(ToolCall.failed(call_id, name, arguments, "the graph never ran this call"))

        for message in new:
            if isinstance(message, AIMessage):
                for call in message.tool_calls:
                    if call.get("id") not in parked_ids:
                        report(message.id or "", call)
        for entry in pending:
            if entry["call"].get("id") not in parked_ids:
                report(entry["message"], entry["call"])

        for call in parked:
            answer = results.get(call["framework_id"])
            if answer is not None:
                if call["framework_id"] in (edited or {}):
                    # The result is the tool's, not the middleware's notice to the model.
                    answer = answer.model_copy(update={"content": without_edit_notice(answer.content)})
                status, detail = _outcome(answer)
                if status == "refused":
                    record.resolved.append(ResolvedCall.refused(call["id"], detail))
                    continue
                # The arguments it ran with: a reviewer's edit, or as asked.
                ran_with = (edited or {}).get(call["framework_id"], call.get("arguments"))
                made = ResolvedCall.succeeded if status == "succeeded" else ResolvedCall.failed
                record.resolved.append(made(call["id"], detail, ran_with))
            elif call["framework_id"] not in pending_ids:
                record.resolved.append(ResolvedCall.refused(call["id"], NOT_RUN_STAGE))

        if waiting or halted:
            record.pause = self._pause(conversation, snapshot, pending)
            # A parked call the resume left waiting is pending again.
            for entry in pending:
                if entry["call"].get("id") in parked_ids:
                    report(entry["message"], entry["call"])
        if trace is not None:
            # The gates' entries: recorded as they ran, and each refusal's.
            gated = [m for m in new if isinstance(m, ToolMessage) and refused_stage(m) is not None]
            record.governance.extend(governance(trace, gated))
        record.attributes["langgraph_checkpoint_id"] = _checkpoint_id(snapshot)
        return record

    def _pending(self, conversation: str, messages: List[BaseMessage]) -> List[Dict[str, Any]]:
        """The calls the waiting interrupts hold: the unanswered calls of
        the messages of the innermost graph each interrupt waits in.

        An ``interrupt()`` inside a subgraph (a compiled graph added as a
        node) waits in the subgraph's state, whose messages the parent
        sees only once the subgraph finishes: the parked call is there."""
        found: List[Dict[str, Any]] = []
        seen: Set[str] = set()
        snapshot = self._graph.get_state(self.thread_config(conversation), subgraphs=True)
        for interrupt in snapshot.interrupts:
            inner, held = snapshot, messages
            while True:
                task = next(
                    (
                        t
                        for t in inner.tasks
                        if isinstance(t.state, StateSnapshot) and any(i.id == interrupt.id for i in t.interrupts)
                    ),
                    None,
                )
                if task is None:
                    break
                inner = task.state
                held = _messages(inner) or held
            for entry in _unanswered(held):
                key = entry["call"].get("id") or ""
                if key not in seen:
                    seen.add(key)
                    found.append(entry)
        return found

    def _pause(self, conversation: str, snapshot: StateSnapshot, pending: List[Dict[str, Any]]) -> Pause:
        """Mints (or, for an attempt that died after pausing, finds) the
        token of what the thread waits on: every waiting interrupt, or the
        static breakpoint it stopped at."""
        calls = [
            {
                "id": self._store.calls.report_id(conversation, entry["message"], entry["call"].get("id") or ""),
                "name": entry["call"]["name"],
                "framework_id": entry["call"].get("id") or "",
                "arguments": json_safe(entry["call"].get("args", {})),
            }
            for entry in pending
        ]
        checkpoint_id = _checkpoint_id(snapshot)
        interrupts = list(snapshot.interrupts)
        if interrupts:
            first = interrupts[0]
            if pending:
                interaction = pending[0]["call"]["name"]
            else:
                tasks = [t.name for t in snapshot.tasks if any(i.id == first.id for i in t.interrupts)]
                interaction = tasks[0] if tasks else "interrupt"
            described = describe(interrupts, calls)
            if len(interrupts) == 1:
                question: Any = json_safe(first.value)
            else:
                question = {"interrupts": [json_safe(i.value) for i in interrupts]}
            question_id = f"q-{first.id}"
            handle: Dict[str, Any] = {"interrupt_id": first.id, "interrupts": described, "checkpoint_id": checkpoint_id}
            may_edit = editable(interrupts, calls)
        else:
            interaction = pending[0]["call"]["name"] if pending else str(snapshot.next[0])
            question = {"breakpoint": list(snapshot.next)}
            question_id = f"q-{checkpoint_id}"
            handle = {"breakpoint": True, "checkpoint_id": checkpoint_id}
            may_edit = []
        # Who may answer: the interrupts' own payloads name them, or the deployment.
        names = payload_approvers(interrupts) if interrupts else None
        approvers = self._published(self.approvers_of(calls) if names is None else names, handle)
        token = self._store.pauses.mint(conversation, question_id, interaction, calls, handle, _baseline(snapshot))
        resumable = self._has_checkpoint(conversation, checkpoint_id)
        return Pause(
            interaction,
            resumable,
            token,
            question=question,
            question_id=question_id,
            editable=may_edit,
            approvers=approvers,
        )

