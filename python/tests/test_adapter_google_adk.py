"""The Google ADK adapter, driven through the protocol with a scripted model
(an ADK ``BaseLlm``, no network) and ADK's own runner, tools and SQLite
sessions: in process through the scripted harness, and as a child process
killed at a ledger grant for the crash cases.

Skipped when the ADK is not importable:
``pip install './python[google-adk]'`` into a virtualenv to run them.

Run as a script (``--child DURABLE_DIR``), this file is the child: the
scripted desk served over stdin and stdout.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import unittest
from typing import Any, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from frameworks import installed, needs  # noqa: E402
from test_adapter_openai_agents import Child, answered, hello, ledger, of, prompt, resume  # noqa: E402

HAVE_ADK = installed("google.adk")
needs_adk = needs(HAVE_ADK, "the Google ADK", "google-adk")
MODEL_LOG = "scripted-model-calls.jsonl"

if HAVE_ADK:
    from google.adk.agents import LlmAgent
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse
    from google.adk.tools import FunctionTool
    from google.genai import types

    from symfonic_evals_protocol import serve
    from symfonic_evals_protocol.adapters import effects
    from symfonic_evals_protocol.adapters.google_adk import AdkDeployment, render_request

    STREAMED: List[int] = []
    """One entry per streamed model request this process made."""

    def _reply(*parts: Any) -> LlmResponse:
        return LlmResponse(content=types.Content(role="model", parts=list(parts)))

    class Scripted(BaseLlm):
        """Plans function calls from the latest user text; once tools
        answered, replies quoting them. Call ids are ``call_1``..., as a
        replayed model's may repeat them across conversations."""

        model: str = "scripted"
        log_dir: Any = None

        async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> Any:
            async for response in self._plan(llm_request):
                if stream:
                    # As a streaming model sends it: the text a word at a
                    # time (partial), then the whole response.
                    STREAMED.append(1)
                    for part in response.content.parts if response.content else []:
                        for word in re.findall(r"\S+\s*", part.text or ""):
                            chunk = _reply(types.Part(text=word))
                            chunk.partial = True
                            yield chunk
                yield response

        async def _plan(self, llm_request: LlmRequest) -> Any:
            if self.log_dir is not None:
                with open(os.path.join(self.log_dir, MODEL_LOG), "a") as log:
                    log.write(render_request(llm_request).replace("\n", " | ") + "\n")
            last = llm_request.contents[-1]
            answers = [p.function_response for p in last.parts or [] if p.function_response]
            if answers:
                yield _reply(types.Part(text="done: " + " | ".join(json.dumps(a.response, sort_keys=True) for a in answers)))
                return
            text = "".join(p.text or "" for p in last.parts or [])
            calls = []
            for pattern, name, key, kind in (
                (r"refund order (\d+)", "issue_refund", "order", int),
                (r"escalate ticket (\d+)", "escalate_ticket", "ticket", int),
                (r"weather in (\w+)", "weather_lookup", "city", str),
                (r"break (\w+)", "broken_tool", "what", str),
            ):
                for match in re.findall(pattern, text):
                    call = types.FunctionCall(id=f"call_{len(calls) + 1}", name=name, args={key: kind(match)})
                    calls.append(types.Part(function_call=call))
            yield _reply(*calls) if calls else _reply(types.Part(text="how can I help?"))

    def issue_refund(order: int) -> Dict[str, Any]:
        """Refund an order (a blocking tool)."""
        effects.apply(f"refund:{order}", tool="issue_refund")
        return {"refunded": order}

    async def escalate_ticket(ticket: int) -> Dict[str, Any]:
        """Escalate a ticket; a person confirms it first."""
        await effects.apply_async(f"escalate:{ticket}", tool="escalate_ticket")
        return {"escalated": ticket}

    @effects.witnessed
    async def weather_lookup(city: str) -> Dict[str, Any]:
        """Look up the weather in a city."""
        return {"city": city, "forecast": "sunny, 21 C"}

    def broken_tool(what: str) -> Dict[str, Any]:
        """Fails the way ADK's own tools do."""
        return {"error": f"{what} is broken"}

    def scripted_agent(log_dir: Any = None) -> LlmAgent:
        tools = [issue_refund, FunctionTool(escalate_ticket, require_confirmation=True), weather_lookup, broken_tool]
        return LlmAgent(name="desk", model=Scripted(log_dir=log_dir), instruction="You are the help desk.", tools=tools)

    def scripted_desk(durable_dir: str, log: bool = False, **options: Any) -> AdkDeployment:
        return AdkDeployment(durable_dir, scripted_agent(durable_dir if log else None), **options)

    class NoSpentMark(AdkDeployment):
        """Trusts ADK to refuse a second confirmation."""

        def check_spent(self, pause: Any) -> None:
            pass

        def spend(self, pause: Any) -> bool:
            return True


@needs_adk
class AdkAdapter(unittest.TestCase):
    """Sessions through the scripted harness; a new session on the same
    durable directory is a restart."""

    def setUp(self) -> None:
        self._dir = tempfile.TemporaryDirectory()
        self.durable = self._dir.name
        self.addCleanup(self._dir.cleanup)

    def session(self, lines: List[Dict[str, Any]], factory: Any = None) -> List[Dict[str, Any]]:
        from harness import async_session

        return async_session(factory or scripted_desk, [hello(self.durable), *lines])

    def pause(self, conversation: str = "c") -> Dict[str, Any]:
        record = answered(self.session([prompt(1, "escalate ticket 7", conversation)]), 1)["record"]
        self.assertEqual(record["terminal"]["kind"], "paused", record)
        return record

    def test_capabilities(self) -> None:
        capabilities = self.session([])[0]["capabilities"]
        self.assertEqual(capabilities["capabilities"], ["human", "tools"])
        self.assertEqual(capabilities["operations"], ["resume"])

    def test_a_call_requiring_approval_pauses_the_turn(self) -> None:
        record = self.pause()
        terminal = record["terminal"]
        self.assertEqual((terminal["interaction"], terminal["resumable"]), ("escalate_ticket", True))
        self.assertEqual(terminal["question"], {"tool": "escalate_ticket", "arguments": {"ticket": 7}})
        self.assertEqual(
            record["tool_calls"],
            [{"id": "call_1", "name": "escalate_ticket", "arguments": {"ticket": 7}, "outcome": {"status": "pending"}}],
        )
        self.assertIn("You are the help desk.", record["model_input"])
        self.assertIn("user: escalate ticket 7", record["model_input"])
        self.assertNotIn(terminal["token"], record["model_input"])

    def test_resume_runs_the_call_once_and_a_replay_is_refused_after_a_restart_too(self) -> None:
        record = self.pause()
        terminal = record["terminal"]
        token, question = terminal["token"], terminal["question_id"]
        out = self.session([
            resume(2, token, {"approved": True}, question),
            ledger(2, "escalate:7"),
            resume(3, token, {"approved": True}, question),
        ])
        self.assertEqual([m["key"] for m in of(out, "ledger_apply")], ["escalate:7"])
        resumed = answered(out, 2)["record"]
        self.assertEqual(resumed["terminal"], {"kind": "completed"})
        # The call as it ran: its response and the arguments it ran with.
        self.assertEqual(
            resumed["resolved"],
            [{"id": "call_1", "outcome": {"status": "succeeded", "result": {"escalated": 7}}, "arguments": {"ticket": 7}}],
        )
        self.assertEqual(resumed["tool_calls"], [])
        self.assertEqual(resumed["answer"], 'done: {"escalated": 7}')
        self.assertEqual(
            {k: resumed["attributes"][k] for k in ("resume_outcome", "resume_name", "resume_checkpoint", "resume_continued")},
            {"resume_outcome": "resumed", "resume_name": "escalate_ticket", "resume_checkpoint": True, "resume_continued": True},
        )
        self.assertIn("tool escalate_ticket [call_1]:", resumed["model_input"])
        self.assertEqual(answered(out, 3)["error"]["code"], "pause.replayed")
        out = self.session([resume(4, token, {"approved": True}, question)])
        self.assertEqual(answered(out, 4)["error"]["kind"], "PauseTokenReplayedError")

    def test_a_token_codec_shapes_the_token_and_nothing_else(self) -> None:
        """``token_codec=`` as on the other adapters: the token handed out is
        the codec's (a signed one here), the bare key or a token signed
        under another secret names no pause, and the same secret after a
        restart redeems it, once."""
        from symfonic_evals_protocol.adapters import SignedTokenCodec

        def signed(durable_dir: str) -> Any:
            return scripted_desk(durable_dir, token_codec=SignedTokenCodec("desk secret"))

        out = self.session([prompt(1, "escalate ticket 7")], factory=signed)
        terminal = answered(out, 1)["record"]["terminal"]
        token, question = terminal["token"], terminal["question_id"]
        key, dot, signature = token.rpartition(".")
        self.assertTrue(key and dot and signature, token)
        forged = SignedTokenCodec("another secret").issue(key, "c", question)
        out = self.session(
            [
                resume(2, key, {"approved": True}, question),
                resume(3, forged, {"approved": True}, question),
                resume(4, token, {"approved": True}, question),
                ledger(4, "escalate:7"),
                resume(5, token, {"approved": True}, question),
            ],
            factory=signed,
        )
        self.assertEqual([answered(out, n)["error"]["code"] for n in (2, 3)], ["pause.unknown"] * 2)
        self.assertEqual(answered(out, 4)["record"]["resolved"][0]["outcome"]["status"], "succeeded")
        self.assertEqual(answered(out, 5)["error"]["code"], "pause.replayed")
        self.assertEqual([m["key"] for m in of(out, "ledger_apply")], ["escalate:7"])

    def test_a_denial_is_refused_and_runs_nothing(self) -> None:
        terminal = self.pause()["terminal"]
        out = self.session([resume(2, terminal["token"], {"approved": False}, terminal["question_id"])])
        self.assertEqual(of(out, "ledger_apply"), [])
        denied = answered(out, 2)["record"]
        self.assertEqual(denied["resolved"], [{"id": "call_1", "outcome": {"status": "refused", "stage": "human-approval"}}])

    def test_refusals_keep_the_token_redeemable(self) -> None:
        terminal = self.pause()["terminal"]
        token, question = terminal["token"], terminal["question_id"]
        forged = token[:-1] + ("A" if token[-1] != "A" else "B")
        out = self.session([
            resume(2, forged, {"approved": True}, question),
            resume(3, token, {"approved": True}, question, conversation="c-elsewhere"),
            resume(4, token, {"approved": True}, "q-forged"),
            resume(5, token, {"approved": "yes"}, question),
            resume(6, token, {"approved": True}, question),
            ledger(6, "escalate:7"),
        ])
        codes = [answered(out, n)["error"]["code"] for n in range(2, 6)]
        self.assertEqual(codes, ["pause.unknown", "pause.foreign", "question.mismatch", "answer.invalid"])
        self.assertEqual(answered(out, 6)["type"], "turn_record")

    def test_a_newer_prompt_makes_the_pause_stale_and_the_conversation_goes_on(self) -> None:
        terminal = self.pause()["terminal"]
        out = self.session([
            prompt(2, "what is the weather in Lisbon"),
            resume(3, terminal["token"], {"approved": True}, terminal["question_id"]),
        ])
        weather = answered(out, 2)["record"]
        self.assertEqual(weather["tool_calls"][0]["outcome"], {"status": "succeeded", "result": {"city": "Lisbon", "forecast": "sunny, 21 C"}})
        self.assertEqual([w["tool"] for w in of(out, "witness")], ["weather_lookup"])
        self.assertIn("user: escalate ticket 7", weather["model_input"], "the history survived the restart")
        self.assertNotEqual(weather["tool_calls"][0]["id"], "call_1", "ids unique across the trial")
        self.assertEqual(answered(out, 3)["error"]["code"], "pause.stale")

    def test_a_blocking_tool_reaches_the_ledger_and_an_error_response_fails(self) -> None:
        out = self.session([prompt(1, "refund order 3"), ledger(1, "refund:3"), prompt(2, "break printer")])
        refund = answered(out, 1)["record"]["tool_calls"][0]
        self.assertEqual(refund["outcome"], {"status": "succeeded", "result": {"refunded": 3}})
        broken = answered(out, 2)["record"]["tool_calls"][0]
        self.assertEqual(broken["outcome"]["status"], "failed")
        self.assertIn("printer is broken", broken["outcome"]["error"])

    def test_operator_turns_are_refused(self) -> None:
        line = prompt(1, "approve it")
        line["request"]["role"] = "operator"
        self.assertEqual(answered(self.session([line]), 1)["error"]["code"], "operator.unsupported")

    def test_without_the_spent_mark_adk_answers_a_replay_with_silence(self) -> None:
        terminal = self.pause()["terminal"]
        token, question = terminal["token"], terminal["question_id"]
        out = self.session(
            [resume(2, token, {"approved": True}, question), ledger(2, "escalate:7"),
             resume(3, token, {"approved": True}, question)],
            factory=lambda d: NoSpentMark(d, scripted_agent()),
        )
        self.assertEqual([m["id"] for m in of(out, "ledger_apply")], [2])
        replay = answered(out, 3)
        self.assertEqual(replay["type"], "turn_record", "ADK said nothing: no error for the replay")
        self.assertEqual(replay["record"]["resolved"][0]["outcome"]["status"], "failed")

    def test_sessions_in_memory_lose_the_confirmation_on_restart(self) -> None:
        import contextlib
        import io

        from google.adk.sessions import InMemorySessionService

        def in_memory(durable_dir: str) -> AdkDeployment:
            return AdkDeployment(durable_dir, scripted_agent(), session_service=InMemorySessionService())

        warned = io.StringIO()
        with contextlib.redirect_stderr(warned):
            paused = answered(self.session([prompt(1, "escalate ticket 7")], factory=in_memory), 1)["record"]["terminal"]
            out = self.session([resume(2, paused["token"], {"approved": True}, paused["question_id"])], factory=in_memory)
        self.assertIn("a restart loses every pending confirmation", warned.getvalue())
        self.assertEqual(of(out, "ledger_apply"), [], "the escalation never ran")


@needs_adk
class Crashes(unittest.TestCase):
    """The desk killed right after the ledger granted an effect, then
    restarted and sent the same request, as the packs do."""

    def setUp(self) -> None:
        self._dir = tempfile.TemporaryDirectory()
        self.durable = self._dir.name
        self.addCleanup(self._dir.cleanup)
        self.command = [sys.executable, os.path.abspath(__file__), "--child", self.durable]

    def model_calls(self) -> List[str]:
        with open(os.path.join(self.durable, MODEL_LOG)) as log:
            return log.read().splitlines()

    def test_a_retried_prompt_replays_the_journal(self) -> None:
        child = Child(self.durable, self.command)
        child.send(prompt(1, "refund order 3"))
        self.assertEqual(child.read()["key"], "refund:3")
        child.kill()
        self.assertEqual(len(self.model_calls()), 1)
        child = Child(self.durable, self.command)
        self.addCleanup(child.close)
        child.send(prompt(2, "refund order 3"))
        self.assertEqual(child.read()["key"], "refund:3")
        child.send(ledger(2, "refund:3", applied=False))
        record = child.read()
        self.assertEqual(record["type"], "turn_record", record)
        self.assertEqual(len(self.model_calls()), 2, "the plan came from the journal; only the reply asked the model")

    def test_a_resume_killed_at_its_effect_is_retried_with_the_same_token(self) -> None:
        child = Child(self.durable, self.command)
        child.send(prompt(1, "escalate ticket 7"))
        paused = child.read()["record"]["terminal"]
        child.close()
        child = Child(self.durable, self.command)
        child.send(resume(2, paused["token"], {"approved": True}, paused["question_id"]))
        self.assertEqual(child.read()["key"], "escalate:7")
        child.kill()
        child = Child(self.durable, self.command)
        self.addCleanup(child.close)
        child.send(resume(3, paused["token"], {"approved": True}, paused["question_id"]))
        self.assertEqual(child.read()["key"], "escalate:7")
        child.send(ledger(3, "escalate:7", applied=False))
        record = child.read()
        self.assertEqual(record["type"], "turn_record", record)
        self.assertEqual(record["record"]["resolved"][0]["outcome"]["status"], "succeeded")
        child.send(resume(4, paused["token"], {"approved": True}, paused["question_id"]))
        self.assertEqual(child.read()["error"]["code"], "pause.replayed")


@needs_adk
class StreamingCrashes(Crashes):
    """The crash cases again with ``streaming=True`` (ADK's ``SSE`` mode):
    the final response of each streamed model call is journaled, and the
    retry replays it."""

    def setUp(self) -> None:
        super().setUp()
        self.command.append("--streaming")


@needs_adk
class Streaming(unittest.TestCase):
    def test_a_streamed_run_pauses_resumes_and_reports_as_a_plain_one(self) -> None:
        from harness import async_session

        def records(streaming: bool) -> List[Dict[str, Any]]:
            durable = tempfile.mkdtemp(prefix="adk-stream-")
            factory = lambda d: scripted_desk(d, streaming=streaming)  # noqa: E731
            out = async_session(factory, [hello(durable), prompt(1, "refund order 3 and escalate ticket 7"),
                                          ledger(1, "refund:3")])
            paused = answered(out, 1)["record"]
            terminal = paused.pop("terminal")  # its token and question id are random
            self.assertEqual(terminal["kind"], "paused")
            out = async_session(factory, [hello(durable), resume(2, terminal["token"], {"approved": True},
                                                                 terminal["question_id"]), ledger(2, "escalate:7")])
            return [paused, answered(out, 2)["record"]]

        before = len(STREAMED)
        plain = records(False)
        self.assertEqual(len(STREAMED), before, "a plain run streamed")
        streamed = records(True)
        self.assertGreaterEqual(len(STREAMED) - before, 2, "the model calls were not streamed")
        self.assertEqual(streamed, plain)
        self.assertIn("done:", streamed[1]["answer"])


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--child":
        streaming = "--streaming" in sys.argv[3:]
        sys.exit(serve(lambda d: scripted_desk(d, log=True, streaming=streaming), argv=["--durable-dir", sys.argv[2]]))
    unittest.main()
