"""A help desk on Google's Agent Development Kit, served to the
symfonic-evals harness by the companion package's adapter
(``symfonic_evals_protocol.adapters.google_adk``;
``pip install './python[google-adk]'`` into the desk's virtualenv).

The model is the ADK's own OpenAI-compatible client, ``ApigeeLlm`` with an
``apigee/openai/`` model, as a desk behind an API gateway reaches its
model: its proxy URL is ``OPENAI_BASE_URL``, which the harness points at
its model endpoint (replaying the pack's cassette). ``escalate_ticket``
requires a person's confirmation (``FunctionTool(...,
require_confirmation=True)``); the ADK's confirmation names no person, so
the adapter's ``approvers=`` says who may give it (the duty supervisor,
and the ticket's owner), publishing them on each pause and refusing an
answer from anyone else before the agent runs. ``weather_lookup`` is the
tool the ``extensions`` capability contributes, witnessed from its body.
The rest (SQLite sessions under the durable directory, pause tokens,
replay refusal, retries, the evidence) is the adapter's.

``--twin NAME`` starts a broken twin, a defect real ADK desks have
(``TWINS``). Every line that exists for a twin says ``twin`` or sits
between the ``-- twins`` and ``-- end of twins`` markers; a line an adopter
writes otherwise says ``adopter:`` and how. The workspace tests count the
rest: the adopter's part, under 40 lines.
"""

import argparse  # twin
import os
import sys

from google.adk.agents import LlmAgent
from google.adk.models.apigee_llm import ApigeeLlm
from google.adk.sessions import InMemorySessionService  # twin
from google.adk.tools import FunctionTool

from symfonic_evals_protocol import serve
from symfonic_evals_protocol.adapters import effects
from symfonic_evals_protocol.adapters.google_adk import AdkDeployment

SYSTEM = "You are the help desk agent. Call the tools the request needs, or answer."
FORECASTS = {"Lisbon": "sunny, 21 C", "Oslo": "snow, -4 C"}
OWNERS = {7: "rosa.lima", 8: "tomas.berg"}  # who raised each ticket; they may approve its escalation
TWIN = None  # twin: the one this process runs, if any


def escalate_ticket(ticket: int) -> dict:
    """Escalate a ticket to a supervisor; a supervisor confirms it first."""
    effects.apply(f"escalate:{ticket}", tool="escalate_ticket")  # keyed by the request, never the attempt
    return {"escalated": ticket}


@effects.witnessed
def weather_lookup(city: str) -> dict:
    """Look up the weather in a city."""
    return {"city": city, "forecast": FORECASTS[city]}


def approvers(calls: list) -> list:
    """Who may confirm the held escalations: the duty supervisor, and the ticket's owner when one is held."""
    return ["duty-supervisor", *([OWNERS[calls[0]["arguments"]["ticket"]]] if len(calls) == 1 else [])]


def build_agent() -> LlmAgent:
    key = {"Authorization": f"Bearer {os.environ.get('OPENAI_API_KEY', '')}"}
    model = ApigeeLlm(model="apigee/openai/google-adk-desk", proxy_url=os.environ.get("OPENAI_BASE_URL"), custom_headers=key)
    tools = [FunctionTool(escalate_ticket, require_confirmation=True), weather_lookup]
    return LlmAgent(name="help_desk", model=model, instruction=SYSTEM, tools=tools)


def desk():
    # The agent is built before the handshake, the deployment over the durable directory after it.
    kind, options = TWINS.get(TWIN, (AdkDeployment, dict))[0], TWINS.get(TWIN, (None, dict))[1]()  # twin: an adopter writes AdkDeployment.factory(...)
    return kind.factory(build_agent, traits=["idempotent-effects"], extension_tools=["weather_lookup"], approvers=approvers, **options)  # adopter: without **options


# -- twins: each a defect real ADK desks have
class TrustsAdk(AdkDeployment):
    """No spent mark: the ADK is trusted with a second confirmation of the
    same call. It answers it with silence, and the turn reports success."""

    def check_spent(self, pause):
        pass

    def spend(self, pause):
        return True


class AnyApproverAccepted(AdkDeployment):
    """The approver check left to the ADK, which has none: a
    ``ToolConfirmation`` carries ``confirmed`` and a free ``payload``,
    never who confirmed, so anyone's yes escalates."""

    def entitled(self, pause, approver):
        return True


TWINS = {
    "sessions-in-memory": (AdkDeployment, lambda: {"session_service": InMemorySessionService()}),
    "trusts-adk": (TrustsAdk, dict),
    "any-approver-accepted": (AnyApproverAccepted, dict),
}


def twin_of(argv=None):
    parser = argparse.ArgumentParser(description="A help desk on the Google ADK.")
    parser.add_argument("--twin", "--variant", dest="twin", choices=sorted(TWINS))
    return parser.parse_known_args(argv)[0].twin
# -- end of twins


if __name__ == "__main__":
    TWIN = twin_of()  # twin
    sys.exit(serve(desk()))
