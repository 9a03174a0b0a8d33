"""State predicates: does an approved procedure's precondition hold here?

The semantics of the Rust library's ``contracts`` module, so a Python gate
and the harness's gate sweep agree on every rule (both are checked against
the shared cases in ``protocol/predicate-cases.json``):

* a predicate is ``{"path": "a.b", "op": "eq"|"neq"|"in"|"exists", "value": ...}``;
* each path segment is looked up as its UPPER-case spelling, then as its
  lower-case spelling; a key in any other casing (``Region``, ``rEgion``)
  is absent (a test may pass another ``Lookup`` to model a gate that gets
  keys wrong);
* values compare as JSON: ``true`` never equals ``1``, ``3`` equals
  ``3.0``, strings compare exactly (no case folding);
* anything malformed fails closed (the rule does not admit);
* an absent key fails every operator that takes a value, ``neq`` included;
* ``in`` needs a list, never a string (which would substring-match);
* reasons name the path, the operator and the declared value, never the
  value the state held.

Use :func:`applies` for a whole precondition and :func:`evaluate` for one
predicate.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

OPERATORS = ("eq", "neq", "in", "exists")

ABSENT: Any = object()
"""What a lookup returns for a key the state does not hold."""

Lookup = Callable[[Dict[str, Any], str], Any]
"""How one path segment is looked up in an object: its value, or ``ABSENT``."""


@dataclass(frozen=True)
class Outcome:
    """Whether a predicate matched, and a reason that quotes no state."""

    matched: bool
    reason: str


def contract_lookup(mapping: Dict[str, Any], segment: str) -> Any:
    """The contract's key casing: the segment in UPPER case, then lower case;
    any other spelling is absent."""
    for key in (segment.upper(), segment.lower()):
        if key in mapping:
            return mapping[key]
    return ABSENT


def resolve_path(state: Any, path: str, lookup: Lookup = contract_lookup) -> Any:
    """Walk ``state`` along a dotted path; ``ABSENT`` when any step fails."""
    if not isinstance(path, str) or not path:
        return ABSENT
    cursor = state
    for segment in path.split("."):
        if not segment or not isinstance(cursor, dict):
            return ABSENT
        cursor = lookup(cursor, segment)
        if cursor is ABSENT:
            return ABSENT
    return cursor


def json_equal(left: Any, right: Any) -> bool:
    """JSON equality: a boolean never equals a number, numbers compare by value."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(json_equal(a, b) for a, b in zip(left, right))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(json_equal(left[k], right[k]) for k in left)
    if isinstance(left, (int, float)) and isinstance(right, (int, float)):
        return left == right
    return type(left) is type(right) and left == right


def evaluate(state: Any, predicate: Any, lookup: Lookup = contract_lookup) -> Outcome:
    """Answer one predicate against ``state``, failing closed on anything odd."""
    if not isinstance(predicate, dict):
        return Outcome(False, "predicate must be an object")
    path, op = predicate.get("path"), predicate.get("op")
    if not isinstance(path, str) or not path:
        return Outcome(False, "missing or empty `path`")
    if op not in OPERATORS:
        return Outcome(False, f"unknown operator (allowed: {', '.join(OPERATORS)})")
    resolved = resolve_path(state, path, lookup)
    if op == "exists":
        present = resolved is not ABSENT
        return Outcome(present, f"`{path}` exists -> {present}")
    if "value" not in predicate:
        return Outcome(False, f"operator `{op}` requires `value`")
    declared = predicate["value"]
    shown = json.dumps(declared)
    if op == "in" and not isinstance(declared, list):
        return Outcome(False, "`in` requires an array value")
    if resolved is ABSENT:
        return Outcome(False, f"`{path}` {op} {shown} -> false (state: absent)")
    if op == "in":
        same = any(json_equal(member, resolved) for member in declared)
    else:
        same = json_equal(resolved, declared)
    matched = not same if op == "neq" else same
    compared = "matches" if same else "differs"
    return Outcome(matched, f"`{path}` {op} {shown} -> {matched} (state: {compared})")


def state_predicates_in(precondition: Any) -> List[Any]:
    """The ``{"state": ...}`` entries of a precondition, unwrapped.

    Bare tool names are a different question and are skipped; a single
    ``{"state": ...}`` object counts as a one-entry list; a ``state`` that is
    not an object is kept so that it fails closed when evaluated.
    """
    entries = _entries(precondition) or []
    return [e["state"] for e in entries if isinstance(e, dict) and "state" in e]


def _entries(precondition: Any) -> Optional[List[Any]]:
    """The entries of a precondition written as none, one entry, or a list."""
    if precondition is None:
        return []
    if isinstance(precondition, list):
        return precondition
    if isinstance(precondition, (dict, str)):
        return [precondition]
    return None


def applies(state: Any, precondition: Any, lookup: Lookup = contract_lookup) -> Tuple[bool, Optional[str]]:
    """Whether every state predicate holds, and the first failing reason.

    An entry that is neither a bare tool name nor a ``{"state": ...}`` rule
    (an unwrapped predicate, a misspelled key) fails closed: a rule nobody
    can read must not quietly become no rule at all.
    """
    entries = _entries(precondition)
    if entries is None or not all(
        isinstance(e, str) or (isinstance(e, dict) and "state" in e) for e in entries
    ):
        return False, "precondition holds an entry that is not a rule"
    for predicate in state_predicates_in(precondition):
        outcome = evaluate(state, predicate, lookup)
        if not outcome.matched:
            return False, outcome.reason
    return True, None
