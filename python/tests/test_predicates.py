"""The companion's predicate evaluator agrees with the Rust library's on the
shared cases in ``protocol/predicate-cases.json``."""

import json
import pathlib
import unittest

from symfonic_evals_protocol import predicates

CASES = pathlib.Path(__file__).resolve().parents[2] / "protocol" / "predicate-cases.json"


class SharedCases(unittest.TestCase):
    def test_every_shared_case_holds(self) -> None:
        cases = json.loads(CASES.read_text())["cases"]
        self.assertGreaterEqual(len(cases), 40)
        for case in cases:
            with self.subTest(predicate=case["predicate"], state=case["state"]):
                outcome = predicates.evaluate(case["state"], case["predicate"])
                self.assertIs(outcome.matched, case["matched"])

    def test_a_whole_precondition_needs_every_predicate(self) -> None:
        rule = [
            {"state": {"path": "region", "op": "eq", "value": "US"}},
            {"state": {"path": "receipt", "op": "exists"}},
        ]
        self.assertEqual(predicates.applies({"region": "US", "receipt": "r"}, rule), (True, None))
        held, reason = predicates.applies({"region": "US"}, rule)
        self.assertFalse(held)
        self.assertIn("receipt", reason or "")
        self.assertFalse(predicates.applies({"region": "US"}, [{"path": "region"}])[0])

    def test_reasons_never_quote_the_state(self) -> None:
        outcome = predicates.evaluate({"card": "4111-SECRET"}, {"path": "card", "op": "eq", "value": "x"})
        self.assertNotIn("4111-SECRET", outcome.reason)


if __name__ == "__main__":
    unittest.main()
