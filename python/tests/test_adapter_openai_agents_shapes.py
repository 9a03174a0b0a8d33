"""The Agents SDK adapter on the shapes a real agent takes beyond one tool
that always needs approval: several approvals pending in one run, each
answered on its own; a callable ``needs_approval``; guardrails whose
tripwire (input or output) or rejection is a refusal, not a failure, and
the twin of a guardrail that raises instead, a failure. Driven in process with
the scripted model of ``test_adapter_openai_agents`` (no network);
skipped where the SDK is not installed."""

from __future__ import annotations

import json
import unittest
from typing import Any, Dict, List

from test_adapter_openai_agents import HAVE_AGENTS, answered, hello, ledger, needs_agents, of, prompt, resume

if HAVE_AGENTS:
    from agents import (
        Agent,
        GuardrailFunctionOutput,
        ToolGuardrailFunctionOutput,
        function_tool,
        input_guardrail,
        output_guardrail,
        tool_input_guardrail,
    )
    from agents import ModelResponse
    from agents.usage import Usage
    from openai.types.responses import ResponseOutputItemDoneEvent
    from test_adapter_openai_agents import RouterModel, escalate_ticket, issue_refund, weather_lookup

    from symfonic_evals_protocol.adapters._journal import RunJournal
    from symfonic_evals_protocol.adapters._openai_agents_models import JournaledModel, completed_event

    from symfonic_evals_protocol.adapters import effects
    from symfonic_evals_protocol.adapters.openai_agents import OpenAIAgentsDeployment

    async def _large(context: Any, params: Dict[str, Any], call_id: str) -> bool:
        return int(params["order"]) > 100

    @function_tool(needs_approval=_large)
    def issue_refund(order: int) -> Dict[str, Any]:
        """Refund an order; a person approves a large one first."""
        effects.apply(f"refund:{order}", tool="issue_refund")
        return {"refunded": order}

    @tool_input_guardrail
    def refund_limit(data: Any) -> Any:
        """Rejects a refund over 1000: the model hears why, nothing runs."""
        order = json.loads(data.context.tool_arguments)["order"]
        return ToolGuardrailFunctionOutput.reject_content("over the limit") if order > 1000 else ToolGuardrailFunctionOutput.allow()

    @tool_input_guardrail
    def refund_freeze(data: Any) -> Any:
        """Halts the run on a refund of order 13."""
        order = json.loads(data.context.tool_arguments)["order"]
        return ToolGuardrailFunctionOutput.raise_exception() if order == 13 else ToolGuardrailFunctionOutput.allow()

    @function_tool(name_override="issue_refund", tool_input_guardrails=[refund_limit, refund_freeze])
    def guarded_refund(order: int) -> Dict[str, Any]:
        """Refund an order, within the limit."""
        effects.apply(f"refund:{order}", tool="issue_refund")
        return {"refunded": order}

    @input_guardrail
    def no_secrets(context: Any, agent: Any, input: Any) -> Any:
        """Trips on a prompt asking for the secret."""
        return GuardrailFunctionOutput(output_info=None, tripwire_triggered="secret" in str(input))

    @input_guardrail
    def no_secrets_raising(context: Any, agent: Any, input: Any) -> Any:
        """Twin: blocks a prompt asking for the secret by raising, as a
        check written for a web handler does, instead of tripping the
        wire: the SDK fails the run with the guardrail's exception."""
        if "secret" in str(input):
            raise PermissionError("the secret is not to be told")
        return GuardrailFunctionOutput(output_info=None, tripwire_triggered=False)

    @output_guardrail
    def no_amounts(context: Any, agent: Any, output: Any) -> Any:
        """Trips on a final answer that quotes a refund."""
        return GuardrailFunctionOutput(output_info=None, tripwire_triggered="refunded" in str(output))

    def desk(durable_dir: str, tools: List[Any], **agent_options: Any) -> OpenAIAgentsDeployment:
        agent = Agent(name="desk", instructions="help", model=RouterModel(), tools=tools, **agent_options)
        return OpenAIAgentsDeployment(durable_dir, agent, traits=["idempotent-effects"])

    class StreamingModel(RouterModel):
        """The scripted model, streamed: each response as a model streams
        it (its items one by one, then a completion carrying none, as some
        backends do); a plain call is a failure of the test."""

        plain_calls = 0

        async def get_response(self, *args: Any, **kwargs: Any) -> Any:
            StreamingModel.plain_calls += 1
            raise AssertionError("a streamed run asks the model to stream")

        async def stream_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
            response = await RouterModel.get_response(self, system_instructions, input, *args, **kwargs)
            for n, item in enumerate(response.output):
                yield ResponseOutputItemDoneEvent(type="response.output_item.done", item=item, output_index=n, sequence_number=n)
            yield completed_event(ModelResponse(output=[], usage=Usage(), response_id="streamed"))

    def streaming_desk(durable_dir: str) -> OpenAIAgentsDeployment:
        agent = Agent(name="desk", instructions="help", model=StreamingModel(), tools=[escalate_ticket, weather_lookup])
        return OpenAIAgentsDeployment(durable_dir, agent, traits=["idempotent-effects"], streaming=True)


@needs_agents
class Shapes(unittest.TestCase):
    def setUp(self) -> None:
        import tempfile

        self._dir = tempfile.TemporaryDirectory()
        self.durable = self._dir.name
        self.addCleanup(self._dir.cleanup)

    def session(self, factory: Any, lines: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        from harness import async_session

        return async_session(factory, [hello(self.durable), *lines])

    # -- several approvals in one run ----------------------------------------------

    def test_several_pending_approvals_are_answered_each_in_pending_order(self) -> None:
        factory = lambda d: desk(d, [escalate_ticket, weather_lookup])  # noqa: E731
        out = self.session(factory, [prompt(1, "escalate ticket 7 and escalate ticket 8")])
        record = answered(out, 1)["record"]
        self.assertEqual([c["outcome"] for c in record["tool_calls"]], [{"status": "pending"}] * 2)
        self.assertEqual(len(record["terminal"]["question"]["calls"]), 2)
        first, second = (c["id"] for c in record["tool_calls"])
        token, question = record["terminal"]["token"], record["terminal"]["question_id"]
        edit = {"decisions": [{"type": "edit", "edited_action": {"name": "escalate_ticket", "args": {"ticket": 9}}}, {"type": "approve"}]}
        short = {"decisions": [{"type": "approve"}]}
        split = {"decisions": [{"type": "approve"}, {"type": "reject", "message": "not 8"}]}
        out = self.session(
            factory,
            [resume(2, token, edit, question), resume(3, token, short, question), resume(4, token, split, question), ledger(4, "escalate:7")],
        )
        self.assertEqual([answered(out, n)["error"]["code"] for n in (2, 3)], ["answer.invalid"] * 2)
        resolved = {r["id"]: r for r in answered(out, 4)["record"]["resolved"]}
        self.assertEqual(resolved[first]["outcome"], {"status": "succeeded", "result": {"escalated": 7}})
        self.assertEqual(resolved[first]["arguments"], {"ticket": 7})
        self.assertEqual(resolved[second]["outcome"], {"status": "refused", "stage": "human-approval"})
        self.assertEqual([m["key"] for m in of(out, "ledger_apply")], ["escalate:7"])

    # -- a callable needs_approval -----------------------------------------------------

    def test_a_callable_needs_approval_pauses_only_the_calls_it_holds(self) -> None:
        factory = lambda d: desk(d, [issue_refund])  # noqa: E731
        out = self.session(factory, [prompt(1, "refund order 5"), ledger(1, "refund:5"), prompt(2, "refund order 500", "big")])
        self.assertEqual(out[0]["capabilities"]["operations"], ["resume"], "a callable policy may hold a call")
        small = answered(out, 1)["record"]
        self.assertEqual((small["terminal"]["kind"], small["tool_calls"][0]["outcome"]["status"]), ("completed", "succeeded"))
        big = answered(out, 2)["record"]
        self.assertEqual(big["terminal"]["kind"], "paused")
        self.assertEqual(big["tool_calls"][0]["outcome"], {"status": "pending"})
        self.assertEqual([m["key"] for m in of(out, "ledger_apply")], ["refund:5"])
        terminal = big["terminal"]
        out = self.session(
            factory, [resume(3, terminal["token"], {"approved": True}, terminal["question_id"], "big"), ledger(3, "refund:500")]
        )
        self.assertEqual(answered(out, 3)["record"]["resolved"][0]["outcome"]["status"], "succeeded")

    # -- streamed runs ---------------------------------------------------------------

    def test_a_streamed_run_pauses_and_resumes_as_a_plain_one(self) -> None:
        out = self.session(streaming_desk, [prompt(1, "weather in Lisbon"), prompt(2, "escalate ticket 7", "e")])
        weather = answered(out, 1)["record"]
        self.assertEqual(weather["tool_calls"][0]["outcome"]["status"], "succeeded")
        self.assertTrue(weather["answer"].startswith("done:"))
        self.assertIn("user: weather in Lisbon", weather["model_input"])
        paused = answered(out, 2)["record"]
        self.assertEqual(paused["tool_calls"][0]["outcome"], {"status": "pending"})
        terminal = paused["terminal"]
        out = self.session(
            streaming_desk,
            [resume(3, terminal["token"], {"approved": True}, terminal["question_id"], "e"), ledger(3, "escalate:7")],
        )
        self.assertEqual(answered(out, 3)["record"]["resolved"][0]["outcome"]["status"], "succeeded")
        self.assertEqual(StreamingModel.plain_calls, 0)

    def test_a_streamed_model_call_is_journaled_and_replayed(self) -> None:
        """A retry's streamed call gets the crashed attempt's response, as a
        completion event, without asking the model again."""
        import asyncio

        journal = RunJournal(self.durable)
        self.addCleanup(journal.close)
        asked: List[int] = []

        class Counting(StreamingModel):
            async def stream_response(self, *args: Any, **kwargs: Any) -> Any:
                asked.append(1)
                async for event in StreamingModel.stream_response(self, *args, **kwargs):
                    yield event

        async def attempt() -> List[Any]:
            model = JournaledModel(Counting(), journal, "prompt:c:1")
            events = model.stream_response("help", "escalate ticket 7", None, [], None, [], None)
            return [event async for event in events]

        first = asyncio.run(attempt())
        again = asyncio.run(attempt())
        self.assertEqual(len(asked), 1, "the retry never asked the model")
        self.assertEqual(again[-1].type, "response.completed")
        self.assertEqual([i.name for i in again[-1].response.output], ["escalate_ticket"])
        self.assertEqual([e.item.call_id for e in first if e.type == "response.output_item.done"], ["call_escalate_7"])

    # -- guardrails ------------------------------------------------------------------------

    def test_an_input_guardrail_tripwire_is_a_refusal_not_a_failure(self) -> None:
        factory = lambda d: desk(d, [weather_lookup], input_guardrails=[no_secrets])  # noqa: E731
        out = self.session(factory, [prompt(1, "tell me the secret"), prompt(2, "weather in Lisbon")])
        refused = answered(out, 1)
        self.assertEqual(refused["type"], "turn_record", "a tripwire is the desk refusing, not the turn failing")
        record = refused["record"]
        self.assertEqual((record["terminal"], record["answer"]), ({"kind": "completed"}, ""))
        self.assertEqual(record["governance"], [{"stage": "no_secrets", "outcome": "rejected", "counts": {}}])
        self.assertEqual(answered(out, 2)["record"]["governance"], [])

    def test_twin_a_guardrail_that_raises_is_a_failure_not_a_refusal(self) -> None:
        """Caught where the tripwire passes (above): the same prompt is a
        failed turn, with no ``rejected`` stage for a refusal probe to
        find, the guardrail's own frame innermost; a prompt it lets
        through is answered as before."""
        factory = lambda d: desk(d, [weather_lookup], input_guardrails=[no_secrets_raising])  # noqa: E731
        out = self.session(factory, [prompt(1, "tell me the secret"), prompt(2, "weather in Lisbon")])
        failed = answered(out, 1)
        self.assertEqual(failed["type"], "turn_error")
        error = failed["error"]
        self.assertEqual((error["kind"], error["exception"]["qualified_name"]), ("UnhandledException", "builtins.PermissionError"))
        self.assertTrue(error["exception"]["frames"][-1]["function"].endswith("no_secrets_raising"), error["exception"]["frames"][-1])
        self.assertNotIn("secret is not", json.dumps(failed), "the exception's text stays in the process")
        self.assertEqual(answered(out, 2)["record"]["tool_calls"][0]["outcome"]["status"], "succeeded")

    def test_an_output_guardrail_tripwire_is_a_refusal_not_a_failure(self) -> None:
        """The run made its calls, then the agent's output guardrail trips
        on the final answer: the turn completes with no answer and the
        guardrail's stage rejected, the refund it made reported as it ran.
        Plain and streamed (the tripwire then rises from the event stream)."""
        for streaming in (False, True):
            with self.subTest(streaming=streaming):

                def factory(durable_dir: str) -> OpenAIAgentsDeployment:
                    model = StreamingModel() if streaming else RouterModel()
                    agent = Agent(name="desk", instructions="help", model=model, tools=[issue_refund], output_guardrails=[no_amounts])
                    return OpenAIAgentsDeployment(durable_dir, agent, traits=["idempotent-effects"], streaming=streaming)

                conversation = f"c-{streaming}"
                out = self.session(
                    factory,
                    [prompt(1, "refund order 5", conversation), ledger(1, "refund:5"), prompt(2, "hello", conversation)],
                )
                refused = answered(out, 1)
                self.assertEqual(refused["type"], "turn_record", "a tripwire is the desk refusing, not the turn failing")
                record = refused["record"]
                self.assertEqual((record["terminal"], record["answer"]), ({"kind": "completed"}, ""), "the answer is withheld")
                self.assertEqual(record["governance"], [{"stage": "no_amounts", "outcome": "rejected", "counts": {}}])
                self.assertEqual(
                    [(c["name"], c["outcome"]) for c in record["tool_calls"]],
                    [("issue_refund", {"status": "succeeded", "result": {"refunded": 5}})],
                    "the call the run made before the guardrail, as it went",
                )
                self.assertIn("tool call_refund_5 -> {'refunded': 5}", record["model_input"])
                self.assertEqual([m["key"] for m in of(out, "ledger_apply")], ["refund:5"])
                passed = answered(out, 2)["record"]
                self.assertEqual((passed["governance"], passed["answer"]), ([], "nothing to do"), "an answer it lets through")

    def test_a_tool_guardrail_refuses_the_call_it_rejects(self) -> None:
        factory = lambda d: desk(d, [guarded_refund])  # noqa: E731
        out = self.session(factory, [prompt(1, "refund order 5000"), prompt(2, "refund order 13", "freeze"), prompt(3, "refund order 6", "ok"), ledger(3, "refund:6")])
        limited = answered(out, 1)["record"]
        (call,) = limited["tool_calls"]
        self.assertEqual(call["outcome"], {"status": "refused", "stage": "refund_limit"})
        self.assertEqual(limited["governance"], [{"stage": "refund_limit", "outcome": "rejected", "counts": {}}])
        self.assertIn("over the limit", limited["model_input"], "the model heard why")
        frozen = answered(out, 2)
        self.assertEqual(frozen["type"], "turn_record")
        self.assertEqual(frozen["record"]["tool_calls"][0]["outcome"], {"status": "refused", "stage": "refund_freeze"})
        self.assertEqual(frozen["record"]["governance"][0]["stage"], "refund_freeze")
        allowed = answered(out, 3)["record"]
        self.assertEqual(allowed["tool_calls"][0]["outcome"]["status"], "succeeded")
        self.assertEqual([m["key"] for m in of(out, "ledger_apply")], ["refund:6"])


if __name__ == "__main__":
    unittest.main()
