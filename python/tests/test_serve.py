"""Whole sessions through the blocking and the asyncio servers: the same
scripted harness drives a sync and an async deployment that do the same
things, and both must write the same lines."""

from __future__ import annotations

import asyncio
import io
import json
import sys
import unittest
from typing import Any, Dict, List

from harness import HELLO, SHUTDOWN, async_session, ledger_result, prompt, resume, session
from symfonic_evals_protocol import (
    AsyncDeployment,
    AsyncTurn,
    Capabilities,
    Deployment,
    Pause,
    PromptRequest,
    ProtocolError,
    ResolvedCall,
    ResetRequest,
    ResumeRequest,
    ReviewRequest,
    Role,
    ToolCall,
    Turn,
    TurnFailure,
    TurnRecord,
    serve,
)

Seen = List[Any]


class Desk(Deployment):
    """Answers by prompt; records every request it was handed."""

    def __init__(self, durable_dir: str, seen: Seen) -> None:
        super().__init__(durable_dir)
        self.seen = seen
        seen.append(durable_dir)

    def capabilities(self) -> Capabilities:
        return Capabilities().capability("human").operation("resume")

    def run_turn(self, request: PromptRequest, turn: Turn) -> TurnRecord:
        self.seen.append(request)
        if request.prompt == "refund":
            # The second refund names its tool and arguments, as a desk
            # that lets a pack tell a repeated effect from a new one does.
            named = {} if request.state else {"tool": "issue_refund", "arguments": {"order": 3}}
            applied = turn.ledger_apply("refund:3", **named)
            turn.witness("issue_refund", {"order": 3}, result={"applied": applied})
            return TurnRecord(answer=str(applied))
        if request.prompt == "ask":
            return TurnRecord(
                tool_calls=[ToolCall.pending("c1", "ask_user", {"q": "ok?"})],
                pause=Pause("ask_user", True, "tok", {"q": "ok?"}, "q-1"),
            )
        if request.prompt == "upstream":
            turn.witness("weather", {"city": "Oslo"}, error="upstream 503")
            return TurnRecord()
        if request.prompt == "crash":
            raise KeyError("secret account 1234")
        if request.prompt == "pending without a pause":
            return TurnRecord(tool_calls=[ToolCall.pending("c1", "ask_user", {})])
        return TurnRecord(answer=request.role)

    def resume(self, request: ResumeRequest, turn: Turn) -> TurnRecord:
        self.seen.append(request)
        if request.question_id != "q-1":
            raise TurnFailure("QuestionMismatch", "not the question asked", code="question.mismatch")
        return TurnRecord(answer="resumed", resolved=[ResolvedCall.succeeded("c1", request.answer)])

    def close(self) -> None:
        self.seen.append("closed")


class AsyncDesk(AsyncDeployment):
    """The same desk with coroutine turns."""

    def __init__(self, durable_dir: str, seen: Seen) -> None:
        super().__init__(durable_dir)
        self.sync = Desk(durable_dir, seen)
        self.seen = seen

    def capabilities(self) -> Capabilities:
        return self.sync.capabilities()

    async def start(self) -> None:
        self.seen.append("started")

    async def run_turn(self, request: PromptRequest, turn: AsyncTurn) -> TurnRecord:
        if request.prompt == "refund":
            self.seen.append(request)
            await asyncio.sleep(0)
            named = {} if request.state else {"tool": "issue_refund", "arguments": {"order": 3}}
            applied = await turn.ledger_apply("refund:3", **named)
            await turn.witness("issue_refund", {"order": 3}, result={"applied": applied})
            return TurnRecord(answer=str(applied))
        if request.prompt == "upstream":
            self.seen.append(request)
            await turn.witness("weather", {"city": "Oslo"}, error="upstream 503")
            return TurnRecord()
        return self.sync.run_turn(request, turn)  # type: ignore[arg-type]

    async def resume(self, request: ResumeRequest, turn: AsyncTurn) -> TurnRecord:
        return self.sync.resume(request, turn)  # type: ignore[arg-type]

    async def close(self) -> None:
        self.seen.append("closed")


SCRIPT: List[Dict[str, Any]] = [
    HELLO,
    prompt(1, "refund", state={"region": "US"}),
    ledger_result(1, "refund:3", True),
    prompt(2, "refund"),
    ledger_result(2, "refund:3", False),
    prompt(3, "review", role="operator"),
    prompt(4, "ask"),
    resume(5, "tok", {"approved": True}, question_id="q-forged"),
    resume(6, "tok", {"approved": True}, question_id="q-1"),
    prompt(7, "upstream"),
    prompt(8, "crash"),
    prompt(9, "pending without a pause"),
    prompt(10, "hello"),
    SHUTDOWN,
]


class Sessions(unittest.TestCase):
    def check_script(self, out: List[Dict[str, Any]], seen: Seen) -> None:
        types = [(m["type"], m.get("id")) for m in out]
        self.assertEqual(
            types,
            [
                ("ready", None),
                ("ledger_apply", 1), ("witness", 1), ("turn_record", 1),
                ("ledger_apply", 2), ("witness", 2), ("turn_record", 2),
                ("turn_record", 3), ("turn_record", 4),
                ("turn_error", 5), ("turn_record", 6),
                ("witness", 7), ("turn_record", 7),
                ("turn_error", 8), ("turn_error", 9), ("turn_record", 10),
            ],
        )
        self.assertEqual(out[0]["capabilities"]["operations"], ["resume"])
        self.assertEqual(out[1], {"type": "ledger_apply", "id": 1, "key": "refund:3"})
        self.assertEqual(
            out[4],
            {"type": "ledger_apply", "id": 2, "key": "refund:3", "tool": "issue_refund", "arguments": {"order": 3}},
        )
        self.assertEqual(out[2]["outcome"], {"status": "succeeded", "result": {"applied": True}})
        self.assertEqual(out[3]["record"]["answer"], "True")
        self.assertEqual(out[6]["record"]["answer"], "False")
        self.assertEqual(out[7]["record"]["answer"], Role.OPERATOR)
        self.assertEqual(out[8]["record"]["terminal"]["question_id"], "q-1")
        self.assertEqual(out[8]["record"]["tool_calls"][0]["outcome"], {"status": "pending"})
        self.assertEqual(
            out[9]["error"], {"kind": "QuestionMismatch", "message": "not the question asked", "code": "question.mismatch"}
        )
        self.assertEqual(out[10]["record"]["resolved"][0]["id"], "c1")
        self.assertEqual(out[11]["outcome"], {"status": "failed", "error": "upstream 503"})
        # Only the exception's type: its message may quote turn content.
        self.assertEqual(
            {key: out[13]["error"][key] for key in ("kind", "message")}, {"kind": "UnhandledException", "message": "KeyError"}
        )
        self.assertEqual(out[13]["error"]["exception"]["qualified_name"], "builtins.KeyError")
        self.assertNotIn("secret account", json.dumps(out))
        self.assertEqual(out[14]["error"]["message"], "ValueError")
        self.assertEqual(out[15]["record"]["answer"], Role.USER)
        requests = [r for r in seen if isinstance(r, (PromptRequest, ResumeRequest))]
        self.assertEqual(requests[0], PromptRequest("c", "refund", {"region": "US"}, Role.USER))
        self.assertEqual(requests[2], PromptRequest("c", "review", None, Role.OPERATOR))
        self.assertTrue(isinstance(requests[2], PromptRequest) and requests[2].is_operator)
        self.assertEqual(requests[4], ResumeRequest("c", "tok", {"approved": True}, "q-forged"))
        self.assertEqual(seen[0], "/tmp/t0")
        self.assertEqual(seen[-1], "closed")

    def test_the_blocking_server(self) -> None:
        seen: Seen = []
        self.check_script(session(lambda d: Desk(d, seen), SCRIPT), seen)

    def test_the_asyncio_server(self) -> None:
        seen: Seen = []
        self.check_script(async_session(lambda d: AsyncDesk(d, seen), SCRIPT), seen)
        self.assertIn("started", seen)

    def test_serve_runs_an_async_deployment_on_its_own_loop(self) -> None:
        seen: Seen = []
        self.check_script(session(lambda d: AsyncDesk(d, seen), SCRIPT), seen)

    def test_both_servers_write_the_same_lines(self) -> None:
        # Frames differ (the async desk delegates to a sync one); the rest,
        # exception types included, is the same.
        def without_frames(lines: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
            for line in lines:
                line.get("error", {}).get("exception", {}).pop("frames", None)
            return lines

        self.assertEqual(
            without_frames(session(lambda d: Desk(d, []), SCRIPT)),
            without_frames(async_session(lambda d: AsyncDesk(d, []), SCRIPT)),
        )

    def test_end_of_input_is_a_shutdown(self) -> None:
        seen: Seen = []
        out = session(lambda d: Desk(d, seen), [HELLO, prompt(1, "hello")])
        self.assertEqual([m["type"] for m in out], ["ready", "turn_record"])
        self.assertEqual(seen[-1], "closed")
        self.assertEqual(session(lambda d: Desk(d, []), []), [])


class AsyncConcurrency(unittest.TestCase):
    def test_concurrent_ledger_operations_take_turns(self) -> None:
        class Gathering(AsyncDeployment):
            async def run_turn(self, request: PromptRequest, turn: AsyncTurn) -> TurnRecord:
                first, second = await asyncio.gather(turn.ledger_apply("a"), turn.ledger_apply("b"))
                return TurnRecord(answer=f"{first} {second}")

        script = [HELLO, prompt(1, "x"), ledger_result(1, "a", True), ledger_result(1, "b", False), SHUTDOWN]
        out = async_session(Gathering, script)
        self.assertEqual([m.get("key") for m in out[1:3]], ["a", "b"])
        self.assertEqual(out[3]["record"]["answer"], "True False")

    def test_a_turn_is_closed_once_answered(self) -> None:
        kept: List[AsyncTurn] = []

        class Leaky(AsyncDeployment):
            async def run_turn(self, request: PromptRequest, turn: AsyncTurn) -> TurnRecord:
                if kept:
                    await kept[0].ledger_apply("late")
                kept.append(turn)
                return TurnRecord()

        out = async_session(Leaky, [HELLO, prompt(1, "x"), prompt(2, "y"), SHUTDOWN])
        # The stale turn refuses; the handler's error is the second turn's answer.
        self.assertEqual(out[2]["error"]["kind"], "UnhandledException")


class Breaches(unittest.TestCase):
    def run_raw(self, lines: List[bytes]) -> None:
        serve(lambda d: Desk(d, []), reader=io.BytesIO(b"".join(lines)), writer=io.BytesIO())

    def test_a_protocol_breach_ends_the_session(self) -> None:
        hello = json.dumps(HELLO).encode() + b"\n"
        for lines in (
            [json.dumps({**HELLO, "protocol_versions": [2]}).encode() + b"\n"],
            [hello, b"not json\n"],
            [hello, b"[1, 2]\n"],
            [hello, json.dumps({"type": "gossip", "id": 1}).encode() + b"\n"],
            [hello, json.dumps({"type": "prompt", "id": 1, "request": {"prompt": "x"}}).encode() + b"\n"],
            [hello, json.dumps(prompt(1, "refund")).encode() + b"\n", json.dumps(ledger_result(1, "other", True)).encode() + b"\n"],
            [hello, json.dumps(prompt(1, "refund")).encode() + b"\n"],
        ):
            with self.assertRaises(ProtocolError, msg=lines):
                self.run_raw(lines)

    def test_a_first_line_that_is_no_hello_is_named_as_such(self) -> None:
        for first, says in (
            (b"{}\n", "must be the harness's hello message; got a JSON object without a type"),
            (json.dumps(prompt(1, "x")).encode() + b"\n", "must be the harness's hello message; got a 'prompt' message"),
            (json.dumps({"type": "hello"}).encode() + b"\n", "no protocol_versions list"),
            (json.dumps({**HELLO, "protocol_versions": [2]}).encode() + b"\n", "does not offer protocol version 1"),
        ):
            with self.assertRaises(ProtocolError) as raised:
                self.run_raw([first])
            self.assertIn(says, str(raised.exception))

    def test_stdout_is_kept_for_the_protocol(self) -> None:
        class Chatty(Deployment):
            def run_turn(self, request: PromptRequest, turn: Turn) -> TurnRecord:
                print("debugging output")
                return TurnRecord()

        real = sys.stdout
        try:
            out = io.BytesIO()
            fake_stdout = io.TextIOWrapper(out, encoding="utf-8")
            sys.stdout = fake_stdout
            captured = io.StringIO()
            sys.stderr, real_err = captured, sys.stderr
            try:
                data = b"".join(json.dumps(m).encode() + b"\n" for m in (HELLO, prompt(1, "x"), SHUTDOWN))
                serve(Chatty, reader=io.BytesIO(data))
            finally:
                sys.stderr = real_err
            lines = out.getvalue().splitlines()
            self.assertEqual([json.loads(line)["type"] for line in lines], ["ready", "turn_record"])
            self.assertIn("debugging output", captured.getvalue())
        finally:
            sys.stdout = real


if __name__ == "__main__":
    unittest.main()


class ReviewDoor(unittest.TestCase):
    """The structured review door: parsed into a ReviewRequest, answered by
    ``Deployment.review_procedure``, refused by default, and malformed actions end
    the session."""

    def test_a_review_reaches_the_door_and_the_default_refuses(self) -> None:
        seen: List[ReviewRequest] = []

        class Door(Deployment):
            def review_procedure(self, request: ReviewRequest, turn: Turn) -> TurnRecord:
                seen.append(request)
                return TurnRecord(answer=request.action)

        approve = {
            "type": "review",
            "id": 1,
            "request": {
                "conversation": "ops",
                "action": "approve",
                "procedure": "refunds",
                "draft": "verify the region",
                "tool": "issue_refund",
                "precondition": [{"path": "region", "op": "eq", "value": "US"}],
            },
        }
        revoke = {"type": "review", "id": 2, "request": {"conversation": "ops", "action": "revoke", "procedure": "refunds"}}
        out = session(Door, [HELLO, approve, revoke, SHUTDOWN])
        self.assertEqual([m["record"]["answer"] for m in out[1:]], ["approve", "revoke"])
        self.assertEqual(seen[0].precondition, [{"path": "region", "op": "eq", "value": "US"}])
        self.assertEqual((seen[1].procedure, seen[1].tool), ("refunds", None))
        out = session(Deployment, [HELLO, approve, SHUTDOWN])
        self.assertEqual(out[1]["error"]["kind"], "ReviewUnsupported")

    def test_a_rejection_names_its_draft_and_no_procedure(self) -> None:
        seen: List[ReviewRequest] = []

        class Door(Deployment):
            def review_procedure(self, request: ReviewRequest, turn: Turn) -> TurnRecord:
                seen.append(request)
                return TurnRecord(answer=request.action)

        reject = {"type": "review", "id": 1, "request": {"conversation": "ops", "action": "reject", "draft": "verify the region"}}
        out = session(Door, [HELLO, reject, SHUTDOWN])
        self.assertEqual(out[1]["record"]["answer"], "reject")
        self.assertEqual((seen[0].action, seen[0].draft, seen[0].procedure), ("reject", "verify the region", ""))

    def test_an_unknown_action_is_a_protocol_breach(self) -> None:
        bad = {"type": "review", "id": 1, "request": {"conversation": "ops", "action": "promote", "procedure": "x"}}
        lines = b"".join(json.dumps(m).encode() + b"\n" for m in (HELLO, bad))
        with self.assertRaises(ProtocolError):
            serve(Deployment, reader=io.BytesIO(lines), writer=io.BytesIO())


class ResetDoor(unittest.TestCase):
    """The reset operation: parsed into a ResetRequest, answered by
    ``reset`` on both servers, refused by default, and a reset naming no
    conversation ends the session."""

    def test_a_reset_reaches_the_deployment_and_the_default_refuses(self) -> None:
        seen: List[ResetRequest] = []

        class Resets(Deployment):
            def reset(self, request: ResetRequest, turn: Turn) -> TurnRecord:
                seen.append(request)
                return TurnRecord(answer="reset")

        class AsyncResets(AsyncDeployment):
            async def reset(self, request: ResetRequest, turn: AsyncTurn) -> TurnRecord:
                seen.append(request)
                return TurnRecord(answer="reset")

        reset = {"type": "reset", "id": 1, "conversation": "c-1"}
        for run, factory in ((session, Resets), (async_session, AsyncResets)):
            out = run(factory, [HELLO, reset, SHUTDOWN])
            self.assertEqual((out[1]["id"], out[1]["record"]["answer"]), (1, "reset"))
        self.assertEqual(seen, [ResetRequest("c-1"), ResetRequest("c-1")])
        for run, factory in ((session, Deployment), (async_session, AsyncDeployment)):
            out = run(factory, [HELLO, reset, SHUTDOWN])
            self.assertEqual(out[1]["error"]["kind"], "ResetUnsupported")

    def test_a_reset_without_a_conversation_is_a_protocol_breach(self) -> None:
        bad = {"type": "reset", "id": 1}
        lines = b"".join(json.dumps(m).encode() + b"\n" for m in (HELLO, bad))
        with self.assertRaises(ProtocolError):
            serve(Deployment, reader=io.BytesIO(lines), writer=io.BytesIO())


class Feedback(unittest.TestCase):
    """A prompt may carry a reviewer's verdict; only ``rejected`` is one."""

    def test_a_rejected_demonstration_reaches_the_deployment_marked(self) -> None:
        seen: List[PromptRequest] = []

        class Learner(Deployment):
            def run_turn(self, request: PromptRequest, turn: Turn) -> TurnRecord:
                seen.append(request)
                return TurnRecord(answer=str(request.is_rejected))

        marked = prompt(1, "refund order 1")
        marked["request"]["feedback"] = "rejected"
        out = session(Learner, [HELLO, marked, prompt(2, "refund order 2"), SHUTDOWN])
        self.assertEqual([m["record"]["answer"] for m in out[1:]], ["True", "False"])
        self.assertEqual([r.feedback for r in seen], ["rejected", None])

    def test_an_unknown_verdict_is_a_protocol_breach(self) -> None:
        bad = prompt(1, "refund order 1")
        bad["request"]["feedback"] = "liked"
        lines = b"".join(json.dumps(m).encode() + b"\n" for m in (HELLO, bad))
        with self.assertRaises(ProtocolError):
            serve(Deployment, reader=io.BytesIO(lines), writer=io.BytesIO())


class Clock(unittest.TestCase):
    def test_the_handshake_sets_the_trial_clock(self) -> None:
        import time

        from symfonic_evals_protocol import now

        seen: List[float] = []

        class Timed(Deployment):
            def run_turn(self, request: PromptRequest, turn: Turn) -> TurnRecord:
                seen.append(now() - time.time())
                return TurnRecord()

        session(Timed, [{**HELLO, "clock_offset_ms": 3_600_000}, prompt(1, "x"), SHUTDOWN])
        self.assertAlmostEqual(seen[0], 3600.0, delta=5.0)
        session(Timed, [HELLO, prompt(1, "x"), SHUTDOWN])
        self.assertAlmostEqual(seen[1], 0.0, delta=5.0)
