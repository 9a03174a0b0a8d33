"""The Agents SDK, Pydantic AI and ADK adapters keep their own objects in
private names, as the LangGraph adapter does: an adopter's subclass that
names its own objects ``store``, ``journal`` or ``lease`` still pauses
and resumes once, and the agent the deployment runs is read-only (as is
the Agents SDK deployment's ``run_config``). Each case runs against the real framework, with the scripted
model of that adapter's own tests; skipped where the framework is
missing."""

from __future__ import annotations

import os
import sys
import tempfile
import unittest
from typing import Any, Callable, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from harness import async_session  # noqa: E402
from test_adapter_google_adk import needs_adk  # noqa: E402
from test_adapter_openai_agents import answered, hello, ledger, needs_agents, prompt, resume  # noqa: E402
from test_adapter_pydantic_ai import needs_pydantic_ai  # noqa: E402


class AdopterObjects:
    """What an adopter's subclass keeps under the names an adapter once
    used for its own bookkeeping."""

    def __init__(self) -> None:
        self.store = {"tickets": []}
        self.journal: List[str] = []
        self.lease = "the adopter's lease label"


def adopting(base: Any, make_agent: Callable[[], Any]) -> Any:
    """A subclass of ``base`` that sets the adopter's objects before and
    after the adapter's constructor, as a careless subclass would."""

    class Desk(base):  # type: ignore[misc, valid-type]
        def __init__(self, durable_dir: str) -> None:
            mine = AdopterObjects()
            self.journal = mine.journal
            super().__init__(durable_dir, make_agent())
            self.store, self.lease = mine.store, mine.lease

    return Desk


class PrivateNames:
    """The cases every adapter shares; a subclass names the adapter."""

    base: Any
    make_agent: Callable[[], Any]

    def test_a_subclass_setting_store_still_pauses_and_resumes_once(self) -> None:
        durable = tempfile.mkdtemp(prefix="private-")
        desk = adopting(self.base, type(self).make_agent)
        out = async_session(desk, [hello(durable), prompt(1, "escalate ticket 7")])
        paused = answered(out, 1)["record"]["terminal"]
        self.assertEqual(paused["kind"], "paused", out)  # type: ignore[attr-defined]
        answer: Dict[str, Any] = {"approved": True}
        out = async_session(
            desk,
            [
                hello(durable),
                resume(2, paused["token"], answer, paused.get("question_id")),
                ledger(2, "escalate:7"),
                resume(3, paused["token"], answer, paused.get("question_id")),
            ],
        )
        resolved = answered(out, 2)["record"]["resolved"]
        self.assertEqual([r["outcome"]["status"] for r in resolved], ["succeeded"], out)  # type: ignore[attr-defined]
        self.assertEqual(answered(out, 3)["error"]["kind"], "PauseTokenReplayedError")  # type: ignore[attr-defined]

    def test_the_agent_is_read_only(self) -> None:
        deployment = self.base(tempfile.mkdtemp(prefix="private-ro-"), type(self).make_agent())
        with self.assertRaises(AttributeError):  # type: ignore[attr-defined]
            deployment.agent = None


@needs_agents
class AgentsPrivateNames(PrivateNames, unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        from agents import Agent
        from test_adapter_openai_agents import RouterModel, escalate_ticket

        from symfonic_evals_protocol.adapters.openai_agents import OpenAIAgentsDeployment

        def make_agent() -> Any:
            return Agent(name="desk", instructions="You are the help desk.", model=RouterModel(), tools=[escalate_ticket])

        cls.base, cls.make_agent = OpenAIAgentsDeployment, staticmethod(make_agent)


@needs_pydantic_ai
class PydanticAIPrivateNames(PrivateNames, unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        from test_adapter_pydantic_ai import scripted_agent

        from symfonic_evals_protocol.adapters.pydantic_ai import PydanticAIDeployment

        cls.base, cls.make_agent = PydanticAIDeployment, staticmethod(scripted_agent)


@needs_adk
class AdkPrivateNames(PrivateNames, unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        from test_adapter_google_adk import scripted_agent

        from symfonic_evals_protocol.adapters.google_adk import AdkDeployment

        cls.base, cls.make_agent = AdkDeployment, staticmethod(scripted_agent)

if __name__ == "__main__":
    unittest.main()
