"""The snippets ``python/README.md`` marks ``<!-- runs -->`` (or
``<!-- runs: MODULE -->``, needing ``MODULE`` installed) run as they stand,
so the documented seams cannot drift from the code. Each runs in a fresh
namespace; one whose framework is missing is skipped with the install hint.

They run as the harness starts a desk: a model client a snippet builds
finds ``OPENAI_API_KEY`` and ``OPENAI_BASE_URL`` set (a placeholder key,
and a loopback address nothing listens on, so no snippet can reach a real
model). A snippet's ``serve(...)`` sits under ``if __name__ ==
"__main__":`` and does not run here; the tests below start its factory
through the protocol instead."""

from __future__ import annotations

import io
import json
import contextlib
import os
import re
import sqlite3
import tempfile
import unittest
from typing import Any, Dict, Iterator, List, Optional, Tuple
from unittest import mock

import harness  # noqa: F401  (puts the package on the path)
from frameworks import installed, missing
from harness import HELLO, SHUTDOWN, async_session, ledger_result, prompt, session
from symfonic_evals_protocol import PromptRequest, ResumeRequest, Turn, TurnFailure, _wire

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md")
_MARKED = re.compile(r"<!-- runs(?:: (?P<module>[\w.]+))? -->\n```python\n(?P<code>.*?)\n```", re.DOTALL)
_EXTRAS = {"agents": "openai-agents", "langgraph": "langgraph", "pydantic_ai": "pydantic-ai", "google.adk": "google-adk"}


@contextlib.contextmanager
def as_the_harness_starts_it() -> Iterator[None]:
    """The model endpoint's variables, as the harness sets them for a desk."""
    with mock.patch.dict(os.environ, {"OPENAI_API_KEY": "sk-placeholder", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}):
        yield


def snippets() -> List[Tuple[int, Optional[str], str]]:
    """Each marked snippet: its line in the README, the module it needs, its code."""
    with open(README, encoding="utf-8") as readme:
        text = readme.read()
    return [
        (text.count("\n", 0, match.start()) + 1, match.group("module"), match.group("code"))
        for match in _MARKED.finditer(text)
    ]


class ReadmeSnippets(unittest.TestCase):
    def test_there_are_snippets_to_run(self) -> None:
        self.assertGreaterEqual(len(snippets()), 4)

    def test_every_marked_snippet_runs(self) -> None:
        for line, module, code in snippets():
            with self.subTest(line=line):
                if module is not None and not installed(module):
                    missing(module, _EXTRAS.get(module, module))
                with as_the_harness_starts_it():
                    exec(compile(code, f"README.md:{line}", "exec"), {"__name__": f"readme_{line}"})


def namespace_of(marker: str) -> Dict[str, Any]:
    """The names the one marked snippet holding ``marker`` defines."""
    found = [(line, code) for line, _, code in snippets() if marker in code]
    assert len(found) == 1, f"{marker!r} is in {len(found)} marked snippets"
    line, code = found[0]
    namespace: Dict[str, Any] = {"__name__": f"readme_{line}"}
    with as_the_harness_starts_it():
        exec(compile(code, f"README.md:{line}", "exec"), namespace)
    return namespace


def scripted_turn(request_id: int, replies: List[Dict[str, Any]]) -> Tuple[Turn, io.BytesIO]:
    """A turn whose channel answers with ``replies``; returns it and what it wrote."""
    reader = io.BytesIO(b"".join(json.dumps(r).encode() + b"\n" for r in replies))
    writer = io.BytesIO()
    return Turn(request_id, _wire.Channel(reader, writer)), writer


class QuickStart(unittest.TestCase):
    """The quick-start deployments do what the packs ask, not only compile."""

    def test_the_deployment_applies_through_the_ledger_pauses_and_redeems_once(self) -> None:
        desk = namespace_of("class Desk(Deployment)")["Desk"]
        with tempfile.TemporaryDirectory() as durable:
            hello = {**HELLO, "durable_dir": durable}
            script = [hello, prompt(1, "refund order 3"), ledger_result(1, "refund:3", True), prompt(2, "ask a supervisor"), SHUTDOWN]
            out = session(desk, script)
            self.assertEqual([m["type"] for m in out], ["ready", "ledger_apply", "witness", "turn_record", "turn_record"], out[-1])
            self.assertEqual(out[1]["tool"], "issue_refund")
            self.assertEqual(out[3]["record"]["answer"], "done")
            terminal = out[4]["record"]["terminal"]
            self.assertEqual((terminal["kind"], terminal["question_id"]), ("paused", "q-7"))
            # A restarted process redeems the pause, once, with the question it asked.
            restarted = desk(durable)

            def redeem(conversation: str, question_id: str) -> Any:
                turn, _ = scripted_turn(3, [])
                return restarted.resume(ResumeRequest(conversation, terminal["token"], {"approved": True}, question_id), turn)

            for conversation, question_id, code in (("other", "q-7", "pause.unknown"), ("c", "q-forged", "question.mismatch")):
                with self.assertRaises(TurnFailure) as refused:
                    redeem(conversation, question_id)
                self.assertEqual(refused.exception.code, code)
            resumed = redeem("c", "q-7").to_json()
            self.assertEqual(resumed["resolved"], [{"id": "call-7", "outcome": {"status": "succeeded", "result": {"approved": True}}}])
            with self.assertRaises(TurnFailure) as replayed:
                redeem("c", "q-7")
            self.assertEqual(replayed.exception.code, "pause.replayed")

    def test_the_asyncio_deployment_answers_with_its_witnessed_call(self) -> None:
        desk = namespace_of("class AsyncDesk(AsyncDeployment)")["AsyncDesk"]
        out = async_session(desk, [HELLO, prompt(1, "weather"), ledger_result(1, "refund:3", True), SHUTDOWN])
        self.assertEqual([m["type"] for m in out], ["ready", "witness", "ledger_apply", "turn_record"])
        self.assertEqual(out[3]["record"]["answer"], "Lisbon: sunny, 21 C")
        self.assertEqual(out[1]["outcome"], {"status": "succeeded", "result": "sunny, 21 C"})


class AsyncLangGraph(unittest.TestCase):
    """The async LangGraph snippet serves what it says: a coroutine node
    pauses, a restarted process redeems the pause once."""

    def test_the_async_graph_pauses_and_resumes_once_across_a_restart(self) -> None:
        if not installed("langgraph"):
            missing("langgraph", "langgraph")
        from harness import resume

        desk = namespace_of("AsyncLangGraphDeployment(durable_dir, builder")["async_desk"]
        with tempfile.TemporaryDirectory() as durable:
            hello = {**HELLO, "durable_dir": durable}
            out = async_session(desk, [hello, prompt(1, "escalate ticket 7"), SHUTDOWN])
            terminal = out[-1]["record"]["terminal"]
            self.assertEqual((terminal["kind"], terminal["question"]), ("paused", {"question": "may I escalate ticket 7?"}))
            redeem = resume(2, terminal["token"], {"approved": True}, question_id=terminal["question_id"])
            again = resume(3, terminal["token"], {"approved": True}, question_id=terminal["question_id"])
            out = async_session(desk, [hello, redeem, ledger_result(2, "escalate:7", True), again, SHUTDOWN])
            self.assertEqual([m["type"] for m in out], ["ready", "ledger_apply", "turn_record", "turn_error"])
            self.assertEqual(out[2]["record"]["answer"], "escalated")
            self.assertEqual(out[3]["error"]["code"], "pause.replayed")


class AdapterIntros(unittest.TestCase):
    """Each adapter's first snippet starts as the harness starts it: its
    ``desk`` factory, through the handshake, declares what the snippet
    says (the held tool's ``resume``, the witnessed extension tool)."""

    def ready(self, module: str, marker: str) -> Dict[str, Any]:
        if not installed(module):
            missing(module, _EXTRAS[module])
        desk = namespace_of(marker)["desk"]
        with tempfile.TemporaryDirectory() as durable, as_the_harness_starts_it():
            script = [{**HELLO, "durable_dir": durable}, SHUTDOWN]
            out = session(desk, script) if module == "langgraph" else async_session(desk, script)
        self.assertEqual([m["type"] for m in out], ["ready"], out)
        capabilities = out[0]["capabilities"]
        self.assertEqual(capabilities["contributed_tools"], {"extensions": ["weather_lookup"]})
        self.assertIn("resume", capabilities["operations"])
        self.assertIn("tools", capabilities["capabilities"])
        return capabilities

    def test_langgraph(self) -> None:
        capabilities = self.ready("langgraph", "LangGraphDeployment(durable_dir, graph, validate_answer")
        self.assertIn("idempotent-effects", capabilities["traits"])

    def test_openai_agents(self) -> None:
        capabilities = self.ready("agents", "OpenAIAgentsDeployment(durable_dir, agent, traits")
        self.assertIn("idempotent-effects", capabilities["traits"])

    def test_pydantic_ai(self) -> None:
        capabilities = self.ready("pydantic_ai", "PydanticAIDeployment(durable_dir, agent, traits")
        self.assertIn("idempotent-effects", capabilities["traits"])

    def test_google_adk(self) -> None:
        self.ready("google.adk", "AdkDeployment(durable_dir, agent, extension_tools")


class ThreadConfig(unittest.TestCase):
    """The ``thread_config`` snippet's desk keeps each conversation on the
    tenant's thread: its pause is resumable, a restarted process resumes
    it from the checkpoint it is bound to, and no checkpoint is written
    under the bare conversation."""

    def test_the_tenants_thread_pauses_and_resumes_across_a_restart(self) -> None:
        if not installed("langgraph"):
            missing("langgraph", "langgraph")
        from harness import resume
        from langgraph.checkpoint.sqlite import SqliteSaver

        from symfonic_evals_protocol.adapters.langgraph import CHECKPOINT_FILE

        desk = namespace_of("class TenantThreads(LangGraphDeployment)")["tenant_desk"]
        with tempfile.TemporaryDirectory() as durable:
            hello = {**HELLO, "durable_dir": durable}
            terminal = session(desk, [hello, prompt(1, "escalate ticket 7"), SHUTDOWN])[-1]["record"]["terminal"]
            self.assertEqual((terminal["kind"], terminal["resumable"]), ("paused", True))
            redeem = resume(2, terminal["token"], {"approved": True}, question_id=terminal["question_id"])
            resumed = session(desk, [hello, redeem, SHUTDOWN])[-1]["record"]
            self.assertEqual(resumed["answer"], "escalated")
            self.assertEqual((resumed["attributes"]["resume_checkpoint"], resumed["attributes"]["resume_continued"]), (True, True))
            with contextlib.closing(sqlite3.connect(os.path.join(durable, CHECKPOINT_FILE))) as connection:
                threads = {c.config["configurable"]["thread_id"] for c in SqliteSaver(connection).list(None)}
        self.assertEqual(threads, {"tenant-a/c"})


if __name__ == "__main__":
    unittest.main()
