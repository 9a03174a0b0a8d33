"""How the LangGraph adapter reads a thread: the prompts its chat models
received (rendered one message a line), the messages of a state
snapshot, its checkpoint, what it held before a turn, a tool message's
outcome, and the calls still waiting for a tool's answer."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional, Sequence

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.types import StateSnapshot

from ._langgraph_gate import refused_stage
from ._values import json_safe

__all__ = [
    "BREAKPOINT_REJECTED",
    "NOT_RUN_STAGE",
    "ModelInputRecorder",
    "baseline",
    "checkpoint_id",
    "messages_of",
    "outcome",
    "render_messages",
    "text_of",
    "unanswered",
]

NOT_RUN_STAGE = "human-review"
"""The stage a parked call is reported refused by when the graph went on
without running it (a review node that routed away from the tool), or a
reviewer rejected it."""

BREAKPOINT_REJECTED = "breakpoint_rejected"
"""The ``additional_kwargs`` key marking the ``ToolMessage`` the adapter
answers a call with when a person rejected it at a static breakpoint."""

# -- model input -----------------------------------------------------------------


def text_of(content: Any) -> str:
    """A message's content as text: a string as it is, text blocks joined,
    anything else as JSON."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
            else:
                parts.append(json.dumps(json_safe(block), ensure_ascii=False))
        return "".join(parts)
    return json.dumps(json_safe(content), ensure_ascii=False)


def render_messages(messages: Sequence[BaseMessage]) -> str:
    """Messages as a model receives them, one a line: ``role: content``,
    a model message's tool calls after its text, a tool message with its
    tool's name and call id."""
    lines = []
    for message in messages:
        text = text_of(message.content)
        if isinstance(message, AIMessage) and message.tool_calls:
            calls = [{"id": c.get("id"), "name": c["name"], "args": c["args"]} for c in message.tool_calls]
            text = f"{text} tool_calls: {json.dumps(json_safe(calls), ensure_ascii=False)}".strip()
        if isinstance(message, ToolMessage):
            lines.append(f"tool {message.name or ''} [{message.tool_call_id}]: {text}")
        else:
            lines.append(f"{message.type}: {text}")
    return "\n".join(lines)


class ModelInputRecorder(BaseCallbackHandler):
    """Records every prompt the graph's models receive during a turn: the
    chat models' messages (``on_chat_model_start``) and plain LLMs' prompts."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: List[str] = []

    def on_chat_model_start(self, serialized: Any, messages: List[List[BaseMessage]], **kwargs: Any) -> None:
        for batch in messages:
            self.calls.append(render_messages(batch))

    def on_llm_start(self, serialized: Any, prompts: List[str], **kwargs: Any) -> None:
        self.calls.extend(prompts)

    def text(self) -> str:
        """Every model call of the turn, in order, a blank line between."""
        return "\n\n".join(self.calls)


# -- reading the thread -----------------------------------------------------------


def messages_of(snapshot: StateSnapshot) -> List[BaseMessage]:
    """The messages of a state snapshot (its ``messages`` key), if any."""
    values = snapshot.values
    found = values.get("messages") if isinstance(values, Mapping) else None
    return [m for m in found or [] if isinstance(m, BaseMessage)]


def checkpoint_id(snapshot: StateSnapshot) -> Optional[str]:
    """The id of the checkpoint a state snapshot was read from."""
    configurable = (snapshot.config or {}).get("configurable", {})
    return configurable.get("checkpoint_id")


def baseline(snapshot: StateSnapshot) -> Dict[str, Any]:
    """What the thread held before a turn: its checkpoint and message ids."""
    return {"checkpoint_id": checkpoint_id(snapshot), "messages": [m.id for m in messages_of(snapshot) if m.id]}


def outcome(message: ToolMessage) -> "tuple[str, Any]":
    """How the call a tool message answers ended: ``refused`` (a
    reviewer's or a breakpoint's rejection, or a gate node's
    :func:`~._langgraph_gate.refusal`, by its stage), ``failed`` (an error status)
    or ``succeeded`` (its content, as JSON when it parses)."""
    text = text_of(message.content)
    decision = message.additional_kwargs.get("lc_data") or {}
    if message.additional_kwargs.get("lc_source") == "hitl_interrupt_decision" and decision.get("decision") == "reject":
        # A reviewer's rejection is a denial, not the tool failing.
        return "refused", NOT_RUN_STAGE
    if message.additional_kwargs.get(BREAKPOINT_REJECTED):
        return "refused", NOT_RUN_STAGE
    gate = refused_stage(message)
    if gate is not None:
        return "refused", gate
    if message.status == "error":
        return "failed", text
    try:
        return "succeeded", json.loads(text)
    except ValueError:
        return "succeeded", text


def unanswered(messages: Sequence[BaseMessage]) -> List[Dict[str, Any]]:
    """The calls of the last model message that asked for tools and that no
    tool message answers yet, each with the message's id."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    for message in reversed(messages):
        if isinstance(message, AIMessage) and message.tool_calls:
            return [
                {"message": message.id or "", "call": call}
                for call in message.tool_calls
                if call.get("id") not in answered
            ]
    return []
