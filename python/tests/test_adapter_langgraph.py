"""The adapters' shared machinery (standard library only, always run) and the
LangGraph adapter (run where LangGraph is installed: ``pip install
'./python[langgraph]'``; skipped otherwise).

The adapter is driven through the protocol as the harness drives it: a peer
that sends one request at a time, answers ``ledger_apply`` from a ledger of
its own and checks every line the deployment writes against the committed
schema. In process for the scripted graphs; as a child process, killed at a
ledger grant as the exactly-once and approval packs kill it, for the crash
tests and for the example desk (``examples/langgraph-desk/desk.py``), whose
``ChatOpenAI`` talks to a scripted OpenAI-compatible endpoint on loopback.
"""

from __future__ import annotations

import collections
import contextlib
import http.server
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import unittest
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

from frameworks import missing, needs
from harness import SCHEMA
from symfonic_evals_protocol import PromptRequest, ResumeRequest, TurnFailure, serve
from symfonic_evals_protocol.adapters import _common
from symfonic_evals_protocol.adapters._common import (
    AdapterStore,
    RunLease,
    bound_turn,
    effects,
    request_digest,
    require_approval,
)
from symfonic_evals_protocol.adapters._langgraph_review import without_edit_notice
from symfonic_evals_protocol.adapters.tokens import SignedTokenCodec

try:
    import langgraph  # noqa: F401
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition
    from langgraph.types import Command, interrupt

    from symfonic_evals_protocol.adapters._langgraph_thread import unanswered as _unanswered
    from symfonic_evals_protocol.adapters.langgraph import LangGraphDeployment
    from symfonic_evals_protocol.adapters.langgraph import deployment as langgraph_deployment

    HAVE_LANGGRAPH = True
except ImportError:
    HAVE_LANGGRAPH = False

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DESK = os.path.join(REPO, "examples", "langgraph-desk", "desk.py")
PACKAGE = os.path.join(REPO, "python")
needs_langgraph = needs(HAVE_LANGGRAPH, "LangGraph", "langgraph")
APPROVE = {"approved": True}


# -- the harness's side --------------------------------------------------------


class Ledger:
    """The harness's ledger: keys applied once, every attempt counted."""

    def __init__(self) -> None:
        self.applied: List[str] = []
        self.tools: Dict[str, Optional[str]] = {}
        self.attempts: "collections.Counter[str]" = collections.Counter()

    def apply(self, key: str, tool: Optional[str]) -> bool:
        self.attempts[key] += 1
        if key in self.applied:
            return False
        self.applied.append(key)
        self.tools[key] = tool
        return True

    def of(self, tool: str) -> List[str]:
        return [key for key in self.applied if self.tools[key] == tool]


@dataclass
class Reply:
    message: Optional[Dict[str, Any]]
    witnesses: List[Dict[str, Any]] = field(default_factory=list)
    killed: bool = False

    @property
    def record(self) -> Dict[str, Any]:
        assert self.message is not None and self.message["type"] == "turn_record", self.message
        return self.message["record"]

    @property
    def error(self) -> Dict[str, Any]:
        assert self.message is not None and self.message["type"] == "turn_error", self.message
        return self.message["error"]

    def calls(self, name: str) -> List[Dict[str, Any]]:
        return [c for c in self.record["tool_calls"] if c["name"] == name]


class Peer:
    """Speaks the harness's side of the protocol to one deployment."""

    def __init__(
        self,
        send: Callable[[bytes], None],
        readline: Callable[[], bytes],
        ledger: Ledger,
        kill: Optional[Callable[[], None]] = None,
    ) -> None:
        self._send, self._readline, self.ledger, self._kill = send, readline, ledger, kill
        self._id = 0

    def _write(self, message: Dict[str, Any]) -> None:
        problem = SCHEMA.validate("harness_message", message)
        assert problem is None, problem
        self._send(json.dumps(message).encode() + b"\n")

    def _read(self) -> Optional[Dict[str, Any]]:
        line = self._readline()
        if not line:
            return None
        message = json.loads(line)
        problem = SCHEMA.validate("child_message", message)
        assert problem is None, f"{message}: {problem}"
        return message

    def hello(self, durable_dir: str) -> Dict[str, Any]:
        self._write({"type": "hello", "protocol_versions": [1], "durable_dir": durable_dir, "trial": 0})
        ready = self._read()
        assert ready is not None and ready["type"] == "ready", ready
        return ready

    def _turn(self, kind: str, request: Dict[str, Any], crash_at: Optional[int]) -> Reply:
        self._id += 1
        self._write({"type": kind, "id": self._id, "request": request})
        reply, granted = Reply(None), 0
        while True:
            message = self._read()
            if message is None:
                return reply
            if message["type"] == "ledger_apply":
                applied = self.ledger.apply(message["key"], message.get("tool"))
                granted += int(applied)
                if applied and crash_at == granted:
                    assert self._kill is not None, "only a child process can be killed"
                    self._kill()
                    reply.killed = True
                    return reply
                self._write({"type": "ledger_result", "id": self._id, "key": message["key"], "applied": applied})
            elif message["type"] == "witness":
                reply.witnesses.append(message)
            else:
                assert message["id"] == self._id, message
                reply.message = message
                return reply

    def prompt(self, conversation: str, prompt: str, crash_at: Optional[int] = None, **fields: Any) -> Reply:
        return self._turn("prompt", {"conversation": conversation, "prompt": prompt, **fields}, crash_at)

    def resume(
        self,
        conversation: str,
        token: str,
        answer: Any,
        question_id: Optional[str],
        crash_at: Optional[int] = None,
    ) -> Reply:
        request = {"conversation": conversation, "token": token, "answer": answer}
        if question_id is not None:
            request["question_id"] = question_id
        return self._turn("resume", request, crash_at)

    def redeem(self, conversation: str, paused: Reply, answer: Any = APPROVE, **kwargs: Any) -> Reply:
        terminal = paused.record["terminal"]
        return self.resume(conversation, terminal["token"], answer, terminal.get("question_id"), **kwargs)

    def shutdown(self) -> None:
        self._write({"type": "shutdown"})


class InProcess:
    """A deployment served on a thread over pipes, the factory's deployment
    kept for the test to look at."""

    def __init__(self, factory: Callable[[str], Any], durable_dir: str, ledger: Ledger) -> None:
        self.deployments: List[Any] = []

        def build(directory: str) -> Any:
            deployment = factory(directory)
            self.deployments.append(deployment)
            return deployment

        harness_in, child_out = os.pipe()
        child_in, harness_out = os.pipe()
        self._to_child = os.fdopen(harness_out, "wb")
        self._from_child = os.fdopen(harness_in, "rb")
        reader, writer = os.fdopen(child_in, "rb"), os.fdopen(child_out, "wb")

        def run() -> None:
            try:
                serve(build, reader=reader, writer=writer)
            finally:
                writer.close()
                reader.close()

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        self.peer = Peer(self._send, self._from_child.readline, ledger)
        self.peer.hello(durable_dir)

    def _send(self, data: bytes) -> None:
        self._to_child.write(data)
        self._to_child.flush()

    def stop(self) -> None:
        self.peer.shutdown()
        self._to_child.close()
        self._thread.join(timeout=30)
        self._from_child.close()
        assert not self._thread.is_alive()


class Child:
    """A deployment as a child process, as the harness runs it."""

    def __init__(self, argv: List[str], durable_dir: str, ledger: Ledger, env: Dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [*argv, "--durable-dir", durable_dir],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.peer = Peer(self._send, self.process.stdout.readline, ledger, self.kill)
        self.peer.hello(durable_dir)

    def _send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def kill(self) -> None:
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        self._close()

    def stop(self) -> None:
        self.peer.shutdown()
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)
        self._close()

    def _close(self) -> None:
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None and not stream.closed:
                stream.close()


def scratch(test: unittest.TestCase, prefix: str) -> str:
    """A durable directory of the test's own, removed after it."""
    path = tempfile.mkdtemp(prefix=prefix)
    test.addCleanup(shutil.rmtree, path, ignore_errors=True)
    return path


# -- the shared machinery (no framework needed) -----------------------------------


class Common(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = scratch(self, "adapter-")
        self.store = AdapterStore(self.dir)
        self.run = RunLease(self.dir)

    def tearDown(self) -> None:
        self.store.close()
        self.run.close()

    def mint(self, conversation: str = "c") -> str:
        return self.store.pauses.mint(conversation, "q-1", "ask_user", [{"id": "call-1"}], {"interrupt_id": "i"})

    def refusal(self, request: ResumeRequest) -> Optional[str]:
        try:
            self.store.pauses.lookup(request)
        except TurnFailure as failure:
            return failure.code
        return None

    def test_a_token_is_bound_to_its_conversation_and_question(self) -> None:
        token = self.mint()
        self.assertGreaterEqual(len(token), 40)
        self.assertEqual(self.refusal(ResumeRequest("c", token + "x", APPROVE, "q-1")), "pause.unknown")
        self.assertEqual(self.refusal(ResumeRequest("c", token.upper(), APPROVE, "q-1")), "pause.unknown")
        self.assertEqual(self.refusal(ResumeRequest("elsewhere", token, APPROVE, "q-1")), "pause.foreign")
        self.assertEqual(self.refusal(ResumeRequest("c", token, APPROVE, "q-2")), "question.mismatch")
        self.assertEqual(self.refusal(ResumeRequest("c", token, APPROVE, None)), "question.mismatch")
        self.assertIsNone(self.refusal(ResumeRequest("c", token, APPROVE, "q-1")))
        self.assertNotEqual(self.mint("d"), token)

    def test_a_token_is_spent_once_and_a_dead_runs_claim_is_a_retry(self) -> None:
        token = self.mint()
        self.assertTrue(self.store.pauses.claim(token, self.run))
        pause = self.store.pauses.get(token)
        assert pause is not None
        with self.assertRaises(TurnFailure) as caught:
            self.store.pauses.refuse_replay(pause, self.run)  # this run is redeeming it
        self.assertEqual(caught.exception.kind, "PauseTokenReplayedError")
        successor = RunLease(self.dir)
        self.addCleanup(successor.close)
        self.assertFalse(self.store.pauses.claim(token, successor), "a live run's claim is not taken over")
        self.run.close()  # the claimant dies mid-continuation
        self.store.pauses.refuse_replay(pause, successor)  # the client's retry passes
        self.assertTrue(self.store.pauses.claim(token, successor))
        self.store.pauses.finish(token)
        finished = self.store.pauses.get(token)
        assert finished is not None and finished.finished
        with self.assertRaises(TurnFailure):
            self.store.pauses.refuse_replay(finished, successor)
        self.assertFalse(self.store.pauses.claim(token, successor))

    def test_a_released_claim_redeems_again(self) -> None:
        token = self.mint()
        self.assertTrue(self.store.pauses.claim(token, self.run))
        self.store.pauses.release(token, self.run)
        self.assertTrue(self.store.pauses.claim(token, self.run))

    def test_an_open_pause_of_the_same_question_is_handed_out_again(self) -> None:
        token = self.mint()
        self.assertEqual(self.mint(), token)
        self.store.pauses.finish(token)
        self.assertNotEqual(self.mint(), token)

    def test_the_same_unfinished_request_is_a_retry(self) -> None:
        digest = request_digest(PromptRequest("c", "charge order 7"))
        begun = self.store.turns.begin("c", digest, self.run, lambda: {"at": 1})
        self.assertEqual((begun.retry, begun.baseline), (False, {"at": 1}))
        self.store.turns.release("c", self.run)  # the turn raised
        begun = self.store.turns.begin("c", digest, self.run, lambda: {"at": 2})
        self.assertEqual((begun.retry, begun.baseline), (True, {"at": 1}))
        self.store.turns.finish("c", self.run)
        self.assertFalse(self.store.turns.begin("c", digest, self.run, lambda: {"at": 3}).retry, "finished")
        other = request_digest(PromptRequest("c", "charge order 8"))
        self.assertFalse(self.store.turns.begin("c", other, self.run, lambda: {"at": 4}).retry)
        # A live run's unfinished turn is not a retry; a dead run's is.
        successor = RunLease(self.dir)
        self.addCleanup(successor.close)
        self.assertFalse(self.store.turns.begin("c", other, successor, lambda: {"at": 5}).retry)
        successor.close()
        self.assertTrue(self.store.turns.begin("c", other, self.run, lambda: {"at": 6}).retry)

    def test_a_rejected_demonstration_is_another_request(self) -> None:
        plain = PromptRequest("c", "charge order 7")
        rejected = PromptRequest("c", "charge order 7", feedback="rejected")
        self.assertNotEqual(request_digest(rejected), request_digest(plain))
        self.assertEqual(request_digest(plain), request_digest(PromptRequest("c", "charge order 7", None, "user", None)))

    def test_reported_call_ids_never_repeat(self) -> None:
        calls = self.store.calls
        first = calls.report_id("a", "m1", "call_1")
        self.assertEqual(first, "call_1")
        self.assertEqual(calls.report_id("a", "m1", "call_1"), first)
        second = calls.report_id("b", "m1", "call_1")
        third = calls.report_id("a", "m2", "call_1")
        self.assertEqual(len({first, second, third}), 3)
        reopened = AdapterStore(self.dir)
        self.addCleanup(reopened.close)
        self.assertEqual(reopened.calls.report_id("b", "m1", "call_1"), second)

    def test_the_strict_approval(self) -> None:
        require_approval({"approved": False})
        for unfit in ({"approved": "true"}, {"approved": 1}, {"approved": "yes"}, {"approved": True, "x": 1}, True):
            with self.assertRaises(TurnFailure) as caught:
                require_approval(unfit)
            self.assertEqual(caught.exception.code, "answer.invalid")

    def test_the_middlewares_edit_notice_is_the_models_not_the_result(self) -> None:
        """The notice LangChain's middleware prepends to an edited call's
        tool message, in each shape it takes (text, text blocks, the notice
        alone for a tool that answered nothing), comes off; the tool's
        content stays as it is, however the desk worded the notice."""
        notice = "Reviewed. Executed instead: escalate_ticket with arguments {\"ticket\": 80}."
        self.assertEqual(without_edit_notice(f"{notice}\n\nTool response:\n{{\"escalated\": 80}}"), '{"escalated": 80}')
        self.assertEqual(without_edit_notice(notice), "")
        blocks = [{"type": "text", "text": notice + "\n\nTool response:"}, {"type": "text", "text": "ok"}]
        self.assertEqual(without_edit_notice(blocks), [{"type": "text", "text": "ok"}])
        self.assertEqual(without_edit_notice([notice, "ok"]), ["ok"])
        for plain in ('{"escalated": 80}', "Tool response: as it is", [{"type": "text", "text": "ok"}], []):
            self.assertEqual(without_edit_notice(plain), plain)

    def test_effects_need_a_running_turn(self) -> None:
        with self.assertRaises(RuntimeError):
            effects.apply("k")

        @effects.witnessed
        def body(city: str) -> str:
            return city

        self.assertEqual(body("Oslo"), "Oslo")  # outside a turn: unwitnessed

    def test_effects_reach_the_bound_turn(self) -> None:
        seen: List[Any] = []

        class FakeTurn(_common.Turn):
            def __init__(self) -> None:
                pass

            def ledger_apply(self, key: str, tool: Optional[str] = None) -> bool:
                seen.append(("apply", key, tool))
                return True

            def witness(self, tool: str, arguments: Any, **outcome: Any) -> None:
                seen.append(("witness", tool, arguments, outcome))

        @effects.witnessed
        def lookup(city: str, units: str = "metric") -> Dict[str, str]:
            if city == "Atlantis":
                raise KeyError("no forecast")
            return {"city": city}

        request = PromptRequest("c", "p")
        with bound_turn(FakeTurn(), request):
            self.assertIs(effects.request, request)
            self.assertTrue(effects.apply("escalate:7", tool="escalate_ticket"))
            lookup("Oslo")
            with self.assertRaises(KeyError):
                lookup(city="Atlantis")
        self.assertEqual(
            seen,
            [
                ("apply", "escalate:7", "escalate_ticket"),
                ("witness", "lookup", {"city": "Oslo"}, {"result": {"city": "Oslo"}}),
                ("witness", "lookup", {"city": "Atlantis"}, {"error": "'no forecast'"}),
            ],
        )
        with self.assertRaises(RuntimeError):
            effects.apply("k")


# -- the LangGraph adapter, in process, on scripted graphs ----------------------------


if HAVE_LANGGRAPH:

    class ScriptedChat(BaseChatModel):
        """A chat model that reads the last message and never guesses; its
        tool calls always carry the id ``call_1``, as a replayed model's may."""

        @property
        def _llm_type(self) -> str:
            return "scripted"

        def bind_tools(self, tools: Any, **kwargs: Any) -> "ScriptedChat":
            """The script names its tools itself (``create_agent`` binds them)."""
            return self

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
            last = messages[-1]
            if isinstance(last, ToolMessage):
                reply = AIMessage(content=f"done: {last.content}")
            else:
                text = str(last.content)
                calls = []
                for pattern, name, key, kind in (
                    (r"escalate ticket (\d+)", "escalate_ticket", "ticket", int),
                    (r"weather in (\w+)", "weather_lookup", "city", str),
                    (r"break (\w+)", "broken_tool", "what", str),
                    (r"ask about (\w+)", "ask_user", "topic", str),
                ):
                    match = re.search(pattern, text)
                    if match is not None:
                        calls.append({"name": name, "args": {key: kind(match[1])}, "id": "call_1"})
                reply = AIMessage(content="", tool_calls=calls) if calls else AIMessage(content="how can I help?")
            return ChatResult(generations=[ChatGeneration(message=reply)])

    class Tools:
        """Tool bodies that count how often each part of them ran."""

        def __init__(self) -> None:
            self.runs: "collections.Counter[str]" = collections.Counter()
            runs = self.runs

            @tool
            def escalate_ticket(ticket: int) -> dict:
                """Escalate a ticket once a supervisor approves."""
                runs["asked"] += 1
                answer = interrupt({"question": f"may I escalate ticket {ticket}?"})
                runs["answered"] += 1
                if not answer["approved"]:
                    return {"escalated": False}
                if effects.apply(f"escalate:{ticket}", tool="escalate_ticket"):
                    runs["escalated"] += 1
                return {"escalated": ticket}

            @tool
            @effects.witnessed
            def weather_lookup(city: str) -> dict:
                """Look up the weather in a city."""
                return {"city": city, "forecast": {"Lisbon": "sunny, 21 C", "Oslo": "snow, -4 C"}[city]}

            @tool
            def broken_tool(what: str) -> str:
                """Fails."""
                raise ValueError(f"{what} is broken")

            @tool
            @effects.witnessed
            def ask_user(topic: str) -> dict:
                """Ask a person; witnessed, so the interrupt must pass through."""
                return {"topic": topic, "answer": interrupt({"topic": topic})}

            self.all = [escalate_ticket, weather_lookup, broken_tool, ask_user]

    def agent_graph(tools: "Tools", checkpointer: Any = None) -> Any:
        model = ScriptedChat()

        def agent(state: MessagesState) -> dict:
            return {"messages": [model.invoke([("system", "you are the desk"), *state["messages"]])]}

        builder = StateGraph(MessagesState)
        builder.add_node("agent", agent)
        builder.add_node("tools", ToolNode(tools.all, handle_tool_errors=True))
        builder.add_edge(START, "agent")
        builder.add_conditional_edges("agent", tools_condition)
        builder.add_edge("tools", "agent")
        return builder.compile(checkpointer=checkpointer)


@needs_langgraph
class LangGraphAdapter(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = scratch(self, "langgraph-adapter-")
        self.ledger = Ledger()
        self.tools = Tools()
        self.servers: List[InProcess] = []

    def tearDown(self) -> None:
        for server in self.servers:
            if server._thread.is_alive():
                server.stop()

    def start(self, graph: Any = None, kind: Any = None, **options: Any) -> Peer:
        built = graph if graph is not None else agent_graph(self.tools)
        options.setdefault("validate_answer", require_approval)
        cls = kind or LangGraphDeployment
        server = InProcess(lambda d: cls(d, built, **options), self.dir, self.ledger)
        self.servers.append(server)
        return server.peer

    def restart(self, **options: Any) -> Peer:
        self.servers[-1].stop()
        return self.start(**options)

    def test_pause_resume_and_replay(self) -> None:
        peer = self.start()
        paused = peer.prompt("c", "escalate ticket 7 to a supervisor")
        record = paused.record
        terminal = record["terminal"]
        self.assertEqual(terminal["kind"], "paused")
        self.assertEqual(terminal["interaction"], "escalate_ticket")
        self.assertTrue(terminal["resumable"])
        self.assertEqual(terminal["question"], {"question": "may I escalate ticket 7?"})
        self.assertTrue(terminal["question_id"].startswith("q-"))
        self.assertEqual(
            record["tool_calls"],
            [{"id": "call_1", "name": "escalate_ticket", "arguments": {"ticket": 7}, "outcome": {"status": "pending"}}],
        )
        self.assertIn("human: escalate ticket 7 to a supervisor", record["model_input"])
        self.assertNotIn(terminal["token"], record["model_input"])
        self.assertEqual(self.ledger.applied, [])

        resumed = peer.redeem("c", paused).record
        self.assertEqual(resumed["terminal"], {"kind": "completed"})
        self.assertEqual(
            resumed["resolved"],
            [{"id": "call_1", "outcome": {"status": "succeeded", "result": {"escalated": 7}}, "arguments": {"ticket": 7}}],
        )
        self.assertEqual(resumed["tool_calls"], [])
        self.assertEqual(resumed["answer"], 'done: {"escalated": 7}')
        self.assertIn('tool escalate_ticket [call_1]: {"escalated": 7}', resumed["model_input"])
        attributes = resumed["attributes"]
        self.assertEqual(
            {k: attributes[k] for k in ("resume_outcome", "resume_name", "resume_checkpoint", "resume_continued")},
            {"resume_outcome": "resumed", "resume_name": "escalate_ticket", "resume_checkpoint": True, "resume_continued": True},
        )
        self.assertIsInstance(attributes["langgraph_checkpoint_id"], str)
        self.assertEqual(self.ledger.of("escalate_ticket"), ["escalate:7"])

        runs = dict(self.tools.runs)
        replay = peer.redeem("c", paused)
        self.assertEqual(replay.error["code"], "pause.replayed")
        self.assertEqual(replay.error["kind"], "PauseTokenReplayedError")
        self.assertEqual(dict(self.tools.runs), runs, "the graph never ran for the replay")

    def test_a_namespaced_thread_is_found_wherever_the_adapter_looks(self) -> None:
        """An honest desk that maps conversations to thread ids of its own
        through ``thread_config``: its pauses are resumable and its resumes
        bound to the checkpoint, on the tenant's thread and no other."""

        class Tenant(LangGraphDeployment):
            def thread_config(self, conversation: str, **extra: Any) -> Dict[str, Any]:
                config = super().thread_config(conversation, **extra)
                config["configurable"]["thread_id"] = f"tenant-a/{conversation}"
                return config

        peer = self.start(kind=Tenant)
        paused = peer.prompt("c", "escalate ticket 7 to a supervisor")
        self.assertTrue(paused.record["terminal"]["resumable"])
        peer = self.restart(kind=Tenant)
        resumed = peer.redeem("c", paused).record
        attributes = resumed["attributes"]
        self.assertEqual(
            {k: attributes[k] for k in ("resume_outcome", "resume_checkpoint", "resume_continued")},
            {"resume_outcome": "resumed", "resume_checkpoint": True, "resume_continued": True},
        )
        self.assertEqual(resumed["resolved"][0]["outcome"], {"status": "succeeded", "result": {"escalated": 7}})
        self.assertEqual(self.ledger.of("escalate_ticket"), ["escalate:7"])
        self.assertEqual(peer.redeem("c", paused).error["code"], "pause.replayed")
        graph = self.servers[-1].deployments[-1].graph
        threads = {c.config["configurable"]["thread_id"] for c in graph.checkpointer.list(None)}
        self.assertEqual(threads, {"tenant-a/c"}, "no checkpoint under the bare conversation")

    def test_a_token_codec_shapes_the_token_and_nothing_else(self) -> None:
        peer = self.start(token_codec=SignedTokenCodec("desk secret"))
        paused = peer.prompt("c", "escalate ticket 7")
        token = paused.record["terminal"]["token"]
        key, dot, signature = token.rpartition(".")
        self.assertTrue(dot and key and signature)
        unsigned = peer.resume("c", key, APPROVE, paused.record["terminal"]["question_id"])
        self.assertEqual(unsigned.error["code"], "pause.unknown")
        peer = self.restart(token_codec=SignedTokenCodec("desk secret"))
        self.assertEqual(peer.redeem("c", paused).record["resolved"][0]["outcome"]["status"], "succeeded")
        self.assertEqual(peer.redeem("c", paused).error["code"], "pause.replayed")

    def test_deployment_builds_the_graph_in_the_serving_process(self) -> None:
        built: List[Any] = []

        def make_graph() -> Any:
            built.append(agent_graph(self.tools))
            return built[-1]

        factory = langgraph_deployment(make_graph, validate_answer=require_approval)
        self.assertEqual(built, [], "nothing is built before the factory is called")
        server = InProcess(factory, self.dir, self.ledger)
        self.servers.append(server)
        self.assertEqual(len(built), 1)
        paused = server.peer.prompt("c", "escalate ticket 7")
        self.assertEqual(server.peer.redeem("c", paused, {"approved": "yes"}).error["code"], "answer.invalid")

    def test_a_create_agent_graph_pauses_and_resumes(self) -> None:
        """An agent built as LangGraph's docs build one (langchain's
        ``create_agent``, from the ``langgraph`` extra), served as it is."""
        try:
            from langchain.agents import create_agent
        except ImportError:
            missing("langchain", "langgraph")
        graph = create_agent(ScriptedChat(), tools=self.tools.all, system_prompt="you are the desk")
        peer = self.start(graph=graph)
        paused = peer.prompt("c", "escalate ticket 7")
        self.assertEqual(paused.record["terminal"]["interaction"], "escalate_ticket")
        self.assertTrue(paused.record["terminal"]["resumable"])
        resumed = peer.redeem("c", paused).record
        self.assertEqual(resumed["resolved"][0]["outcome"], {"status": "succeeded", "result": {"escalated": 7}})
        self.assertEqual(self.ledger.of("escalate_ticket"), ["escalate:7"])
        self.assertEqual(peer.redeem("c", paused).error["code"], "pause.replayed")

    def test_a_reviewer_edits_or_rejects_a_call_the_middleware_holds(self) -> None:
        """LangChain's human-in-the-loop middleware: the adapter names the
        held call editable, hands the middleware the edit, and reports the
        call with the arguments it ran with (the model's message keeps the
        ones it asked for); a rejection is refused, not failed."""
        try:
            from langchain.agents import create_agent
            from langchain.agents.middleware import HumanInTheLoopMiddleware
        except ImportError:
            missing("langchain", "langgraph")

        @tool
        def escalate_ticket(ticket: int) -> dict:
            """Escalate a ticket; a supervisor reviews the call first."""
            effects.apply(f"escalate:{ticket}", tool="escalate_ticket")
            return {"escalated": ticket}

        middleware = HumanInTheLoopMiddleware(interrupt_on={"escalate_ticket": True})
        graph = create_agent(ScriptedChat(), tools=[escalate_ticket], middleware=[middleware])
        declared = LangGraphDeployment(scratch(self, "langgraph-hitl-"), graph)
        self.addCleanup(declared.close)
        self.assertIn("editable-calls", declared.capabilities().traits)
        peer = self.start(graph=graph, validate_answer=None)
        paused = peer.prompt("c", "escalate ticket 7")
        held = paused.record["tool_calls"][0]
        self.assertEqual(paused.record["terminal"]["editable"], [held["id"]])
        edit = {"decisions": [{"type": "edit", "edited_action": {"name": "escalate_ticket", "args": {"ticket": 8}}}]}
        resolved = peer.redeem("c", paused, edit).record["resolved"]
        self.assertEqual(resolved[0]["arguments"], {"ticket": 8})
        self.assertEqual(self.ledger.of("escalate_ticket"), ["escalate:8"])
        paused = peer.prompt("c-reject", "escalate ticket 9")
        reject = {"decisions": [{"type": "reject", "message": "not this one"}]}
        resolved = peer.redeem("c-reject", paused, reject).record["resolved"]
        self.assertEqual(resolved[0]["outcome"], {"status": "refused", "stage": "human-review"})
        self.assertNotIn("arguments", resolved[0])
        self.assertEqual(self.ledger.of("escalate_ticket"), ["escalate:8"])

    def test_refusals_come_before_the_graph_runs(self) -> None:
        peer = self.start()
        paused = peer.prompt("c", "escalate ticket 7")
        terminal = paused.record["terminal"]
        token, question = terminal["token"], terminal["question_id"]
        runs = dict(self.tools.runs)
        for request, code in (
            (("c", token[:-1] + ("A" if token[-1] != "A" else "B"), APPROVE, question), "pause.unknown"),
            (("c", token[:-1], APPROVE, question), "pause.unknown"),
            (("c", token + "x", APPROVE, question), "pause.unknown"),
            (("c-elsewhere", token, APPROVE, question), "pause.foreign"),
            (("c", token, APPROVE, "q-forged"), "question.mismatch"),
            (("c", token, {"approved": "maybe"}, question), "answer.invalid"),
            (("c", token, {"approved": "true"}, question), "answer.invalid"),
            (("c", token, {"approved": 1}, question), "answer.invalid"),
        ):
            self.assertEqual(peer.resume(*request).error["code"], code, request)
        self.assertEqual(dict(self.tools.runs), runs)
        self.assertEqual(self.ledger.attempts, collections.Counter())
        # None of them spent the token.
        self.assertEqual(peer.redeem("c", paused).record["resolved"][0]["outcome"]["status"], "succeeded")

    def test_a_denial_runs_nothing_and_spends_the_token(self) -> None:
        peer = self.start()
        paused = peer.prompt("c-deny", "escalate ticket 7")
        denied = peer.redeem("c-deny", paused, {"approved": False}).record
        self.assertEqual(denied["resolved"][0]["outcome"], {"status": "succeeded", "result": {"escalated": False}})
        self.assertEqual(self.ledger.applied, [])
        self.assertEqual(peer.redeem("c-deny", paused, {"approved": False}).error["code"], "pause.replayed")

    def test_restarts_keep_the_pause_and_the_spent_mark(self) -> None:
        peer = self.start()
        paused = peer.prompt("c", "escalate ticket 7")
        peer = self.restart()
        resumed = peer.redeem("c", paused).record
        self.assertEqual(resumed["attributes"]["resume_checkpoint"], True)
        self.assertEqual(resumed["resolved"][0]["id"], "call_1")
        peer = self.restart()
        self.assertEqual(peer.redeem("c", paused).error["code"], "pause.replayed")
        self.assertEqual(self.ledger.attempts["escalate:7"], 1)

    def test_two_conversations_hold_their_own_pauses(self) -> None:
        peer = self.start()
        a = peer.prompt("c-a", "escalate ticket 7")
        b = peer.prompt("c-b", "escalate ticket 7")
        self.assertNotEqual(a.record["terminal"]["token"], b.record["terminal"]["token"])
        ids = {a.record["tool_calls"][0]["id"], b.record["tool_calls"][0]["id"]}
        self.assertEqual(len(ids), 2, "the model's call_1 is reported under ids unique in the trial")
        self.assertEqual(peer.redeem("c-a", a).record["resolved"][0]["id"], a.record["tool_calls"][0]["id"])
        self.assertEqual(peer.redeem("c-b", b).record["resolved"][0]["id"], b.record["tool_calls"][0]["id"])
        self.assertEqual(peer.redeem("c-a", a).error["code"], "pause.replayed")
        self.assertEqual(peer.redeem("c-b", b).error["code"], "pause.replayed")

    def test_a_pause_the_conversation_moved_past_is_stale(self) -> None:
        peer = self.start()
        paused = peer.prompt("c", "escalate ticket 7")
        self.assertEqual(peer.prompt("c", "hello").record["answer"], "how can I help?")
        runs = dict(self.tools.runs)
        stale = peer.redeem("c", paused)
        self.assertEqual((stale.error["kind"], stale.error["code"]), ("StalePauseToken", "pause.stale"))
        self.assertEqual(dict(self.tools.runs), runs)

    def test_tool_results_errors_and_witnesses(self) -> None:
        peer = self.start()
        first = peer.prompt("w", "what is the weather in Lisbon")
        call = first.record["tool_calls"][0]
        self.assertEqual(call["outcome"], {"status": "succeeded", "result": {"city": "Lisbon", "forecast": "sunny, 21 C"}})
        self.assertIn("sunny, 21 C", first.record["model_input"])
        self.assertEqual(
            [(w["tool"], w["arguments"], w["outcome"]) for w in first.witnesses],
            [("weather_lookup", {"city": "Lisbon"}, {"status": "succeeded", "result": call["outcome"]["result"]})],
        )
        again = peer.prompt("w", "what is the weather in Oslo")
        self.assertNotEqual(again.record["tool_calls"][0]["id"], call["id"])
        self.assertIn("snow, -4 C", again.record["model_input"])
        broken = peer.prompt("w", "break printer").record["tool_calls"][0]
        self.assertEqual(broken["outcome"]["status"], "failed")
        self.assertIn("printer is broken", broken["outcome"]["error"])

    def test_a_retried_prompt_continues_from_the_checkpoint(self) -> None:
        flaky = {"left": 1}

        def charge(state: MessagesState) -> dict:
            effects.apply("charge:7", tool="charge_card")
            if flaky["left"]:
                flaky["left"] -= 1
                raise RuntimeError("the payment provider timed out: secret-text 4242")
            return {"messages": [AIMessage(content="charged")]}

        builder = StateGraph(MessagesState)
        builder.add_node("charge", charge)
        builder.add_edge(START, "charge")
        builder.add_edge("charge", END)
        peer = self.start(graph=builder.compile())
        failed = peer.prompt("p", "charge order 7").error
        self.assertEqual(failed["kind"], "UnhandledException")
        # The node's exception, named by its type and its frame in this
        # file, reaches the harness through the framework; its text does not.
        self.assertEqual(failed["exception"]["qualified_name"], "builtins.RuntimeError")
        innermost = failed["exception"]["frames"][-1]
        self.assertEqual(innermost["function"], f"{type(self).__qualname__}.test_a_retried_prompt_continues_from_the_checkpoint.<locals>.charge")
        self.assertTrue(innermost["file"].endswith("test_adapter_langgraph.py"), innermost)
        self.assertFalse(innermost["file"].startswith("/"), innermost)
        self.assertNotIn("secret-text", json.dumps(failed))
        retried = peer.prompt("p", "charge order 7").record
        self.assertEqual(retried["answer"], "charged")
        deployment = self.servers[-1].deployments[-1]
        state = deployment.graph.get_state(deployment.thread_config("p"))
        humans = [m for m in state.values["messages"] if m.type == "human"]
        self.assertEqual(len(humans), 1, "the retry went on from the checkpoint, not from a second message")
        self.assertEqual(self.ledger.attempts["charge:7"], 2)
        self.assertEqual(self.ledger.applied, ["charge:7"])
        # A finished request sent again is a new request.
        peer.prompt("p", "charge order 7")
        state = deployment.graph.get_state(deployment.thread_config("p"))
        self.assertEqual(len([m for m in state.values["messages"] if m.type == "human"]), 2)

    def test_a_review_node_before_the_tools_parks_the_call(self) -> None:
        model = ScriptedChat()
        tools = self.tools

        def agent(state: MessagesState) -> dict:
            return {"messages": [model.invoke(state["messages"])]}

        def review(state: MessagesState) -> Command:
            answer = interrupt({"review": state["messages"][-1].tool_calls})
            return Command(goto="tools" if answer["approved"] else END)

        builder = StateGraph(MessagesState)
        builder.add_node("agent", agent)
        builder.add_node("review", review)
        builder.add_node("tools", ToolNode(tools.all))
        builder.add_edge(START, "agent")
        builder.add_conditional_edges("agent", tools_condition, {"tools": "review", END: END})
        builder.add_edge("tools", END)
        peer = self.start(graph=builder.compile())
        paused = peer.prompt("r", "what is the weather in Oslo")
        self.assertEqual(paused.record["terminal"]["interaction"], "weather_lookup")
        self.assertEqual(paused.record["tool_calls"][0]["outcome"], {"status": "pending"})
        approved = peer.redeem("r", paused).record
        self.assertEqual(approved["resolved"][0]["outcome"]["status"], "succeeded")
        denied_pause = peer.prompt("r-deny", "what is the weather in Lisbon")
        denied = peer.redeem("r-deny", denied_pause, {"approved": False}).record
        self.assertEqual(denied["resolved"][0]["outcome"], {"status": "refused", "stage": "human-review"})

    def test_an_interrupt_inside_a_subgraph_parks_the_interrupting_call(self) -> None:
        """The agent is a subgraph of the desk's graph: its tool's
        ``interrupt()`` waits in the subgraph's state, which the parent's
        messages do not show until the subgraph finishes. The pause holds
        the call anyway, and the resume resolves it."""
        builder = StateGraph(MessagesState)
        builder.add_node("desk", agent_graph(self.tools))
        builder.add_edge(START, "desk")
        builder.add_edge("desk", END)
        peer = self.start(graph=builder.compile())
        reply = peer.prompt("s", "escalate ticket 7 to a supervisor")
        paused = reply.record
        self.assertEqual(paused["terminal"]["interaction"], "escalate_ticket", "the tool, not the subgraph's node")
        self.assertEqual(
            paused["tool_calls"],
            [{"id": "call_1", "name": "escalate_ticket", "arguments": {"ticket": 7}, "outcome": {"status": "pending"}}],
        )
        deployment = self.servers[-1].deployments[-1]
        top = deployment.graph.get_state(deployment.thread_config("s"))
        self.assertEqual([m.type for m in top.values["messages"]], ["human"], "the parent alone shows no call")
        resumed = peer.redeem("s", reply).record
        self.assertEqual(
            resumed["resolved"],
            [{"id": "call_1", "outcome": {"status": "succeeded", "result": {"escalated": 7}}, "arguments": {"ticket": 7}}],
        )
        self.assertEqual(resumed["tool_calls"], [])
        self.assertEqual(self.ledger.of("escalate_ticket"), ["escalate:7"])
        self.assertEqual(peer.redeem("s", reply).error["code"], "pause.replayed")

    def test_twin_a_subgraph_interrupt_read_off_the_parent_holds_no_call(self) -> None:
        """The shape going wrong: a deployment that reads what a pause holds
        off the parent graph's state alone (``graph.get_state(config)``, as
        a hand-written LangGraph deployment does, and the adapter did)
        reports the interrupt against the subgraph's node with nothing
        pending; the resume then shows the call as a new one, resolved
        nowhere: ``approval/pending-call-resolved`` sees no held call
        resolved, where the honest deployment (above) resolves it."""

        class ParentOnly(LangGraphDeployment):
            def _pending(self, conversation: str, messages: List[Any]) -> List[Dict[str, Any]]:
                return _unanswered(messages)

        builder = StateGraph(MessagesState)
        builder.add_node("desk", agent_graph(self.tools))
        builder.add_edge(START, "desk")
        builder.add_edge("desk", END)
        peer = self.start(graph=builder.compile(), kind=ParentOnly)
        reply = peer.prompt("s", "escalate ticket 7 to a supervisor")
        paused = reply.record
        self.assertEqual(paused["terminal"]["interaction"], "desk", "the subgraph's node, not the tool")
        self.assertEqual(paused["tool_calls"], [], "no call pending")
        resumed = peer.redeem("s", reply).record
        self.assertEqual(resumed.get("resolved", []), [])
        self.assertEqual([(c["name"], c["outcome"]["status"]) for c in resumed["tool_calls"]], [("escalate_ticket", "succeeded")])
        self.assertEqual(self.ledger.of("escalate_ticket"), ["escalate:7"], "the effect ran, under no held call")

    def test_an_interrupt_passes_through_a_witnessed_tool(self) -> None:
        peer = self.start(validate_answer=None)
        paused = peer.prompt("a", "ask about lunch")
        self.assertEqual(paused.witnesses, [], "an interrupt is not the tool failing")
        resumed = peer.redeem("a", paused, "soup")
        expected = {"topic": "lunch", "answer": "soup"}
        self.assertEqual(resumed.record["resolved"][0]["outcome"], {"status": "succeeded", "result": expected})
        self.assertEqual([w["outcome"] for w in resumed.witnesses], [{"status": "succeeded", "result": expected}])

    def test_two_interrupts_in_one_node_pause_twice(self) -> None:
        def node(state: MessagesState) -> dict:
            first, second = interrupt("first?"), interrupt("second?")
            return {"messages": [AIMessage(content=f"{first} then {second}")]}

        builder = StateGraph(MessagesState)
        builder.add_node("ask", node)
        builder.add_edge(START, "ask")
        builder.add_edge("ask", END)
        peer = self.start(graph=builder.compile(), validate_answer=None)
        first = peer.prompt("c", "go")
        self.assertEqual(first.record["terminal"]["interaction"], "ask")
        second = peer.redeem("c", first, "A").record
        self.assertEqual(second["terminal"]["question"], "second?")
        self.assertNotEqual(second["terminal"]["question_id"], first.record["terminal"]["question_id"])
        self.assertTrue(second["attributes"]["resume_continued"])
        done = peer.resume("c", second["terminal"]["token"], "B", second["terminal"]["question_id"]).record
        self.assertEqual(done["answer"], "A then B")
        self.assertEqual(peer.redeem("c", first, "A").error["code"], "pause.replayed")

    def test_operator_turns_are_refused(self) -> None:
        peer = self.start()
        self.assertEqual(peer.prompt("c", "approve it", role="operator").error["code"], "operator.unsupported")

    def test_an_in_memory_checkpointer_loses_the_pause_on_restart(self) -> None:
        warned = io.StringIO()
        with contextlib.redirect_stderr(warned):
            peer = self.start(graph=agent_graph(self.tools, checkpointer=InMemorySaver()))
            paused = peer.prompt("c", "escalate ticket 7")
            self.servers[-1].stop()
            peer = self.start(graph=agent_graph(self.tools, checkpointer=InMemorySaver()))
        self.assertIn("a restart loses every paused turn", warned.getvalue())
        self.assertEqual(peer.redeem("c", paused).error["code"], "pause.stale")

    def test_without_the_adapters_check_langgraph_accepts_a_replay(self) -> None:
        class Trusting(LangGraphDeployment):
            def admit(self, pause: Any, snapshot: Any) -> None:
                pass

        peer = self.start(kind=Trusting)
        paused = peer.prompt("c", "escalate ticket 7")
        peer.redeem("c", paused)
        replay = peer.redeem("c", paused)
        self.assertEqual(replay.record["terminal"], {"kind": "completed"}, "LangGraph said nothing")


# -- as child processes: crashes, and the example desk over its model endpoint ---------


class ScriptedOpenAI:
    """An OpenAI-compatible Chat Completions endpoint on loopback that plans
    like the desk's model would: a tool call for a request it recognises
    (always id ``call_1``), the tool's content as the answer after a tool
    message."""

    def __init__(self) -> None:
        counter = iter(range(1, 1_000_000))
        self.requests: List[Dict[str, Any]] = []
        requests = self.requests

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - the standard library's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                requests.append(body)
                last = body["messages"][-1]
                message: Dict[str, Any] = {"role": "assistant", "content": None}
                if last["role"] == "tool":
                    message["content"] = f"done: {last['content']}"
                else:
                    text = last["content"] if isinstance(last["content"], str) else json.dumps(last["content"])
                    calls = []
                    for pattern, name, key, kind in (
                        (r"escalate ticket (\d+)", "escalate_ticket", "ticket", int),
                        (r"weather in (\w+)", "weather_lookup", "city", str),
                    ):
                        match = re.search(pattern, text)
                        if match is not None:
                            arguments = json.dumps({key: kind(match[1])})
                            calls.append({"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}})
                    if calls:
                        message["tool_calls"] = calls
                    else:
                        message["content"] = "how can I help?"
                answer = {
                    "id": f"chatcmpl-{next(counter)}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model", "scripted"),
                    "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if "tool_calls" in message else "stop"}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


PAYMENTS = textwrap.dedent(
    """
    import sys
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langchain_core.messages import AIMessage
    from symfonic_evals_protocol import serve
    from symfonic_evals_protocol.adapters import effects
    from symfonic_evals_protocol.adapters.langgraph import LangGraphDeployment

    def charge(state: MessagesState) -> dict:
        effects.apply("charge:7", tool="charge_card")
        effects.apply("receipt:7", tool="send_receipt")
        return {"messages": [AIMessage(content="charged and receipted")]}

    builder = StateGraph(MessagesState)
    builder.add_node("charge", charge)
    builder.add_edge(START, "charge")
    builder.add_edge("charge", END)
    durability = None if "--langgraph-default-durability" in sys.argv else "sync"
    sys.exit(serve(lambda d: LangGraphDeployment(d, builder.compile(), durability=durability)))
    """
)


@needs_langgraph
class OverTheProtocol(unittest.TestCase):
    """Child processes, killed where the packs kill them."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.model = ScriptedOpenAI()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.model.close()

    def setUp(self) -> None:
        self.dir = scratch(self, "langgraph-child-")
        self.ledger = Ledger()
        self.children: List[Child] = []
        self.env = dict(os.environ)
        self.env.update(
            OPENAI_BASE_URL=self.model.url,
            OPENAI_API_KEY="sk-proj-4f9c2a7e1b8d3065c9e2f1a4b7d0e3c6",
            PYTHONPATH=os.pathsep.join(filter(None, [PACKAGE, os.environ.get("PYTHONPATH")])),
        )

    def tearDown(self) -> None:
        for child in self.children:
            if child.process.poll() is None:
                child.kill()

    def start(self, *argv: str) -> Peer:
        child = Child([sys.executable, *argv], self.dir, self.ledger, self.env)
        self.children.append(child)
        return child.peer

    def test_a_prompt_killed_at_each_effect_is_retried_from_the_checkpoint(self) -> None:
        script = os.path.join(self.dir, "payments.py")
        with open(script, "w") as out:
            out.write(PAYMENTS)
        # LangGraph's own default durability ("async") may not have written
        # the step's checkpoint when the kill comes; the retry goes on anyway.
        for effect, durability in ((1, []), (2, []), (1, ["--langgraph-default-durability"])):
            self.ledger = Ledger()
            self.dir = scratch(self, "langgraph-child-")
            killed = self.start(script, *durability).prompt("p", "charge order 7", crash_at=effect)
            self.assertTrue(killed.killed)
            retried = self.start(script, *durability).prompt("p", "charge order 7").record
            self.assertEqual(retried["answer"], "charged and receipted")
            self.assertEqual(self.ledger.applied, ["charge:7", "receipt:7"], effect)
            granted_before_the_kill = self.ledger.applied[effect - 1]
            self.assertEqual(self.ledger.attempts[granted_before_the_kill], 2, "the interrupted key was asked again")
            self.children[-1].stop()

    def test_the_desk_pauses_resumes_survives_a_crash_and_refuses_replays(self) -> None:
        peer = self.start(DESK)
        weather = peer.prompt("x", "what is the weather in Lisbon")
        call = weather.calls("weather_lookup")[0]
        self.assertEqual(call["outcome"], {"status": "succeeded", "result": {"city": "Lisbon", "forecast": "sunny, 21 C"}})
        self.assertEqual([w["arguments"] for w in weather.witnesses], [{"city": "Lisbon"}])
        self.assertIn("sunny, 21 C", weather.record["model_input"])
        self.assertIn("system: You are the help desk agent.", weather.record["model_input"])
        self.assertEqual(weather.record["answer"], 'done: {"city": "Lisbon", "forecast": "sunny, 21 C"}')

        paused = peer.prompt("c", "escalate ticket 7 to a supervisor")
        self.assertEqual(paused.record["terminal"]["interaction"], "escalate_ticket")
        self.assertNotEqual(paused.record["tool_calls"][0]["id"], call["id"], "call_1 twice, reported once each")
        killed = peer.redeem("c", paused, crash_at=1)
        self.assertTrue(killed.killed)
        peer = self.start(DESK)
        retried = peer.redeem("c", paused).record
        self.assertEqual(retried["resolved"][0]["outcome"], {"status": "succeeded", "result": {"escalated": 7}})
        self.assertEqual(retried["tool_calls"], [])
        attributes = retried["attributes"]
        self.assertEqual((attributes["resume_checkpoint"], attributes["resume_continued"]), (True, True))
        self.assertEqual(self.ledger.attempts["escalate:7"], 2)
        self.assertEqual(self.ledger.applied, ["escalate:7"])
        self.assertEqual(peer.redeem("c", paused).error["code"], "pause.replayed")

        # A restart between pause and resume, then one before the replay.
        second = peer.prompt("c2", "escalate ticket 8")
        self.children[-1].stop()
        peer = self.start(DESK)
        self.assertTrue(peer.redeem("c2", second).record["attributes"]["resume_continued"])
        self.assertEqual(peer.redeem("c2", second, {"approved": "yes"}).error["code"], "answer.invalid")
        self.assertEqual(peer.redeem("c2", second).error["code"], "pause.replayed")
        self.children[-1].stop()

    def test_twin_notice_before_interrupt_sends_the_notice_twice(self) -> None:
        peer = self.start(DESK, "--twin", "notice-before-interrupt")
        paused = peer.prompt("c", "escalate ticket 7")
        self.assertEqual(len(self.ledger.of("notify_requester")), 1)
        peer.redeem("c", paused)
        self.assertEqual(len(self.ledger.of("notify_requester")), 2, "the tool ran again from its start")
        self.assertEqual(self.ledger.of("escalate_ticket"), ["escalate:7"])
        self.children[-1].stop()

    def test_twin_trusts_framework_replay_accepts_the_replay(self) -> None:
        peer = self.start(DESK, "--variant", "trusts-framework-replay")
        paused = peer.prompt("c", "escalate ticket 7")
        peer.redeem("c", paused)
        self.assertEqual(peer.redeem("c", paused).record["terminal"], {"kind": "completed"})
        self.children[-1].stop()

    def test_the_desk_names_who_may_answer_and_refuses_anyone_else(self) -> None:
        peer = self.start(DESK)
        paused = peer.prompt("c", "escalate ticket 7")
        approvers = paused.record["terminal"]["approvers"]
        self.assertEqual(approvers, {"field": "approver", "names": ["duty-supervisor", "rosa.lima"]})
        foreign = peer.redeem("c", paused, {"approved": True, "approver": "someone-else"})
        self.assertEqual(foreign.error["code"], "approver.not_entitled")
        self.assertEqual(self.ledger.attempts, collections.Counter())
        owner = peer.redeem("c", paused, {"approved": True, "approver": "rosa.lima"}).record
        self.assertEqual(owner["resolved"][0]["outcome"]["result"], {"escalated": 7})
        self.children[-1].stop()

    def test_twin_any_approver_accepted_escalates_on_anyones_yes(self) -> None:
        peer = self.start(DESK, "--twin", "any-approver-accepted")
        paused = peer.prompt("c", "escalate ticket 7")
        self.assertIn("approvers", paused.record["terminal"])
        peer.redeem("c", paused, {"approved": True, "approver": "someone-else"})
        self.assertEqual(self.ledger.applied, ["escalate:7"])
        self.children[-1].stop()

    def test_variant_asks_again_after_restart_answers_a_done_request_from_memory(self) -> None:
        peer = self.start(DESK, "--variant", "asks-again-after-restart")
        peer.redeem("c", peer.prompt("c", "escalate ticket 7"))
        again = peer.prompt("c2", "escalate ticket 7").record
        self.assertEqual(again["terminal"], {"kind": "completed"})
        self.assertEqual(again["tool_calls"][0]["outcome"]["result"], {"escalated": 7, "already_done": True})
        self.children[-1].stop()
        peer = self.start(DESK, "--variant", "asks-again-after-restart")
        paused = peer.prompt("c3", "escalate ticket 7")
        self.assertEqual(paused.record["terminal"]["kind"], "paused", "memory is gone: it asks again")
        peer.redeem("c3", paused)
        self.assertEqual(self.ledger.applied, ["escalate:7"])
        self.assertEqual(self.ledger.attempts["escalate:7"], 2)
        self.children[-1].stop()

    def test_twin_checkpoint_in_memory_loses_the_pause_on_restart(self) -> None:
        peer = self.start(DESK, "--twin", "checkpoint-in-memory")
        paused = peer.prompt("c", "escalate ticket 7")
        self.children[-1].stop()
        peer = self.start(DESK, "--twin", "checkpoint-in-memory")
        self.assertEqual(peer.redeem("c", paused).error["code"], "pause.stale")
        self.children[-1].stop()


if __name__ == "__main__":
    unittest.main()
