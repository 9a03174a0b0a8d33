"""The evidence types produce exactly the schema's shapes and refuse what it
forbids."""

from __future__ import annotations

import unittest
from typing import Any, Dict

from harness import SCHEMA
from symfonic_evals_protocol import (
    Capabilities,
    Pause,
    ResolvedCall,
    Stage,
    ToolCall,
    TurnFailure,
    TurnRecord,
    edit_decisions,
)


def _valid_record(record: TurnRecord) -> Dict[str, Any]:
    wire = record.to_json()
    problem = SCHEMA.validate("child_message", {"type": "turn_record", "id": 1, "record": wire})
    if problem is not None:
        raise AssertionError(problem)
    return wire


class ToolCalls(unittest.TestCase):
    def test_each_outcome_has_its_wire_shape(self) -> None:
        shapes = [
            (ToolCall.succeeded("1", "t", {"a": 1}, {"ok": True}), {"status": "succeeded", "result": {"ok": True}}),
            (ToolCall.succeeded("1", "t", {}, None), {"status": "succeeded", "result": None}),
            (ToolCall.failed("2", "t", {}, "boom"), {"status": "failed", "error": "boom"}),
            (ToolCall.refused("3", "t", {}, "gate"), {"status": "refused", "stage": "gate"}),
            (ToolCall.pending("4", "ask_user", {"q": "?"}), {"status": "pending"}),
        ]
        for call, outcome in shapes:
            self.assertEqual(call.to_json()["outcome"], outcome)
        record = _valid_record(TurnRecord(pause=Pause("ask_user", True, "tok"), tool_calls=[c for c, _ in shapes]))
        self.assertEqual(len(record["tool_calls"]), 5)

    def test_a_pending_call_needs_a_paused_turn(self) -> None:
        with self.assertRaisesRegex(ValueError, "paused"):
            TurnRecord(tool_calls=[ToolCall.pending("1", "ask_user", {})]).to_json()

    def test_unknown_outcomes_and_untyped_details_are_refused(self) -> None:
        with self.assertRaises(ValueError):
            ToolCall("1", "t", {}, "exploded")
        with self.assertRaises(ValueError):
            ToolCall.failed("1", "t", {}, {"not": "text"})  # type: ignore[arg-type]


class Resolutions(unittest.TestCase):
    def test_a_resume_lists_what_it_settled(self) -> None:
        record = _valid_record(
            TurnRecord(resolved=[ResolvedCall.succeeded("c1", {"approved": True}), ResolvedCall.failed("c2", "no")])
        )
        self.assertEqual(
            record["resolved"],
            [
                {"id": "c1", "outcome": {"status": "succeeded", "result": {"approved": True}}},
                {"id": "c2", "outcome": {"status": "failed", "error": "no"}},
            ],
        )

    def test_a_held_call_that_ran_says_the_arguments_it_ran_with(self) -> None:
        record = _valid_record(TurnRecord(resolved=[ResolvedCall.succeeded("c1", "done", {"amount": 201})]))
        self.assertEqual(record["resolved"][0]["arguments"], {"amount": 201})
        self.assertNotIn("arguments", ResolvedCall.refused("c1", "person").to_json())

    def test_nothing_resolved_is_left_off_the_wire(self) -> None:
        self.assertNotIn("resolved", TurnRecord().to_json())

    def test_pending_is_not_a_resolution(self) -> None:
        with self.assertRaises(ValueError):
            ResolvedCall("c1", "pending")


class Pauses(unittest.TestCase):
    def test_a_pause_may_name_the_held_calls_a_person_may_edit(self) -> None:
        held = ToolCall.pending("c1", "issue_refund", {"amount": 200})
        wire = _valid_record(TurnRecord(pause=Pause("issue_refund", True, "tok", editable=["c1"]), tool_calls=[held]))
        self.assertEqual(wire["terminal"]["editable"], ["c1"])
        self.assertNotIn("editable", _valid_record(TurnRecord(pause=Pause("ask_user", True, "tok")))["terminal"])
        edit = {"decisions": [{"type": "edit", "edited_action": {"name": "issue_refund", "args": {"amount": 201}}}]}
        self.assertEqual(edit_decisions(edit), edit["decisions"])
        for other in ({"approved": True}, {"decisions": [{"type": "maybe"}]}, {"decisions": [{"type": "edit"}]}):
            self.assertIsNone(edit_decisions(other), other)

    def test_a_pause_may_publish_its_question_and_id(self) -> None:
        bare = _valid_record(TurnRecord(pause=Pause("ask_user", True, "tok")))
        self.assertEqual(bare["terminal"], {"kind": "paused", "interaction": "ask_user", "resumable": True, "token": "tok"})
        asked = _valid_record(TurnRecord(pause=Pause("ask_user", False, "tok", {"question": "ok?"}, "q-1")))
        self.assertEqual(asked["terminal"]["question"], {"question": "ok?"})
        self.assertEqual(asked["terminal"]["question_id"], "q-1")

    def test_question_ids_are_bounded(self) -> None:
        for bad in ("", "q" * 257):
            with self.assertRaises(ValueError):
                Pause("ask_user", True, "tok", None, bad)
        Pause("ask_user", True, "tok", None, "q" * 256)

    def test_a_completed_turn_says_so(self) -> None:
        self.assertEqual(_valid_record(TurnRecord(answer="hi"))["terminal"], {"kind": "completed"})


class Failures(unittest.TestCase):
    def test_codes_are_plain_names(self) -> None:
        for code in ("gone", "http:410", "pause.replayed", "a_b-c", "x" * 64):
            self.assertEqual(TurnFailure("K", "m", code).to_json(), {"kind": "K", "message": "m", "code": code})
        for code in ("", "x" * 65, "has space", "a/b", "é"):
            with self.assertRaises(ValueError):
                TurnFailure("K", "m", code)

    def test_a_failure_without_a_code_sends_none(self) -> None:
        self.assertEqual(TurnFailure("K").to_json(), {"kind": "K", "message": ""})

    def test_a_kind_is_required(self) -> None:
        with self.assertRaises(ValueError):
            TurnFailure("")


class Stages(unittest.TestCase):
    def test_outcomes_and_counts_are_checked(self) -> None:
        self.assertEqual(
            Stage("gate", "rejected", {"refused": 1}).to_json(),
            {"stage": "gate", "outcome": "rejected", "counts": {"refused": 1}},
        )
        with self.assertRaises(ValueError):
            Stage("gate", "maybe").to_json()
        for count in (-1, True, 1.5):
            with self.assertRaises(ValueError):
                Stage("gate", "passed", {"checked": count}).to_json()  # type: ignore[dict-item]


class CapabilityEvidence(unittest.TestCase):
    def test_sets_are_sent_sorted(self) -> None:
        evidence = (
            Capabilities()
            .capability("tools")
            .capability("human")
            .with_trait("procedural-review")
            .operation("resume")
            .contributes("extensions", "weather")
            .contributes("extensions", "atlas")
            .to_json()
        )
        self.assertEqual(evidence["capabilities"], ["extensions", "human", "tools"])
        self.assertEqual(evidence["contributed_tools"], {"extensions": ["atlas", "weather"]})
        ready = {"type": "ready", "protocol_version": 1, "capabilities": evidence}
        self.assertIsNone(SCHEMA.validate("child_message", ready))


if __name__ == "__main__":
    unittest.main()


class LedgerApply(unittest.TestCase):
    def test_an_effect_may_name_its_tool_and_the_field_is_optional(self) -> None:
        from symfonic_evals_protocol import _wire

        plain = _wire.ledger_apply(3, "refund:9")
        named = _wire.ledger_apply(3, "refund:9", "issue_refund")
        self.assertEqual(plain, {"type": "ledger_apply", "id": 3, "key": "refund:9"})
        self.assertEqual(named["tool"], "issue_refund")
        for message in (plain, named):
            self.assertIsNone(SCHEMA.validate("child_message", message), message)
        for bad in ("", 7):
            with self.assertRaises(TypeError):
                _wire.ledger_apply(3, "refund:9", bad)  # type: ignore[arg-type]


class McpServerParamsTest(unittest.TestCase):
    def test_the_fixture_url_in_each_clients_shape(self):
        import os
        from unittest import mock

        from symfonic_evals_protocol import MCP_URL_ENV, mcp_server_params

        with mock.patch.dict(os.environ, {MCP_URL_ENV: "http://127.0.0.1:9/mcp"}):
            self.assertEqual(mcp_server_params(), {"url": "http://127.0.0.1:9/mcp"})
            self.assertEqual(
                mcp_server_params("langchain"),
                {"url": "http://127.0.0.1:9/mcp", "transport": "streamable_http"},
            )
            self.assertEqual(mcp_server_params("openai-agents"), {"url": "http://127.0.0.1:9/mcp"})
            with self.assertRaises(ValueError):
                mcp_server_params("other")
            self.assertIsNone(mcp_server_params("stdio"))
        stdio = {
            "MCP_SERVER_COMMAND": "/bin/bridge",
            "MCP_STDIO_ADDR": "127.0.0.1:7",
        }
        with mock.patch.dict(os.environ, stdio, clear=True):
            self.assertEqual(
                mcp_server_params("stdio"), {"command": "/bin/bridge", "args": ["127.0.0.1:7"]}
            )
        with mock.patch.dict(os.environ, {}, clear=True):
            self.assertIsNone(mcp_server_params())
