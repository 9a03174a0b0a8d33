"""A LangGraph desk that learns and gates procedures, as an adopter writes
it against the adapter's procedural seams: its procedures in a SQLite
table of its own under the durable directory, a gate node between the
model and the tool node, the review door and operator turns forwarded to
that table. The model is scripted (``ScriptedChat``), so nothing leaves
the process.

Lines, counted as ``tests/framework_desks.rs`` counts the example desks'
(code lines outside docstrings and comments): 129, of which 15 face the
harness by that rule (they name the companion package or a name imported
from it: the imports, ``effects`` in the tool and the gate (which reads
the prompt's state as ``effects.request.state``), the gate's ``admitted``
/ ``refusal``, the review door's ``TurnFailure``, ``procedure_identity``,
``applies`` and the deployment), 18 counting the deployment's three hook
arguments (``operator``, ``review``, ``attributes_of``), which the rule
does not see. Nothing subclasses the deployment.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from typing import Any, Dict, List, Optional

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command

from symfonic_evals_protocol import Stage, TurnFailure, procedure_identity
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


class Procedures:
    """The adopter's procedure store: drafts learned from ``remember:``
    turns, approved or rejected by the operator, read by the gate."""

    def __init__(self, durable_dir: str) -> None:
        self.db = sqlite3.connect(os.path.join(durable_dir, "procedures.sqlite3"), check_same_thread=False)
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS procedures (id INTEGER PRIMARY KEY, text TEXT UNIQUE, status TEXT,"
            " tool TEXT DEFAULT '', name TEXT DEFAULT '', precondition TEXT DEFAULT '[]')"
        )
        self.db.commit()

    def rows(self, status: Optional[str] = None) -> List[Dict[str, Any]]:
        found = self.db.execute("SELECT text, status, tool, name, precondition FROM procedures ORDER BY id").fetchall()
        rows = [dict(zip(("text", "status", "tool", "name", "precondition"), row)) for row in found]
        for row in rows:
            row["precondition"] = json.loads(row["precondition"])
        return [row for row in rows if status in (None, row["status"])]

    def draft(self, text: str) -> None:
        self.db.execute("INSERT OR IGNORE INTO procedures (text, status) VALUES (?, 'draft')", (text,))
        self.db.commit()

    def review(self, request: Any) -> None:
        """The structured review door's decision, on this table."""
        predicates = json.dumps([{"state": p} for p in request.precondition or []])
        with self.db:  # commits, or rolls back a decision that raised
            self._review(request, predicates)

    def _review(self, request: Any, predicates: str) -> None:
        if request.action in ("approve", "reject"):
            drafts = [r for r in self.rows("draft") if (request.draft or "") in r["text"]]
            if len(drafts) != 1:
                raise TurnFailure("NoSuchDraft", f"{len(drafts)} drafts match; exactly one is needed")
            status = "approved" if request.action == "approve" else "rejected"
            self.db.execute(
                "UPDATE procedures SET status = ?, tool = ?, name = ?, precondition = ? WHERE text = ?",
                (status, request.tool or "", request.procedure, predicates, drafts[0]["text"]),
            )
        else:
            update = ("precondition = ?", predicates) if request.action == "amend" else ("status = ?", "revoked")
            done = self.db.execute(
                f"UPDATE procedures SET {update[0]} WHERE name = ? AND status = 'approved'",
                (update[1], request.procedure),
            )
            if done.rowcount != 1:
                raise TurnFailure("NoSuchProcedure", "no approved procedure has that name")

    def operator(self, request: Any) -> str:
        """An operator's words: ``list`` answers the drafts' count."""
        return f"{len(self.rows('draft'))} draft(s)"

    def evidence(self, request: Any) -> Dict[str, Any]:
        """The review door's listing, as the procedural pack reads it."""
        approved = self.rows("approved")
        return {
            "procedural_review": sorted([r["status"], r["tool"]] for r in self.rows()),
            "procedural_review_procedures": [{k: r[k] for k in ("tool", "precondition", "text")} for r in approved],
            "procedural_review_ids": sorted(identity(r) for r in approved),
        }


def identity(row: Dict[str, Any]) -> str:
    return procedure_identity(row["tool"], row["precondition"], row["text"])


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
