"""A help desk on LangGraph, served to the symfonic-evals harness by the
companion package's LangGraph adapter (``symfonic_evals_protocol.adapters.langgraph``;
``pip install './python[langgraph]'`` into the desk's virtualenv).

The model is LangChain's ``ChatOpenAI``, unmodified: the OpenAI SDK under it
reads ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY``, which the harness points
at its model endpoint (replaying the pack's cassette), as ``openai_desk.py``
in ``examples/helpdesk-py`` does. ``escalate_ticket`` asks a supervisor with
``interrupt()`` before it escalates, naming in the interrupt's payload who
may answer (the duty supervisor and the ticket's owner), which the adapter
publishes on the pause and checks each answer against; ``weather_lookup`` is the tool the
``extensions`` capability contributes, witnessed from its body. The rest
(a thread per conversation, the SQLite checkpointer, pause tokens, replay
refusal, retries, the evidence) is the adapter's.

``--twin NAME`` starts a broken twin, a defect real LangGraph deployments
have (``TWINS``), and ``--variant NAME`` an honest variant, a correct desk
shaped another way (``HONEST``); every line that exists for a twin
says ``twin``, and a line an adopter writes otherwise says ``adopter:`` and
how. The workspace tests count the rest: the adopter's part, under 40
lines.
"""

import argparse  # twin
import sys
import uuid  # twin

from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver  # twin
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import interrupt

from symfonic_evals_protocol import serve
from symfonic_evals_protocol.adapters import effects, require_approval
from symfonic_evals_protocol.adapters.langgraph import LangGraphDeployment

TWINS = {  # twin: broken variants, each a defect real LangGraph desks have
    "notice-before-interrupt": "a notice (a new message each send) goes out before interrupt(); "  # twin
    "LangGraph runs the tool again from its start on resume, so it goes out twice",  # twin
    "trusts-framework-replay": "LangGraph is trusted to refuse a second resume (it does not): "  # twin
    "the adapter's spent-mark and staleness checks are skipped",  # twin
    "checkpoint-in-memory": "compiled with InMemorySaver, as LangGraph's quickstart does: a restart loses the pause",  # twin
    "any-approver-accepted": "the approver check is left to the graph, which reads only 'approved': "  # twin
    "anyone's yes escalates",  # twin
}  # twin
HONEST = {  # twin: honest variants, correct desks shaped as real ones are, which every pack must pass
    "namespaced-threads": "thread ids carry a tenant prefix, mapped through the adapter's thread_config seam",  # twin
    "notify-on-denial": "a declined escalation tells the requester so, an effect of notify_requester on the denial",  # twin
    "notice-on-governed-calls": "the escalation is announced on the desk's channel: a post_notice effect under its own "  # twin
    "key when it is held for a person, and another when it runs",  # twin
    "asks-again-after-restart": "escalated tickets are remembered in process memory only: the same request again is "  # twin
    "answered as already done without acting, and after a restart the desk asks again",  # twin
}  # twin
TWIN = None  # twin: the twin or honest variant this process runs, if any
ESCALATED = set()  # twin: asks-again-after-restart's memory of the tickets this process escalated
SYSTEM = "You are the help desk agent. Call the tools the request needs, or answer."
FORECASTS = {"Lisbon": "sunny, 21 C", "Oslo": "snow, -4 C"}
OWNERS = {7: "rosa.lima", 8: "tomas.berg"}  # who raised each ticket; they may approve its escalation


@tool
def escalate_ticket(ticket: int) -> dict:
    """Escalate a ticket to a supervisor; a supervisor approves it first."""
    if TWIN == "notice-before-interrupt":  # twin
        effects.apply(f"notice:{uuid.uuid4()}", tool="notify_requester", arguments={"ticket": ticket})  # twin
    if TWIN == "asks-again-after-restart" and ticket in ESCALATED:  # twin
        return {"escalated": ticket, "already_done": True}  # twin: nothing asked, nothing applied
    if TWIN == "notice-on-governed-calls":  # twin: keyed by the request, so LangGraph's re-run posts it once
        held = f"governed:held:{effects.request.conversation}:{ticket}"  # twin
        effects.apply(held, tool="post_notice", arguments={"ticket": ticket, "held": True})  # twin
    # Who may answer: the payload's approvers, which the adapter publishes on the pause and checks answers against.
    answer = interrupt({"question": f"may I escalate ticket {ticket}?", "approvers": ["duty-supervisor", OWNERS[ticket]]})
    if not answer["approved"]:
        if TWIN == "notify-on-denial":  # twin
            conversation = effects.request.conversation  # twin: keyed by the request, so a retry posts nothing twice
            effects.apply(f"denied:{conversation}:{ticket}", tool="notify_requester", arguments={"ticket": ticket})  # twin
        return {"escalated": False}
    effects.apply(f"escalate:{ticket}", tool="escalate_ticket", arguments={"ticket": ticket})  # keyed by the request
    if TWIN == "notice-on-governed-calls":  # twin
        effects.apply(f"governed:ran:{ticket}", tool="post_notice", arguments={"ticket": ticket, "held": False})  # twin
    ESCALATED.add(ticket)  # twin
    return {"escalated": ticket}


@tool
@effects.witnessed
def weather_lookup(city: str) -> dict:
    """Look up the weather in a city."""
    return {"city": city, "forecast": FORECASTS[city]}


TOOLS = [escalate_ticket, weather_lookup]


def build_graph():
    model = ChatOpenAI(model="langgraph-desk", temperature=0, timeout=30).bind_tools(TOOLS)

    def agent(state: MessagesState) -> dict:
        return {"messages": [model.invoke([("system", SYSTEM), *state["messages"]])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(TOOLS, handle_tool_errors=True))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    in_memory = TWIN == "checkpoint-in-memory"  # twin
    return builder.compile(checkpointer=InMemorySaver() if in_memory else None)  # adopter: builder.compile()


# -- twins and honest variants
class TrustsFramework(LangGraphDeployment):
    def admit(self, pause, snapshot):
        pass  # LangGraph is trusted to refuse a replayed resume


class AnyApprover(LangGraphDeployment):
    def entitled(self, pause, approver):
        return True  # left to the graph, which reads only "approved"


class NamespacedThreads(LangGraphDeployment):
    def thread_config(self, conversation, **extra):
        config = super().thread_config(conversation, **extra)
        config["configurable"]["thread_id"] = f"tenant-a/{conversation}"
        return config


KINDS = {
    "trusts-framework-replay": TrustsFramework,
    "namespaced-threads": NamespacedThreads,
    "any-approver-accepted": AnyApprover,
}
# -- end of twins


def desk():
    # The graph is built before the handshake, the deployment over the durable directory after it.
    kind = KINDS.get(TWIN, LangGraphDeployment)  # twin: an adopter writes LangGraphDeployment.factory(...)
    return kind.factory(build_graph, extension_tools=["weather_lookup"], validate_answer=require_approval)


def twin_of(argv=None):  # twin
    parser = argparse.ArgumentParser(description="A help desk on LangGraph.")  # twin
    parser.add_argument("--twin", "--variant", dest="twin", choices=sorted({**TWINS, **HONEST}))  # twin
    return parser.parse_known_args(argv)[0].twin  # twin


if __name__ == "__main__":
    TWIN = twin_of()  # twin
    sys.exit(serve(desk()))
