"""A turn's exception reaches the harness as the code half of its traceback:
type, qualified name and frames, never its message unless the adopter opts
in, and never an absolute path."""

from __future__ import annotations

import json
import os
import sys
import unittest
from typing import Any, Dict, List

from harness import HELLO, SHUTDOWN, async_session, prompt, session
from symfonic_evals_protocol import AsyncDeployment, AsyncTurn, Deployment, PromptRequest, Turn, TurnFailure, TurnRecord
from symfonic_evals_protocol import _exception

SECRET = "secret-text 4242"
HERE = os.path.abspath(__file__)


class AppError(Exception):
    """An adopter's own exception type, nested to show the qualified name."""

    class Declined(Exception):
        pass


def parse_amount(text: str) -> int:
    raise ValueError(f"{SECRET}: cannot read {text!r}")  # RAISE-LINE


def lookup(table: Dict[str, int], key: str) -> int:
    return table[key]


def nested(depth: int) -> None:
    if depth == 0:
        raise AppError.Declined(SECRET)
    nested(depth - 1)


class Desk(Deployment):
    def run_turn(self, request: PromptRequest, turn: Turn) -> TurnRecord:
        if request.prompt == "parse":
            parse_amount(request.prompt)
        if request.prompt == "wrapped":
            try:
                lookup({}, SECRET)
            except KeyError as missing:
                raise TurnFailure("Declined", "no such account", code="account.unknown") from missing
        if request.prompt == "deep":
            nested(60)
        return TurnRecord()


class AsyncDesk(AsyncDeployment):
    async def run_turn(self, request: PromptRequest, turn: AsyncTurn) -> TurnRecord:
        parse_amount(request.prompt)
        return TurnRecord()


def line_of(marker: str) -> int:
    with open(HERE, encoding="utf-8") as source:
        for number, line in enumerate(source, start=1):
            if marker in line and "line_of" not in line:
                return number
    raise AssertionError(marker)


def this_file() -> str:
    return os.path.relpath(os.path.realpath(HERE), os.path.realpath(os.getcwd())).replace(os.sep, "/")


def error_of(lines: List[Dict[str, Any]]) -> Dict[str, Any]:
    errors = [line["error"] for line in lines if line["type"] == "turn_error"]
    assert len(errors) == 1, lines
    return errors[0]


class Trace(unittest.TestCase):
    def assert_parse_trace(self, lines: List[Dict[str, Any]], first_function: str) -> None:
        error = error_of(lines)
        self.assertEqual(error["kind"], "UnhandledException")
        self.assertEqual(error["message"], "ValueError")
        exception = error["exception"]
        self.assertEqual(exception["type"], "ValueError")
        self.assertEqual(exception["qualified_name"], "builtins.ValueError")
        frames = exception["frames"]
        # The serve loop's own frame is left out: the first is the deployment's.
        self.assertEqual(frames[0]["function"], first_function)
        self.assertEqual(frames[-1], {"file": this_file(), "line": line_of("RAISE-LINE"), "function": "parse_amount"})
        self.assertNotIn("message", exception)
        self.assertNotIn("cause", exception)
        self.assertNotIn(SECRET, json.dumps(lines))

    def test_a_sync_turn_reports_type_qualified_name_and_frames_without_the_message(self) -> None:
        self.assert_parse_trace(session(lambda d: Desk(d), [HELLO, prompt(1, "parse"), SHUTDOWN]), "Desk.run_turn")

    def test_an_async_turn_reports_the_same(self) -> None:
        lines = async_session(lambda d: AsyncDesk(d), [HELLO, prompt(1, "parse"), SHUTDOWN])
        self.assert_parse_trace(lines, "AsyncDesk.run_turn")

    def test_a_typed_failure_carries_the_trace_of_what_it_was_raised_from(self) -> None:
        lines = session(lambda d: Desk(d), [HELLO, prompt(1, "wrapped"), SHUTDOWN])
        error = error_of(lines)
        self.assertEqual((error["kind"], error["code"]), ("Declined", "account.unknown"))
        exception = error["exception"]
        self.assertEqual((exception["type"], exception["qualified_name"]), ("KeyError", "builtins.KeyError"))
        self.assertEqual([f["function"] for f in exception["frames"]], ["Desk.run_turn", "lookup"])
        self.assertNotIn(SECRET, json.dumps(lines))

    def test_a_deep_stack_keeps_its_innermost_frames_and_counts_the_rest(self) -> None:
        error = error_of(session(lambda d: Desk(d), [HELLO, prompt(1, "deep"), SHUTDOWN]))
        exception = error["exception"]
        self.assertEqual(exception["qualified_name"], f"{__name__}.AppError.Declined")
        self.assertEqual(exception["type"], "Declined")
        self.assertEqual(len(exception["frames"]), _exception.MAX_FRAMES)
        # run_turn and 61 calls of nested: 62 frames in all.
        self.assertEqual(exception["frames_omitted"], 62 - _exception.MAX_FRAMES)
        self.assertEqual(exception["frames"][-1]["function"], "nested")

    def test_messages_only_when_the_adopter_opts_in(self) -> None:
        for opted in (False, True):
            error = error_of(
                session(lambda d: Desk(d), [HELLO, prompt(1, "wrapped"), SHUTDOWN], exception_messages=opted)
            )
            if opted:
                self.assertEqual(error["exception"]["message"], repr(SECRET))
            else:
                self.assertNotIn("message", error["exception"])

    def test_a_chain_names_each_cause(self) -> None:
        try:
            try:
                lookup({}, "k")
            except KeyError:
                parse_amount("x")
        except ValueError as error:
            body = _exception.trace(error)
        self.assertEqual(body["type"], "ValueError")
        self.assertEqual(body["cause"]["type"], "KeyError")
        self.assertNotIn("cause", body["cause"])


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text")


class Robustness(unittest.TestCase):
    def test_an_exception_whose_text_raises_still_answers(self) -> None:
        class Broken(Deployment):
            def run_turn(self, request: PromptRequest, turn: Turn) -> TurnRecord:
                raise Unprintable()

        error = error_of(session(lambda d: Broken(d), [HELLO, prompt(1, "x"), SHUTDOWN], exception_messages=True))
        self.assertEqual(error["exception"]["type"], "Unprintable")
        self.assertNotIn("message", error["exception"])


class Paths(unittest.TestCase):
    def test_no_path_is_absolute(self) -> None:
        shown = [
            _exception.shown_path(HERE),
            _exception.shown_path(json.__file__),
            _exception.shown_path("/nowhere/at/all/app.py"),
            _exception.shown_path("<string>"),
        ]
        self.assertEqual(shown[0], this_file())
        self.assertTrue(shown[1].endswith("json/__init__.py"), shown[1])
        self.assertEqual(shown[2], "<elsewhere>/app.py")
        self.assertEqual(shown[3], "<string>")
        for path in shown:
            self.assertFalse(os.path.isabs(path), path)

    def test_a_file_outside_the_working_directory_is_named_by_its_library_root(self) -> None:
        library = _exception.shown_path(unittest.__file__)
        self.assertTrue(library.startswith("<"), library)
        self.assertIn("unittest/__init__.py", library)
        self.assertNotIn(sys.prefix, library)


if __name__ == "__main__":
    unittest.main()
