"""The LangGraph adapter's procedural seams against real LangGraph: the
desk of ``langgraph_procedural_desk.py`` learns a draft, the operator
approves it through the structured review door, the gate admits a call
whose state satisfies the procedure and refuses, by its stage, one whose
state does not, and a restart keeps all of it. Also: operator turns go to
the adopter's hook, never to the graph, and the adapter's own objects
cannot be overwritten by a subclass."""

from __future__ import annotations

import os
import sys
import unittest
from typing import Any, Dict, List

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import HELLO, SHUTDOWN, async_session, prompt  # noqa: E402
from test_adapter_langgraph import HAVE_LANGGRAPH, InProcess, Ledger, Reply, needs_langgraph, scratch  # noqa: E402

if HAVE_LANGGRAPH:
    from langgraph_procedural_desk import STAGE, Procedures, make_deployment, make_graph

    from symfonic_evals_protocol.adapters.langgraph import AsyncLangGraphDeployment, LangGraphDeployment

APPROVED = [["approved", "issue_refund"]]
REGION = {"path": "region", "op": "neq", "value": "EU"}


def review(server: InProcess, **request: Any) -> Reply:
    """A structured review door request, as the harness sends it."""
    return server.peer._turn("review", {"conversation": "procedural", **request}, None)


def stages(reply: Reply) -> List[Dict[str, Any]]:
    return [s for s in reply.record["governance"] if s["stage"] == STAGE]


@needs_langgraph
class ProceduralDesk(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = scratch(self, "lg-procedural-")
        self.ledger = Ledger()
        self.server = self.start()

    def start(self) -> InProcess:
        server = InProcess(make_deployment, self.dir, self.ledger)
        self.addCleanup(lambda: server.deployments[-1].close())
        return server

    def restart(self) -> None:
        self.server.stop()
        self.server = self.start()

    def tearDown(self) -> None:
        self.server.stop()

    def test_the_handshake_declares_the_review_door(self) -> None:
        capabilities = self.server.deployments[-1].capabilities().to_json()
        self.assertIn("review", str(capabilities))

    def test_traits_are_declared_beside_the_review_door(self) -> None:
        traits = ["procedural-precondition", "procedural-review"]
        graph = make_graph(Procedures(self.dir))
        desk = LangGraphDeployment(self.dir, graph, traits=traits, review=lambda request: None)
        self.addCleanup(desk.close)
        capabilities = desk.capabilities().to_json()
        self.assertEqual(capabilities["traits"], sorted({*traits, "idempotent-effects"}))
        self.assertIn("review", capabilities["operations"])

    def test_review_approves_a_draft_the_gate_admits_and_refuses_by_its_stage_across_a_restart(self) -> None:
        peer = self.server.peer
        learned = peer.prompt("procedural", "remember: refunds only outside the EU")
        self.assertEqual(learned.record["attributes"]["procedural_review"], [["draft", ""]])

        # Before review the draft is inert: the gate abstains, the call runs.
        draft = peer.prompt("draft", "refund order 1", state={"region": "EU"})
        self.assertEqual([c["outcome"]["status"] for c in draft.calls("issue_refund")], ["succeeded"])
        self.assertEqual([s["outcome"] for s in stages(draft)], ["abstained"])
        self.assertEqual(draft.record["attributes"]["procedural_enforcement_ids"], [])
        self.assertNotIn("outside the EU", draft.record["model_input"])

        approved = review(
            self.server,
            action="approve",
            procedure="refunds",
            draft="refunds only",
            tool="issue_refund",
            precondition=[REGION],
        )
        self.assertEqual(approved.record["attributes"]["procedural_review"], APPROVED)
        ids = approved.record["attributes"]["procedural_review_ids"]
        self.assertEqual(len(ids), 1)
        missing = review(self.server, action="revoke", procedure="no-such")
        self.assertEqual(missing.error["kind"], "NoSuchProcedure")

        self.restart()
        satisfied = self.server.peer.prompt("satisfied", "refund order 2", state={"region": "US"})
        self.assertEqual(satisfied.record["attributes"]["procedural_review"], APPROVED)
        self.assertIn("outside the EU", satisfied.record["model_input"])
        self.assertEqual([c["outcome"]["status"] for c in satisfied.calls("issue_refund")], ["succeeded"])
        self.assertEqual([(s["outcome"], s["counts"]["checked"]) for s in stages(satisfied)], [("passed", 1)])
        self.assertEqual(satisfied.record["attributes"]["procedural_enforcement_ids"], ids)
        self.assertEqual(self.ledger.of("issue_refund"), ["refund:1", "refund:2"])

        self.restart()
        blocked = self.server.peer.prompt("blocked", "refund order 3", state={"region": "EU"})
        [call] = blocked.calls("issue_refund")
        self.assertEqual(call["outcome"], {"status": "refused", "stage": STAGE}, call)
        self.assertEqual([(s["outcome"], s["counts"]["refused"]) for s in stages(blocked)], [("rejected", 1)])
        self.assertEqual(blocked.record["attributes"]["procedural_enforcement_ids"], ids)
        self.assertEqual(self.ledger.of("issue_refund"), ["refund:1", "refund:2"], "the refused call performed nothing")

        revoked = review(self.server, action="revoke", procedure="refunds")
        self.assertEqual(revoked.record["attributes"]["procedural_review"], [["revoked", "issue_refund"]])
        again = self.server.peer.prompt("again", "refund order 4", state={"region": "EU"})
        self.assertEqual([c["outcome"]["status"] for c in again.calls("issue_refund")], ["succeeded"])

    def test_an_operator_turn_reaches_the_hook_and_never_the_graph(self) -> None:
        peer = self.server.peer
        peer.prompt("procedural", "remember: refunds only outside the EU")
        said = peer.prompt("procedural", "list", role="operator")
        self.assertEqual(said.record["answer"], "1 draft(s)")
        self.assertEqual(said.record["attributes"]["procedural_review"], [["draft", ""]])
        self.assertEqual(said.record["tool_calls"], [])
        graph = self.server.deployments[-1].graph
        config = self.server.deployments[-1].thread_config("procedural")
        humans = [m.content for m in graph.get_state(config).values["messages"] if m.type == "human"]
        self.assertEqual(humans, ["remember: refunds only outside the EU"], "the operator's words reached the graph")

    def test_without_hooks_operator_turns_and_reviews_are_refused(self) -> None:
        directory = scratch(self, "lg-bare-")
        bare = InProcess(lambda d: LangGraphDeployment(d, make_graph(Procedures(d))), directory, Ledger())
        self.addCleanup(bare.stop)
        said = bare.peer.prompt("c", "list", role="operator")
        self.assertEqual(said.error.get("code"), "operator.unsupported")
        self.assertEqual(review(bare, action="revoke", procedure="x").error["kind"], "ReviewUnsupported")
        self.assertNotIn("review", str(bare.deployments[-1].capabilities().to_json()))


@needs_langgraph
class AsyncDesk(unittest.TestCase):
    def test_the_async_deployment_forwards_the_review_door_and_operator_turns(self) -> None:
        directory = scratch(self, "lg-async-")

        def factory(durable_dir: str) -> Any:
            procedures = Procedures(durable_dir)
            procedures.draft("refunds only outside the EU")
            hooks = {"operator": procedures.operator, "review": procedures.review, "attributes_of": procedures.evidence}
            return AsyncLangGraphDeployment(durable_dir, make_graph(procedures), **hooks)

        approve = {"conversation": "c", "action": "approve", "procedure": "refunds", "draft": "refunds",
                   "tool": "issue_refund", "precondition": [REGION]}
        written = async_session(
            factory,
            [
                {**HELLO, "durable_dir": directory},
                {"type": "review", "id": 1, "request": approve},
                prompt(2, "list", role="operator"),
                SHUTDOWN,
            ],
        )
        self.assertIn("review", written[0]["capabilities"]["operations"])
        self.assertEqual(written[1]["record"]["attributes"]["procedural_review"], APPROVED)
        self.assertEqual(written[2]["record"]["answer"], "0 draft(s)")


@needs_langgraph
class PrivateNames(unittest.TestCase):
    def test_a_subclass_cannot_overwrite_the_adapters_objects_by_accident(self) -> None:
        deployment = make_deployment(scratch(self, "lg-private-"))
        self.addCleanup(deployment.close)
        with self.assertRaises(AttributeError):
            deployment.graph = None  # type: ignore[misc]

        class Desk(LangGraphDeployment):
            """An adopter's subclass naming its own objects as it likes."""

            def __init__(self, durable_dir: str) -> None:
                self.store = Procedures(durable_dir)
                super().__init__(durable_dir, make_graph(self.store))
                self.run = "the adopter's run label"

        server = InProcess(Desk, scratch(self, "lg-private-sub-"), Ledger())
        self.addCleanup(server.stop)
        reply = server.peer.prompt("c", "refund order 5", state={"region": "EU"})
        self.assertEqual([c["outcome"]["status"] for c in reply.calls("issue_refund")], ["succeeded"])
        self.assertIsInstance(server.deployments[-1].store, Procedures)


if __name__ == "__main__":
    unittest.main()
