"""A help desk on the OpenAI Agents SDK, judged by symfonic-evals through the
companion package's adapter (``symfonic_evals_protocol.adapters.openai_agents``).

The part above the twins is all an adopter writes: the tools, the agent and
the factory ``serve`` takes. ``escalate_ticket`` needs a person's approval
(``needs_approval=True``): the run is interrupted, the adapter pauses the turn
with a token of its own and keeps the ``RunState`` in the trial's durable
directory, and a resume approves or rejects the call and runs the state on.
Effects go through the harness's ledger under keys that name the request,
so a retry after a crash applies nothing twice. ``weather_lookup`` is served
by the harness's MCP fixture when the extension pack runs one, by the desk
itself otherwise.

The model is the SDK's Chat Completions model over ``AsyncOpenAI()``, which
reads ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` from the environment as in
production: the harness points them at its model endpoint, which replays the
pack's cassette. Tracing is off (nothing leaves the machine).

``--variant NAME`` starts a deliberately broken twin (``TWINS``), each the
smallest change an adopter could make that one of the packs must catch.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Dict, Optional

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

from agents import Agent, ModelSettings, OpenAIChatCompletionsModel, function_tool, set_tracing_disabled  # noqa: E402
from agents.mcp import MCPServerStreamableHttp  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402

from symfonic_evals_protocol import mcp_server_params, serve  # noqa: E402
from symfonic_evals_protocol.adapters import effects  # noqa: E402
from symfonic_evals_protocol.adapters.openai_agents import OpenAIAgentsDeployment  # noqa: E402

MODEL = "openai-agents-desk"
INSTRUCTIONS = "You are the help desk agent. Call the tools the request needs, then answer briefly."
FORECASTS = {"Lisbon": "sunny, 21 C", "Oslo": "snow, -4 C"}


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


def build_agent(model: Optional[Any] = None) -> Agent[Any]:
    """The agent; ``model`` replaces the Chat Completions model (tests)."""
    set_tracing_disabled(True)
    model = model or OpenAIChatCompletionsModel(model=MODEL, openai_client=AsyncOpenAI(timeout=30.0))
    fixture = mcp_server_params("openai-agents")
    servers = [MCPServerStreamableHttp(params=fixture, name="forecasts", cache_tools_list=True)] if fixture else []
    tools = [issue_refund, escalate_ticket, *([] if servers else [weather_lookup])]
    settings = ModelSettings(temperature=0)
    return Agent(name="help desk", instructions=INSTRUCTIONS, model=model, model_settings=settings, tools=tools, mcp_servers=servers)


def desk(durable_dir: str, model: Optional[Any] = None, variant: Optional[str] = None) -> OpenAIAgentsDeployment:
    """The factory ``serve`` takes (``variant`` picks a twin)."""
    kind = TWINS.get(variant or "", (OpenAIAgentsDeployment, ""))[0]
    return kind(durable_dir, build_agent(model), traits=["idempotent-effects"], extension_tools=["weather_lookup"])


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


TWINS = {
    "saved-state-run-twice": (SavedStateRunTwice, "approval seed, replay: the SDK re-runs the saved state, approved tool included"),
    "trusts-sdk-to-refuse": (TrustsSdkToRefuse, "approval/restart-before-replay, replay: refused only in the process that resumed"),
    "lax-answer": (LaxAnswer, "approval/unfit-answer and approval/type-confused-answer: a look-alike answer approves"),
}


def main(argv: Optional[list] = None) -> int:
    """Serves the protocol; ``--variant`` picks a twin, ``--list-variants`` lists them."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--variant", choices=sorted(TWINS))
    parser.add_argument("--list-variants", action="store_true")
    known, _ = parser.parse_known_args(argv)
    if known.list_variants:
        print("\n".join(f"{name}: {catch}" for name, (_, catch) in sorted(TWINS.items())))
        return 0
    return serve(lambda durable_dir: desk(durable_dir, variant=known.variant), argv=argv)


if __name__ == "__main__":
    sys.exit(main())
