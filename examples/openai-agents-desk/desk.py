"""A help desk on the OpenAI Agents SDK, judged by symfonic-evals through the
companion package's adapter (``symfonic_evals_protocol.adapters.openai_agents``).

The part above the twins (and ``main``'s last line) is all an adopter writes: the tools, the agent and
the factory ``serve`` takes. ``escalate_ticket`` needs a person's approval
(``needs_approval=True``): the run is interrupted, the adapter pauses the turn
with a token of its own and keeps the ``RunState`` in the trial's durable
directory, and a resume approves or rejects the call and runs the state on.
The SDK's approval names no person, so who may approve (the duty supervisor,
and the ticket's owner) is the adapter's ``approvers=``: each pause
publishes them, and an answer from anyone else is refused before the SDK
hears it.
Effects go through the harness's ledger under keys that name the request,
so a retry after a crash applies nothing twice. ``weather_lookup`` is served
by the harness's MCP fixture when the extension pack runs one, by the desk
itself otherwise.

The model is the SDK's Chat Completions model over ``AsyncOpenAI()``, which
reads ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` from the environment as in
production: the harness points them at its model endpoint, which replays the
pack's cassette. Tracing is off (nothing leaves the machine).

``--twin NAME`` starts a deliberately broken twin (``TWINS``), each the
smallest change an adopter could make that one of the packs must catch.
Every line that exists only for the twins says ``twin`` or sits between the
``-- twins`` and ``-- end of twins`` markers; a line an adopter writes
otherwise says ``adopter:`` and how. The workspace tests count the rest: the
adopter's part, under 40 lines.
"""

import argparse  # twin
import sys
from typing import Any, Dict, List, Optional

from agents import Agent, ModelSettings, OpenAIChatCompletionsModel, RunConfig, function_tool, set_tracing_disabled
from agents.mcp import MCPServerStreamableHttp
from openai import AsyncOpenAI

from symfonic_evals_protocol import mcp_server_params, serve
from symfonic_evals_protocol.adapters import effects
from symfonic_evals_protocol.adapters.openai_agents import OpenAIAgentsDeployment

MODEL = "openai-agents-desk"
INSTRUCTIONS = "You are the help desk agent. Call the tools the request needs, then answer briefly."
FORECASTS = {"Lisbon": "sunny, 21 C", "Oslo": "snow, -4 C"}
OWNERS = {7: "rosa.lima", 8: "tomas.berg"}  # who raised each ticket; they may approve its escalation


@function_tool
async def issue_refund(order: int) -> Dict[str, Any]:
    """Refund an order."""
    await effects.apply_async(f"refund:{order}", tool="issue_refund")  # True: perform the refund now
    return {"refunded": order}


@function_tool(needs_approval=True)
async def escalate_ticket(ticket: int) -> Dict[str, Any]:
    """Escalate a ticket to a supervisor; a person approves it first."""
    await effects.apply_async(f"escalate:{ticket}", tool="escalate_ticket")
    return {"escalated": ticket}


@function_tool
@effects.witnessed
async def weather_lookup(city: str) -> Dict[str, Any]:
    """Look up the weather in a city."""
    return {"city": city, "forecast": FORECASTS.get(city, "no forecast")}


def approvers(calls: List[Dict[str, Any]]) -> List[str]:
    """Who may approve the held escalations: the duty supervisor, and the ticket's owner when one is held."""
    return ["duty-supervisor", *([OWNERS[calls[0]["arguments"]["ticket"]]] if len(calls) == 1 else [])]


def build_agent(model: Optional[Any] = None) -> Agent[Any]:
    """The agent; ``model`` replaces the Chat Completions model (tests)."""
    set_tracing_disabled(True)
    model = model or OpenAIChatCompletionsModel(model=MODEL, openai_client=AsyncOpenAI(timeout=30.0))
    fixture = mcp_server_params("openai-agents")
    servers = [MCPServerStreamableHttp(params=fixture, name="forecasts", cache_tools_list=True)] if fixture else []
    tools = [issue_refund, escalate_ticket, *([] if servers else [weather_lookup])]
    return Agent(name="help desk", instructions=INSTRUCTIONS, model=model, model_settings=ModelSettings(temperature=0), tools=tools, mcp_servers=servers)


def desk(model: Optional[Any] = None, variant: Optional[str] = None) -> Any:
    """The factory ``serve`` takes, the agent built before the handshake (``variant`` picks a twin)."""
    kind = TWINS.get(variant or "", (OpenAIAgentsDeployment, ""))[0]  # twin: an adopter writes OpenAIAgentsDeployment.factory(...)
    config = HONEST.get(variant or "", (None, ""))[0]  # twin
    return kind.factory(lambda: build_agent(model), traits=["idempotent-effects"], extension_tools=["weather_lookup"], approvers=approvers, run_config=config)  # adopter: no run_config


# -- twins: each the smallest adopter change a pack must catch -----------------


class SavedStateRunTwice(OpenAIAgentsDeployment):
    """No spent mark: every resume loads the saved RunState and runs it, and
    the SDK runs the approved tool again."""

    def check_spent(self, pause: Any) -> None:
        pass

    def spend(self, pause: Any) -> bool:
        return True


class TrustsSdkToRefuse(SavedStateRunTwice):
    """No spent mark either, trusting the SDK to refuse a second resume: the
    RunState a resume ran stays in memory, where it holds no pending
    approval and is refused; a restarted desk loads the saved one again."""

    async def load_state(self, pause: Any, agent: Any) -> Any:
        states = self.__dict__.setdefault("_ran", {})
        if pause.token not in states:
            states[pause.token] = await super().load_state(pause, agent)
        return states[pause.token]


class LaxAnswer(OpenAIAgentsDeployment):
    """Reads the answer by truthiness: ``"yes"``, ``"false"``, ``1`` approve."""

    def read_answer(self, answer: Any) -> bool:
        return isinstance(answer, dict) and bool(answer.get("approved"))


class AnyApproverAccepted(OpenAIAgentsDeployment):
    """The approver check left to the SDK, which has none: ``RunState.approve()``
    takes the call, never who approves it, so anyone's yes escalates."""

    def entitled(self, pause: Any, approver: Any) -> bool:
        return True


TWINS = {
    "saved-state-run-twice": (SavedStateRunTwice, "approval seed, replay: the SDK re-runs the saved state, approved tool included"),
    "trusts-sdk-to-refuse": (TrustsSdkToRefuse, "approval/restart-before-replay, replay: refused only in the process that resumed"),
    "lax-answer": (LaxAnswer, "approval/unfit-answer and approval/type-confused-answer: a look-alike answer approves"),
    "any-approver-accepted": (AnyApproverAccepted, "approval/foreign-answer: the approvers are published, anyone's yes escalates"),
}


# -- honest variants: correct desks shaped as real ones are, which every pack must pass


async def notify_on_denial(args: Any) -> Optional[str]:
    """The SDK's tool error formatter, which sees a person's rejection: it
    tells the requester, keyed by the request, and lets the SDK word the
    model's message."""
    if args.kind == "approval_rejected":
        conversation = effects.request.conversation
        await effects.apply_async(f"denied:{conversation}:{args.tool_name}", tool="notify_requester", arguments={"tool": args.tool_name})
    return None


HONEST = {
    "notify-on-denial": (
        RunConfig(tracing_disabled=True, tool_error_formatter=notify_on_denial),
        "a declined escalation tells the requester so, from the SDK's tool_error_formatter",
    ),
}


# -- end of twins


def main(argv: Optional[list] = None) -> int:
    """Serves the protocol; ``--twin`` picks a twin, ``--list-variants`` lists them."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])  # twin
    parser.add_argument("--twin", "--variant", dest="variant", choices=sorted({**TWINS, **HONEST}))  # twin
    parser.add_argument("--list-variants", action="store_true")  # twin
    known, _ = parser.parse_known_args(argv)  # twin
    if known.list_variants:  # twin
        print("\n".join(f"{name}: {catch}" for name, (_, catch) in sorted(TWINS.items())))  # twin
        return 0  # twin
    return serve(desk(variant=known.variant), argv=argv)


if __name__ == "__main__":
    sys.exit(main())
