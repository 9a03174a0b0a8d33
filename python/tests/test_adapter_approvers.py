"""Who may answer a pause, through the adapters (:mod:`._approvers`): the
names a pause publishes, and an answer from anyone else refused before
anything runs, its token left redeemable, as the approval pack's
``approval/foreign-answer`` requires.

The shared check runs on the standard library alone; the LangGraph cases
(approvers named in an interrupt's payload, or given to the deployment)
where LangGraph is installed, the Agents SDK, Pydantic AI and ADK cases
where each framework is.
"""

from __future__ import annotations

import collections
import os
import sys
import tempfile
import unittest
from typing import Any, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from symfonic_evals_protocol import Approvers, TurnFailure  # noqa: E402
from symfonic_evals_protocol.adapters._approvers import APPROVERS_HANDLE, ApproverCheck  # noqa: E402
from symfonic_evals_protocol.adapters._store import PauseRow  # noqa: E402
from test_adapter_langgraph import HAVE_LANGGRAPH, InProcess, Ledger, needs_langgraph  # noqa: E402
from test_adapter_openai_agents import answered, hello, ledger, needs_agents, prompt, resume  # noqa: E402
from test_adapter_google_adk import needs_adk  # noqa: E402
from test_adapter_pydantic_ai import needs_pydantic_ai  # noqa: E402

APPROVERS = ["duty-supervisor", "rosa.lima"]
OUTSIDER = {"approved": True, "approver": "someone-else"}


def pause_row(handle: Any) -> PauseRow:
    return PauseRow("t", "c", "q-1", "escalate_ticket", [], handle, None, "open", None)


class SharedCheck(unittest.TestCase):
    """The check every adapter runs, on stored pauses."""

    def check(self, approvers: Any = None, field: str = "approver") -> ApproverCheck:
        check = ApproverCheck()
        check._approver_seams(approvers, field)
        return check

    def test_a_pause_publishes_the_names_and_keeps_them_in_its_handle(self) -> None:
        handle: Dict[str, Any] = {}
        published = self.check(APPROVERS)._published(self.check(APPROVERS).approvers_of([]), handle)
        self.assertEqual(published, Approvers("approver", APPROVERS))
        self.assertEqual(handle, {APPROVERS_HANDLE: APPROVERS})
        self.assertIsNone(self.check()._published(self.check().approvers_of([]), {}))

    def test_approvers_may_depend_on_the_held_calls(self) -> None:
        check = self.check(lambda calls: ["duty-supervisor", f"owner-of-{calls[0]['arguments']['ticket']}"])
        names = check.approvers_of([{"name": "escalate_ticket", "arguments": {"ticket": 7}}])
        self.assertEqual(names, ["duty-supervisor", "owner-of-7"])

    def test_an_answer_from_someone_not_named_is_refused(self) -> None:
        check = self.check(APPROVERS)
        row = pause_row({APPROVERS_HANDLE: APPROVERS})
        for approver in ("someone-else", "", None, 7, ["duty-supervisor"]):
            with self.assertRaises(TurnFailure) as refused:
                check._entitled_answer(row, {"approved": True, "approver": approver})
            self.assertEqual((refused.exception.kind, refused.exception.code), ("ApproverNotEntitled", "approver.not_entitled"))

    def test_an_entitled_answer_reaches_the_framework_without_its_approver(self) -> None:
        check = self.check(APPROVERS, field="by")
        row = pause_row({APPROVERS_HANDLE: APPROVERS})
        for name in APPROVERS:
            self.assertEqual(check._entitled_answer(row, {"approved": False, "by": name}), {"approved": False})
        # Another field is not the approver's: the answer is read as it is.
        self.assertEqual(check._entitled_answer(row, OUTSIDER), OUTSIDER)

    def test_a_nameless_answer_or_a_pause_naming_nobody_is_read_as_it_is(self) -> None:
        check = self.check(APPROVERS)
        self.assertEqual(check._entitled_answer(pause_row({APPROVERS_HANDLE: APPROVERS}), {"approved": True}), {"approved": True})
        self.assertEqual(check._entitled_answer(pause_row({}), OUTSIDER), OUTSIDER)
        self.assertEqual(check._entitled_answer(pause_row({APPROVERS_HANDLE: APPROVERS}), "yes"), "yes")

    def test_one_string_is_not_a_list_of_names(self) -> None:
        with self.assertRaises(ValueError):
            self.check("duty-supervisor")
        with self.assertRaises(ValueError):
            self.check(APPROVERS, field="")


if HAVE_LANGGRAPH:
    from langchain_core.tools import tool
    from langgraph.types import interrupt

    from symfonic_evals_protocol.adapters import effects, require_approval
    from symfonic_evals_protocol.adapters.langgraph import LangGraphDeployment
    from test_adapter_langgraph import Tools, agent_graph

    class NamingTools:
        """``escalate_ticket`` whose interrupt names who may answer it."""

        def __init__(self) -> None:
            self.runs: "collections.Counter[str]" = collections.Counter()
            runs = self.runs

            @tool
            def escalate_ticket(ticket: int) -> dict:
                """Escalate a ticket once the duty supervisor or its owner approves."""
                runs["asked"] += 1
                answer = interrupt({"question": f"may I escalate ticket {ticket}?", "approvers": APPROVERS})
                runs["answered"] += 1
                if not answer["approved"]:
                    return {"escalated": False}
                effects.apply(f"escalate:{ticket}", tool="escalate_ticket")
                return {"escalated": ticket}

            self.all = [escalate_ticket]


@needs_langgraph
class LangGraphApprovers(unittest.TestCase):
    def setUp(self) -> None:
        self._dir = tempfile.TemporaryDirectory()
        self.addCleanup(self._dir.cleanup)
        self.ledger = Ledger()
        self.servers: List[InProcess] = []

    def tearDown(self) -> None:
        for server in self.servers:
            if server._thread.is_alive():
                server.stop()

    def start(self, graph: Any, kind: Any = None, **options: Any) -> Any:
        kind = kind or LangGraphDeployment
        server = InProcess(
            lambda d: kind(d, graph, validate_answer=require_approval, **options), self._dir.name, self.ledger
        )
        self.servers.append(server)
        return server.peer

    def test_the_interrupts_payload_names_who_may_answer(self) -> None:
        tools = NamingTools()
        graph = agent_graph(tools)  # type: ignore[arg-type]
        peer = self.start(graph)
        paused = peer.prompt("c", "escalate ticket 7")
        self.assertEqual(paused.record["terminal"]["approvers"], {"field": "approver", "names": APPROVERS})
        runs = dict(tools.runs)
        foreign = peer.redeem("c", paused, OUTSIDER)
        self.assertEqual((foreign.error["kind"], foreign.error["code"]), ("ApproverNotEntitled", "approver.not_entitled"))
        self.assertEqual(dict(tools.runs), runs, "the graph never heard the foreign answer")
        self.assertEqual(self.ledger.attempts, collections.Counter())
        # A restart keeps the names with the token.
        self.servers[-1].stop()
        peer = self.start(graph)
        self.assertEqual(peer.redeem("c", paused, OUTSIDER).error["code"], "approver.not_entitled")
        # The token was left unspent: an entitled approval carries the request out once.
        resumed = peer.redeem("c", paused, {"approved": True, "approver": "rosa.lima"}).record
        self.assertEqual(resumed["resolved"][0]["outcome"], {"status": "succeeded", "result": {"escalated": 7}})
        self.assertEqual(self.ledger.applied, ["escalate:7"])
        self.assertEqual(peer.redeem("c", paused, {"approved": True, "approver": "rosa.lima"}).error["code"], "pause.replayed")

    def test_a_nameless_answer_is_the_desks_own_console(self) -> None:
        peer = self.start(agent_graph(NamingTools()))  # type: ignore[arg-type]
        paused = peer.prompt("c", "escalate ticket 7")
        self.assertEqual(peer.redeem("c", paused, {"approved": True}).record["resolved"][0]["outcome"]["status"], "succeeded")
        self.assertEqual(self.ledger.applied, ["escalate:7"])

    def test_the_deployment_names_them_where_the_payload_does_not(self) -> None:
        def owners(calls: Any) -> List[str]:
            return ["duty-supervisor", f"owner-of-{calls[0]['arguments']['ticket']}"]

        peer = self.start(agent_graph(Tools()), approvers=owners, approver_field="by")
        paused = peer.prompt("c", "escalate ticket 8")
        self.assertEqual(
            paused.record["terminal"]["approvers"], {"field": "by", "names": ["duty-supervisor", "owner-of-8"]}
        )
        self.assertEqual(peer.redeem("c", paused, {"approved": True, "by": "owner-of-7"}).error["code"], "approver.not_entitled")
        denied = peer.redeem("c", paused, {"approved": False, "by": "owner-of-8"}).record
        self.assertEqual(denied["resolved"][0]["outcome"]["result"], {"escalated": False})
        self.assertEqual(self.ledger.applied, [])

    def test_a_subclass_that_admits_everyone_lets_anyones_yes_through(self) -> None:
        """The ``entitled`` seam decides: overridden to admit everyone (the
        LangGraph desk's ``any-approver-accepted`` twin), a foreign yes
        escalates, which the approval pack's foreign-answer probe sees."""

        class Anyone(LangGraphDeployment):
            def entitled(self, pause: Any, approver: Any) -> bool:
                return True

        peer = self.start(agent_graph(NamingTools()), kind=Anyone)  # type: ignore[arg-type]
        paused = peer.prompt("c", "escalate ticket 7")
        self.assertEqual(peer.redeem("c", paused, OUTSIDER).record["resolved"][0]["outcome"]["status"], "succeeded")
        self.assertEqual(self.ledger.applied, ["escalate:7"])


@needs_agents
class AgentsSdkApprovers(unittest.TestCase):
    """The shared base publishes and checks for the SDK's ``needs_approval`` too."""

    def test_a_foreign_answer_is_refused_and_the_token_redeems_after(self) -> None:
        from harness import async_session
        from test_adapter_openai_agents import fake_desk

        durable = tempfile.mkdtemp(prefix="approvers-")

        def desk(durable_dir: str) -> Any:
            return fake_desk(durable_dir, approvers=APPROVERS)

        out = async_session(desk, [hello(durable), prompt(1, "please escalate ticket 7")])
        terminal = answered(out, 1)["record"]["terminal"]
        self.assertEqual(terminal["approvers"], {"field": "approver", "names": APPROVERS})
        token, question = terminal["token"], terminal["question_id"]
        out = async_session(
            desk,
            [
                hello(durable),
                resume(2, token, OUTSIDER, question),
                resume(3, token, {"approved": True, "approver": "duty-supervisor"}, question),
                ledger(3, "escalate:7"),
            ],
        )
        self.assertEqual(answered(out, 2)["error"]["code"], "approver.not_entitled")
        self.assertEqual([m["id"] for m in out if m["type"] == "ledger_apply"], [3])
        self.assertEqual(answered(out, 3)["record"]["resolved"][0]["outcome"]["status"], "succeeded")


def owner_or_supervisor(calls: List[Dict[str, Any]]) -> List[str]:
    """The example desks' approvers: the duty supervisor, and the ticket's
    owner when the pause holds one escalation."""
    owners = {7: "rosa.lima", 8: "tomas.berg"}
    return ["duty-supervisor", *([owners[calls[0]["arguments"]["ticket"]]] if len(calls) == 1 else [])]


class HeldCallsApprovers:
    """Pydantic AI's deferred approvals and the ADK's tool confirmations,
    neither naming who answers: ``approvers=`` as a function of the held
    calls is published per pause, and checked, by the shared base."""

    def scripted_desk(self, durable_dir: str, **options: Any) -> Any:
        raise NotImplementedError

    def session(self, durable: str, lines: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        from harness import async_session

        return async_session(lambda d: self.scripted_desk(d, approvers=owner_or_supervisor), [hello(durable), *lines])

    def test_the_owner_may_answer_a_pause_on_their_ticket_and_an_outsider_may_not(self) -> None:
        assert isinstance(self, unittest.TestCase)
        durable = tempfile.mkdtemp(prefix="approvers-")
        terminal = answered(self.session(durable, [prompt(1, "escalate ticket 7")]), 1)["record"]["terminal"]
        self.assertEqual(terminal["approvers"], {"field": "approver", "names": ["duty-supervisor", "rosa.lima"]})
        token, question = terminal["token"], terminal["question_id"]
        out = self.session(
            durable,
            [
                resume(2, token, OUTSIDER, question),
                resume(3, token, {"approved": True, "approver": "tomas.berg"}, question),
                resume(4, token, {"approved": True, "approver": "rosa.lima"}, question),
                ledger(4, "escalate:7"),
            ],
        )
        for refused in (2, 3):
            self.assertEqual(answered(out, refused)["error"]["code"], "approver.not_entitled")
        self.assertEqual([m["id"] for m in out if m["type"] == "ledger_apply"], [4])
        self.assertEqual(answered(out, 4)["record"]["resolved"][0]["outcome"]["status"], "succeeded")

    def test_a_pause_holding_two_tickets_names_the_supervisor_alone(self) -> None:
        assert isinstance(self, unittest.TestCase)
        durable = tempfile.mkdtemp(prefix="approvers-")
        out = self.session(durable, [prompt(1, "escalate ticket 7 and escalate ticket 8")])
        terminal = answered(out, 1)["record"]["terminal"]
        self.assertEqual(terminal["approvers"], {"field": "approver", "names": ["duty-supervisor"]})
        out = self.session(durable, [resume(2, terminal["token"], {"approved": True, "approver": "rosa.lima"}, terminal["question_id"])])
        self.assertEqual(answered(out, 2)["error"]["code"], "approver.not_entitled")


@needs_pydantic_ai
class PydanticAIApprovers(HeldCallsApprovers, unittest.TestCase):
    def scripted_desk(self, durable_dir: str, **options: Any) -> Any:
        from test_adapter_pydantic_ai import scripted_desk

        return scripted_desk(durable_dir, **options)


@needs_adk
class AdkApprovers(HeldCallsApprovers, unittest.TestCase):
    def scripted_desk(self, durable_dir: str, **options: Any) -> Any:
        from test_adapter_google_adk import scripted_desk

        return scripted_desk(durable_dir, **options)


if __name__ == "__main__":
    unittest.main()
