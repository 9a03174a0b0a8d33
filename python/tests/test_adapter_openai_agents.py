"""The OpenAI Agents SDK adapter, driven through the protocol with a scripted
fake model (the SDK's ``Model`` interface, no network): in process through
the scripted harness, and as a child process killed mid-turn for the crash
and retry cases. The reference desk (``examples/openai-agents-desk``) and
its twins run on the same fake.

Skipped when the SDK (``agents``) is not importable:
``pip install './python[openai-agents]'`` into a virtualenv to run them.

Run as a script (``--child DURABLE_DIR``), this file is the child: the
fake desk served over stdin and stdout.
"""

from __future__ import annotations

import http.server
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import unittest
from typing import Any, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from frameworks import needs  # noqa: E402

HAVE_AGENTS = importlib.util.find_spec("agents") is not None
needs_agents = needs(HAVE_AGENTS, "the OpenAI Agents SDK (agents)", "openai-agents")
DESK_DIR = os.path.join(HERE, "..", "..", "examples", "openai-agents-desk")

if HAVE_AGENTS:
    from agents import Agent, ModelResponse, RunHooks, function_tool, handoff
    from agents.mcp import MCPServer
    from agents.models.interface import Model
    from agents.usage import Usage
    from mcp.types import CallToolResult, TextContent
    from mcp.types import Tool as MCPTool
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    from symfonic_evals_protocol import serve
    from symfonic_evals_protocol.adapters import effects
    from symfonic_evals_protocol.adapters.openai_agents import OpenAIAgentsDeployment, render_model_input

    MODEL_LOG = "fake-model-calls.jsonl"

    def _items(input: Any) -> List[Dict[str, Any]]:
        if isinstance(input, str):
            return [{"role": "user", "content": input}]
        out = []
        for item in input:
            out.append(item if isinstance(item, dict) else item.model_dump(exclude_none=True))
        return out

    def _call(name: str, arguments: Dict[str, Any], call_id: str) -> Any:
        return ResponseFunctionToolCall(
            id=call_id, call_id=call_id, type="function_call", name=name, arguments=json.dumps(arguments)
        )

    def _message(text: str) -> Any:
        return ResponseOutputMessage(
            id="msg", type="message", role="assistant", status="completed",
            content=[ResponseOutputText(text=text, type="output_text", annotations=[], logprobs=[])],
        )

    class RouterModel(Model):
        """A deterministic model: plans tool calls from the user's words and,
        once the tools answered, replies quoting their outputs. Every call is
        logged (to ``log_dir`` when given), so a test counts them."""

        def __init__(self, log_dir: Optional[str] = None) -> None:
            self.log_dir = log_dir
            self.calls: List[List[Dict[str, Any]]] = []

        async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
            items = _items(input)
            self.calls.append(items)
            if self.log_dir is not None:
                with open(os.path.join(self.log_dir, MODEL_LOG), "a") as log:
                    log.write(json.dumps(items, default=str) + "\n")
            outputs = []
            for item in reversed(items):
                if item.get("type") != "function_call_output":
                    break
                outputs.insert(0, str(item.get("output")))
            if outputs:
                return ModelResponse(output=[_message("done: " + " | ".join(outputs))], usage=Usage(), response_id=None)
            prompt = next(str(i.get("content")) for i in reversed(items) if i.get("role") == "user")
            plan = []
            for order in re.findall(r"refund order (\d+)", prompt):
                plan.append(_call("issue_refund", {"order": int(order)}, f"call_refund_{order}"))
            for ticket in re.findall(r"escalate ticket (\d+)", prompt):
                plan.append(_call("escalate_ticket", {"ticket": int(ticket)}, f"call_escalate_{ticket}"))
            for city in re.findall(r"weather in (\w+)", prompt):
                plan.append(_call("weather_lookup", {"city": city}, f"call_weather_{city}"))
            if "break" in prompt:
                plan.append(_call("broken_tool", {"x": 1}, "call_broken"))
            output = plan or [_message("nothing to do")]
            return ModelResponse(output=output, usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    @function_tool
    def issue_refund(order: int) -> Dict[str, Any]:
        """Refund an order (a blocking tool: the SDK runs it on a worker thread)."""
        effects.apply(f"refund:{order}", tool="issue_refund")
        return {"refunded": order}

    @function_tool(needs_approval=True)
    async def escalate_ticket(ticket: int) -> Dict[str, Any]:
        """Escalate a ticket; a person approves it first."""
        await effects.apply_async(f"escalate:{ticket}", tool="escalate_ticket")
        await effects.witness_async("escalate_ticket", {"ticket": ticket}, result={"escalated": ticket})
        return {"escalated": ticket}

    @function_tool
    @effects.witnessed
    async def weather_lookup(city: str) -> Dict[str, Any]:
        """Look up the weather in a city."""
        return {"city": city, "forecast": "sunny, 21 \u00b0C"}

    @function_tool
    def broken_tool(x: int) -> str:
        """Always fails."""
        raise RuntimeError("upstream 503")

    def fake_desk(durable_dir: str, log: bool = False, **options: Any) -> OpenAIAgentsDeployment:
        model = RouterModel(durable_dir if log else None)
        agent = Agent(
            name="desk", instructions="help", model=model,
            tools=[issue_refund, escalate_ticket, weather_lookup, broken_tool],
        )
        return OpenAIAgentsDeployment(durable_dir, agent, traits=["idempotent-effects"], **options)

    TRANSFER = "call_transfer"

    class TriageModel(RouterModel):
        """The triage agent's model: hands every request to billing, with
        the handoff tool the SDK names ``transfer_to_billing``."""

        async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
            self._log("triage", _items(input))
            return ModelResponse(output=[_call("transfer_to_billing", {}, TRANSFER)], usage=Usage(), response_id=None)

        def _log(self, agent: str, items: List[Dict[str, Any]]) -> None:
            if self.log_dir is not None:
                with open(os.path.join(self.log_dir, HANDOFF_LOG), "a") as log:
                    log.write(json.dumps({"agent": agent, "items": items}, default=str) + "\n")

    class BillingModel(TriageModel):
        """The billing agent's model: the router, blind to the handoff's own
        call and output."""

        async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
            items = [i for i in _items(input) if i.get("call_id") != TRANSFER]
            self._log("billing", items)
            return await RouterModel.get_response(self, system_instructions, items, *args, **kwargs)

    HANDOFF_LOG = "handoff-model-calls.jsonl"

    class SeenHandoffs(RunHooks):  # type: ignore[type-arg]
        """An adopter's hooks, with the SDK's own parameter names."""

        def __init__(self) -> None:
            self.handoffs: List[Any] = []

        async def on_handoff(self, context: Any, from_agent: Any, to_agent: Any) -> None:
            self.handoffs.append((from_agent.name, to_agent.name))

    class ForwardedHandoffs(RunHooks):  # type: ignore[type-arg]
        """Twin: an adopter's hooks that forward every hook to a tracer of
        theirs as it was called, positionally (``*args``, as the adapter's
        own hooks once did): the SDK calls ``on_handoff(context=...,
        from_agent=..., to_agent=...)`` by keyword, so the hook raises
        ``TypeError`` on every handoff."""

        def __init__(self) -> None:
            self.traced: List[Any] = []

        async def on_handoff(self, *args: Any) -> None:
            self.traced.append(("handoff", *args))

    def handoff_desk(durable_dir: str, log: bool = False, wrapped: bool = False, **options: Any) -> OpenAIAgentsDeployment:
        """A triage agent that hands off to billing, whose tools do the work
        (one of them needs approval); ``wrapped`` hands off through a
        ``handoff(agent)`` object instead of the agent itself."""
        logs = durable_dir if log else None
        billing = Agent(
            name="billing", instructions="settle billing", model=BillingModel(logs),
            tools=[issue_refund, escalate_ticket],
        )
        target = handoff(billing) if wrapped else billing
        triage = Agent(name="triage", instructions="route", model=TriageModel(logs), handoffs=[target])
        return OpenAIAgentsDeployment(durable_dir, triage, **options)


# -- the protocol's lines ---------------------------------------------------------


def hello(durable_dir: str) -> Dict[str, Any]:
    return {"type": "hello", "protocol_versions": [1], "durable_dir": durable_dir, "trial": 0}


def prompt(request_id: int, text: str, conversation: str = "c") -> Dict[str, Any]:
    return {"type": "prompt", "id": request_id, "request": {"conversation": conversation, "prompt": text}}


def resume(request_id: int, token: str, answer: Any, question_id: Optional[str], conversation: str = "c") -> Dict[str, Any]:
    request: Dict[str, Any] = {"conversation": conversation, "token": token, "answer": answer}
    if question_id is not None:
        request["question_id"] = question_id
    return {"type": "resume", "id": request_id, "request": request}


def ledger(request_id: int, key: str, applied: bool = True) -> Dict[str, Any]:
    return {"type": "ledger_result", "id": request_id, "key": key, "applied": applied}


def of(out: List[Dict[str, Any]], kind: str, request_id: Optional[int] = None) -> List[Dict[str, Any]]:
    return [m for m in out if m["type"] == kind and (request_id is None or m.get("id") == request_id)]


def answered(out: List[Dict[str, Any]], request_id: int) -> Dict[str, Any]:
    (message,) = [m for m in out if m.get("id") == request_id and m["type"] in ("turn_record", "turn_error")]
    return message


@needs_agents
class InProcess(unittest.TestCase):
    """Sessions through the scripted harness; a new session on the same
    durable directory is a restart."""

    def setUp(self) -> None:
        self._dir = tempfile.TemporaryDirectory()
        self.durable = self._dir.name
        self.addCleanup(self._dir.cleanup)

    def session(self, lines: List[Dict[str, Any]], factory: Any = None) -> List[Dict[str, Any]]:
        from harness import async_session

        return async_session(factory or fake_desk, [hello(self.durable), *lines])

    def pause(self, text: str = "please escalate ticket 7", conversation: str = "c") -> Dict[str, Any]:
        out = self.session([prompt(1, text, conversation)])
        record = answered(out, 1)["record"]
        self.assertEqual(record["terminal"]["kind"], "paused", record)
        return record

    def test_capabilities_are_derived_from_the_agent(self) -> None:
        out = self.session([])
        capabilities = out[0]["capabilities"]
        self.assertEqual(capabilities["capabilities"], ["human", "tools"])
        self.assertEqual(capabilities["operations"], ["resume"])
        self.assertEqual(capabilities["traits"], ["idempotent-effects"])

    def test_the_fixture_is_recognised_over_http_and_behind_its_stdio_bridge(self) -> None:
        from agents.mcp import MCPServerStdio, MCPServerStreamableHttp
        from unittest import mock

        from symfonic_evals_protocol.adapters.openai_agents import _is_fixture

        env = {"MCP_SERVER_URL": "http://127.0.0.1:7/mcp", "MCP_SERVER_COMMAND": "/bin/bridge", "MCP_STDIO_ADDR": "127.0.0.1:8"}
        with mock.patch.dict(os.environ, env):
            bridged = MCPServerStdio(params={"command": "/bin/bridge", "args": ["127.0.0.1:8"]})
            own = MCPServerStdio(params={"command": sys.executable, "args": ["forecast_server.py"]})
            other_port = MCPServerStdio(params={"command": "/bin/bridge", "args": ["127.0.0.1:9"]})
            http = MCPServerStreamableHttp(params={"url": "http://127.0.0.1:7/mcp"})
            elsewhere = MCPServerStreamableHttp(params={"url": "http://127.0.0.1:7/other"})
            self.assertEqual(
                [_is_fixture(s.params) for s in (bridged, own, other_port, http, elsewhere)],
                [True, False, False, True, False],
            )
        with mock.patch.dict(os.environ, {}, clear=True):
            self.assertFalse(_is_fixture(bridged.params))
            self.assertFalse(_is_fixture(http.params))

    def test_a_tool_awaiting_approval_pauses_the_turn(self) -> None:
        record = self.pause()
        terminal = record["terminal"]
        self.assertEqual(terminal["interaction"], "escalate_ticket")
        self.assertTrue(terminal["resumable"])
        self.assertEqual(terminal["question"], {"tool": "escalate_ticket", "arguments": {"ticket": 7}})
        self.assertTrue(terminal["question_id"].startswith("q-"))
        (call,) = record["tool_calls"]
        self.assertEqual(call["name"], "escalate_ticket")
        self.assertEqual(call["arguments"], {"ticket": 7})
        self.assertEqual(call["outcome"], {"status": "pending"})
        # The token is the adapter's own, and never reaches the model.
        self.assertNotIn(terminal["token"], record["model_input"])
        self.assertIn("user: please escalate ticket 7", record["model_input"])

    def test_resume_runs_the_parked_call_once_and_a_replay_is_refused(self) -> None:
        record = self.pause()
        token, question = record["terminal"]["token"], record["terminal"]["question_id"]
        pending = record["tool_calls"][0]["id"]
        out = self.session([
            resume(2, token, {"approved": True}, question),
            ledger(2, "escalate:7"),
            resume(3, token, {"approved": True}, question),
        ])
        self.assertEqual(of(out, "ledger_apply", 2), [{"type": "ledger_apply", "id": 2, "key": "escalate:7", "tool": "escalate_ticket"}])
        self.assertEqual(of(out, "witness", 2)[0]["arguments"], {"ticket": 7})
        resumed = answered(out, 2)["record"]
        self.assertEqual(resumed["terminal"], {"kind": "completed"})
        # The call as it ran: its result and the arguments the tool received.
        self.assertEqual(
            resumed["resolved"],
            [{"id": pending, "outcome": {"status": "succeeded", "result": {"escalated": 7}}, "arguments": {"ticket": 7}}],
        )
        self.assertEqual([c for c in resumed["tool_calls"] if c["name"] == "escalate_ticket"], [])
        self.assertEqual(
            {k: resumed["attributes"][k] for k in ("resume_outcome", "resume_name", "resume_checkpoint", "resume_continued")},
            {"resume_outcome": "resumed", "resume_name": "escalate_ticket", "resume_checkpoint": True, "resume_continued": True},
        )
        self.assertIn("escalated", resumed["model_input"])
        self.assertNotIn(token, resumed["model_input"])
        self.assertTrue(resumed["answer"].startswith("done:"))
        self.assertEqual(answered(out, 3)["error"]["code"], "pause.replayed")
        self.assertEqual(of(out, "ledger_apply", 3), [])
        # After a restart too: the spent mark is durable.
        out = self.session([resume(4, token, {"approved": True}, question)])
        self.assertEqual(answered(out, 4)["error"]["kind"], "PauseTokenReplayedError")

    def test_a_token_codec_shapes_the_token(self) -> None:
        from symfonic_evals_protocol.adapters import SignedTokenCodec

        def signed(durable_dir: str) -> Any:
            return fake_desk(durable_dir, token_codec=SignedTokenCodec("desk secret"))

        out = self.session([prompt(1, "please escalate ticket 7")], factory=signed)
        terminal = answered(out, 1)["record"]["terminal"]
        key, _, _ = terminal["token"].rpartition(".")
        out = self.session(
            [
                resume(2, key, {"approved": True}, terminal["question_id"]),
                resume(3, terminal["token"], {"approved": True}, terminal["question_id"]),
                ledger(3, "escalate:7"),
            ],
            factory=signed,
        )
        self.assertEqual(answered(out, 2)["error"]["code"], "pause.unknown")
        self.assertEqual(answered(out, 3)["record"]["resolved"][0]["outcome"]["status"], "succeeded")

    def test_refusals_keep_the_token_redeemable(self) -> None:
        record = self.pause()
        token, question = record["terminal"]["token"], record["terminal"]["question_id"]
        forged = token[:-1] + ("A" if token[-1] != "A" else "B")
        out = self.session([
            resume(2, forged, {"approved": True}, question),
            resume(3, token, {"approved": True}, question, conversation="c-elsewhere"),
            resume(4, token, {"approved": True}, "q-forged"),
            resume(5, token, {"approved": "yes"}, question),
            resume(6, token, {"approved": 1}, question),
            resume(7, token, {"approved": True}, question),
            ledger(7, "escalate:7"),
        ])
        codes = [answered(out, n)["error"].get("code") for n in range(2, 7)]
        self.assertEqual(codes, ["pause.unknown", "pause.foreign", "question.mismatch", "answer.invalid", "answer.invalid"])
        self.assertEqual(of(out, "ledger_apply")[0]["id"], 7)
        self.assertEqual(answered(out, 7)["type"], "turn_record")

    def test_a_rejection_settles_the_call_refused_and_unrun(self) -> None:
        record = self.pause("escalate ticket 8")
        token, question = record["terminal"]["token"], record["terminal"]["question_id"]
        out = self.session([resume(2, token, {"approved": False}, question), resume(3, token, {"approved": False}, question)])
        self.assertEqual(of(out, "ledger_apply"), [])
        resumed = answered(out, 2)["record"]
        refused = {"status": "refused", "stage": "human-approval"}
        self.assertEqual(resumed["resolved"], [{"id": record["tool_calls"][0]["id"], "outcome": refused}])
        self.assertIn("not approved", resumed["model_input"])
        self.assertEqual(answered(out, 3)["error"]["code"], "pause.replayed")

    def test_a_newer_prompt_makes_an_open_pause_stale(self) -> None:
        first = self.pause("escalate ticket 7")
        self.pause("escalate ticket 9")
        out = self.session([resume(3, first["terminal"]["token"], {"approved": True}, first["terminal"]["question_id"])])
        error = answered(out, 3)["error"]
        self.assertEqual((error["kind"], error["code"]), ("StalePauseToken", "pause.stale"))

    def test_two_conversations_pause_side_by_side(self) -> None:
        a = self.pause("escalate ticket 7", conversation="a")
        b = self.pause("escalate ticket 7", conversation="b")
        self.assertNotEqual(a["terminal"]["token"], b["terminal"]["token"])
        # The model answers both with call_escalate_7; reported ids differ.
        self.assertNotEqual(a["tool_calls"][0]["id"], b["tool_calls"][0]["id"])
        out = self.session([
            resume(3, a["terminal"]["token"], {"approved": True}, a["terminal"]["question_id"], conversation="a"),
            ledger(3, "escalate:7"),
            resume(4, b["terminal"]["token"], {"approved": True}, b["terminal"]["question_id"], conversation="b"),
            ledger(4, "escalate:7", applied=False),
        ])
        self.assertEqual(answered(out, 3)["record"]["resolved"][0]["id"], a["tool_calls"][0]["id"])
        self.assertEqual(answered(out, 4)["record"]["resolved"][0]["id"], b["tool_calls"][0]["id"])

    def test_calls_outcomes_and_model_input(self) -> None:
        out = self.session([
            prompt(1, "weather in Lisbon"),
            prompt(2, "weather in Lisbon"),
            prompt(3, "break it"),
            prompt(4, "refund order 3"),
            ledger(4, "refund:3"),
        ])
        first, second = answered(out, 1)["record"], answered(out, 2)["record"]
        (call,) = first["tool_calls"]
        self.assertEqual(call["outcome"], {"status": "succeeded", "result": {"city": "Lisbon", "forecast": "sunny, 21 \u00b0C"}})
        # The result as the model received it, not re-escaped.
        self.assertIn("sunny, 21 \u00b0C", first["model_input"])
        self.assertIn("system: help", first["model_input"])
        self.assertNotEqual(call["id"], second["tool_calls"][0]["id"])
        witnesses = of(out, "witness", 1)
        self.assertEqual(witnesses[0]["arguments"], {"city": "Lisbon"})
        (failed,) = answered(out, 3)["record"]["tool_calls"]
        self.assertEqual(failed["outcome"], {"status": "failed", "error": "upstream 503"})
        # A blocking tool body reaches the ledger from the SDK's worker thread.
        self.assertEqual(of(out, "ledger_apply", 4)[0]["key"], "refund:3")
        self.assertEqual(answered(out, 4)["record"]["tool_calls"][0]["outcome"]["result"], {"refunded": 3})

    def test_a_failed_model_call_answers_typed_and_the_retry_continues(self) -> None:
        class Flaky(RouterModel):
            failures = 1

            async def get_response(self, *args: Any, **kwargs: Any) -> Any:
                if len(self.calls) == 1 and Flaky.failures:
                    Flaky.failures -= 1
                    self.calls.append([])
                    import openai

                    # openai 3 is built on httpx2, earlier ones on httpx.
                    httpx = importlib.import_module("httpx2" if importlib.util.find_spec("httpx2") else "httpx")
                    request = httpx.Request("POST", "http://model.invalid/v1/chat/completions")
                    raise openai.APIStatusError("overloaded", response=httpx.Response(529, request=request), body=None)
                return await super().get_response(*args, **kwargs)

        def factory(durable_dir: str) -> OpenAIAgentsDeployment:
            model = Flaky()
            self.models.append(model)
            return OpenAIAgentsDeployment(durable_dir, Agent(name="desk", instructions="help", model=model, tools=[weather_lookup]))

        self.models: List[Any] = []
        out = self.session([prompt(1, "weather in Oslo"), prompt(2, "weather in Oslo")], factory)
        failed = answered(out, 1)["error"]
        self.assertEqual({k: failed[k] for k in ("kind", "message")}, {"kind": "ModelRequestFailed", "message": "HTTP 529"})
        # Beneath the typed kind, the SDK error's trace: type and frames, the
        # raising frame this test's model, never the message.
        self.assertEqual(failed["exception"]["qualified_name"], "openai.APIStatusError")
        self.assertEqual(failed["exception"]["frames"][-1]["function"], f"{Flaky.__qualname__}.get_response")
        self.assertNotIn("overloaded", json.dumps(out))
        self.assertEqual(answered(out, 2)["type"], "turn_record")
        # The retry replayed the journaled plan: the model was asked the
        # first question once, then only for the reply.
        plans = [c for c in self.models[0].calls if c and c[-1].get("role") == "user"]
        self.assertEqual(len(plans), 1)

    def test_operator_turns_are_refused(self) -> None:
        line = prompt(1, "approve it")
        line["request"]["role"] = "operator"
        out = self.session([line])
        self.assertEqual(answered(out, 1)["error"]["code"], "operator.unsupported")

    def test_model_input_rendering(self) -> None:
        text = render_model_input(
            "sys",
            [
                {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
                {"type": "function_call", "name": "t", "arguments": "{\"a\": 1}", "call_id": "c1"},
                {"type": "function_call_output", "call_id": "c1", "output": "{\"q\": \"\u00e9\\\"\"}"},
            ],
        )
        self.assertEqual(text, "system: sys\nuser: hi\ncall t {\"a\": 1}\ntool c1 -> {\"q\": \"\u00e9\\\"\"}")


if HAVE_AGENTS:

    class FakeForecastServer(MCPServer):
        """An MCP server in process: ``weather_lookup`` answers, or answers
        with ``isError`` for the city ``Nowhere``."""

        def __init__(self) -> None:
            super().__init__()
            self.received: List[Any] = []

        async def connect(self) -> None:
            pass

        @property
        def name(self) -> str:
            return "forecasts"

        async def cleanup(self) -> None:
            pass

        async def list_tools(self, run_context: Any = None, agent: Any = None) -> List[Any]:
            schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
            return [MCPTool(name="weather_lookup", description="forecast", inputSchema=schema)]

        async def call_tool(self, tool_name: str, arguments: Any, meta: Any = None) -> Any:
            self.received.append(arguments)
            if arguments.get("city") == "Nowhere":
                return CallToolResult(content=[TextContent(type="text", text="no such city")], isError=True)
            body = json.dumps({"city": arguments["city"], "nonce": "n-123"})
            return CallToolResult(content=[TextContent(type="text", text=body)], isError=False)

        async def list_prompts(self) -> Any:
            raise NotImplementedError

        async def get_prompt(self, name: str, arguments: Any = None) -> Any:
            raise NotImplementedError


@needs_agents
class McpTools(unittest.TestCase):
    def test_an_mcp_tool_error_is_a_failed_call(self) -> None:
        from harness import async_session

        server = FakeForecastServer()

        def factory(durable_dir: str) -> OpenAIAgentsDeployment:
            agent = Agent(name="desk", instructions="help", model=RouterModel(), mcp_servers=[server])
            return OpenAIAgentsDeployment(durable_dir, agent, extension_tools=["weather_lookup"])

        with tempfile.TemporaryDirectory() as durable:
            out = async_session(factory, [hello(durable), prompt(1, "weather in Oslo"), prompt(2, "weather in Nowhere")])
        self.assertEqual(out[0]["capabilities"]["contributed_tools"], {"extensions": ["weather_lookup"]})
        ok = answered(out, 1)["record"]
        self.assertEqual(ok["tool_calls"][0]["outcome"], {"status": "succeeded", "result": {"city": "Oslo", "nonce": "n-123"}})
        self.assertIn("n-123", ok["model_input"])
        failed = answered(out, 2)["record"]
        self.assertEqual(failed["tool_calls"][0]["outcome"], {"status": "failed", "error": "no such city"})
        self.assertEqual(server.received, [{"city": "Oslo"}, {"city": "Nowhere"}])


# -- a child process, killed as the harness kills it ----------------------------------


@needs_agents
class Handoffs(unittest.TestCase):
    """A triage agent handing off to billing: the adopter's hooks hear the
    handoff by the SDK's keyword names, the target's tool calls and model
    input are the turn's, a pause inside the target resumes after a restart
    (the saved state finds the target again), and the target's model calls
    are journaled like the starting agent's."""

    def setUp(self) -> None:
        self._dir = tempfile.TemporaryDirectory()
        self.durable = self._dir.name
        self.addCleanup(self._dir.cleanup)

    def session(self, lines: List[Dict[str, Any]], **options: Any) -> List[Dict[str, Any]]:
        from harness import async_session

        return async_session(lambda d: handoff_desk(d, **options), [hello(self.durable), *lines])

    def test_the_target_works_and_the_hooks_hear_the_handoff(self) -> None:
        for wrapped in (False, True):
            with self.subTest(wrapped=wrapped):
                hooks = SeenHandoffs()
                out = self.session([prompt(1, "refund order 3", f"c-{wrapped}"), ledger(1, "refund:3")], hooks=hooks, wrapped=wrapped)
                record = answered(out, 1)["record"]
                self.assertEqual(record["terminal"], {"kind": "completed"})
                refunds = [c for c in record["tool_calls"] if c["name"] == "issue_refund"]
                self.assertEqual([c["outcome"] for c in refunds], [{"status": "succeeded", "result": {"refunded": 3}}])
                self.assertEqual(hooks.handoffs, [("triage", "billing")])
                self.assertIn("system: route", record["model_input"])
                self.assertIn("system: settle billing", record["model_input"])
                self.assertEqual(record["answer"], "done: {'refunded': 3}")

    def test_twin_positional_handoff_hooks_fail_every_handoff_turn(self) -> None:
        """Caught where the honest hooks pass (above): the turn is a
        failure, not a record, raised where the adapter's hooks hand the
        SDK's keyword call to the adopter's, and nothing after the handoff
        ran (no refund reached the ledger)."""
        hooks = ForwardedHandoffs()
        out = self.session([prompt(1, "refund order 3")], hooks=hooks)
        failed = answered(out, 1)
        self.assertEqual(failed["type"], "turn_error", "a crashed hook fails the turn")
        error = failed["error"]
        self.assertEqual((error["kind"], error["exception"]["qualified_name"]), ("UnhandledException", "builtins.TypeError"))
        innermost = error["exception"]["frames"][-1]
        self.assertEqual(innermost["function"], "Hooks._forward", "the SDK's keyword call reaching the adopter's hooks")
        self.assertEqual((of(out, "ledger_apply"), hooks.traced), ([], []))

    def test_the_capabilities_reach_through_the_handoffs(self) -> None:
        capabilities = self.session([])[0]["capabilities"]
        self.assertEqual(capabilities["capabilities"], ["human", "tools"])
        self.assertEqual(capabilities["operations"], ["resume"])

    def test_a_pause_inside_the_target_resumes_after_a_restart(self) -> None:
        for wrapped in (False, True):
            with self.subTest(wrapped=wrapped):
                conversation = f"c-{wrapped}"
                out = self.session([prompt(1, "escalate ticket 7", conversation)], wrapped=wrapped)
                paused = answered(out, 1)["record"]
                terminal = paused["terminal"]
                self.assertEqual((terminal["kind"], terminal["interaction"]), ("paused", "escalate_ticket"))
                out = self.session(
                    [
                        resume(2, terminal["token"], {"approved": True}, terminal["question_id"], conversation),
                        ledger(2, "escalate:7"),
                        resume(3, terminal["token"], {"approved": True}, terminal["question_id"], conversation),
                    ],
                    wrapped=wrapped,
                )
                resumed = answered(out, 2)["record"]
                self.assertEqual(
                    resumed["resolved"],
                    [
                        {
                            "id": paused["tool_calls"][-1]["id"],
                            "outcome": {"status": "succeeded", "result": {"escalated": 7}},
                            "arguments": {"ticket": 7},
                        }
                    ],
                )
                self.assertIn("system: settle billing", resumed["model_input"])
                self.assertEqual(answered(out, 3)["error"]["code"], "pause.replayed")

    def test_a_retry_replays_the_targets_model_calls(self) -> None:
        command = [sys.executable, os.path.abspath(__file__), "--child-handoff", self.durable]
        child = Child(self.durable, command)
        child.send(prompt(1, "refund order 3"))
        self.assertEqual(child.read()["key"], "refund:3")
        child.kill()
        with open(os.path.join(self.durable, HANDOFF_LOG)) as log:
            before = [json.loads(line)["agent"] for line in log]
        self.assertEqual(before, ["triage", "billing"])
        child = Child(self.durable, command)
        self.addCleanup(child.close)
        child.send(prompt(2, "refund order 3"))
        self.assertEqual(child.read()["key"], "refund:3")
        child.send(ledger(2, "refund:3", applied=False))
        record = child.read()
        self.assertEqual(record["type"], "turn_record", record)
        with open(os.path.join(self.durable, HANDOFF_LOG)) as log:
            after = [json.loads(line)["agent"] for line in log]
        # Triage's handoff and billing's plan came from the journal: only
        # billing's reply after the refund asked a model.
        self.assertEqual(after, ["triage", "billing", "billing"])


class Child:
    """A deployment in a child process: this file served (``--child``), or
    the ``command`` given."""

    def __init__(self, durable: str, command: Optional[List[str]] = None, env: Optional[Dict[str, str]] = None) -> None:
        argv = command or [sys.executable, os.path.abspath(__file__), "--child", durable]
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
        )
        self.send(hello(durable))
        assert self.read()["type"] == "ready"

    def send(self, message: Dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def read(self) -> Dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line, "the child closed its stdout"
        return json.loads(line)

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)
        self.close()

    def close(self) -> None:
        if self.process.poll() is None:
            self.send({"type": "shutdown"})
            assert self.process.stdin is not None
            self.process.stdin.close()
            self.process.wait(timeout=30)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None and not stream.closed:
                stream.close()


@needs_agents
class Crashes(unittest.TestCase):
    """The deployment killed right after the ledger granted an effect, then
    rebuilt and sent the same request, as the exactly-once pack does."""

    def setUp(self) -> None:
        self._dir = tempfile.TemporaryDirectory()
        self.durable = self._dir.name
        self.addCleanup(self._dir.cleanup)

    def model_calls(self) -> List[List[Dict[str, Any]]]:
        with open(os.path.join(self.durable, MODEL_LOG)) as log:
            return [json.loads(line) for line in log]

    def test_a_retried_prompt_continues_the_crashed_run(self) -> None:
        child = Child(self.durable)
        child.send(prompt(1, "refund order 3"))
        self.assertEqual(child.read(), {"type": "ledger_apply", "id": 1, "key": "refund:3", "tool": "issue_refund"})
        child.kill()  # the ledger applied refund:3; the deployment never heard back
        self.assertEqual(len(self.model_calls()), 1)
        child = Child(self.durable)
        self.addCleanup(child.close)
        child.send(prompt(2, "refund order 3"))
        self.assertEqual(child.read()["key"], "refund:3")  # the interrupted key, asked again
        child.send(ledger(2, "refund:3", applied=False))
        record = child.read()
        self.assertEqual(record["type"], "turn_record", record)
        self.assertEqual(record["record"]["tool_calls"][0]["outcome"]["status"], "succeeded")
        # The plan came from the journal: the model was asked only for the reply.
        calls = self.model_calls()
        self.assertEqual(len(calls), 2)
        self.assertEqual(calls[1][-1]["type"], "function_call_output")
        # The same prompt once more is a new request, not a retry.
        child.send(prompt(3, "refund order 3"))
        self.assertEqual(child.read()["key"], "refund:3")
        child.send(ledger(3, "refund:3", applied=False))
        self.assertEqual(child.read()["type"], "turn_record")
        self.assertEqual(len(self.model_calls()), 4)

    def test_a_resume_killed_at_its_effect_is_retried_with_the_same_token(self) -> None:
        child = Child(self.durable)
        child.send(prompt(1, "escalate ticket 7"))
        paused = child.read()["record"]["terminal"]
        child.close()
        token, question = paused["token"], paused["question_id"]
        child = Child(self.durable)
        child.send(resume(2, token, {"approved": True}, question))
        self.assertEqual(child.read()["key"], "escalate:7")
        child.kill()
        child = Child(self.durable)
        self.addCleanup(child.close)
        child.send(resume(3, token, {"approved": True}, question))
        self.assertEqual(child.read()["key"], "escalate:7")
        child.send(ledger(3, "escalate:7", applied=False))
        self.assertEqual(child.read()["type"], "witness")
        record = child.read()
        self.assertEqual(record["type"], "turn_record", record)
        self.assertEqual(record["record"]["resolved"][0]["outcome"]["status"], "succeeded")
        child.send(resume(4, token, {"approved": True}, question))
        self.assertEqual(child.read()["error"]["code"], "pause.replayed")

    def test_a_live_claim_is_not_a_retry(self) -> None:
        first = Child(self.durable)
        self.addCleanup(first.close)
        first.send(prompt(1, "escalate ticket 7"))
        paused = first.read()["record"]["terminal"]
        first.send(resume(2, paused["token"], {"approved": True}, paused["question_id"]))
        self.assertEqual(first.read()["key"], "escalate:7")  # the first replica holds the claim
        second = Child(self.durable)
        self.addCleanup(second.close)
        second.send(resume(1, paused["token"], {"approved": True}, paused["question_id"]))
        self.assertEqual(second.read()["error"]["code"], "pause.replayed")
        first.send(ledger(2, "escalate:7"))
        self.assertEqual(first.read()["type"], "witness")
        self.assertEqual(first.read()["type"], "turn_record")


# -- the reference desk and its twins ----------------------------------------------------


def _load_desk() -> Any:
    spec = importlib.util.spec_from_file_location("openai_agents_desk", os.path.join(DESK_DIR, "desk.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@needs_agents
class ReferenceDesk(unittest.TestCase):
    """``examples/openai-agents-desk/desk.py`` on the fake model: the honest
    desk passes the seed's steps and the restart probe's replay; each twin
    fails where its pack catches it."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.desk = _load_desk()

    def setUp(self) -> None:
        self._dir = tempfile.TemporaryDirectory()
        self.durable = self._dir.name
        self.addCleanup(self._dir.cleanup)

    def session(self, variant: Optional[str], lines: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        from harness import async_session

        return async_session(self.desk.desk(model=RouterModel(), variant=variant), [hello(self.durable), *lines])

    def seed(self, variant: Optional[str], replay_runs: bool = False) -> "tuple[Dict[str, Any], List[Dict[str, Any]]]":
        """pause; resume; replay (in one process), the approval seed;
        ``replay_runs``: the replay is expected to run the tool again."""
        out = self.session(variant, [prompt(1, "escalate ticket 7 to a supervisor")])
        paused = answered(out, 1)["record"]["terminal"]
        token, question = paused["token"], paused["question_id"]
        lines = [
            resume(2, token, {"approved": True}, question),
            ledger(2, "escalate:7"),
            resume(3, token, {"approved": True}, question),
        ]
        out = self.session(variant, lines + ([ledger(3, "escalate:7", applied=False)] if replay_runs else []))
        return paused, out

    def restart_then_replay(self, variant: Optional[str], paused: Dict[str, Any], replay_runs: bool = False) -> Dict[str, Any]:
        """A restart, then the replay (approval/restart-before-replay)."""
        lines = [resume(4, paused["token"], {"approved": True}, paused["question_id"])]
        out = self.session(variant, lines + ([ledger(4, "escalate:7", applied=False)] if replay_runs else []))
        return answered(out, 4)

    def test_the_honest_desk(self) -> None:
        paused, out = self.seed(None)
        self.assertEqual(paused["interaction"], "escalate_ticket")
        self.assertEqual(answered(out, 2)["record"]["resolved"][0]["outcome"]["status"], "succeeded")
        self.assertEqual(answered(out, 3)["error"]["code"], "pause.replayed")
        self.assertEqual(self.restart_then_replay(None, paused)["error"]["code"], "pause.replayed")

    def test_saved_state_run_twice_is_caught_by_the_seed_replay(self) -> None:
        _, out = self.seed("saved-state-run-twice", replay_runs=True)
        self.assertEqual(answered(out, 3)["type"], "turn_record")  # a replay answered, not refused
        self.assertEqual([m["key"] for m in of(out, "ledger_apply", 3)], ["escalate:7"])  # the approved tool ran again

    def test_trusting_the_sdk_is_caught_after_a_restart(self) -> None:
        paused, out = self.seed("trusts-sdk-to-refuse")
        self.assertEqual(answered(out, 3)["error"]["code"], "pause.replayed")  # refused in process
        self.assertEqual(of(out, "ledger_apply", 3), [])
        replay = self.restart_then_replay("trusts-sdk-to-refuse", paused, replay_runs=True)
        self.assertEqual(replay["type"], "turn_record")  # not after a restart

    def test_a_lax_answer_is_caught_by_the_look_alike_answers(self) -> None:
        honest = self.session(None, [prompt(1, "escalate ticket 7")])
        paused = answered(honest, 1)["record"]["terminal"]
        out = self.session(None, [resume(2, paused["token"], {"approved": "yes"}, paused["question_id"])])
        self.assertEqual(answered(out, 2)["error"]["code"], "answer.invalid")
        lax = self.session("lax-answer", [
            resume(3, paused["token"], {"approved": "yes"}, paused["question_id"]),
            ledger(3, "escalate:7"),
        ])
        self.assertEqual(answered(lax, 3)["type"], "turn_record")

    def test_the_extension_tool_is_witnessed(self) -> None:
        out = self.session(None, [prompt(1, "weather in Lisbon")])
        self.assertEqual(of(out, "witness", 1)[0]["arguments"], {"city": "Lisbon"})
        self.assertIn("sunny, 21 C", answered(out, 1)["record"]["model_input"])
        self.assertEqual(out[0]["capabilities"]["contributed_tools"], {"extensions": ["weather_lookup"]})


class _ChatCompletions(http.server.BaseHTTPRequestHandler):
    """A scripted OpenAI-compatible Chat Completions endpoint on the loopback
    interface, standing in for the harness's replaying model endpoint."""

    requests: List[Dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 - the handler's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _ChatCompletions.requests.append(body)
        last = body["messages"][-1]
        message: Dict[str, Any] = {"role": "assistant", "content": None}
        if last["role"] == "tool":
            message["content"] = "done: " + str(last["content"])
        else:
            ticket = re.search(r"escalate ticket (\d+)", str(last["content"]))
            call = {"name": "escalate_ticket", "arguments": json.dumps({"ticket": int(ticket.group(1))})} if ticket else None
            if call is None:
                message["content"] = "nothing to do"
            else:
                message["tool_calls"] = [{"id": "call_http_1", "type": "function", "function": call}]
        reply = {
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if "tool_calls" in message else "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@needs_agents
class ReferenceDeskOverHttp(unittest.TestCase):
    """``desk.py`` as the harness starts it: a child process whose
    ``AsyncOpenAI()`` finds the model endpoint in ``OPENAI_BASE_URL``."""

    def test_pause_resume_and_replay_over_chat_completions(self) -> None:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _ChatCompletions)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SYMFONIC_EVALS_"))}
        env.update(OPENAI_BASE_URL=f"http://127.0.0.1:{server.server_address[1]}/v1", OPENAI_API_KEY="sk-proj-4f9c2a7e1b8d3065c9e2f1a4b7d0e3c6")
        with tempfile.TemporaryDirectory() as durable:
            command = [sys.executable, os.path.join(DESK_DIR, "desk.py"), "--durable-dir", durable]
            child = Child(durable, command, env)
            try:
                child.send(prompt(1, "escalate ticket 7 to a supervisor"))
                paused = child.read()["record"]
                token, question = paused["terminal"]["token"], paused["terminal"]["question_id"]
                child.kill()  # a restart between the pause and the resume
                child = Child(durable, command, env)
                child.send(resume(2, token, {"approved": True}, question))
                self.assertEqual(child.read()["key"], "escalate:7")
                child.send(ledger(2, "escalate:7"))
                resumed = child.read()["record"]
                child.send(resume(3, token, {"approved": True}, question))
                replay = child.read()
            finally:
                child.close()
        self.assertEqual(paused["tool_calls"][0]["outcome"], {"status": "pending"})
        settled = {"status": "succeeded", "result": {"escalated": 7}}
        self.assertEqual(
            resumed["resolved"], [{"id": paused["tool_calls"][0]["id"], "outcome": settled, "arguments": {"ticket": 7}}]
        )
        self.assertEqual(resumed["answer"], "done: {'escalated': 7}")
        self.assertEqual(replay["error"]["code"], "pause.replayed")
        self.assertEqual([r["model"] for r in _ChatCompletions.requests], ["openai-agents-desk"] * 2)
        self.assertEqual(_ChatCompletions.requests[0]["temperature"], 0)


def _child(durable: str) -> int:
    return serve(lambda d: fake_desk(d, log=True), argv=["--durable-dir", durable])


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--child":
        sys.exit(_child(sys.argv[2]))
    if len(sys.argv) >= 3 and sys.argv[1] == "--child-handoff":
        sys.exit(serve(lambda d: handoff_desk(d, log=True), argv=["--durable-dir", sys.argv[2]]))
    unittest.main()
