"""Procedure identities and the JSON they hash agree with the harness's.

The expected digests and spellings were computed by the Rust library
(``symfonic_evals::procedure_identity`` and ``serde_json``'s printer); the
end-to-end suite also compares the two live."""

from __future__ import annotations

import json
import unittest

import harness  # noqa: F401  (puts the package on the path)
from symfonic_evals_protocol import canonical_json, procedure_identity


class Identities(unittest.TestCase):
    def test_digests_match_the_harness(self) -> None:
        cases = [
            (
                "issue_refund",
                '[{"state": {"path": "region", "op": "eq", "value": "US"}}]',
                "verify the account region",
                "42aa65cf17cec913880e0c5809f733a374a8ed5d03ea56f75d59fe439e8ad839",
            ),
            (
                "issue_refund",
                '[{"state":{"path":"region","op":"neq","value":"EU"}}]',
                "verify the account region, then issue the refund",
                "da3108ba764d809fbcdb0d341f248b8c8ff8e3d14e841ae1f20faa543d160f97",
            ),
            (
                "tool \u00e9",
                '{"z": [1, 2.5, 1e-6, null, true], "a": "\u00e9\\n\\u001f"}',
                "na\u00efve \u2713 text",
                "788801f31eda3ad8c3692789e9c4f82607751b6e1c7e8dfde6e4c9bc4b9fcf0a",
            ),
        ]
        for tool, precondition, text, digest in cases:
            self.assertEqual(procedure_identity(tool, json.loads(precondition), text), digest)

    def test_each_part_is_framed(self) -> None:
        # Moving a character between parts changes the digest.
        self.assertNotEqual(procedure_identity("ab", None, "c"), procedure_identity("a", None, "bc"))
        self.assertNotEqual(procedure_identity("t", [], "x"), procedure_identity("t", None, "x"))


class CanonicalJson(unittest.TestCase):
    def test_numbers_are_spelled_as_the_harness_prints_them(self) -> None:
        spelled = {
            1.0: "1.0",
            100.0: "100.0",
            1e15: "1000000000000000.0",
            1e16: "1e+16",
            1.5e16: "1.5e+16",
            0.0001: "0.0001",
            1e-5: "0.00001",
            1.5e-5: "0.000015",
            1e-6: "1e-6",
            1.5e-7: "1.5e-7",
            5e-324: "5e-324",
            1.7976931348623157e308: "1.7976931348623157e+308",
            -0.0: "-0.0",
            2.5: "2.5",
        }
        for value, text in spelled.items():
            self.assertEqual(canonical_json(value), text, repr(value))

    def test_integers_beyond_64_bits_are_floats_to_the_harness(self) -> None:
        self.assertEqual(canonical_json(2**64 - 1), "18446744073709551615")
        self.assertEqual(canonical_json(-(2**63)), "-9223372036854775808")
        self.assertEqual(canonical_json(2**64), "1.8446744073709552e+19")
        self.assertEqual(canonical_json(-(2**63) - 1), "-9.223372036854776e+18")

    def test_structure_is_compact_in_the_given_order(self) -> None:
        value = {"b": 1, "a": ["\u00e9\u001f\n\"\\", None, True, False]}
        self.assertEqual(canonical_json(value), '{"b":1,"a":["\u00e9\\u001f\\n\\"\\\\",null,true,false]}')

    def test_what_is_not_json_is_refused(self) -> None:
        for value in (float("nan"), float("inf"), {1: "x"}, object()):
            with self.assertRaises((ValueError, TypeError)):
                canonical_json(value)


if __name__ == "__main__":
    unittest.main()
