"""A help desk on Pydantic AI, served to the symfonic-evals harness by the
companion package's adapter (``symfonic_evals_protocol.adapters.pydantic_ai``;
``pip install './python[pydantic-ai]'`` into the desk's virtualenv).

The model is Pydantic AI's ``OpenAIChatModel`` over ``OpenAIProvider()``,
unmodified: the OpenAI SDK under it reads ``OPENAI_BASE_URL`` and
``OPENAI_API_KEY``, which the harness points at its model endpoint
(replaying the pack's cassette). ``escalate_ticket`` requires a person's
approval (``requires_approval=True``: the run ends on
``DeferredToolRequests``); Pydantic AI's approval names no person, so the
adapter's ``approvers=`` says who may give it (the duty supervisor, and
the ticket's owner), publishing them on each pause and refusing an answer
from anyone else before the agent runs. ``weather_lookup`` is the tool the
``extensions`` capability contributes, witnessed from its body. The rest
(each conversation's message history under the durable directory, pause
tokens, replay refusal, retries, the evidence) is the adapter's.

``--twin NAME`` starts a broken twin, a defect real Pydantic AI desks have
(``TWINS``). Every line that exists for a twin says ``twin`` or sits
between the ``-- twins`` and ``-- end of twins`` markers; a line an adopter
writes otherwise says ``adopter:`` and how. The workspace tests count the
rest: the adopter's part, under 40 lines.
"""

import argparse  # twin
import sys

from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from symfonic_evals_protocol import serve
from symfonic_evals_protocol import edit_decisions  # twin
from symfonic_evals_protocol.adapters import effects
from symfonic_evals_protocol.adapters.pydantic_ai import PydanticAIDeployment

SYSTEM = "You are the help desk agent. Call the tools the request needs, or answer."
FORECASTS = {"Lisbon": "sunny, 21 C", "Oslo": "snow, -4 C"}
OWNERS = {7: "rosa.lima", 8: "tomas.berg"}  # who raised each ticket; they may approve its escalation
TWIN = None  # twin: the one this process runs, if any


def escalate_ticket(ticket: int) -> dict:
    """Escalate a ticket to a supervisor; a supervisor approves it first."""
    effects.apply(f"escalate:{ticket}", tool="escalate_ticket")  # keyed by the request, never the attempt
    return {"status": "escalated"}  # the ticket is the call's own; the record says which ran


@effects.witnessed
def weather_lookup(city: str) -> dict:
    """Look up the weather in a city."""
    return {"city": city, "forecast": FORECASTS[city]}


def approvers(calls: list) -> list:
    """Who may approve the held escalations: the duty supervisor, and the ticket's owner when one is held."""
    return ["duty-supervisor", *([OWNERS[calls[0]["arguments"]["ticket"]]] if len(calls) == 1 else [])]


def build_agent() -> Agent:
    model = OpenAIChatModel("pydantic-ai-desk", provider=OpenAIProvider())
    agent = Agent(model, instructions=SYSTEM, model_settings={"temperature": 0, "timeout": 30})
    agent.tool_plain(requires_approval=True)(escalate_ticket)
    agent.tool_plain(weather_lookup)
    return agent


def desk():
    # The agent is built before the handshake, the deployment over the durable directory after it.
    kind = TWINS.get(TWIN, (PydanticAIDeployment, ""))[0]  # twin: an adopter writes PydanticAIDeployment.factory(...)
    return kind.factory(build_agent, traits=["idempotent-effects"], extension_tools=["weather_lookup"], approvers=approvers)


# -- twins: each a defect real Pydantic AI desks have
PENDING = {}


class HistoryInMemory(PydanticAIDeployment):
    """Keeps a paused run's messages in process memory, as the docs' example
    keeps ``result.all_messages()`` in a variable: a restart loses the pause."""

    def keep_messages(self, messages):
        PENDING[len(PENDING)] = messages
        return len(PENDING) - 1

    def load_messages(self, pause):
        return PENDING[pause.handle["messages"]]


class TrustsPydanticAI(PydanticAIDeployment):
    """No spent mark: Pydantic AI is trusted to refuse the same approval
    twice; handed the same history and results, it runs the tool again."""

    def check_spent(self, pause):
        pass

    def spend(self, pause):
        return True


class EditHeardAsApproval(PydanticAIDeployment):
    """Maps each decision to a yes or a no, as a resume handler written for
    approve and reject does: an edit is a yes, and the call runs with the
    arguments the model asked for (never ``ToolApproved(override_args=...)``)."""

    def approvals(self, pause, answer):
        decisions = edit_decisions(answer)
        if decisions is None:
            return super().approvals(pause, answer)
        return {call["call_id"]: d["type"] != "reject" for call, d in zip(pause.calls, decisions)}


class AnyApproverAccepted(PydanticAIDeployment):
    """The approver check left to Pydantic AI, which has none: a
    ``ToolApproved()`` in ``DeferredToolResults`` says yes, never who said
    it, so anyone's yes escalates."""

    def entitled(self, pause, approver):
        return True


TWINS = {
    "history-in-memory": (HistoryInMemory, "approval/restart-between-pause-and-resume: the pause is gone"),
    "edit-heard-as-approval": (EditHeardAsApproval, "approval/edited-call: the call runs unedited"),
    "trusts-pydantic-ai": (TrustsPydanticAI, "approval seed, replay: the approved tool runs again"),
    "any-approver-accepted": (AnyApproverAccepted, "approval/foreign-answer: the approvers are published, anyone's yes escalates"),
}


def twin_of(argv=None):
    parser = argparse.ArgumentParser(description="A help desk on Pydantic AI.")
    parser.add_argument("--twin", "--variant", dest="twin", choices=sorted(TWINS))
    return parser.parse_known_args(argv)[0].twin
# -- end of twins


if __name__ == "__main__":
    TWIN = twin_of()  # twin
    sys.exit(serve(desk()))
