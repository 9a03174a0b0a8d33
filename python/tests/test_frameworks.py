"""The rule of ``frameworks.py``: a framework test whose framework is
missing is skipped, or, with ``SYMFONIC_EVALS_REQUIRE_FRAMEWORKS=1`` (CI's
framework-adapters step), an error, for a test, a test class and a test
that finds out while it runs. Standard library only."""

from __future__ import annotations

import os
import unittest
from typing import Any, Dict
from unittest import mock

import harness  # noqa: F401  (puts the package on the path)
from frameworks import REQUIRE_FRAMEWORKS, FrameworkMissing, installed, missing, needs


def outcome(required: str, available: bool) -> Dict[str, Any]:
    """What becomes of a class, a test and a running test needing a
    framework that is ``available`` or not, with the variable at
    ``required`` (``""`` reads as unset)."""
    with mock.patch.dict(os.environ, {REQUIRE_FRAMEWORKS: required}):
        decorate = needs(available, "Some Framework", "some-extra")

        @decorate
        class Whole(unittest.TestCase):
            def test_it(self) -> None:
                pass

        class Parts(unittest.TestCase):
            @decorate
            def test_decorated(self) -> None:
                pass

            def test_finding_out(self) -> None:
                if not available:
                    missing("Some Framework", "some-extra")

        result = unittest.TestResult()
        loader = unittest.TestLoader()
        suite = unittest.TestSuite([loader.loadTestsFromTestCase(Whole), loader.loadTestsFromTestCase(Parts)])
        suite.run(result)
    return {
        "run": result.testsRun,
        "skipped": len(result.skipped),
        "errors": [str(error) for _, error in result.errors],
        "failures": len(result.failures),
    }


class RequireFrameworks(unittest.TestCase):
    def test_a_missing_framework_is_skipped_by_default(self) -> None:
        for unset in ("", "0"):
            with self.subTest(variable=unset):
                seen = outcome(unset, available=False)
                self.assertEqual((seen["skipped"], seen["errors"], seen["failures"]), (3, [], 0))

    def test_a_missing_framework_is_an_error_when_required(self) -> None:
        seen = outcome("1", available=False)
        self.assertEqual((seen["skipped"], seen["failures"]), (0, 0))
        self.assertEqual(len(seen["errors"]), 3, "the class, the decorated test and the one finding out")
        for error in seen["errors"]:
            self.assertIn(FrameworkMissing.__name__, error)
            self.assertIn("pip install './python[some-extra]'", error)

    def test_an_installed_framework_runs_either_way(self) -> None:
        for required in ("", "1"):
            with self.subTest(variable=required):
                self.assertEqual(outcome(required, available=True), {"run": 3, "skipped": 0, "errors": [], "failures": 0})

    def test_installed_reads_dotted_names(self) -> None:
        self.assertTrue(installed("unittest.mock"))
        self.assertFalse(installed("no_such_package_here.adk"))


if __name__ == "__main__":
    unittest.main()
