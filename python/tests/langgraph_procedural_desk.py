"""A LangGraph desk that learns and gates procedures, as an adopter writes
it against the adapter's procedural seams: its procedures in a SQLite
table of its own under the durable directory (``procedure_store.py``,
shared with the other frameworks' procedural desks), a gate node between
the model and the tool node, the review door and operator turns forwarded
to that table. The model is scripted (``ScriptedChat``), so nothing leaves
the process.

Lines, counted as ``tests/framework_desks.rs`` counts the example desks'
(code lines outside docstrings and comments): 133 with the store (77 here,
56 in ``procedure_store.py``), of which 16 face the harness by that rule
(they name the companion package or a name imported from it: the imports,
``effects`` in the tool and the gate (which reads the prompt's state as
``effects.request.state``), the gate's ``admitted`` / ``refusal``, the
review door's ``TurnFailure``, ``procedure_identity``, ``applies`` and the
deployment), 19 counting the deployment's three hook arguments
(``operator``, ``review``, ``attributes_of``), which the rule does not
see. Nothing subclasses the deployment.
"""

from __future__ import annotations

import re
from typing import Any, Dict

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command

from procedure_store import Procedures, identity
from symfonic_evals_protocol import Stage
from symfonic_evals_protocol.adapters import effects
from symfonic_evals_protocol.adapters.langgraph import LangGraphDeployment, admitted, refusal
from symfonic_evals_protocol.predicates import applies

STAGE = "procedural_precondition"


class ScriptedChat(BaseChatModel):
    """Asks for ``issue_refund`` when told to refund an order; answers a
    tool's message with its content."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            reply = AIMessage(content=f"done: {last.content}")
        else:
            match = re.search(r"refund order (\d+)", str(last.content))
            calls = []
            if match:
                calls = [{"id": f"call_{match[1]}", "name": "issue_refund", "args": {"order": int(match[1])}}]
            reply = AIMessage(content="" if calls else "noted", tool_calls=calls)
        return ChatResult(generations=[ChatGeneration(message=reply)])


def make_graph(procedures: Procedures) -> StateGraph:
    """The desk's graph: learn, model, gate, tools."""

    @tool
    def issue_refund(order: int) -> dict:
        """Refund an order."""
        effects.apply(f"refund:{order}", tool="issue_refund")
        return {"refunded": order}

    def learn(state: MessagesState) -> Dict[str, Any]:
        text = str(state["messages"][-1].content)
        if text.startswith("remember: "):
            procedures.draft(text[len("remember: ") :])
        return {}

    def model(state: MessagesState) -> Dict[str, Any]:
        recall = "\n".join(f"- {r['text']}" for r in procedures.rows("approved"))
        return {"messages": [ScriptedChat().invoke([HumanMessage(f"recall:\n{recall}"), *state["messages"]])]}

    def gate(state: MessagesState) -> Any:
        """Judges each call against the approved procedures governing its tool."""
        refused = []
        for call in state["messages"][-1].tool_calls:
            governing = [r for r in procedures.rows("approved") if r["tool"] == call["name"]]
            ids = sorted(identity(r) for r in governing)
            blocked = sum(0 if applies(effects.request.state, r["precondition"])[0] else 1 for r in governing)
            if not governing:
                admitted(Stage(STAGE, "abstained", {"checked": 0}))
            elif blocked:
                stage = Stage(STAGE, "rejected", {"checked": len(governing), "refused": blocked})
                refused.append(refusal(call, stage, ids))
            else:
                admitted(Stage(STAGE, "passed", {"checked": len(governing), "refused": 0}), ids)
        return Command(goto="model", update={"messages": refused}) if refused else Command(goto="tools")

    builder = StateGraph(MessagesState)
    builder.add_node("learn", learn)
    builder.add_node("model", model)
    builder.add_node("gate", gate)
    builder.add_node("tools", ToolNode([issue_refund]))
    builder.add_edge(START, "learn")
    builder.add_edge("learn", "model")
    builder.add_conditional_edges("model", lambda s: "gate" if s["messages"][-1].tool_calls else END, ["gate", END])
    builder.add_edge("tools", "model")
    return builder


def make_deployment(durable_dir: str) -> LangGraphDeployment:
    procedures = Procedures(durable_dir)
    return LangGraphDeployment(
        durable_dir,
        make_graph(procedures),
        operator=procedures.operator,
        review=procedures.review,
        attributes_of=procedures.evidence,
    )
