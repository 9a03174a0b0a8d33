"""The LangGraph adapter on the shapes a real graph takes beyond one
interrupt in one tool: several interrupts waiting at once (a ``Send``
fan-out, ``create_agent``'s tool node), LangChain's human-in-the-loop
middleware in both its modes, async graphs run with ``ainvoke`` or
``astream``, and static breakpoints, with twins where a shape goes wrong.
Driven in process through the protocol, as ``test_adapter_langgraph``
drives the adapter (whose harness side this module reuses); skipped where
LangGraph is not installed."""

from __future__ import annotations

import re
import unittest
from typing import Any, Dict, List

from frameworks import missing
from test_adapter_langgraph import APPROVE, HAVE_LANGGRAPH, InProcess, Ledger, Peer, needs_langgraph, scratch

from symfonic_evals_protocol.adapters import effects, require_approval

if HAVE_LANGGRAPH:
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.tools import tool
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition
    from langgraph.types import Send, interrupt

    from symfonic_evals_protocol.adapters.langgraph import AsyncLangGraphDeployment, LangGraphDeployment

    try:
        from langchain.agents import create_agent
        from langchain.agents.middleware import HumanInTheLoopMiddleware
    except ImportError:  # the langgraph extra installs it; a bare LangGraph lacks it
        create_agent = None

    class FanOutChat(BaseChatModel):
        """Asks for one ``escalate_ticket`` call per ticket the prompt
        names (ids ``call_<ticket>``) and a ``weather_lookup`` per city it
        asks the weather in, and once tools answered, quotes them."""

        @property
        def _llm_type(self) -> str:
            return "fan-out"

        def bind_tools(self, tools: Any, **kwargs: Any) -> "FanOutChat":
            return self

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
            if isinstance(messages[-1], ToolMessage):
                answers = [str(m.content) for m in messages if isinstance(m, ToolMessage)]
                reply = AIMessage(content="done: " + " | ".join(answers))
            else:
                text = str(messages[-1].content)
                tickets = re.findall(r"\b(\d+)\b", text)
                calls = [{"name": "escalate_ticket", "args": {"ticket": int(t)}, "id": f"call_{t}"} for t in tickets]
                for city in re.findall(r"weather in (\w+)", text):
                    calls.append({"name": "weather_lookup", "args": {"city": city}, "id": f"call_{city}"})
                reply = AIMessage(content="", tool_calls=calls) if calls else AIMessage(content="how can I help?")
            return ChatResult(generations=[ChatGeneration(message=reply)])

    @tool("escalate_ticket")
    def ask_then_escalate(ticket: int) -> dict:
        """Escalate a ticket once a supervisor approves (asks in the tool)."""
        if not interrupt({"question": f"may I escalate ticket {ticket}?"})["approved"]:
            return {"escalated": False}
        effects.apply(f"escalate:{ticket}", tool="escalate_ticket")
        return {"escalated": ticket}

    @tool("escalate_ticket")
    async def escalate_async(ticket: int) -> dict:
        """Escalate a ticket once a supervisor approves (an async tool)."""
        if not interrupt({"question": f"may I escalate ticket {ticket}?"})["approved"]:
            return {"escalated": False}
        await effects.apply_async(f"escalate:{ticket}", tool="escalate_ticket")
        return {"escalated": ticket}

    @tool
    @effects.witnessed
    def weather_lookup(city: str) -> dict:
        """A plain tool, which an async graph runs on a thread."""
        return {"city": city, "forecast": "sunny"}

    def async_graph() -> Any:
        """An agent whose node is a coroutine: only ``ainvoke`` runs it."""
        model = FanOutChat()

        async def agent(state: MessagesState) -> dict:
            return {"messages": [await model.ainvoke(state["messages"])]}

        builder = StateGraph(MessagesState)
        builder.add_node("agent", agent)
        builder.add_node("tools", ToolNode([escalate_async, weather_lookup]))
        builder.add_edge(START, "agent")
        builder.add_conditional_edges("agent", tools_condition)
        builder.add_edge("tools", "agent")
        return builder

    @tool
    def escalate_ticket(ticket: int) -> dict:
        """Escalate a ticket (a middleware or a breakpoint holds it first)."""
        effects.apply(f"escalate:{ticket}", tool="escalate_ticket")
        return {"escalated": ticket}


@needs_langgraph
class Shapes(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = scratch(self, "langgraph-shapes-")
        self.ledger = Ledger()
        self.servers: List[InProcess] = []

    def tearDown(self) -> None:
        for server in self.servers:
            if server._thread.is_alive():
                server.stop()

    def start(self, graph: Any, kind: Any = None, **options: Any) -> Peer:
        cls = kind or LangGraphDeployment
        server = InProcess(lambda d: cls(d, graph, **options), self.dir, self.ledger)
        self.servers.append(server)
        return server.peer

    def needs_langchain(self) -> None:
        if create_agent is None:
            missing("langchain", "langgraph")

    # -- several interrupts at once ------------------------------------------------

    def test_two_interrupting_tools_wait_in_one_pause_and_one_answer_resumes_both(self) -> None:
        """``create_agent`` runs each tool call as a task of its own: two
        tools calling ``interrupt()`` wait side by side. One pause holds
        both calls, and one answer resumes both with one ``Command``."""
        self.needs_langchain()
        graph = create_agent(FanOutChat(), tools=[ask_then_escalate])
        peer = self.start(graph, validate_answer=require_approval)
        paused = peer.prompt("c", "escalate tickets 7 and 8")
        record = paused.record
        self.assertEqual(
            [(c["id"], c["outcome"]) for c in record["tool_calls"]],
            [("call_7", {"status": "pending"}), ("call_8", {"status": "pending"})],
        )
        questions = record["terminal"]["question"]["interrupts"]
        self.assertEqual(sorted(q["question"] for q in questions), ["may I escalate ticket 7?", "may I escalate ticket 8?"])
        resumed = peer.redeem("c", paused).record
        self.assertEqual(resumed["terminal"], {"kind": "completed"}, "no interrupt left waiting")
        self.assertEqual(
            [(r["id"], r["outcome"]["status"], r.get("arguments")) for r in resumed["resolved"]],
            [("call_7", "succeeded", {"ticket": 7}), ("call_8", "succeeded", {"ticket": 8})],
        )
        self.assertEqual(sorted(self.ledger.of("escalate_ticket")), ["escalate:7", "escalate:8"])
        self.assertEqual(peer.redeem("c", paused).error["code"], "pause.replayed")

    def test_twin_answering_the_first_interrupt_alone_leaves_a_call_waiting(self) -> None:
        """The shape going wrong: a desk that resumes only the interrupt it
        paused on (as the adapter did) leaves the other call waiting, a
        second pause for one question: ``approval/pending-call-resolved``
        sees a held call unresolved."""
        self.needs_langchain()

        class FirstOnly(LangGraphDeployment):
            def resume_answers(self, pause: Any, answer: Any) -> Dict[str, Any]:
                return {pause.handle["interrupt_id"]: answer}

        peer = self.start(create_agent(FanOutChat(), tools=[ask_then_escalate]), kind=FirstOnly)
        paused = peer.prompt("c", "escalate tickets 7 and 8")
        resumed = peer.redeem("c", paused).record
        self.assertEqual(resumed["terminal"]["kind"], "paused")
        self.assertEqual(len(resumed["resolved"]), 1)
        self.assertEqual(len(self.ledger.of("escalate_ticket")), 1)

    def test_decisions_reach_the_interrupts_in_pending_order(self) -> None:
        """An edit-shaped answer to plain interrupts, one per held call:
        each interrupt gets the decision at its call's place."""
        self.needs_langchain()

        @tool
        def escalate_ticket(ticket: int) -> dict:
            """Escalate a ticket when the reviewer's decision approves it."""
            if interrupt({"ticket": ticket})["type"] != "approve":
                return {"escalated": False}
            effects.apply(f"escalate:{ticket}", tool="escalate_ticket")
            return {"escalated": ticket}

        peer = self.start(create_agent(FanOutChat(), tools=[escalate_ticket]))
        paused = peer.prompt("c", "escalate tickets 7 and 8")
        answer = {"decisions": [{"type": "reject", "message": "not 7"}, {"type": "approve"}]}
        resumed = peer.redeem("c", paused, answer).record
        outcomes = {r["id"]: r["outcome"]["result"] for r in resumed["resolved"]}
        self.assertEqual(outcomes, {"call_7": {"escalated": False}, "call_8": {"escalated": 8}})
        self.assertEqual(self.ledger.of("escalate_ticket"), ["escalate:8"])

    def test_a_send_fan_out_pauses_on_every_branch(self) -> None:
        """``Send`` fans one node out to a branch each; every branch asks."""

        def fan(state: MessagesState) -> List[Send]:
            return [Send("ask", {"topic": topic}) for topic in ("lunch", "dinner")]

        def ask(state: Dict[str, Any]) -> dict:
            answer = interrupt({"topic": state["topic"]})
            return {"messages": [AIMessage(content=f"{state['topic']}: {answer}")]}

        builder = StateGraph(MessagesState)
        builder.add_node("ask", ask)
        builder.add_conditional_edges(START, fan, ["ask"])
        builder.add_edge("ask", END)
        peer = self.start(builder.compile())
        paused = peer.prompt("c", "plan the meals")
        terminal = paused.record["terminal"]
        self.assertEqual((terminal["kind"], terminal["interaction"]), ("paused", "ask"))
        self.assertEqual(sorted(q["topic"] for q in terminal["question"]["interrupts"]), ["dinner", "lunch"])
        resumed = peer.redeem("c", paused, "soup").record
        self.assertEqual(resumed["terminal"], {"kind": "completed"})
        self.assertTrue(resumed["attributes"]["resume_continued"])
        self.assertIn(resumed["answer"], ("lunch: soup", "dinner: soup"))

    # -- the human-in-the-loop middleware, batched -----------------------------------

    def test_the_middleware_batched_takes_mixed_decisions_in_one_answer(self) -> None:
        """The middleware's default mode: one interrupt holds every gated
        call of the model's message, answered by one ``{"decisions":
        [...]}`` in pending order. The approved call runs as asked, the
        edited one runs with the edited arguments (and is reported with
        them and the tool's own result, not the middleware's notice to the
        model), the rejected one is refused, and nothing runs as the model
        first asked it."""
        self.needs_langchain()
        middleware = HumanInTheLoopMiddleware(interrupt_on={"escalate_ticket": True})
        peer = self.start(create_agent(FanOutChat(), tools=[escalate_ticket], middleware=[middleware]))
        paused = peer.prompt("c", "escalate tickets 7, 8 and 9")
        record = paused.record
        self.assertEqual(
            [(c["id"], c["arguments"], c["outcome"]) for c in record["tool_calls"]],
            [(f"call_{t}", {"ticket": t}, {"status": "pending"}) for t in (7, 8, 9)],
        )
        self.assertEqual(len(record["terminal"]["question"]["action_requests"]), 3, "one interrupt for the three")
        self.assertEqual(record["terminal"]["editable"], ["call_7", "call_8", "call_9"])
        answer = {
            "decisions": [
                {"type": "approve"},
                {"type": "edit", "edited_action": {"name": "escalate_ticket", "args": {"ticket": 80}}},
                {"type": "reject", "message": "not 9"},
            ]
        }
        resumed = peer.redeem("c", paused, answer).record
        self.assertEqual(
            resumed["resolved"],
            [
                {"id": "call_7", "outcome": {"status": "succeeded", "result": {"escalated": 7}}, "arguments": {"ticket": 7}},
                {"id": "call_8", "outcome": {"status": "succeeded", "result": {"escalated": 80}}, "arguments": {"ticket": 80}},
                {"id": "call_9", "outcome": {"status": "refused", "stage": "human-review"}},
            ],
        )
        self.assertEqual(resumed["tool_calls"], [], "the held calls are resolved, not reported again")
        self.assertEqual(self.ledger.of("escalate_ticket"), ["escalate:7", "escalate:80"], "the tool got the edited ticket")
        self.assertIn("not 9", resumed["model_input"], "the model heard the reviewer's reason")
        self.assertIn("Executed instead: escalate_ticket", resumed["model_input"], "and of the edit, as the middleware told it")
        self.assertEqual(peer.redeem("c", paused, answer).error["code"], "pause.replayed")

    def test_twin_an_edit_heard_as_an_approval_runs_the_call_unedited(self) -> None:
        """The shape going wrong: a resume handler written for approve and
        reject hands the middleware an approval for every decision that is
        not a rejection. The edited call runs as the model asked it, and
        the record says so (the arguments it ran with are the model's):
        ``approval/edited-call`` sees the edit never reach the tool."""
        self.needs_langchain()

        class EditHeardAsApproval(LangGraphDeployment):
            def resume_answers(self, pause: Any, answer: Any) -> Dict[str, Any]:
                decisions = [{"type": "reject" if d["type"] == "reject" else "approve"} for d in answer["decisions"]]
                return super().resume_answers(pause, {"decisions": decisions})

        middleware = HumanInTheLoopMiddleware(interrupt_on={"escalate_ticket": True})
        graph = create_agent(FanOutChat(), tools=[escalate_ticket], middleware=[middleware])
        peer = self.start(graph, kind=EditHeardAsApproval)
        paused = peer.prompt("c", "escalate tickets 7 and 8")
        answer = {"decisions": [{"type": "approve"}, {"type": "edit", "edited_action": {"name": "escalate_ticket", "args": {"ticket": 80}}}]}
        resolved = {r["id"]: r for r in peer.redeem("c", paused, answer).record["resolved"]}
        self.assertEqual(resolved["call_8"]["arguments"], {"ticket": 8}, "the call as the model asked it")
        self.assertEqual(resolved["call_8"]["outcome"], {"status": "succeeded", "result": {"escalated": 8}})
        self.assertEqual(self.ledger.of("escalate_ticket"), ["escalate:7", "escalate:8"])

    # -- the human-in-the-loop middleware, per call ---------------------------------

    def test_the_middleware_per_call_takes_each_calls_decision(self) -> None:
        """``interrupt_mode="per_call"``: one interrupt a gated call, each
        answered with its call's decision: an edit runs with the edited
        arguments (and is reported so), a rejection is refused."""
        self.needs_langchain()
        middleware = HumanInTheLoopMiddleware(interrupt_on={"escalate_ticket": True}, interrupt_mode="per_call")
        peer = self.start(create_agent(FanOutChat(), tools=[escalate_ticket], middleware=[middleware]))
        paused = peer.prompt("c", "escalate tickets 7 and 8")
        record = paused.record
        self.assertEqual(record["terminal"]["editable"], ["call_7", "call_8"])
        answer = {
            "decisions": [
                {"type": "edit", "edited_action": {"name": "escalate_ticket", "args": {"ticket": 70}}},
                {"type": "reject", "message": "not 8"},
            ]
        }
        resolved = {r["id"]: r for r in peer.redeem("c", paused, answer).record["resolved"]}
        self.assertEqual(resolved["call_7"]["outcome"], {"status": "succeeded", "result": {"escalated": 70}})
        self.assertEqual(resolved["call_7"]["arguments"], {"ticket": 70}, "the call as it ran, not as asked")
        self.assertEqual(resolved["call_8"]["outcome"], {"status": "refused", "stage": "human-review"})
        self.assertEqual(self.ledger.of("escalate_ticket"), ["escalate:70"])

    def test_an_approval_reaches_the_middleware_as_its_decisions(self) -> None:
        """The approval pack's answer (``{"approved": ...}``) on a desk
        the middleware gates, in either mode: approve runs the calls,
        a denial refuses them."""
        self.needs_langchain()
        for mode in ("batched", "per_call"):
            with self.subTest(mode=mode):
                middleware = HumanInTheLoopMiddleware(interrupt_on={"escalate_ticket": True}, interrupt_mode=mode)
                peer = self.start(create_agent(FanOutChat(), tools=[escalate_ticket], middleware=[middleware]))
                paused = peer.prompt(f"{mode}-yes", "escalate tickets 1 and 2")
                approved = peer.redeem(f"{mode}-yes", paused, APPROVE).record["resolved"]
                self.assertEqual([r["outcome"]["status"] for r in approved], ["succeeded", "succeeded"])
                paused = peer.prompt(f"{mode}-no", "escalate tickets 3 and 4")
                denied = peer.redeem(f"{mode}-no", paused, {"approved": False}).record["resolved"]
                self.assertEqual([r["outcome"] for r in denied], [{"status": "refused", "stage": "human-review"}] * 2)
                self.servers[-1].stop()
        # Each mode applied tickets 1 and 2 (the second time as duplicates), never 3 or 4.
        self.assertEqual(dict(self.ledger.attempts), {"escalate:1": 2, "escalate:2": 2})

    # -- async graphs and streaming ----------------------------------------------

    def spied(self, factory: Any) -> "tuple[InProcess, List[str]]":
        """A server of ``factory``'s async deployment whose compiled graph
        notes each run it is given: ``ainvoke``, or ``astream`` with the
        events it streamed (LangGraph's own ``ainvoke`` streams inside, so
        an ``astream`` under an ``ainvoke`` is not noted)."""
        server = InProcess(factory, self.dir, self.ledger)
        self.servers.append(server)
        graph = server.deployments[-1].inner.graph
        runs: List[str] = []
        ainvoke, astream = graph.ainvoke, graph.astream
        inside: List[bool] = []

        async def spy_ainvoke(*args: Any, **kwargs: Any) -> Any:
            runs.append("ainvoke")
            inside.append(True)
            try:
                return await ainvoke(*args, **kwargs)
            finally:
                inside.pop()

        async def spy_astream(*args: Any, **kwargs: Any) -> Any:
            events = 0
            async for event in astream(*args, **kwargs):
                events += 1
                yield event
            if not inside:
                runs.append(f"astream:{events}")

        graph.ainvoke, graph.astream = spy_ainvoke, spy_astream
        return server, runs

    def test_an_async_graph_pauses_resumes_across_a_restart_and_refuses_a_replay(self) -> None:
        """``async def`` nodes and tools, with the synchronous deployment's
        arguments; run with ``ainvoke``, and with ``astream`` drained (and
        then only ``astream``: the graph notes which run it was given)."""
        for streaming in (False, True):
            with self.subTest(streaming=streaming):
                self.dir = scratch(self, "langgraph-async-")

                def factory(durable_dir: str) -> Any:
                    return AsyncLangGraphDeployment(
                        durable_dir, async_graph(), validate_answer=require_approval, streaming=streaming
                    )

                server, runs = self.spied(factory)
                paused = server.peer.prompt("c", "escalate ticket 7")
                terminal = paused.record["terminal"]
                self.assertEqual((terminal["kind"], terminal["interaction"]), ("paused", "escalate_ticket"))
                self.assertTrue(terminal["resumable"])
                self.assertEqual(paused.record["tool_calls"][0]["outcome"], {"status": "pending"})
                server.stop()
                server, resumed_runs = self.spied(factory)
                self.assertEqual(server.peer.redeem("c", paused, {"approved": "yes"}).error["code"], "answer.invalid")
                resumed = server.peer.redeem("c", paused).record
                self.assertEqual(
                    resumed["resolved"],
                    [{"id": "call_7", "outcome": {"status": "succeeded", "result": {"escalated": 7}}, "arguments": {"ticket": 7}}],
                )
                self.assertTrue(resumed["attributes"]["resume_checkpoint"])
                self.assertEqual(server.peer.redeem("c", paused).error["code"], "pause.replayed")
                weather = server.peer.prompt("w", "weather in Lisbon")
                self.assertEqual(weather.record["tool_calls"][0]["outcome"]["status"], "succeeded")
                self.assertEqual(len(weather.witnesses), 1, "a plain tool on a thread reaches the turn too")
                server.stop()
                # The prompt; then the resume and the weather prompt after the restart.
                for noted, count in ((runs, 1), (resumed_runs, 2)):
                    if streaming:
                        self.assertEqual(len(noted), count, noted)
                        self.assertTrue(all(re.fullmatch(r"astream:[1-9]\d*", run) for run in noted), noted)
                    else:
                        self.assertEqual(noted, ["ainvoke"] * count)
        self.assertEqual(self.ledger.of("escalate_ticket"), ["escalate:7"])
        self.assertEqual(self.ledger.attempts["escalate:7"], 2, "each flavour applied it once; the second was a duplicate")

    def test_twin_the_synchronous_deployment_cannot_run_an_async_graph(self) -> None:
        """Why the flavour exists: ``invoke`` on a coroutine node fails the turn."""
        peer = self.start(async_graph(), validate_answer=require_approval)
        self.assertEqual(peer.prompt("c", "escalate ticket 7").message["type"], "turn_error")

    # -- static breakpoints ----------------------------------------------------------

    def breakpoint_graph(self, after: bool = False) -> Any:
        model = FanOutChat()

        def agent(state: MessagesState) -> dict:
            return {"messages": [model.invoke(state["messages"])]}

        builder = StateGraph(MessagesState)
        builder.add_node("agent", agent)
        builder.add_node("tools", ToolNode([escalate_ticket]))
        builder.add_edge(START, "agent")
        builder.add_conditional_edges("agent", tools_condition)
        builder.add_edge("tools", "agent")
        if after:
            return builder.compile(interrupt_after=["agent"])
        return builder.compile(interrupt_before=["tools"])

    def test_a_static_breakpoint_is_a_pause(self) -> None:
        """``interrupt_before=["tools"]``: the run stops before the tool
        node with the model's calls unanswered. That is a pause holding
        them; an approval runs them, a rejection answers them rejected
        and runs nothing."""
        peer = self.start(self.breakpoint_graph(), validate_answer=require_approval)
        paused = peer.prompt("c", "escalate ticket 7")
        terminal = paused.record["terminal"]
        self.assertEqual((terminal["kind"], terminal["interaction"]), ("paused", "escalate_ticket"))
        self.assertEqual(terminal["question"], {"breakpoint": ["tools"]})
        self.assertTrue(terminal["resumable"])
        self.assertEqual(paused.record["tool_calls"][0]["outcome"], {"status": "pending"})
        self.assertEqual(self.ledger.applied, [])
        resumed = peer.redeem("c", paused).record
        self.assertEqual(resumed["terminal"], {"kind": "completed"})
        self.assertEqual(
            resumed["resolved"],
            [{"id": "call_7", "outcome": {"status": "succeeded", "result": {"escalated": 7}}, "arguments": {"ticket": 7}}],
        )
        self.assertTrue(resumed["attributes"]["resume_continued"])
        self.assertEqual(peer.redeem("c", paused).error["code"], "pause.replayed")

        denied_pause = peer.prompt("d", "escalate ticket 9")
        denied = peer.redeem("d", denied_pause, {"approved": False}).record
        self.assertEqual(denied["resolved"], [{"id": "call_9", "outcome": {"status": "refused", "stage": "human-review"}}])
        self.assertEqual(denied["terminal"], {"kind": "completed"})
        self.assertEqual(self.ledger.of("escalate_ticket"), ["escalate:7"])

    def test_a_breakpoint_after_a_node_pauses_too(self) -> None:
        """``interrupt_after=["agent"]``: the run stops once the model
        asked, before anything ran; a plain answer goes on."""
        peer = self.start(self.breakpoint_graph(after=True))
        paused = peer.prompt("c", "escalate ticket 7")
        self.assertEqual(paused.record["terminal"]["question"], {"breakpoint": ["tools"]})
        self.assertEqual(paused.record["tool_calls"][0]["outcome"], {"status": "pending"})
        resumed = peer.redeem("c", paused, "go on").record
        self.assertEqual(resumed["resolved"][0]["outcome"]["status"], "succeeded")
        # After the model's closing message nothing is left to run: no stop.
        self.assertEqual(resumed["terminal"], {"kind": "completed"})
        self.assertTrue(resumed["answer"].startswith("done:"))
        self.assertEqual(self.ledger.of("escalate_ticket"), ["escalate:7"])

    def test_a_breakpoint_the_thread_moved_past_is_stale(self) -> None:
        peer = self.start(self.breakpoint_graph(), validate_answer=require_approval)
        first = peer.prompt("c", "escalate ticket 7")
        peer.prompt("c", "escalate ticket 8")
        error = peer.redeem("c", first).error
        self.assertEqual((error["kind"], error["code"]), ("StalePauseToken", "pause.stale"))
        self.assertEqual(self.ledger.applied, [])


if __name__ == "__main__":
    unittest.main()
