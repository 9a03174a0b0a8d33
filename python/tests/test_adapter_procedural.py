"""The procedural seams of the Agents SDK, Pydantic AI and ADK adapters
against the real frameworks, as the LangGraph adapter's are tested: each
framework's desk of ``procedural_desks.py`` learns a draft, the operator
approves it through the structured review door, the gate admits a call
whose state satisfies the procedure and refuses, by its stage, one whose
state does not, a restart keeps all of it, and a revoke lifts it.
Operator turns go to the adopter's hook and never reach the agent; without
the hooks both doors are refused. Skipped per framework not installed."""

from __future__ import annotations

import os
import sys
import unittest
from typing import Any, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from frameworks import needs  # noqa: E402
from procedural_desks import BUILDERS, STAGE, make_deployment  # noqa: E402
from test_adapter_langgraph import InProcess, Ledger, Reply, scratch  # noqa: E402

APPROVED = [["approved", "issue_refund"]]
REGION = {"path": "region", "op": "neq", "value": "EU"}


def review(server: InProcess, **request: Any) -> Reply:
    """A structured review door request, as the harness sends it."""
    return server.peer._turn("review", {"conversation": "procedural", **request}, None)


def stages(reply: Reply) -> List[Dict[str, Any]]:
    return [s for s in reply.record["governance"] if s["stage"] == STAGE]


def statuses(reply: Reply) -> List[str]:
    return [c["outcome"]["status"] for c in reply.calls("issue_refund")]


class ProceduralDesk:
    """The cases every framework's desk shares; a subclass names it."""

    framework: str

    def setUp(self) -> None:
        self.dir = scratch(self, f"procedural-{self.framework}-")
        self.ledger = Ledger()
        self.server = self.start()

    def start(self, with_hooks: bool = True) -> InProcess:
        return InProcess(lambda d: make_deployment(self.framework, d, with_hooks), self.dir, self.ledger)

    def restart(self) -> None:
        self.server.stop()
        self.server = self.start()

    def tearDown(self) -> None:
        self.server.stop()

    def test_review_approves_a_draft_the_gate_admits_and_refuses_by_its_stage_across_a_restart(self) -> None:
        t: Any = self
        peer = self.server.peer
        learned = peer.prompt("procedural", "remember: refunds only outside the EU")
        t.assertEqual(learned.record["attributes"]["procedural_review"], [["draft", ""]], learned.message)

        # Before review the draft is inert: the gate abstains, the call runs.
        draft = peer.prompt("draft", "refund order 1", state={"region": "EU"})
        t.assertEqual(statuses(draft), ["succeeded"], draft.message)
        t.assertEqual([s["outcome"] for s in stages(draft)], ["abstained"])
        t.assertEqual(draft.record["attributes"]["procedural_enforcement_ids"], [])
        t.assertNotIn("outside the EU", draft.record["model_input"])

        approved = review(
            self.server, action="approve", procedure="refunds", draft="refunds only", tool="issue_refund",
            precondition=[REGION],
        )
        t.assertEqual(approved.record["attributes"]["procedural_review"], APPROVED, approved.message)
        ids = approved.record["attributes"]["procedural_review_ids"]
        t.assertEqual(len(ids), 1)
        t.assertEqual(review(self.server, action="revoke", procedure="no-such").error["kind"], "NoSuchProcedure")

        self.restart()
        satisfied = self.server.peer.prompt("satisfied", "refund order 2", state={"region": "US"})
        t.assertEqual(satisfied.record["attributes"]["procedural_review"], APPROVED)
        t.assertIn("outside the EU", satisfied.record["model_input"])
        t.assertEqual(statuses(satisfied), ["succeeded"], satisfied.message)
        t.assertEqual([(s["outcome"], s["counts"]["checked"]) for s in stages(satisfied)], [("passed", 1)])
        t.assertEqual(satisfied.record["attributes"]["procedural_enforcement_ids"], ids)
        t.assertEqual(self.ledger.of("issue_refund"), ["refund:1", "refund:2"])

        self.restart()
        blocked = self.server.peer.prompt("blocked", "refund order 3", state={"region": "EU"})
        [call] = blocked.calls("issue_refund")
        t.assertEqual(call["outcome"], {"status": "refused", "stage": STAGE}, call)
        t.assertEqual([(s["outcome"], s["counts"]["refused"]) for s in stages(blocked)], [("rejected", 1)])
        t.assertEqual(blocked.record["attributes"]["procedural_enforcement_ids"], ids)
        t.assertEqual(self.ledger.of("issue_refund"), ["refund:1", "refund:2"], "the refused call performed nothing")

        revoked = review(self.server, action="revoke", procedure="refunds")
        t.assertEqual(revoked.record["attributes"]["procedural_review"], [["revoked", "issue_refund"]])
        again = self.server.peer.prompt("again", "refund order 4", state={"region": "EU"})
        t.assertEqual(statuses(again), ["succeeded"])

    def test_an_operator_turn_reaches_the_hook_and_never_the_agent(self) -> None:
        t: Any = self
        peer = self.server.peer
        peer.prompt("procedural", "remember: refunds only outside the EU")
        said = peer.prompt("procedural", "list", role="operator")
        t.assertEqual(said.record["answer"], "1 draft(s)", said.message)
        t.assertEqual(said.record["attributes"]["procedural_review"], [["draft", ""]])
        t.assertEqual((said.record["tool_calls"], said.record.get("model_input", "")), ([], ""))
        after = peer.prompt("procedural", "refund order 5", state={"region": "US"})
        t.assertNotIn("list", after.record["model_input"].split("\n"), "the operator's words reached the agent")

    def test_the_handshake_declares_the_review_door_and_without_hooks_both_doors_are_refused(self) -> None:
        t: Any = self
        t.assertIn("review", self.server.deployments[-1].capabilities().to_json()["operations"])
        self.server.stop()
        self.server = self.start(with_hooks=False)
        said = self.server.peer.prompt("c", "list", role="operator")
        t.assertEqual(said.error.get("code"), "operator.unsupported")
        t.assertEqual(review(self.server, action="revoke", procedure="x").error["kind"], "ReviewUnsupported")
        t.assertNotIn("review", self.server.deployments[-1].capabilities().to_json()["operations"])


@needs("agents" in BUILDERS, "the OpenAI Agents SDK", "openai-agents")
class AgentsProceduralDesk(ProceduralDesk, unittest.TestCase):
    framework = "agents"


@needs("pydantic_ai" in BUILDERS, "Pydantic AI", "pydantic-ai")
class PydanticAIProceduralDesk(ProceduralDesk, unittest.TestCase):
    framework = "pydantic_ai"


@needs("google_adk" in BUILDERS, "the Google ADK", "google-adk")
class AdkProceduralDesk(ProceduralDesk, unittest.TestCase):
    framework = "google_adk"


if __name__ == "__main__":
    unittest.main()
